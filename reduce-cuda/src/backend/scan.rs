//! `Backend`'s scans — plain, by CSR offsets and by keys, of values and of lifted inputs: the
//! GPU's calls, or the same checks and then the CPU's (lifted inputs lifted first, in
//! parallel, once their layout has passed its checks).

use super::{cpu_error, fault, lifted_on_cpu, on_cpu, Backend};
use crate::calls::check_scan_layout;
use crate::catalogue::{scan_plan, ScanConfig, Segments};
use crate::error::Result;
use crate::jit::{Lifted, Own, Program};
use reduce_core::layout::check_offsets;
use reduce_core::{Cpu, CudaMonoid, DeviceCopy, Lift, Scan, SegIndex};

impl Backend {
    /// The scan of `items` (see [`crate::Gpu::scan`] / `reduce_core::scan`). With
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
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check(&Own::<M>::new(), config, Segments::None, false)?;
                cpu_scan(items, kind, config)
            }),
        }
    }

    /// [`Backend::scan`] of `lift(x, i)` over the items `x` (`i` the item's index): see
    /// [`crate::Gpu::scan_lifted`].
    pub fn scan_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &[X],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        let config = config.into();
        match self {
            Backend::Gpu(gpu) => {
                gpu.download(&gpu.scan_lifted(&gpu.upload(items)?, kind, config)?)
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check(&Lifted::<M, X>::new(), config, Segments::None, false)?;
                cpu_scan(&lifted_on_cpu::<M, X>(items)?, kind, config)
            }),
        }
    }

    /// The scan of each CSR segment, `u32` or `u64` offsets (see [`crate::Gpu::scan_segments`]
    /// / `reduce_core::scan_segments`).
    pub fn scan_segments<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        self.restarting(items, offsets, true, kind, config.into())
    }

    /// [`Backend::scan_segments`] of `lift(x, i)` over the items `x` (`i` the item's global
    /// index): see [`crate::Gpu::scan_segments_lifted`].
    pub fn scan_segments_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        items: &[X],
        offsets: &[I],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        self.restarting_lifted(items, offsets, true, kind, config.into())
    }

    /// The scan of each run of equal keys, `u32` or `u64` keys (see [`crate::Gpu::scan_by_key`]
    /// / `reduce_core::scan_by_key`).
    pub fn scan_by_key<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        keys: &[I],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        self.restarting(items, keys, false, kind, config.into())
    }

    /// [`Backend::scan_by_key`] of `lift(x, i)` over the items `x` (`i` the item's global
    /// index): see [`crate::Gpu::scan_by_key_lifted`].
    pub fn scan_by_key_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        items: &[X],
        keys: &[I],
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<Vec<M>> {
        self.restarting_lifted(items, keys, false, kind, config.into())
    }

    /// A segmented scan whose segments start where `layout` (CSR offsets, or keys) says.
    fn restarting<M: CudaMonoid, I: SegIndex>(
        &self,
        items: &[M],
        layout: &[I],
        by_offsets: bool,
        kind: Scan,
        config: ScanConfig,
    ) -> Result<Vec<M>> {
        match self {
            Backend::Gpu(gpu) => {
                let (xs, layout) = (gpu.upload(items)?, gpu.upload(layout)?);
                gpu.download(&match by_offsets {
                    true => gpu.scan_segments(&xs, &layout, kind, config)?,
                    false => gpu.scan_by_key(&xs, &layout, kind, config)?,
                })
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check_scan_layout::<I>(items.len(), restarting(by_offsets), layout.len())?;
                check(&Own::<M>::new(), config, restarting(by_offsets), I::WIDE)?;
                cpu_restarting(items, layout, by_offsets, kind, config)
            }),
        }
    }

    /// [`Backend::restarting`] of lifted items.
    fn restarting_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        items: &[X],
        layout: &[I],
        by_offsets: bool,
        kind: Scan,
        config: ScanConfig,
    ) -> Result<Vec<M>> {
        match self {
            Backend::Gpu(gpu) => {
                let (xs, layout) = (gpu.upload(items)?, gpu.upload(layout)?);
                gpu.download(&match by_offsets {
                    true => gpu.scan_segments_lifted(&xs, &layout, kind, config)?,
                    false => gpu.scan_by_key_lifted(&xs, &layout, kind, config)?,
                })
            }
            Backend::Cpu { .. } => on_cpu::<M, _>(|| {
                check_scan_layout::<I>(items.len(), restarting(by_offsets), layout.len())?;
                let program = Lifted::<M, X>::new();
                check(&program, config, restarting(by_offsets), I::WIDE)?;
                if by_offsets {
                    check_offsets(layout, items.len())?;
                }
                let values = lifted_on_cpu::<M, X>(items)?;
                cpu_restarting(&values, layout, by_offsets, kind, config)
            }),
        }
    }
}

/// The checks a GPU applies to a scan's configuration for `program`'s items.
fn check(program: &dyn Program, config: ScanConfig, segments: Segments, wide: bool) -> Result<()> {
    scan_plan(config, program.items(), segments, wide).map(drop)
}

/// The CPU's scan of `items`, in the mode `config` asks for (checked).
fn cpu_scan<M: CudaMonoid>(items: &[M], kind: Scan, config: ScanConfig) -> Result<Vec<M>> {
    let cpu = Cpu::new();
    match config.portable {
        true => cpu.try_scan_portable(items, kind),
        false => cpu.try_scan(items, kind),
    }
    .map_err(fault::<M>)
}

/// The segments of a restarting scan, by CSR offsets or by keys.
fn restarting(by_offsets: bool) -> Segments {
    match by_offsets {
        true => Segments::Offsets,
        false => Segments::Keys,
    }
}

/// The CPU's segmented scan whose segments start where `layout` (CSR offsets, or keys) says, in
/// the mode `config` asks for (checked).
fn cpu_restarting<M: CudaMonoid, I: SegIndex>(
    items: &[M],
    layout: &[I],
    by_offsets: bool,
    kind: Scan,
    config: ScanConfig,
) -> Result<Vec<M>> {
    let cpu = Cpu::new();
    match (by_offsets, config.portable) {
        (true, false) => cpu.try_scan_segments(items, layout, kind),
        (false, false) => cpu.try_scan_by_key(items, layout, kind),
        (true, true) => cpu.try_scan_segments_portable(items, layout, kind),
        (false, true) => cpu.try_scan_by_key_portable(items, layout, kind),
    }
    .map_err(cpu_error::<M>)
}
