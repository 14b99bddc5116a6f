//! The block-per-segment family (ours): `SegBlocks`, the CSR form in one launch. A block folds
//! a segment, as CUB's `DeviceSegmentedReduce` schedules it, but no block folds more than a
//! chunk of items: a segment past its first chunk is cut at the chunks' boundaries, a block a
//! piece, and the block that brings its last piece joins them in order (a count a chunk, of the
//! pieces of the segment that starts in it and leaves it, in words that are zero between calls;
//! a fill of zeros behind the launch). Those pieces are the chunks' blocks, which the grid
//! starts before the short segments' blocks. Made for long
//! segments, where a tile's per-segment phases (SegShuffle) or three launches (SegHeads) cost
//! more than a block's overhead per segment. CSR offsets only: asked for the owner form it runs
//! what `Auto` runs (`catalogue::seg_plan`). The order invariant is at the head of
//! kernels/seg_blocks.cu.

use super::algorithm::SegAlgorithm;
use super::config::{check_block, refuse, Knobs};
use super::plan::{unless_it_spills, SegPlan, SegShape};
use super::shuffle::{lane_items, seg_limits};
use super::tuning::{
    seg_blocks_block, seg_blocks_min_blocks, SEG_BLOCKS_CHUNK_BYTES, SEG_BLOCKS_FUSED_MIN_MEAN,
};
use crate::device::{kernel_signature, Entry, Module};
use crate::dispatch::segmented::SegJob;
use crate::dispatch::{Dispatch, Loader};
use crate::error::Result;
use crate::jit::{Family, JitReport, KernelSpec};
use std::sync::Arc;

kernel_signature! {
    /// The segments of `offsets` over the items, into `out`: `chunks` chunks' units, as many
    /// units of first pieces and `segments` segments' units, over `first_part`, `cross_part` (a
    /// value a chunk) and `counts` (a zeroed word a chunk); with `check` the layout's rules are
    /// checked as the units read them, into `status`.
    struct BlocksArgs {
        r#in, n, offsets, segments, out, first_part, cross_part, counts, chunks, status, check,
    }
}

const BLOCKS: Entry<BlocksArgs> = Entry::new("reduce_seg_blocks");

/// The most blocks one launch asks for; units past it are taken a grid apart.
const MAX_GRID: u64 = i32::MAX as u64;

/// `SegBlocks` with every parameter fixed (the offsets form).
#[derive(Clone, Copy, Debug)]
pub(super) struct Blocks {
    shape: SegShape,
    block: u32,
    items: u32,
    vecs: u32,
    /// Lane runs a chunk.
    chunk_runs: u32,
}

/// `SegBlocks` for `shape` (the offsets form): a lane's run of items sized as Shuffle's (about
/// 64 bytes of input items), blocks sized by the mean segment length of `n` items in `segments`
/// segments and the items' size ([`seg_blocks_block`]), chunks of [`SEG_BLOCKS_CHUNK_BYTES`] of
/// input items in whole runs.
pub(super) fn plan(knobs: &Knobs, shape: SegShape, n: usize, segments: usize) -> Result<Blocks> {
    let name = SegAlgorithm::SegBlocks.name();
    debug_assert!(shape.offsets_form);
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    refuse(name, "grid (a block per segment and chunk)", knobs.grid)?;
    let block = knobs
        .block
        .unwrap_or(seg_blocks_block(n, segments, shape.items.in_size));
    let block = check_block(name, block)?;
    let (items, vecs) = lane_items(name, shape.items.in_size, knobs.items_per_thread)?;
    let run_bytes = items as usize * shape.items.in_size.max(1);
    let chunk_runs = (SEG_BLOCKS_CHUNK_BYTES / run_bytes).max(1) as u32;
    Ok(Blocks {
        shape,
        block,
        items,
        vecs,
        chunk_runs,
    })
}

