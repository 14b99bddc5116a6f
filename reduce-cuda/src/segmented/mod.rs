//! Segmented reductions: the owner form (the paper's) and the CSR offsets form, `u32` or `u64`
//! layouts; the paper's five segmented algorithms, SegShuffle and the merge-path SegMerge.
//!
//! `mod.rs` holds the public calls and the driver every algorithm goes through; `lifted.rs` the
//! calls that lift items of another type; `plan.rs` the catalogue and its knobs; `launch.rs`
//! each family's launches; `validate.rs` the layout checks.

mod launch;
mod lifted;
mod plan;
mod validate;

pub use lifted::{
    compile_seg_kernel_lifted, seg_dynamic_smem_lifted, seg_kernel_source_lifted,
    seg_kernel_variants_lifted,
};

pub use plan::{SegAlgorithm, SegConfig};

use crate::buffer::DeviceVec;
use crate::codegen::KernelSpec;
use crate::error::{Error, Result};
use crate::gpu::Gpu;
use crate::jit::{JitReport, LoadedKernel};
use crate::view::{DeviceInput, DeviceOutput, SegLayout};
use launch::Check;
use plan::{resolve, SegPlan, Shape};
use reduce_core::layout::{check_fits, SegIndex};
use reduce_core::{CudaMonoid, DeviceCopy, LayoutError};
use std::sync::Arc;

/// Where the segments come from: a device array of owners or CSR offsets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    /// Device address of the owners (one per item) or offsets (segments + 1 entries).
    pub ptr: u64,
    /// Entries in that array.
    pub len: usize,
    /// CSR offsets (else owners).
    pub offsets_form: bool,
    /// u64 entries (else u32).
    pub wide: bool,
}

impl Layout {
    fn new<I: SegIndex>(ptr: u64, len: usize, offsets_form: bool) -> Self {
        Layout {
            ptr,
            len,
            offsets_form,
            wide: I::WIDE,
        }
    }
}

/// The items a reduction reads: device address and count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Items {
    pub ptr: u64,
    pub len: usize,
}

/// What the items of a segmented reduction are: the monoid's own values ([`Own`]) or values of
/// another type that the monoid lifts (`lifted::Lifted<X>`). It picks the kernel module.
pub(crate) trait ItemKind<M: CudaMonoid> {
    /// The type of one item in device memory.
    type Item: DeviceCopy;
    /// Whether the kernels read `Item` through `m_lift`.
    const LIFTED: bool;
    /// Whether the device code (combine, or lift) can record an index fault (`fault.rs`).
    const CAN_FAULT: bool;
    /// Loads (compiling if needed) the module of `spec` for these items; returns it with the
    /// spec it is cached under.
    fn module(gpu: &Gpu, spec: KernelSpec) -> Result<(Arc<LoadedKernel>, JitReport, KernelSpec)>;
}

/// The items are the monoid's values.
pub(crate) struct Own;

impl<M: CudaMonoid> ItemKind<M> for Own {
    type Item = M;
    const LIFTED: bool = false;
    const CAN_FAULT: bool = M::CAN_FAULT;
    fn module(gpu: &Gpu, spec: KernelSpec) -> Result<(Arc<LoadedKernel>, JitReport, KernelSpec)> {
        let (module, report) = gpu.kernel::<M>(&spec)?;
        Ok((module, report, spec))
    }
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
        let mut out = DeviceVec::alloc(&self.inner.stream, self.info().ordinal, num_segments)?;
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
        check_owner_layout(items.len(), owner, num_segments)?;
        self.segmented_into::<M, Own, L::Index>(
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
        let segments = csr_segments(offsets)?;
        let mut out = DeviceVec::alloc(&self.inner.stream, self.info().ordinal, segments)?;
        self.reduce_segments_into(items, offsets, &mut out, config)?;
        Ok(out)
    }

