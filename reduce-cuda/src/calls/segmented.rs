//! The public segmented reductions: one value per segment, segments given as CSR offsets or as
//! one owner per item (`u32` or `u64`), of the monoid's own values or of lifted items. Every
//! one goes through [`Gpu::segmented`]: host-side layout checks, memory entry, the plan
//! (`catalogue::seg_plan`), its index limits and device needs, the launches, the end of the
//! call.

use crate::catalogue::{seg_plan, seg_plans_to_prepare, SegConfig, SegShape};
use crate::device::{DeviceInput, DeviceOutput, DeviceVec, SegLayout};
use crate::dispatch::segmented::{Layout, SegJob};
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{JitReport, KernelOrigin, Lifted, Own, Program};
use reduce_core::layout::{check_fits, SegIndex};
use reduce_core::{CudaMonoid, DeviceCopy, LayoutError, Lift};
use std::time::Duration;

/// The segment count of CSR offsets of `entries` entries (entries - 1; none is a layout error).
fn csr_segments(entries: usize) -> Result<usize> {
    Ok(entries.checked_sub(1).ok_or(LayoutError::OffsetsEmpty)?)
}

/// The host-side checks of a CSR layout of `entries` offsets of type `I` over `items` items;
/// returns the segment count. `Backend`'s CPU makes them too, first, as here.
pub(crate) fn check_csr_layout<I: SegIndex>(items: usize, entries: usize) -> Result<usize> {
    let segments = csr_segments(entries)?;
    check_fits::<I>("item count", items)?;
    Ok(segments)
}

/// The host-side checks of an owner layout of `owners` owners of type `I` over `items` items
/// and `num_segments` segments. `Backend`'s CPU makes them too, first, as here.
pub(crate) fn check_owner_layout<I: SegIndex>(
    items: usize,
    owners: usize,
    num_segments: usize,
) -> Result<()> {
    if owners != items {
        return Err(LayoutError::OwnerLengthMismatch { items, owners }.into());
    }
    Ok(check_fits::<I>("segment count", num_segments)?)
}

/// The checks of a segmented configuration for `program`'s items and the sizes of its layout
/// (the counts its kernels index too), with the alignment the plan finds best: what the
/// allocating calls and the CPU backend check before anything else, so that both backends give
/// the same `InvalidConfig` and `TooLarge`.
pub(crate) fn check_seg_config<I: SegIndex>(
    program: &dyn Program,
    config: SegConfig,
    offsets_form: bool,
    n: usize,
    segments: usize,
) -> Result<()> {
    let shape = SegShape::new(program.items(), offsets_form, I::WIDE, 0, 0);
    Ok(seg_plan(config, shape, n, segments)?.check_sizes(n, segments)?)
}

/// [`check_owner_layout`] for `owner`'s index type: what the allocating calls check before they
/// allocate their `num_segments` results.
fn check_owners<L: SegLayout>(items: usize, owner: &L, num_segments: usize) -> Result<()> {
    check_owner_layout::<L::Index>(items, owner.len(), num_segments)
}

impl Gpu {
    /// One value per segment, where `owner[i]` is item i's segment (non-decreasing, below
    /// `num_segments`; `u32` or `u64`); segments that own no item get the identity. The layout is
    /// validated on the device (unless `SegConfig::trusted`) and a bad one returns
    /// [`crate::Error::Layout`] naming the first bad index. Items and owners may be any
    /// [`DeviceInput`]: a [`DeviceVec`], a cudarc slice or view, a raw [`crate::DeviceSlice`].
    pub fn reduce_by_owner<M: CudaMonoid>(
        &self,
        items: &impl DeviceInput<M>,
        owner: &impl SegLayout,
        num_segments: usize,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        check_owners(items.len(), owner, num_segments)?;
        let config = config.into();
        let program = Own::<M>::new();
        let mut out =
            self.segment_output(&program, owner, false, items.len(), num_segments, &config)?;
        self.reduce_by_owner_into(items, owner, num_segments, &mut out, config)?;
        Ok(out)
    }

    /// [`Gpu::reduce_by_owner`] into the caller's buffer (its first `num_segments` values): no
    /// allocation per call. With `SegConfig::trusted` it only queues the work (for loops and
    /// pipelines); validating waits for the result of the check, not for the reduction (stream
    /// order, as for a trusted call).
    pub fn reduce_by_owner_into<M: CudaMonoid, L: SegLayout>(
        &self,
        items: &impl DeviceInput<M>,
        owner: &L,
        num_segments: usize,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<SegConfig>,
    ) -> Result<()> {
        check_owner_layout::<L::Index>(items.len(), owner.len(), num_segments)?;
        let program = Own::<M>::new();
        self.segmented(
            &program,
            items,
            owner,
            false,
            num_segments,
            out,
            config.into(),
        )
    }

