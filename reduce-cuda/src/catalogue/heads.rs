//! The head-bits family (ours): `SegHeads`, the CSR form in three launches. The marks (a thread
//! per segment) set a bit where each non-empty segment starts, note each tile's first segment
//! and write the empty segments; the fold (a block per tile) reads its items and their bits,
//! never the offsets unless empty segments start in the tile, and writes the segments that
//! start and end in it; the join scans the tiles' records in order (a block per group of
//! tiles, then the last block over the groups), for the segments that cross tiles. The bits
//! live in scratch words that are zero between calls (the fold and the join clear them). Asked
//! for the owner form by name it runs what `Auto` runs (`catalogue::seg_plan`); `Auto` takes it
//! for owners of values too large for every owner-form kernel, the owners first turned into
//! CSR offsets on the device (`seg_owner_to_offsets`, a binary search per entry; and
//! `seg_validate_owner` into the status word the join hands out, when validated). The order
//! invariant is at the head of kernels/seg_heads.cu.

use super::algorithm::SegAlgorithm;
use super::caps::capped_module;
use super::config::{check_block, invalid, refuse, Knobs};
use super::plan::{SegPlan, SegShape};
use super::shuffle::{lane_items, seg_limits};
use super::tuning::{
    seg_heads_block, shuffle_items, ANY_DEVICE_BLOCK_SMEM, SEG_HEADS_LIFTED_BLOCK,
    SEG_HEADS_TILE_BYTES,
};
use crate::device::{kernel_signature, Entry, Module};
use crate::dispatch::segmented::SegJob;
use crate::dispatch::{Dispatch, Loader};
use crate::error::Result;
use crate::jit::{Family, JitReport, KernelSpec};
use std::sync::Arc;

kernel_signature! {
    /// The head bits, flags, first segment of each tile and the last segment (in `zeroed`)
    /// from the offsets; the empty segments' values; with `check`, the layout check's failure
    /// as 0 in `status`.
    struct MarksArgs { offsets, segments, n, out, zeroed, status, check }
}
kernel_signature! {
    /// Tile `blockIdx.x` of the items, with its bits: the segments complete in it into `out`,
    /// its record into `tile_vals` and `tile_meta`, its words of `zeroed` cleared.
    struct FoldArgs { r#in, n, offsets, segments, out, zeroed, tile_vals, tile_meta }
}
kernel_signature! {
    /// The tiles' records joined in order, by groups (records in `rec_vals`, `rec_meta`) and
    /// then by the last block over the groups; the layout check's status into `status_out`
    /// (when not null).
    struct JoinArgs {
        tile_vals, tile_meta, n, segments, out, zeroed, rec_vals, rec_meta, ticket, status,
        status_out,
    }
}

const MARKS: Entry<MarksArgs> = Entry::new("reduce_seg_heads_marks");
const FOLD: Entry<FoldArgs> = Entry::new("reduce_seg_heads_fold");
const JOIN: Entry<JoinArgs> = Entry::new("reduce_seg_heads_join");

/// `SegHeads` with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Heads {
    shape: SegShape,
    block: u32,
    items: u32,
    vecs: u32,
}

/// `SegHeads` for `shape` (either form: the owners become offsets first): a thread's run of
/// items sized as Shuffle's (about 64 bytes of input items, at most 32 items: its head bits lie
/// in two words), and by default no more than a tile's values within [`SEG_HEADS_TILE_BYTES`]
/// (lifted items narrower than their values), in blocks of [`seg_heads_block`] threads; items
/// lifted into wider values keep those items a thread in blocks of at most
/// [`SEG_HEADS_LIFTED_BLOCK`].
pub(super) fn plan(knobs: &Knobs, shape: SegShape) -> Result<Heads> {
    let name = SegAlgorithm::SegHeads.name();
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    refuse(name, "grid (a block per tile)", knobs.grid)?;
    let (m, seg) = (shape.items.m_size.max(1), shape.items.flagged_value_bytes());
    let mut block = check_block(name, knobs.block.unwrap_or(seg_heads_block(m)))?;
    // The tile's values within the budget, and with the static arrays within what every device
    // allows a block; the default block halves for values too large for one item a thread.
    let fitting = |block: u32| {
        let room =
            SEG_HEADS_TILE_BYTES.min(ANY_DEVICE_BLOCK_SMEM.saturating_sub(static_smem(block, seg)));
        room / (block as usize * m)
    };
    while knobs.block.is_none()
        && knobs.items_per_thread.is_none()
        && block > 32
        && fitting(block) == 0
    {
        block /= 2;
    }
    let requested = knobs.items_per_thread.unwrap_or_else(|| {
        shuffle_items(shape.items.in_size)
            .min(32)
            .min(fitting(block).max(1) as u32)
    });
    if knobs.block.is_none() && shape.items.lifted_narrower() {
        block = block.min(SEG_HEADS_LIFTED_BLOCK);
    }
    let (items, vecs) = lane_items(name, shape.items.in_size, Some(requested))?;
    if items > 32 {
        return Err(invalid(
            name,
            format!("items_per_thread {items} is past SegHeads' limit of 32"),
        ));
    }
    Ok(Heads {
        shape,
        block,
        items,
        vecs,
    })
}

/// A bound on the fold's static shared memory (kernels/seg_heads.cu: each warp's and thread's
/// head words and ranks, the block scan's `r_seg` values of `seg` bytes, a slot a warp and the
/// total, a few words).
pub(super) fn static_smem(block: u32, seg: usize) -> usize {
    let warps = block as usize / 32;
    let words = 4 * warps + 8 * block as usize;
    words + (warps + 1) * seg + 64
}

