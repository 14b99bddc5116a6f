//! `Backend`: the GPU when one can be used, else the order-keeping CPU backend.

use crate::catalogue::{Config, SegConfig};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use reduce_core::{Cpu, CudaMonoid};

/// Where reductions of host slices run.
#[derive(Debug)]
pub enum Backend {
    /// A CUDA device.
    Gpu(Gpu),
    /// The rayon CPU backend, with the reason no GPU could be used.
    Cpu {
        /// Why the GPU backend was not available.
        reason: Error,
    },
}

impl Backend {
    /// Device 0 if it can be opened (driver, NVRTC and a device present), else the CPU.
    pub fn auto() -> Backend {
        match Gpu::new(0) {
            Ok(gpu) => Backend::Gpu(gpu),
            Err(reason) => Backend::Cpu { reason },
        }
    }

    /// A one-line description: the device's name, or "CPU" and why.
    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(gpu) => format!("GPU {} ({})", gpu.info().ordinal, gpu.info().name),
            Backend::Cpu { reason } => {
                format!("CPU ({} rayon threads) — no GPU: {reason}", rayon_threads())
            }
        }
    }

    /// The left-to-right fold of `items` (uploads them when on the GPU).
    pub fn reduce<M: CudaMonoid>(&self, items: &[M], config: impl Into<Config>) -> Result<M> {
        match self {
            Backend::Gpu(gpu) => gpu.reduce(&gpu.upload(items)?, config),
            Backend::Cpu { .. } => Ok(Cpu::new().reduce(items)),
        }
    }
}

impl Backend {
    /// One value per CSR segment (see [`Gpu::reduce_segments`] / `Cpu::reduce_segments`).
    pub fn reduce_segments<M: CudaMonoid>(
        &self,
        items: &[M],
        offsets: &[u32],
        config: impl Into<SegConfig>,
    ) -> Result<Vec<M>> {
        match self {
            Backend::Gpu(gpu) => {
                let out =
                    gpu.reduce_segments(&gpu.upload(items)?, &gpu.upload(offsets)?, config)?;
                gpu.download(&out)
            }
            Backend::Cpu { .. } => Ok(Cpu::new().reduce_segments(items, offsets)?),
        }
    }

    /// One value per owner (see [`Gpu::reduce_by_owner`] / `Cpu::reduce_by_owner`).
    pub fn reduce_by_owner<M: CudaMonoid>(
        &self,
        items: &[M],
        owner: &[u32],
        num_segments: usize,
        config: impl Into<SegConfig>,
    ) -> Result<Vec<M>> {
        match self {
            Backend::Gpu(gpu) => {
                let out = gpu.reduce_by_owner(
                    &gpu.upload(items)?,
                    &gpu.upload(owner)?,
                    num_segments,
                    config,
                )?;
                gpu.download(&out)
            }
            Backend::Cpu { .. } => Ok(Cpu::new().reduce_by_owner(items, owner, num_segments)?),
        }
    }
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