    /// [`Gpu::reduce_segments`] into the caller's buffer (its first `offsets.len() - 1`
    /// values): no allocation per call. With `SegConfig::trusted` it only queues the work;
    /// validating waits for the result of the check, not for the reduction (stream order, as
    /// for a trusted call; with few offsets the check's result comes before the reduction ends).
    pub fn reduce_segments_into<M: CudaMonoid, L: SegLayout>(
        &self,
        items: &impl DeviceInput<M>,
        offsets: &L,
        out: &mut impl DeviceOutput<M>,
        config: impl Into<SegConfig>,
    ) -> Result<()> {
        let segments = check_csr_layout(items.len(), offsets)?;
        self.segmented_into::<M, Own, L::Index>(items, offsets, true, segments, out, config.into())
    }

    /// Compiles (or loads) the kernel of a segmented configuration for `I` layouts; see
    /// [`Gpu::prepare`].
    pub fn prepare_segmented<M: CudaMonoid, I: SegIndex>(
        &self,
        config: impl Into<SegConfig>,
        offsets_form: bool,
    ) -> Result<JitReport> {
        self.prepare_segmented_items::<M, Own, I>(config.into(), offsets_form)
    }

    /// Compiles (or loads) the main kernel of `config` for items `K` and `I` layouts.
    fn prepare_segmented_items<M: CudaMonoid, K: ItemKind<M>, I: SegIndex>(
        &self,
        config: SegConfig,
        offsets_form: bool,
    ) -> Result<JitReport> {
        let shape = shape_of::<M, K>(Layout::new::<I>(0, 0, offsets_form), 0);
        let plan = resolve(config, shape, 0, 0).plan(shape)?;
        Ok(self.seg_module::<M, K>(&plan, shape)?.1)
    }

    /// Loads (compiling if needed) the module of `plan` for items `K`: its preferred kernel, or,
    /// where that one uses local memory and the plan has a variant for that case
    /// ([`SegPlan::fallback_kernel`]), the variant. Returns the module, how it was obtained (the
    /// costlier origin of the two steps, both steps' time) and the spec it is cached under.
    fn seg_module<M: CudaMonoid, K: ItemKind<M>>(
        &self,
        plan: &SegPlan,
        shape: Shape,
    ) -> Result<(Arc<LoadedKernel>, JitReport, KernelSpec)> {
        let (spec, entry) = plan.kernel(shape);
        let preferred = K::module(self, spec)?;
        let Some((fallback, _)) = plan.fallback_kernel(shape) else {
            return Ok(preferred);
        };
        if !preferred.0.uses_local_memory(entry)? {
            return Ok(preferred);
        }
        let (module, report, spec) = K::module(self, fallback)?;
        let report = JitReport {
            origin: report.origin.max(preferred.1.origin),
            elapsed: preferred.1.elapsed + report.elapsed,
        };
        Ok((module, report, spec))
    }

    /// The driver every segmented call goes through: enters the memory (context, alignment,
    /// stream order), plans, launches, and releases the memory after the last launch.
    fn segmented_into<M: CudaMonoid, K: ItemKind<M>, I: SegIndex>(
        &self,
        items: &impl DeviceInput<K::Item>,
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
        let items_access = self.input(items)?;
        let layout_access = self.input(layout)?;
        let out_access = self.output(out)?;
        let items = Items {
            ptr: items_access.address,
            len: items_access.len,
        };
        let layout = Layout {
            ptr: layout_access.address,
            len: layout_access.len,
            offsets_form,
            wide: I::WIDE,
        };
        self.segmented_raw::<M, K>(items, layout, segments, out_access.address, config)?;
        out_access.release()?;
        layout_access.release()?;
        items_access.release()
    }