    /// One value per CSR segment: segment s is items `offsets[s] .. offsets[s + 1]`;
    /// `offsets` (`u32` or `u64`) holds segments + 1 entries, starts at 0, ends at N, never
    /// decreases. Validated on the device unless `SegConfig::trusted`. Items and offsets may be
    /// any [`DeviceInput`].
    pub fn reduce_segments<M: CudaMonoid>(
        &self,
        items: &impl DeviceInput<M>,
        offsets: &impl SegLayout,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        let segments = csr_segments(offsets.len())?;
        let config = config.into();
        let program = Own::<M>::new();
        let mut out =
            self.segment_output(&program, offsets, true, items.len(), segments, &config)?;
        self.reduce_segments_into(items, offsets, &mut out, config)?;
        Ok(out)
    }

    /// [`Gpu::reduce_segments`] into the caller's buffer (its first `offsets.len() - 1`
    /// values): no allocation per call. With `SegConfig::trusted` it only queues the work;
    /// validating waits for the result of the check, not for the reduction (stream order, as
    /// for a trusted call; with few offsets the check's result comes before the reduction ends;
    /// SegBlocks hands its check's result out behind its launch).
    pub fn reduce_segments_into<M: CudaMonoid, L: SegLayout>(
        &self,
        items: &impl DeviceInput<M>,
        offsets: &L,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<SegConfig>,
    ) -> Result<()> {
        let segments = check_csr_layout::<L::Index>(items.len(), offsets.len())?;
        let program = Own::<M>::new();
        self.segmented(&program, items, offsets, true, segments, out, config.into())
    }