impl Heads {
    /// Items per tile (a block's).
    fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }

    /// The kernels, the fold's registers capped for `min_blocks` resident blocks per SM (0:
    /// uncapped).
    fn spec(&self, min_blocks: u32) -> KernelSpec {
        let shape = self.shape;
        KernelSpec::new(
            Family::SegHeads,
            &[
                ("R_BLOCK", self.block),
                ("R_ITEMS", self.items),
                ("R_VECS", self.vecs),
                ("R_ITEM_SHIFT", shape.lane_shift(self.vecs)),
                ("R_IDX64", shape.wide as u32),
                ("R_MIN_BLOCKS", min_blocks),
            ],
        )
    }
}

impl SegPlan for Heads {
    /// SegShuffle's: positions and ids in 32 bits, and with u64 offsets fewer than 2^32 - 1
    /// items, so that an entry past 2^32 - 1, read as 0xffffffff, is never a valid offset.
    fn limits(&self) -> Option<(u64, u64)> {
        Some(seg_limits(self.shape))
    }

    fn limited_by(&self) -> &'static str {
        "SegHeads' 32-bit positions and ids (use SegMerge or Auto)"
    }

    /// The uncapped kernels; [`Heads::module`] may compile the fold capped.
    fn variants(&self) -> Vec<KernelSpec> {
        vec![self.spec(0)]
    }

    /// The fold's registers capped by [`capped_module`]'s rule: ptxas gives the f32 fold 39
    /// registers (6 blocks of 256 threads an SM) where the threads allow 8, which it reaches
    /// at 32 without local memory: 4–5% less GPU time a call on an H200
    /// (docs/decisions/0081-seg-heads-register-cap.md).
    fn module(&self, loader: &Loader) -> Result<(Arc<Module>, JitReport)> {
        capped_module(
            loader,
            FOLD,
            self.block,
            self.dynamic_smem(),
            SegAlgorithm::SegHeads.name(),
            |cap| self.spec(cap),
        )
    }

    /// The fold's: a tile's values, staged by their heads' ranks.
    fn dynamic_smem(&self) -> usize {
        self.tile() as usize * self.shape.items.m_size
    }

    /// Marks, fold and join; with `validate` the join hands the marks' layout check to the
    /// host's word (the exact check then finds a bad layout's first error). Owners become
    /// offsets first, checked by `seg_validate_owner` instead of the marks when `validate`.
    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()> {
        let name = SegAlgorithm::SegHeads.name();
        let by_owners = !job.layout.offsets_form;
        // Every kernel first: once the marks run, the fold and join must run to clear their
        // words.
        let marks = d.device.kernel(&job.module, MARKS, self.block, 0, name)?;
        let fold = d
            .device
            .kernel(&job.module, FOLD, self.block, self.dynamic_smem(), name)?;
        let join = d.device.kernel(&job.module, JOIN, self.block, 0, name)?;
        let n = job.n();
        let segments = job.segments as u64;
        let tiles = n.div_ceil(self.tile());
        let groups = tiles.div_ceil(self.block as u64);
        // kernels/seg_heads.cu's r_heads_scratch: bits, flags, first segments, the last segment.
        let words = tiles * self.tile() / 32 + 2 * tiles + 1;
        let zeroed = d.zeroed(words as usize)?;
        let m = self.shape.items.m_size;
        let made_offsets = by_owners as usize * (segments as usize + 1) * self.shape.index_bytes();
        let [tile_vals, tile_meta, rec_vals, rec_meta, made] = d.carve(&[
            2 * m * tiles as usize,
            8 * tiles as usize,
            2 * m * groups as usize,
            24 * groups as usize,
            made_offsets,
        ])?[..] else {
            unreachable!("five regions")
        };
        let offsets = if by_owners { made } else { job.layout.ptr };
        let status = d.seg_status();
        let status_out = d.status_out(validate)?;
        let marks_args = MarksArgs {
            offsets,
            segments,
            n,
            out: job.out,
            zeroed,
            status,
            check: (validate && !by_owners) as u64,
        };
        // A thread per segment (kernels/seg_heads.cu says why): at most 2^27 blocks (segments
        // below 2^32, blocks of 32 threads or more).
        let marks_grid = segments.div_ceil(self.block as u64);
        let fold_args = FoldArgs {
            r#in: job.items.0,
            n,
            offsets,
            segments,
            out: job.out,
            zeroed,
            tile_vals,
            tile_meta,
        };
        let join_args = JoinArgs {
            tile_vals,
            tile_meta,
            n,
            segments,
            out: job.out,
            zeroed,
            rec_vals,
            rec_meta,
            ticket: d.ticket(),
            status,
            status_out,
        };
        // The owners' check sets the status word, which the join hands out and resets.
        let owners_made = match (by_owners, validate) {
            (false, _) => Ok(()),
            (true, false) => d.offsets_of_owners(job, offsets),
            (true, true) => d
                .check_owners(job, status)
                .and_then(|()| d.offsets_of_owners(job, offsets)),
        };
        // Once the marks ran, the fold and the join clear the words and the join resets the
        // status word; should a launch fail (a launch can fail after its kernel was queued),
        // both are reset here instead, or every later call would read them.
        let launched = owners_made
            .and_then(|()| d.launch(&marks, marks_grid, marks_args))
            .and_then(|()| d.launch(&fold, tiles, fold_args))
            .and_then(|()| d.launch(&join, groups, join_args));
        if let Err(e) = launched {
            let _ = d.clear_zeroed(words as usize * 4);
            d.reset_seg_status();
            return Err(e);
        }
        if validate {
            return d.fused_verdict(job, name);
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (MARKS.name, MarksArgs::PARAMS),
        (FOLD.name, FoldArgs::PARAMS),
        (JOIN.name, JoinArgs::PARAMS),
    ]
}