    /// Plans and launches a segmented reduction over raw device addresses, then, for device
    /// code that can fault, checks the fault records of the kernels it launched.
    fn segmented_raw<M: CudaMonoid, K: ItemKind<M>>(
        &self,
        items: Items,
        layout: Layout,
        segments: usize,
        out_ptr: u64,
        config: SegConfig,
    ) -> Result<()> {
        let n = items.len;
        let shape = shape_of::<M, K>(layout, items.ptr);
        let config = resolve(config, shape, n, segments);
        let plan = config.plan(shape)?;
        if let Some((max_items, max_segments)) = plan.index_limits(shape) {
            for (what, value, limit) in [
                ("item count", n, max_items),
                ("segment count", segments, max_segments),
            ] {
                if value as u64 > limit {
                    return Err(LayoutError::TooLarge {
                        what,
                        value,
                        limit,
                        why: "the paper's algorithms and SegShuffle (use SegMerge or Auto)",
                    }
                    .into());
                }
            }
        }
        if let SegPlan::Merge { .. } = plan {
            if self.info().compute_capability.0 < 8 {
                return Err(crate::algorithm::invalid(
                    SegAlgorithm::SegMerge,
                    format!(
                        "needs sm_80 or newer (cp.async); this device is {}",
                        self.info().arch()
                    ),
                ));
            }
        }
        let mut scratch = self.lock_scratch();
        let (module, _, spec) = self.seg_module::<M, K>(&plan, shape)?;
        let job = launch::Job {
            plan,
            shape,
            items,
            layout,
            segments,
            out: out_ptr,
            module,
        };
        let launched = self.segmented_launches::<M>(&job, &mut scratch, !config.trusted);
        if !K::CAN_FAULT || segments == 0 || n == 0 {
            return launched;
        }
        // A fault record must be read and cleared even when the launches failed, or it would
        // be reported by the next call; the launches' own error comes first.
        let mut specs = vec![spec];
        if plan.multi_pass() {
            specs.push(plan.next_pass().kernel(shape).0);
        }
        let faults = self.check_device_fault::<M>(&specs.iter().collect::<Vec<_>>());
        launched.and(faults)
    }

    /// The launches of one planned job (with the layout checks unless `validate` is false).
    fn segmented_launches<M: CudaMonoid>(
        &self,
        job: &launch::Job,
        scratch: &mut crate::gpu::Scratch,
        validate: bool,
    ) -> Result<()> {
        if job.segments == 0 {
            // Every owner is out of range when there are no segments; offsets must be [0].
            return if validate {
                self.validate_exact(job, scratch)
            } else {
                Ok(())
            };
        }
        if job.items.len == 0 {
            if validate {
                self.validate_exact(job, scratch)?;
            }
            return self.fill_identity(job);
        }
        match job.plan {
            SegPlan::Merge { .. } => {
                self.seg_merge(job, scratch, validate)?;
                if validate && self.poll_pinned_status(scratch)? != u64::MAX {
                    // The fused check saw a bad layout: find the first bad index.
                    self.validate_exact(job, scratch)?;
                    return Err(Error::Internal(
                        "SegMerge's layout check failed on a layout the exact check accepts".into(),
                    ));
                }
                Ok(())
            }
            SegPlan::Shuffle { .. } => {
                if !validate {
                    return self.seg_shuffle(job, scratch, Check::None);
                }
                if job.checks_early() {
                    // Few offsets: their first error key arrives before the launch ends.
                    self.seg_shuffle(job, scratch, Check::Early)?;
                    let key = self.poll_pinned_status(scratch)?;
                    return self.status_error(job, key);
                }
                // Else the layout check is fused into the launch in both forms. The owner form
                // reports the first bad owner; the offsets form only that its reads saw a bad
                // entry: the exact check finds it.
                self.seg_shuffle(job, scratch, Check::Fused)?;
                let status = self.poll_pinned_status(scratch)?;
                if !job.layout.offsets_form {
                    self.status_error(job, status)?;
                } else if status != u64::MAX {
                    self.validate_exact(job, scratch)?;
                    return Err(Error::Internal(
                        "SegShuffle's layout check failed on a layout the exact check accepts"
                            .into(),
                    ));
                }
                Ok(())
            }
            _ => {
                if validate {
                    self.validate_exact(job, scratch)?;
                }
                self.seg_paper::<M>(job, scratch)
            }
        }
    }
}

/// The segment count of CSR `offsets` (entries - 1; none is a layout error).
fn csr_segments(offsets: &impl SegLayout) -> Result<usize> {
    Ok(offsets
        .len()
        .checked_sub(1)
        .ok_or(LayoutError::OffsetsEmpty)?)
}