impl Blocks {
    /// Items a chunk.
    fn chunk(&self) -> u64 {
        self.chunk_runs as u64 * self.items as u64
    }
}

impl SegPlan for Blocks {
    /// SegShuffle's: positions and ids in 32 bits, and with u64 offsets fewer than 2^32 - 1
    /// items, so that an entry past 2^32 - 1, read as 0xffffffff, is never a valid offset.
    fn limits(&self) -> Option<(u64, u64)> {
        Some(seg_limits(self.shape))
    }

    fn limited_by(&self) -> &'static str {
        "SegBlocks' 32-bit positions and ids (use SegMerge or Auto)"
    }

    /// The kernel with its registers budgeted ([`seg_blocks_min_blocks`]), and where there is a
    /// budget, the kernel left to ptxas (0), run where the budgeted one uses local memory.
    fn variants(&self) -> Vec<KernelSpec> {
        let shape = self.shape;
        let spec = |min_blocks: u32| {
            KernelSpec::new(
                Family::SegBlocks,
                &[
                    ("R_BLOCK", self.block),
                    ("R_MIN_BLOCKS", min_blocks),
                    ("R_ITEMS", self.items),
                    ("R_VECS", self.vecs),
                    ("R_ITEM_SHIFT", shape.lane_shift(self.vecs)),
                    ("R_CHUNK_RUNS", self.chunk_runs),
                    ("R_IDX64", shape.wide as u32),
                ],
            )
        };
        match seg_blocks_min_blocks(self.block, shape.items.m_size) {
            0 => vec![spec(0)],
            budget => vec![spec(budget), spec(0)],
        }
    }

    fn module(&self, kernels: &Loader) -> Result<(Arc<Module>, JitReport)> {
        unless_it_spills(kernels, &self.variants(), BLOCKS.name)
    }

    fn dynamic_smem(&self) -> usize {
        0
    }

    /// One launch, a unit a block (units past [`MAX_GRID`] a grid apart), then a fill of zeros
    /// over the chunks' counts. Validated, the segments' units check the entries they read and
    /// a kernel behind them hands the status to the host's word; on a bad layout the exact
    /// check finds the first error. Validated with short segments (a mean below
    /// [`SEG_BLOCKS_FUSED_MIN_MEAN`]), the exact check runs first.
    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()> {
        let name = SegAlgorithm::SegBlocks.name();
        let fused = validate && job.n() / job.segments as u64 >= SEG_BLOCKS_FUSED_MIN_MEAN;
        if validate && !fused {
            d.validate_exact(job)?;
        }
        let kernel = d.device.kernel(&job.module, BLOCKS, self.block, 0, name)?;
        let n = job.n();
        let segments = job.segments as u64;
        let chunks = n.div_ceil(self.chunk());
        let units = 2 * chunks + segments;
        if units == 0 {
            return Ok(());
        }
        let counts = d.zeroed(chunks.max(1) as usize)?;
        let m = self.shape.items.m_size;
        let [first_part, cross_part] = d.carve(&[m * chunks as usize, m * chunks as usize])?[..]
        else {
            unreachable!("two regions")
        };
        let args = BlocksArgs {
            r#in: job.items.0,
            n,
            offsets: job.layout.ptr,
            segments,
            out: job.out,
            first_part,
            cross_part,
            counts,
            chunks,
            status: d.seg_status(),
            check: fused as u64,
        };
        let launched = d.launch(&kernel, units.min(MAX_GRID), args);
        // The counts go back to zero whatever the layout (a bad one's pieces may never all
        // arrive), and even when the launch failed after its kernel was queued.
        let cleared = d.clear_zeroed(chunks as usize * 4);
        if !fused {
            return launched.and(cleared);
        }
        if let Err(e) = launched.and(cleared).and_then(|()| d.hand_status(job)) {
            d.reset_seg_status();
            return Err(e);
        }
        d.fused_verdict(job, name)
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![(BLOCKS.name, BlocksArgs::PARAMS)]
}
