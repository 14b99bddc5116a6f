//! Segmented transform-reduce: items of type `X` lifted into monoid values on the fly
//! (`#[monoid(lift(X) = |x, i| ...)]`), never materialised. SegShuffle and SegMerge read them
//! (`r_in`, `m_lift` in kernels/seg_shuffle.cu and seg_merge.cu), `Auto` choosing between them
//! as for any items; the paper's algorithms refuse lifted items.

use super::{
    check_csr_layout, check_owner_layout, csr_segments, offline_plan, Gpu, ItemKind, SegConfig,
};
use crate::buffer::DeviceVec;
use crate::codegen::KernelSpec;
use crate::error::Result;
use crate::jit::{JitReport, LoadedKernel};
use crate::view::{DeviceInput, DeviceOutput, SegLayout};
use reduce_core::layout::SegIndex;
use reduce_core::{DeviceCopy, Lift};
use std::marker::PhantomData;
use std::sync::Arc;

/// The items are `X`s that the monoid lifts.
pub(crate) struct Lifted<X>(PhantomData<X>);

impl<M: Lift<X>, X: DeviceCopy> ItemKind<M> for Lifted<X> {
    type Item = X;
    const LIFTED: bool = true;
    const CAN_FAULT: bool = M::CAN_FAULT || M::LIFT_CAN_FAULT;
    fn module(gpu: &Gpu, spec: KernelSpec) -> Result<(Arc<LoadedKernel>, JitReport, KernelSpec)> {
        let spec = spec.lifted::<X>();
        let (module, report) = gpu.kernel_lifted::<M, X>(&spec)?;
        Ok((module, report, spec))
    }
}

impl Gpu {
    /// One value per CSR segment of the fold of `lift(x, i)` over the segment's items `x`
    /// (`i` the item's global index), left to right: [`Gpu::reduce_segments`] over items of
    /// type `X` without materialising monoid values (a segmented ArgMax over `f32` rows reads
    /// 4 bytes per item, not 8). Read by `SegShuffle` and `SegMerge` (and `Auto`, which picks
    /// between them); the paper's algorithms return [`crate::Error::InvalidConfig`].
    pub fn reduce_segments_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &impl DeviceInput<X>,
        offsets: &impl SegLayout,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        let segments = csr_segments(offsets)?;
        let mut out = DeviceVec::alloc(&self.inner.stream, self.info().ordinal, segments)?;
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
        let segments = check_csr_layout(items.len(), offsets)?;
        self.segmented_into::<M, Lifted<X>, L::Index>(
            items,
            offsets,
            true,
            segments,
            out,
            config.into(),
        )
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
        let mut out = DeviceVec::alloc(&self.inner.stream, self.info().ordinal, num_segments)?;
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
        check_owner_layout(items.len(), owner, num_segments)?;
        self.segmented_into::<M, Lifted<X>, L::Index>(
            items,
            owner,
            false,
            num_segments,
            out,
            config.into(),
        )
    }

    /// Compiles (or loads) the kernel of a lifted segmented configuration for `I` layouts.
    pub fn prepare_segmented_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
        &self,
        config: impl Into<SegConfig>,
        offsets_form: bool,
    ) -> Result<JitReport> {
        self.prepare_segmented_items::<M, Lifted<X>, I>(config.into(), offsets_form)
    }
}

/// The kernel text of a lifted segmented configuration for layouts of index type `I`, as
/// compiled for an sm_80+ device.
pub fn seg_kernel_source_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<crate::KernelSource> {
    let (plan, shape) = offline_plan::<M, Lifted<X>, I>(config, offsets_form)?;
    Ok(crate::codegen::assemble_lifted::<M, X>(
        &plan.kernel(shape).0.lifted::<X>(),
    ))
}

/// Every kernel text the runtime may run for a lifted segmented configuration, the one it
/// prefers first ([`seg_kernel_source_lifted`]'s; see [`crate::seg_kernel_variants_for`]).
pub fn seg_kernel_variants_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<Vec<crate::KernelSource>> {
    let (plan, shape) = offline_plan::<M, Lifted<X>, I>(config, offsets_form)?;
    Ok(std::iter::once(plan.kernel(shape))
        .chain(plan.fallback_kernel(shape))
        .map(|(spec, _)| crate::codegen::assemble_lifted::<M, X>(&spec.lifted::<X>()))
        .collect())
}

/// The dynamic shared memory per block that a launch passes with the kernel text of
/// [`seg_kernel_source_lifted`].
pub fn seg_dynamic_smem_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<usize> {
    let (plan, shape) = offline_plan::<M, Lifted<X>, I>(config, offsets_form)?;
    Ok(plan.dynamic_smem(shape))
}

/// Compiles a lifted segmented kernel for `arch` without a device (CI).
pub fn compile_seg_kernel_lifted<M: Lift<X>, X: DeviceCopy, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<Vec<u8>> {
    crate::compile::compile_cubin(
        &seg_kernel_source_lifted::<M, X, I>(config, offsets_form)?,
        arch,
    )
}