/// The host-side checks of a CSR layout over `items` items; returns the segment count.
fn check_csr_layout<L: SegLayout>(items: usize, offsets: &L) -> Result<usize> {
    let segments = csr_segments(offsets)?;
    check_fits::<L::Index>("item count", items)?;
    Ok(segments)
}

/// The host-side checks of an owner layout over `items` items and `num_segments` segments.
fn check_owner_layout<L: SegLayout>(items: usize, owner: &L, num_segments: usize) -> Result<()> {
    if owner.len() != items {
        return Err(LayoutError::OwnerLengthMismatch {
            items,
            owners: owner.len(),
        }
        .into());
    }
    Ok(check_fits::<L::Index>("segment count", num_segments)?)
}

/// The plan and shape of a configuration for `I` layouts, as a launch would fix them, without
/// a device or data (for the kernel text and its shared memory: CI, the emulator).
fn offline_plan<M: CudaMonoid, K: ItemKind<M>, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<(SegPlan, Shape)> {
    let shape = shape_of::<M, K>(Layout::new::<I>(0, 0, offsets_form), 0);
    Ok((resolve(config, shape, 0, 0).plan(shape)?, shape))
}

fn shape_of<M: CudaMonoid, K: ItemKind<M>>(layout: Layout, items_ptr: u64) -> Shape {
    Shape {
        in_size: std::mem::size_of::<K::Item>(),
        m_size: std::mem::size_of::<M>(),
        offsets_form: layout.offsets_form,
        wide: layout.wide,
        plain_items: !items_ptr.is_multiple_of(16),
        plain_index: !layout.ptr.is_multiple_of(16),
        lifted: K::LIFTED,
    }
}

/// The kernel text of a segmented algorithm (owner or offsets form, `u32` layouts) for monoid
/// `M`, as compiled for an sm_80+ device.
pub fn seg_kernel_source<M: CudaMonoid>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<crate::KernelSource> {
    seg_kernel_source_for::<M, u32>(config, offsets_form)
}

/// The kernel text of a segmented algorithm for layouts of index type `I`.
pub fn seg_kernel_source_for<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<crate::KernelSource> {
    let (plan, shape) = offline_plan::<M, Own, I>(config, offsets_form)?;
    Ok(crate::codegen::assemble::<M>(&plan.kernel(shape).0))
}

/// Every kernel text the runtime may run for a segmented configuration and index type `I`,
/// the one it prefers first ([`seg_kernel_source_for`]'s). SegShuffle with `u32` offsets has a
/// second: without a tile's first offsets loaded ahead of its marks, which runs for monoids whose
/// preferred kernel uses local memory (spills under the kernel's register cap).
pub fn seg_kernel_variants_for<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<Vec<crate::KernelSource>> {
    let (plan, shape) = offline_plan::<M, Own, I>(config, offsets_form)?;
    Ok(std::iter::once(plan.kernel(shape))
        .chain(plan.fallback_kernel(shape))
        .map(|(spec, _)| crate::codegen::assemble::<M>(&spec))
        .collect())
}

/// The dynamic shared memory per block that a launch passes with the kernel text of
/// [`seg_kernel_source`] (for running that text elsewhere, as the CPU emulator does).
pub fn seg_dynamic_smem<M: CudaMonoid>(config: SegConfig, offsets_form: bool) -> Result<usize> {
    let (plan, shape) = offline_plan::<M, Own, u32>(config, offsets_form)?;
    Ok(plan.dynamic_smem(shape))
}

/// Compiles a segmented kernel (`u32` layouts) for `arch` without a device (CI).
pub fn compile_seg_kernel<M: CudaMonoid>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<Vec<u8>> {
    compile_seg_kernel_for::<M, u32>(config, offsets_form, arch)
}

/// Compiles a segmented kernel for layouts of index type `I` for `arch` without a device (CI).
pub fn compile_seg_kernel_for<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<Vec<u8>> {
    crate::compile::compile_cubin(&seg_kernel_source_for::<M, I>(config, offsets_form)?, arch)
}
