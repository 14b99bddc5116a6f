//! The public scans: every prefix of the items, inclusive or exclusive, plain or restarting at
//! every segment (CSR offsets, or runs of equal keys), of the monoid's own values or of lifted
//! items, into a new buffer, the caller's, or in place. Every one goes through [`Gpu::scanned`]:
//! the host-side checks, memory entry, the plan (`catalogue::scan_plan`), the launch, the
//! offsets' check, the end of the call. `reduce_core::{scan, scan_segments, scan_by_key}` are
//! the references.

use super::segmented::check_csr_layout;
use crate::catalogue::{scan_plan, ScanConfig, ScanPlan, Segments};
use crate::device::{DeviceInput, DeviceOutput, DeviceVec, SegLayout};
use crate::dispatch::segmented::{Layout, SegJob};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{Lifted, Own, Program};
use reduce_core::layout::{check_keys, SegIndex};
use reduce_core::{CudaMonoid, DeviceCopy, Lift, Scan};

/// The segments of a scan: none, CSR offsets or keys, in device memory.
enum ScanLayout<'a, L> {
    None,
    Offsets(&'a L),
    Keys(&'a L),
}

impl<'a, L> ScanLayout<'a, L> {
    /// Its kind and its entries.
    fn parts(&self) -> (Segments, Option<&'a L>) {
        match *self {
            ScanLayout::None => (Segments::None, None),
            ScanLayout::Offsets(offsets) => (Segments::Offsets, Some(offsets)),
            ScanLayout::Keys(keys) => (Segments::Keys, Some(keys)),
        }
    }
}

/// The items of a scan: an input, or the output itself (in place).
enum Source<'a, I> {
    Input(&'a I),
    InPlace,
}

/// The layout type of a plain scan (never read).
type NoLayout = DeviceVec<u32>;

/// The host-side checks of a scan's layout of `entries` entries of type `I` over `items`
/// items: CSR offsets' count and index width, or the keys' length; none for a plain scan.
/// `Backend`'s CPU makes them too, first, as here.
pub(crate) fn check_scan_layout<I: SegIndex>(
    items: usize,
    segments: Segments,
    entries: usize,
) -> Result<()> {
    match segments {
        Segments::None => Ok(()),
        Segments::Offsets => check_csr_layout::<I>(items, entries).map(drop),
        Segments::Keys => Ok(check_keys(items, entries)?),
    }
}

impl Gpu {
    /// The scan of `xs` (`Scan::Inclusive`: output i is `x_0 ⊕ … ⊕ x_i`; `Scan::Exclusive`: the
    /// fold of the items before i, the identity at 0), equal to `reduce_core::scan` for any
    /// associative monoid; float scans give the same bits from run to run (the grouping follows
    /// from N and the configuration only). Queued: the result is ready for the next call on this
    /// `Gpu`'s stream.
    pub fn scan<M: CudaMonoid>(
        &self,
        xs: &impl DeviceInput<M>,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<DeviceVec<M>> {
        let none = ScanLayout::<NoLayout>::None;
        self.scan_new(&Own::<M>::new(), xs, none, kind, config.into())
    }

    /// [`Gpu::scan`] into `out`, which holds at least one value per item (a longer one gets
    /// them in its first values).
    pub fn scan_into<M: CudaMonoid>(
        &self,
        xs: &impl DeviceInput<M>,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let none = ScanLayout::<NoLayout>::None;
        let source = Source::Input(xs);
        self.scanned(&Own::<M>::new(), source, none, kind, out, config.into())
    }

    /// [`Gpu::scan`] of `xs` into `xs` itself.
    pub fn scan_in_place<M: CudaMonoid>(
        &self,
        xs: &mut impl DeviceOutput<M>,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let none = ScanLayout::<NoLayout>::None;
        let source = Source::<DeviceVec<M>>::InPlace;
        self.scanned(&Own::<M>::new(), source, none, kind, xs, config.into())
    }

    /// [`Gpu::scan`] of `lift(x, i)` for the items `x` of `xs` (`i` the item's index), without
    /// storing the lifted values first.
    pub fn scan_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<DeviceVec<M>> {
        let none = ScanLayout::<NoLayout>::None;
        self.scan_new(&Lifted::<M, X>::new(), xs, none, kind, config.into())
    }

    /// [`Gpu::scan_lifted`] into `out`.
    pub fn scan_lifted_into<M: Lift<X>, X: DeviceCopy>(
        &self,
        xs: &impl DeviceInput<X>,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let none = ScanLayout::<NoLayout>::None;
        let program = Lifted::<M, X>::new();
        self.scanned(&program, Source::Input(xs), none, kind, out, config.into())
    }

    /// The scan of each CSR segment, restarting at every segment: segment s is items
    /// `offsets[s] .. offsets[s + 1]` (`u32` or `u64`, `segments + 1` entries from 0 to N, never
    /// decreasing; empty segments have no outputs), equal to `reduce_core::scan_segments`. The
    /// offsets are checked on the device unless `ScanConfig::trusted` (the call then waits for
    /// the scan), with the layout errors of [`Gpu::reduce_segments`].
    pub fn scan_segments<M: CudaMonoid, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<M>,
        offsets: &L,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<DeviceVec<M>> {
        let layout = ScanLayout::Offsets(offsets);
        self.scan_new(&Own::<M>::new(), xs, layout, kind, config.into())
    }

    /// [`Gpu::scan_segments`] into `out`.
    pub fn scan_segments_into<M: CudaMonoid, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<M>,
        offsets: &L,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let layout = ScanLayout::Offsets(offsets);
        let source = Source::Input(xs);
        self.scanned(&Own::<M>::new(), source, layout, kind, out, config.into())
    }

    /// [`Gpu::scan_segments`] of `xs` into `xs` itself. The offsets are checked after the scan
    /// (unless trusted): on a layout error the values in `xs` are unspecified.
    pub fn scan_segments_in_place<M: CudaMonoid, L: SegLayout>(
        &self,
        xs: &mut impl DeviceOutput<M>,
        offsets: &L,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let layout = ScanLayout::Offsets(offsets);
        let source = Source::<DeviceVec<M>>::InPlace;
        self.scanned(&Own::<M>::new(), source, layout, kind, xs, config.into())
    }

    /// [`Gpu::scan_segments`] of `lift(x, i)` (`i` the item's global index).
    pub fn scan_segments_lifted<M: Lift<X>, X: DeviceCopy, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<X>,
        offsets: &L,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<DeviceVec<M>> {
        let layout = ScanLayout::Offsets(offsets);
        self.scan_new(&Lifted::<M, X>::new(), xs, layout, kind, config.into())
    }

    /// [`Gpu::scan_segments_lifted`] into `out`.
    pub fn scan_segments_lifted_into<M: Lift<X>, X: DeviceCopy, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<X>,
        offsets: &L,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let layout = ScanLayout::Offsets(offsets);
        let program = Lifted::<M, X>::new();
        self.scanned(
            &program,
            Source::Input(xs),
            layout,
            kind,
            out,
            config.into(),
        )
    }

    /// The scan of each run of equal adjacent keys (`u32` or `u64`, one per item), restarting
    /// wherever the key changes, equal to `reduce_core::scan_by_key`. Keys are labels, not
    /// segment ids: they need not be sorted and a key may come back later (a new segment), so
    /// unlike the owners of [`Gpu::reduce_by_owner`] they take no count and need no check; the
    /// only error of theirs is a length mismatch.
    pub fn scan_by_key<M: CudaMonoid, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<M>,
        keys: &L,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<DeviceVec<M>> {
        let layout = ScanLayout::Keys(keys);
        self.scan_new(&Own::<M>::new(), xs, layout, kind, config.into())
    }

    /// [`Gpu::scan_by_key`] into `out`.
    pub fn scan_by_key_into<M: CudaMonoid, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<M>,
        keys: &L,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let layout = ScanLayout::Keys(keys);
        let source = Source::Input(xs);
        self.scanned(&Own::<M>::new(), source, layout, kind, out, config.into())
    }

    /// [`Gpu::scan_by_key`] of `xs` into `xs` itself.
    pub fn scan_by_key_in_place<M: CudaMonoid, L: SegLayout>(
        &self,
        xs: &mut impl DeviceOutput<M>,
        keys: &L,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let layout = ScanLayout::Keys(keys);
        let source = Source::<DeviceVec<M>>::InPlace;
        self.scanned(&Own::<M>::new(), source, layout, kind, xs, config.into())
    }

    /// [`Gpu::scan_by_key`] of `lift(x, i)` (`i` the item's global index).
    pub fn scan_by_key_lifted<M: Lift<X>, X: DeviceCopy, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<X>,
        keys: &L,
        kind: Scan,
        config: impl Into<ScanConfig>,
    ) -> Result<DeviceVec<M>> {
        let layout = ScanLayout::Keys(keys);
        self.scan_new(&Lifted::<M, X>::new(), xs, layout, kind, config.into())
    }

    /// [`Gpu::scan_by_key_lifted`] into `out`.
    pub fn scan_by_key_lifted_into<M: Lift<X>, X: DeviceCopy, L: SegLayout>(
        &self,
        xs: &impl DeviceInput<X>,
        keys: &L,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<ScanConfig>,
    ) -> Result<()> {
        let layout = ScanLayout::Keys(keys);
        let program = Lifted::<M, X>::new();
        self.scanned(
            &program,
            Source::Input(xs),
            layout,
            kind,
            out,
            config.into(),
        )
    }

    /// The allocating calls: the scan's host-side checks ([`Gpu::scan_checks`]) before its
    /// output is allocated (a call they refuse allocates nothing, and fails with its own error,
    /// not `OutOfMemory`), then [`Gpu::scanned`] into it.
    fn scan_new<M: DeviceCopy, X: DeviceCopy, L: SegLayout>(
        &self,
        program: &dyn Program,
        xs: &impl DeviceInput<X>,
        layout: ScanLayout<'_, L>,
        kind: Scan,
        config: ScanConfig,
    ) -> Result<DeviceVec<M>> {
        self.scan_checks(program, xs.len(), &layout, config)?;
        let mut out = DeviceVec::alloc(self.device(), xs.len())?;
        self.scanned(program, Source::Input(xs), layout, kind, &mut out, config)?;
        Ok(out)
    }

    /// The host-side checks of a scan of `n` items over `layout` ([`check_scan_layout`]), and
    /// its plan.
    fn scan_checks<L: SegLayout>(
        &self,
        program: &dyn Program,
        n: usize,
        layout: &ScanLayout<'_, L>,
        config: ScanConfig,
    ) -> Result<ScanPlan> {
        let (segments, entries) = layout.parts();
        check_scan_layout::<L::Index>(n, segments, entries.map_or(0, |l| l.len()))?;
        scan_plan(config, program.items(), segments, L::Index::WIDE)
    }

    /// The driver every scan goes through: the host-side checks, memory entry, the plan, the
    /// launch, the offsets' check (unless trusted), the release of the memory; for device code
    /// that can fault, the kernels' fault records.
    fn scanned<M: DeviceCopy, X: DeviceCopy, I: DeviceInput<X>, L: SegLayout>(
        &self,
        program: &dyn Program,
        source: Source<'_, I>,
        layout: ScanLayout<'_, L>,
        kind: Scan,
        out: &mut impl DeviceOutput<M>,
        config: ScanConfig,
    ) -> Result<()> {
        let n = match source {
            Source::Input(xs) => xs.len(),
            Source::InPlace => out.len(),
        };
        if out.len() < n {
            return Err(Error::LengthMismatch {
                what: "the output must hold one value per item",
                left: out.len(),
                right: n,
            });
        }
        let plan = self.scan_checks(program, n, &layout, config)?;
        let (segments, entries) = layout.parts();
        let device = self.device();
        let input = match source {
            Source::Input(xs) => Some(device.input(xs)?),
            Source::InPlace => None,
        };
        let layout_access = entries.map(|l| device.input(l)).transpose()?;
        let output = device.output(out)?;
        let mut d = self.dispatch(program)?;
        let items_at = input.as_ref().map_or(output.address, |a| a.address);
        let layout_at = layout_access
            .as_ref()
            .map_or((0, 0), |a| (a.address, (a.len as u64).saturating_sub(1)));
        let mut launched = match n {
            0 => Ok(()),
            _ => plan.launch(
                &mut d,
                items_at,
                n as u64,
                output.address,
                kind == Scan::Exclusive,
                layout_at,
            ),
        };
        if let (Segments::Offsets, false, Some(offsets)) =
            (segments, config.trusted, &layout_access)
        {
            launched = launched.and_then(|()| {
                let job = SegJob {
                    items: (items_at, n),
                    layout: Layout {
                        ptr: offsets.address,
                        len: offsets.len,
                        offsets_form: true,
                        wide: L::Index::WIDE,
                    },
                    segments: offsets.len - 1,
                    out: output.address,
                    // The check's kernel is in every module of the plan: the uncapped one,
                    // which the scan's choice loaded, costs no occupancy query.
                    module: d.module(&plan.kernels())?.0,
                };
                d.validate_exact(&job)
            });
        }
        let mut released = output.release();
        if let Some(access) = layout_access {
            released = released.and(access.release());
        }
        if let Some(access) = input {
            released = released.and(access.release());
        }
        d.finish(launched.and(released))
    }
}
