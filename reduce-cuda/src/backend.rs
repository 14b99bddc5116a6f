//! `Backend`: the GPU when one can be used, else the order-keeping CPU backend — the same calls
//! and the same errors on both (an index out of bounds in translated code included: the CPU
//! runs the fallible calls, `Cpu::try_reduce`, ...).

use crate::catalogue::{
    axis_plan, plain_plan, scan_plan, seg_plan, AxisConfig, Config, ScanConfig, SegConfig,
    SegShape, Segments,
};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{Lifted, Own, Program};
use reduce_core::{Cpu, CpuError, CudaMonoid, DeviceCopy, IndexFault, Lift, Scan, SegIndex};

/// Where reductions of host slices run: a GPU, or the CPU (rayon threads, order kept too).
/// Both give the same values (the sequential fold, bit for bit, for exactly associative
/// monoids) and the same errors: a configuration the GPU would refuse is refused on the CPU.
#[derive(Debug)]
pub enum Backend {
    /// A CUDA device.
    Gpu(Gpu),
    /// The rayon CPU backend, with the reason no GPU is used (`None`: chosen with
    /// [`Backend::cpu`]).
    Cpu {
        /// Why the GPU backend was not available.
        reason: Option<Error>,
    },
}

impl Backend {
    /// Device 0 if it can be opened (driver, NVRTC and a device present), else the CPU. A
    /// device whose context an earlier fault lost is opened again as [`Gpu::new`] does once
    /// nothing holds the lost context; while something does, the CPU, and
    /// [`Backend::describe`] says why.
    pub fn auto() -> Backend {
        match Gpu::new(0) {
            Ok(gpu) => Backend::Gpu(gpu),
            Err(reason) => Backend::Cpu {
                reason: Some(reason),
            },
        }
    }

    /// The CPU, whatever the machine has.
    pub fn cpu() -> Backend {
        Backend::Cpu { reason: None }
    }

    /// A one-line description: the device's name, or "CPU" and why.
    pub fn describe(&self) -> String {
        match self {
            Backend::Gpu(gpu) => format!("GPU {} ({})", gpu.info().ordinal, gpu.info().name),
            Backend::Cpu { reason: None } => format!("CPU ({} rayon threads)", rayon_threads()),
            Backend::Cpu {
                reason: Some(reason),
            } => {
                format!("CPU ({} rayon threads) — no GPU: {reason}", rayon_threads())
            }
        }
    }

    /// The left-to-right fold of `items` (uploads them when on the GPU). With
    /// [`Config::portable`] both backends give the portable grouping's bits
    /// (`reduce_core::portable::fold`), floats included.
    pub fn reduce<M: CudaMonoid>(&self, items: &[M], config: impl Into<Config>) -> Result<M> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => gpu.reduce(&gpu.upload(items)?, config),
            Backend::Cpu { .. } => {
                check_plain(&Own::<M>::new(), config)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_reduce_portable(items)
                } else {
                    cpu.try_reduce(items)
                }
                .map_err(fault::<M>)
            }
        }
    }

    /// The left-to-right fold of `lift(x, i)` over the items `x` (`i` the item's index): see
    /// [`Gpu::reduce_lifted`].
    pub fn reduce_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &[X],
        config: impl Into<Config>,
    ) -> Result<M> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => gpu.reduce_lifted(&gpu.upload(items)?, config),
            Backend::Cpu { .. } => {
                check_plain(&Lifted::<M, X>::new(), config)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_reduce_lifted_portable(items)
                } else {
                    cpu.try_reduce_lifted(items)
                }
                .map_err(fault::<M>)
            }
        }
    }

    /// One value per CSR segment, `u32` or `u64` offsets (see [`Gpu::reduce_segments`] /
    /// `Cpu::reduce_segments`). With [`SegConfig::portable`] both backends give
    /// `reduce_core::portable::fold_segments`' bits (and `fold_by_owner`'s below).
    pub fn reduce_segments<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
        config: impl Into<SegConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                let out =
                    gpu.reduce_segments(&gpu.upload(items)?, &gpu.upload(offsets)?, config)?;
                gpu.download(&out)
            }
            Backend::Cpu { .. } => {
                check_segmented::<M, I>(config, true, items.len(), offsets.len().max(1) - 1)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_reduce_segments_portable(items, offsets)
                } else {
                    cpu.try_reduce_segments(items, offsets)
                }
                .map_err(cpu_error::<M>)
            }
        }
    }

    /// One value per owner, `u32` or `u64` owners (see [`Gpu::reduce_by_owner`] /
    /// `Cpu::reduce_by_owner`).
    pub fn reduce_by_owner<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        owner: &[I],
        num_segments: usize,
        config: impl Into<SegConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
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
            Backend::Cpu { .. } => {
                check_segmented::<M, I>(config, false, items.len(), num_segments)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_reduce_by_owner_portable(items, owner, num_segments)
                } else {
                    cpu.try_reduce_by_owner(items, owner, num_segments)
                }
                .map_err(cpu_error::<M>)
            }
        }
    }
}

