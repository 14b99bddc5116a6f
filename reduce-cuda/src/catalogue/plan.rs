//! What a plan is: a configuration with every parameter fixed and checked, for the items (and
//! the layout) of a call — the kernels it needs and the launches that run it. Each family
//! implements these traits; `catalogue/mod.rs` chooses the family.

use crate::device::{DeviceInfo, Module};
use crate::dispatch::segmented::SegJob;
use crate::dispatch::{Dispatch, Loader};
use crate::error::Result;
use crate::jit::{Items, JitReport, KernelSpec};
use reduce_core::LayoutError;
use std::sync::Arc;

/// A plain reduction with every parameter fixed.
pub(crate) trait PlainPlan {
    /// The kernels the plan launches, the main one first.
    fn kernels(&self) -> Vec<KernelSpec>;
    /// The dynamic shared memory of the main kernel's blocks for `items`.
    fn dynamic_smem(&self, items: &Items) -> usize;
    /// Queues the reduction of the `n` items at `input` into `out`, or, without one, into
    /// scratch memory; returns the result's address.
    fn launch(&self, d: &mut Dispatch, input: u64, n: u64, out: Option<u64>) -> Result<u64>;
}

/// What a segmented plan is for: the items, the layout's form, and where the items and the
/// layout lie relative to 16-byte boundaries (vector loads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SegShape {
    pub items: Items,
    /// CSR offsets (else owners).
    pub offsets_form: bool,
    /// u64 offsets or owners.
    pub wide: bool,
    /// How many bytes past a 16-byte boundary the items start: SegShuffle's kernel is
    /// specialised for it (vector loads at any offset); SegMerge copies items that are not
    /// aligned with plain loads.
    pub item_shift: u32,
    /// The offsets or owners are not 16-byte aligned (no vector loads of them).
    pub plain_index: bool,
}

impl SegShape {
    /// The shape of a call of `items` over a layout in the offsets form (else owners), of u64
    /// entries if `wide`, with the items and the layout at the given device addresses (0 for
    /// aligned memory).
    pub fn new(items: Items, offsets_form: bool, wide: bool, items_at: u64, index_at: u64) -> Self {
        SegShape {
            items,
            offsets_form,
            wide,
            item_shift: (items_at % 16) as u32,
            plain_index: !index_at.is_multiple_of(16),
        }
    }

    /// The bytes of one offset or owner: 8 for u64 layouts, else 4.
    pub fn index_bytes(&self) -> usize {
        if self.wide {
            8
        } else {
            4
        }
    }

    /// The `R_ITEM_SHIFT` of a kernel whose lanes read runs of `vecs` 16-byte vectors: the
    /// items' shift, or none for runs read item by item (kernels/lanes.cuh).
    pub fn lane_shift(&self, vecs: u32) -> u32 {
        if vecs > 0 {
            self.item_shift
        } else {
            0
        }
    }
}

/// A segmented reduction with every parameter fixed.
pub(crate) trait SegPlan {
    /// The most items and segments its kernels index (`None`: no limit but memory).
    fn limits(&self) -> Option<(u64, u64)> {
        Some((u32::MAX as u64, u32::MAX as u64))
    }
    /// What sets [`SegPlan::limits`], for the error past them.
    fn limited_by(&self) -> &'static str {
        "the paper's algorithms and SegShuffle (use SegMerge or Auto)"
    }
    /// `n` items in `segments` segments within [`SegPlan::limits`], or the count past them.
    fn check_sizes(&self, n: usize, segments: usize) -> std::result::Result<(), LayoutError> {
        let Some((max_items, max_segments)) = self.limits() else {
            return Ok(());
        };
        for (what, value, limit) in [
            ("item count", n, max_items),
            ("segment count", segments, max_segments),
        ] {
            if value as u64 > limit {
                return Err(LayoutError::TooLarge {
                    what,
                    value,
                    limit,
                    why: self.limited_by(),
                });
            }
        }
        Ok(())
    }
    /// Every kernel the main launch may run, the preferred one first ([`SegPlan::module`]
    /// says when another runs), before any register cap: `module` may compile a copy of one
    /// with its registers capped (`catalogue/caps.rs`).
    fn variants(&self) -> Vec<KernelSpec>;
    /// The main launch's dynamic shared memory per block.
    fn dynamic_smem(&self) -> usize;
    /// What the device must offer beyond what every algorithm needs.
    fn check_device(&self, _info: &DeviceInfo) -> Result<()> {
        Ok(())
    }
    /// The module the main launch runs from: the preferred variant's.
    fn module(&self, kernels: &Loader) -> Result<(Arc<Module>, JitReport)> {
        kernels.module(&self.variants()[0])
    }
    /// Queues the reduction of `job` (with at least one item and one segment), checking its
    /// layout first or on the way when `validate`.
    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()>;
}

/// The module of `variants[0]`, or of `variants[1]` where its kernel `entry` uses local memory
/// (a preferred schedule that spills for some values, and the fallback that does not).
pub(super) fn unless_it_spills(
    kernels: &Loader,
    variants: &[KernelSpec],
    entry: &'static str,
) -> Result<(Arc<Module>, JitReport)> {
    let preferred = kernels.module(&variants[0])?;
    let Some(fallback) = variants.get(1) else {
        return Ok(preferred);
    };
    if !preferred.0.uses_local_memory(entry)? {
        return Ok(preferred);
    }
    let (module, report) = kernels.module(fallback)?;
    Ok((module, preferred.1.then(report)))
}