    /// One value per CSR segment of the fold of `lift(x, i)` over the segment's items `x`
    /// (`i` the item's global index), left to right: [`Gpu::reduce_segments`] over items of
    /// type `X` without materialising monoid values (a segmented ArgMax over `f32` rows reads
    /// 4 bytes per item, not 8). Read by `SegShuffle`, `SegPipeline`, `SegHeads`, `SegBlocks` and
    /// `SegMerge` (and `Auto`, which picks among SegShuffle, SegHeads, SegBlocks and SegMerge);
    /// the paper's algorithms return [`crate::Error::InvalidConfig`].
    pub fn reduce_segments_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &impl DeviceInput<X>,
        offsets: &impl SegLayout,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        let segments = csr_segments(offsets.len())?;
        let config = config.into();
        let program = Lifted::<M, X>::new();
        let mut out =
            self.segment_output(&program, offsets, true, items.len(), segments, &config)?;
        self.reduce_segments_lifted_into(items, offsets, &mut out, config)?;
        Ok(out)
    }

    /// [`Gpu::reduce_segments_lifted`] into the caller's buffer (its first
    /// `offsets.len() - 1` values), as [`Gpu::reduce_segments_into`].
    pub fn reduce_segments_lifted_into<M: Lift<X>, X: DeviceCopy, L: SegLayout>(
        &self,
        items: &impl DeviceInput<X>,
        offsets: &L,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<SegConfig>,
    ) -> Result<()> {
        let segments = check_csr_layout::<L::Index>(items.len(), offsets.len())?;
        let program = Lifted::<M, X>::new();
        self.segmented(&program, items, offsets, true, segments, out, config.into())
    }

    /// [`Gpu::reduce_by_owner`] over items of type `X` lifted into `M` (see
    /// [`Gpu::reduce_segments_lifted`]).
    pub fn reduce_by_owner_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &impl DeviceInput<X>,
        owner: &impl SegLayout,
        num_segments: usize,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        check_owners(items.len(), owner, num_segments)?;
        let config = config.into();
        let program = Lifted::<M, X>::new();
        let mut out =
            self.segment_output(&program, owner, false, items.len(), num_segments, &config)?;
        self.reduce_by_owner_lifted_into(items, owner, num_segments, &mut out, config)?;
        Ok(out)
    }

    /// [`Gpu::reduce_by_owner_lifted`] into the caller's buffer, as
    /// [`Gpu::reduce_by_owner_into`].
    pub fn reduce_by_owner_lifted_into<M: Lift<X>, X: DeviceCopy, L: SegLayout>(
        &self,
        items: &impl DeviceInput<X>,
        owner: &L,
        num_segments: usize,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<SegConfig>,
    ) -> Result<()> {
        check_owner_layout::<L::Index>(items.len(), owner.len(), num_segments)?;
        let program = Lifted::<M, X>::new();
        self.segmented(
            &program,
            items,
            owner,
            false,
            num_segments,
            out,
            config.into(),
        )
    }

    /// Compiles (or loads) the kernels of a segmented configuration for `I` layouts; see
    /// [`Gpu::prepare`]. For `Auto`: the kernel of a call of unknown size (SegShuffle's, or for
    /// large values SegMerge's, SegHeads' or Tb2Seg's), and SegHeads' too where its bands hold
    /// values of this size by CSR offsets, and SegBlocks' (each of its blocks) where its bands
    /// do.
    /// Calls whose sizes make `Auto` size SegShuffle otherwise (lifted items with more segments
    /// than items; owners of short segments) or take SegMerge (past 2^32 items) still compile
    /// their kernel on first use.
    pub fn prepare_segmented<M: CudaMonoid, I: SegIndex>(
        &self,
        config: impl Into<SegConfig>,
        offsets_form: bool,
    ) -> Result<JitReport> {
        self.prepare_seg::<I>(&Own::<M>::new(), config.into(), offsets_form)
    }

    /// Compiles (or loads) the kernels of a lifted segmented configuration for `I` layouts (see
    /// [`Gpu::prepare_segmented`]).
    pub fn prepare_segmented_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        config: impl Into<SegConfig>,
        offsets_form: bool,
    ) -> Result<JitReport> {
        self.prepare_seg::<I>(&Lifted::<M, X>::new(), config.into(), offsets_form)
    }

    /// The main kernels `config` may run for `program` and `I` layouts (16-byte-aligned
    /// memory).
    fn prepare_seg<I: SegIndex>(
        &self,
        program: &dyn Program,
        config: SegConfig,
        offsets_form: bool,
    ) -> Result<JitReport> {
        let shape = SegShape::new(program.items(), offsets_form, I::WIDE, 0, 0);
        let loader = self.loader(program);
        let loaded = JitReport {
            origin: KernelOrigin::Memory,
            elapsed: Duration::ZERO,
        };
        seg_plans_to_prepare(config, shape)?
            .iter()
            .try_fold(loaded, |report, plan| {
                Ok(report.then(plan.module(&loader)?.1))
            })
    }

    /// The output of an allocating segmented call, after the checks of its configuration
    /// against the call's sizes ([`check_seg_config`]: a call the plan refuses allocates
    /// nothing, and fails as on the CPU backend). With a trusted layout it is zeroed first: a bad
    /// layout may leave segments unwritten (a kernel's work on one is bounded), and pooled memory
    /// holds earlier bytes, which need not be valid values of `M` (a `bool` field); zero bytes
    /// are, as for [`Gpu::zeroed`]. A validated call either writes every segment or returns its
    /// layout error, so it takes the memory as it is. (`_layout` names the index type.)
    fn segment_output<M: DeviceCopy, L: SegLayout>(
        &self,
        program: &dyn Program,
        _layout: &L,
        offsets_form: bool,
        n: usize,
        segments: usize,
        config: &SegConfig,
    ) -> Result<DeviceVec<M>> {
        check_seg_config::<L::Index>(program, *config, offsets_form, n, segments)?;
        if config.trusted {
            DeviceVec::filled(self.device(), segments, 0)
        } else {
            DeviceVec::alloc(self.device(), segments)
        }
    }

    /// The driver every segmented call goes through: enters the memory (context, alignment,
    /// stream order), plans, checks the plan's limits against the call, launches, and releases
    /// the memory after the last launch; for device code that can fault, the fault records of
    /// the kernels it launched are read and cleared even when the launches failed.
    #[allow(clippy::too_many_arguments)]
    fn segmented<M: DeviceCopy, X: DeviceCopy, I: SegIndex>(
        &self,
        program: &dyn Program,
        items: &impl DeviceInput<X>,
        layout: &impl DeviceInput<I>,
        offsets_form: bool,
        segments: usize,
        out: &mut impl DeviceOutput<M>,
        config: SegConfig,
    ) -> Result<()> {
        if out.len() < segments {
            return Err(Error::LengthMismatch {
                what: "the output must hold one value per segment",
                left: out.len(),
                right: segments,
            });
        }
        let device = self.device();
        let items_access = device.input(items)?;
        let layout_access = device.input(layout)?;
        let out_access = device.output(out)?;
        let n = items_access.len;
        let shape = SegShape::new(
            program.items(),
            offsets_form,
            I::WIDE,
            items_access.address,
            layout_access.address,
        );
        let plan = seg_plan(config, shape, n, segments)?;
        plan.check_sizes(n, segments)?;
        plan.check_device(&device.info)?;
        let mut d = self.dispatch(program)?;
        let (module, _) = plan.module(d.loader())?;
        let job = SegJob {
            items: (items_access.address, n),
            layout: Layout {
                ptr: layout_access.address,
                len: layout_access.len,
                offsets_form,
                wide: I::WIDE,
            },
            segments,
            out: out_access.address,
            module,
        };
        let validate = !config.trusted;
        let launched = if segments == 0 || n == 0 {
            // No segment: every owner is out of range, and offsets must be [0]. No item: every
            // segment is empty.
            let checked = if validate {
                d.validate_exact(&job)
            } else {
                Ok(())
            };
            checked.and_then(|()| match segments {
                0 => Ok(()),
                _ => d.fill_identity(&job),
            })
        } else {
            plan.launch(&mut d, &job, validate)
        };
        let released = out_access
            .release()
            .and(layout_access.release())
            .and(items_access.release());
        d.finish(launched.and(released))
    }
}