impl Backend {
    /// `items`, a row-major array of `shape`, reduced along `axes` (see [`Gpu::reduce_axes`] /
    /// `reduce_core::fold_axes`). With [`AxisConfig::portable`] both backends give
    /// `reduce_core::portable::fold_axes`' bits.
    pub fn reduce_axes<M: CudaMonoid>(
        &self,
        items: &[M],
        shape: &[usize],
        axes: &[usize],
        config: impl Into<AxisConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                let out = gpu.reduce_axes(&gpu.upload(items)?, shape, axes, config)?;
                gpu.download(&out)
            }
            Backend::Cpu { .. } => {
                axis_plan(config, Own::<M>::new().items())?;
                let cpu = Cpu::new();
                match config.portable {
                    true => cpu.try_reduce_axes_portable(items, shape, axes),
                    false => cpu.try_reduce_axes(items, shape, axes),
                }
                .map_err(cpu_error::<M>)
            }
        }
    }
}

impl Backend {
    /// The scan of `items` (see [`Gpu::scan`] / `reduce_core::scan`). With
    /// [`ScanConfig::portable`] both backends give `reduce_core::portable::scan`'s bits (so do
    /// the segmented scans below: `portable::scan_segments`, `portable::scan_by_key`).
    pub fn scan<M: CudaMonoid>(
        &self,
        items: &[M],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => gpu.download(&gpu.scan(&gpu.upload(items)?, kind, config)?),
            Backend::Cpu { .. } => {
                scan_plan(config, Own::<M>::new().items(), Segments::None, false)?;
                let cpu = Cpu::new();
                if config.portable {
                    cpu.try_scan_portable(items, kind)
                } else {
                    cpu.try_scan(items, kind)
                }
                .map_err(fault::<M>)
            }
        }
    }

    /// The scan of each CSR segment, `u32` or `u64` offsets (see [`Gpu::scan_segments`] /
    /// `reduce_core::scan_segments`).
    pub fn scan_segments<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        self.scan_restarting(items, offsets, Segments::Offsets, kind, config.into())
    }

    /// The scan of each run of equal keys, `u32` or `u64` keys (see [`Gpu::scan_by_key`] /
    /// `reduce_core::scan_by_key`).
    pub fn scan_by_key<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        keys: &[I],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        self.scan_restarting(items, keys, Segments::Keys, kind, config.into())
    }

    /// A segmented scan whose segments start where `layout` (offsets or keys) says.
    fn scan_restarting<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        layout: &[I],
        segments: Segments,
        kind: Scan,
        config: ScanConfig,
    ) -> Result<Vec<M>> {
        let offsets = segments == Segments::Offsets;
        match self {
            Backend::Gpu(gpu) => {
                let (xs, layout) = (gpu.upload(items)?, gpu.upload(layout)?);
                let out = match offsets {
                    true => gpu.scan_segments(&xs, &layout, kind, config)?,
                    false => gpu.scan_by_key(&xs, &layout, kind, config)?,
                };
                gpu.download(&out)
            }
            Backend::Cpu { .. } => {
                scan_plan(config, Own::<M>::new().items(), segments, I::WIDE)?;
                let cpu = Cpu::new();
                let out = match (offsets, config.portable) {
                    (true, false) => cpu.try_scan_segments(items, layout, kind),
                    (false, false) => cpu.try_scan_by_key(items, layout, kind),
                    (true, true) => cpu.try_scan_segments_portable(items, layout, kind),
                    (false, true) => cpu.try_scan_by_key_portable(items, layout, kind),
                };
                out.map_err(cpu_error::<M>)
            }
        }
    }
}

/// The GPU's error for an index fault the CPU found in `M`'s code.
fn fault<M: CudaMonoid>(fault: IndexFault) -> Error {
    Error::DeviceFault {
        monoid: M::CUDA_NAME,
        index: fault.index,
        len: fault.len,
    }
}

fn cpu_error<M: CudaMonoid>(error: CpuError) -> Error {
    match error {
        CpuError::Fault(f) => fault::<M>(f),
        CpuError::Layout(e) => Error::Layout(e),
        other => Error::Internal(format!("an unknown CPU error: {other}")),
    }
}

/// The checks a GPU applies to a plain configuration, without a device.
fn check_plain(program: &dyn Program, config: Config) -> Result<()> {
    plain_plan(config, program.items(), 0).map(drop)
}

/// The checks a GPU applies to a segmented configuration and the sizes of its layout (the
/// counts its kernels index too: the same `TooLarge` on both backends).
fn check_segmented<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    n: usize,
    segments: usize,
) -> Result<()> {
    let shape = SegShape::new(Own::<M>::new().items(), offsets_form, I::WIDE, 0, 0);
    Ok(seg_plan(config, shape, n, segments)?.check_sizes(n, segments)?)
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
