//! `Backend`'s segmented reductions, both forms, of values and of lifted inputs: the GPU's
//! calls, or the same checks and then the CPU's (lifted inputs lifted first, in parallel, once
//! their layout has passed its checks).

use super::{cpu_error, lifted_on_cpu, on_cpu, room_for, Backend};
use crate::calls::{check_csr_layout, check_owner_layout, check_seg_config};
use crate::catalogue::SegConfig;
use crate::error::Result;
use crate::jit::{Lifted, Own};
use reduce_core::layout::{check_offsets, check_owner};
use reduce_core::{Cpu, CudaMonoid, DeviceCopy, Lift, SegIndex};

impl Backend {
    /// One value per CSR segment, `u32` or `u64` offsets (see [`crate::Gpu::reduce_segments`]
    /// / `Cpu::reduce_segments`). With [`SegConfig::portable`] both backends give
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
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                let segments = check_csr_layout::<I>(items.len(), offsets.len())?;
                check_seg_config::<I>(&Own::<M>::new(), config, true, items.len(), segments)?;
                room_for::<M>(segments)?;
                cpu_segments(items, offsets, config)
            }),
        }
    }

    /// [`Backend::reduce_segments`] of `lift(x, i)` over the items `x` (`i` the item's global
    /// index): see [`crate::Gpu::reduce_segments_lifted`].
    pub fn reduce_segments_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        items: &[X],
        offsets: &[I],
        config: impl Into<SegConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                let (xs, offsets) = (gpu.upload(items)?, gpu.upload(offsets)?);
                gpu.download(&gpu.reduce_segments_lifted(&xs, &offsets, config)?)
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                let segments = check_csr_layout::<I>(items.len(), offsets.len())?;
                let program = Lifted::<M, X>::new();
                check_seg_config::<I>(&program, config, true, items.len(), segments)?;
                check_offsets(offsets, items.len())?;
                room_for::<M>(segments)?;
                cpu_segments(&lifted_on_cpu::<M, X>(items)?, offsets, config)
            }),
        }
    }

    /// One value per owner, `u32` or `u64` owners (see [`crate::Gpu::reduce_by_owner`] /
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
                let (xs, owner) = (gpu.upload(items)?, gpu.upload(owner)?);
                gpu.download(&gpu.reduce_by_owner(&xs, &owner, num_segments, config)?)
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check_owner_layout::<I>(items.len(), owner.len(), num_segments)?;
                check_seg_config::<I>(&Own::<M>::new(), config, false, items.len(), num_segments)?;
                room_for_owners::<M>(num_segments)?;
                cpu_by_owner(items, owner, num_segments, config)
            }),
        }
    }

    /// [`Backend::reduce_by_owner`] of `lift(x, i)` over the items `x` (`i` the item's global
    /// index): see [`crate::Gpu::reduce_by_owner_lifted`].
    pub fn reduce_by_owner_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        items: &[X],
        owner: &[I],
        num_segments: usize,
        config: impl Into<SegConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                let (xs, owner) = (gpu.upload(items)?, gpu.upload(owner)?);
                gpu.download(&gpu.reduce_by_owner_lifted(&xs, &owner, num_segments, config)?)
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check_owner_layout::<I>(items.len(), owner.len(), num_segments)?;
                let program = Lifted::<M, X>::new();
                check_seg_config::<I>(&program, config, false, items.len(), num_segments)?;
                room_for_owners::<M>(num_segments)?;
                check_owner(owner, items.len(), num_segments)?;
                cpu_by_owner(&lifted_on_cpu::<M, X>(items)?, owner, num_segments, config)
            }),
        }
    }
}

/// The CPU's reduction of each CSR segment, in the mode `config` asks for (checked).
fn cpu_segments<M: CudaMonoid, I: SegIndex>(
    items: &[M],
    offsets: &[I],
    config: SegConfig,
) -> Result<Vec<M>> {
    let cpu = Cpu::new();
    match config.portable {
        true => cpu.try_reduce_segments_portable(items, offsets),
        false => cpu.try_reduce_segments(items, offsets),
    }
    .map_err(cpu_error::<M>)
}

/// The CPU's reduction by owner, in the mode `config` asks for (checked).
fn cpu_by_owner<M: CudaMonoid, I: SegIndex>(
    items: &[M],
    owner: &[I],
    num_segments: usize,
    config: SegConfig,
) -> Result<Vec<M>> {
    let cpu = Cpu::new();
    match config.portable {
        true => cpu.try_reduce_by_owner_portable(items, owner, num_segments),
        false => cpu.try_reduce_by_owner(items, owner, num_segments),
    }
    .map_err(cpu_error::<M>)
}

/// Room on the host for what the CPU holds at once by owner: `num_segments` results and the
/// `num_segments + 1` u64 offsets it makes of the owners (`reduce_core::layout::owner_to_offsets`),
/// else [`crate::Error::HostOutOfMemory`], not an abort.
fn room_for_owners<M>(num_segments: usize) -> Result<()> {
    room_for::<(M, u64)>(num_segments.saturating_add(1))
}
