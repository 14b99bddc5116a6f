//! The portable reductions (`Config::portable`, served by `Shuffle` and `Auto`;
//! `SegConfig::portable`, served by `SegShuffle` and `Auto`): the grouping
//! `reduce_core::portable` defines — runs of 64 bytes of monoid values at fixed positions, a
//! fixed tree over their global indices — so the bits depend on N (a segment's position) and
//! the monoid's size only. The kernels (kernels/portable.cu, kernels/seg_portable.cu, each with
//! its order invariant at its head) compute that tree in nodes of whatever power-of-two size
//! suits the device; block, grid, tile group and items per thread change the speed, never the
//! bits.

use super::config::{check_block, check_grid, check_power_of_two, invalid, refuse, Knobs};
use super::plan::{PlainPlan, SegPlan, SegShape};
use super::shuffle::{lane_items, launch_plain, plain_grid, ShuffleArgs, STATIC_SMEM_LIMIT};
use super::tuning::{self, ANY_DEVICE_BLOCK_SMEM, SEG_PORTABLE_BLOCK, SHUFFLE_BLOCK};
use crate::device::{kernel_signature, Entry};
use crate::dispatch::segmented::SegJob;
use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::{Family, Items, KernelSpec};
use reduce_core::portable::run_len_for_size;

kernel_signature! {
    /// One value per segment into `out`; the nodes (`group` tiles each) in `nodes_out`; `check`
    /// (1: the owners are checked on the way) and `status_out` for that check.
    struct SegPortableArgs {
        r#in, n, seg_index, segments, out, nodes_out, group, ticket, status, fill_budget, check,
        status_out,
    }
}

const REDUCE_PORTABLE: Entry<ShuffleArgs> = Entry::new("reduce_portable");
const REDUCE_SEG_PORTABLE: Entry<SegPortableArgs> = Entry::new("reduce_seg_portable");

/// The most runs a lane folds per tile.
const MAX_LANE_RUNS: u32 = 16;

/// The portable reduction with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Portable {
    /// The algorithm asked for (`Shuffle` or `Auto`), for errors.
    name: &'static str,
    block: u32,
    /// Items per run (64 bytes of monoid values, at least one).
    run: u32,
    /// Runs per lane and tile (a power of two).
    lane_runs: u32,
    /// 16-byte vectors per lane and tile (0: item-by-item loads).
    vecs: u32,
    /// The input's offset in bytes from a 16-byte boundary (0 without vector loads).
    item_shift: u32,
    /// Block tiles per node (a power of two).
    group: u32,
    /// Nodes per barrier (the ring's size).
    flush: u32,
    grid: Option<u32>,
}

/// The portable plan of `algorithm` (`Shuffle` or `Auto`, checked by the caller) for `items` at
/// device address `items_at`.
pub(super) fn plain(
    name: &'static str,
    knobs: &Knobs,
    items: Items,
    items_at: u64,
) -> Result<Portable> {
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    let size = items.m_size.max(1);
    let run = run_len_for_size(size) as u32;
    // A lane holds at most Shuffle's 256 items: the largest power of two of runs within them.
    let max_runs = 1 << MAX_LANE_RUNS.min(256 / run).ilog2();
    let lane_runs = match knobs.items_per_thread {
        None => tuning::portable_lane_runs(run, items.in_size),
        Some(k) if k % run == 0 && (k / run).is_power_of_two() && k / run <= max_runs => k / run,
        Some(k) => {
            return Err(invalid(
                name,
                format!(
                    "in portable mode items_per_thread must be the run length ({run} items of \
                     {size} bytes) times a power of two up to {max_runs}, not {k}"
                ),
            ))
        }
    };
    let why = " in portable mode (block tiles are aligned nodes of the tree)";
    let mut block = knobs.block.unwrap_or(SHUFFLE_BLOCK);
    check_power_of_two(name, check_block(name, block)?, why)?;
    if let Some(group) = knobs.tile_group {
        if !group.is_power_of_two() {
            return Err(invalid(
                name,
                format!("tile_group {group} must be a power of two{why}"),
            ));
        }
    }
    let per_lane = run * lane_runs;
    let mut group = knobs
        .tile_group
        .unwrap_or_else(|| tuning::portable_group(block, per_lane, items.in_size, size));
    let mut flush = tuning::portable_flush(group);
    // Two rings of `flush` nodes' warp values and a value a warp live in static shared memory.
    // Large items: shrink the flush, then the defaults the caller left open (the group, then
    // the block) until they fit.
    let smem = |flush: u32, group: u32, block: u32| {
        let warps = block as usize / 32;
        (2 * (flush * group) as usize * warps + warps) * size + 64
    };
    while smem(flush, group, block) > STATIC_SMEM_LIMIT {
        if flush > 1 {
            flush /= 2;
        } else if knobs.tile_group.is_none() && group > 1 {
            group /= 2;
        } else if knobs.block.is_none() && block > 32 {
            block /= 2;
        } else {
            return Err(invalid(
                name,
                format!(
                    "tile_group {group} with {block} threads needs {} bytes of shared memory for \
                     {size}-byte items; the static limit is {STATIC_SMEM_LIMIT}",
                    smem(flush, group, block)
                ),
            ));
        }
    }
    // The lanes' loads are sized by the items read (lifted ones may be narrower).
    let (_, vecs) = lane_items(name, items.in_size, Some(per_lane))?;
    Ok(Portable {
        name,
        block,
        run,
        lane_runs,
        vecs,
        item_shift: if vecs > 0 { (items_at % 16) as u32 } else { 0 },
        group,
        flush,
        grid: check_grid(name, knobs.grid)?,
    })
}

impl PlainPlan for Portable {
    fn kernels(&self) -> Vec<KernelSpec> {
        vec![KernelSpec::new(
            Family::Portable,
            &[
                ("R_BLOCK", self.block),
                ("R_RUN", self.run),
                ("R_LANE_RUNS", self.lane_runs),
                ("R_ITEMS", self.run * self.lane_runs),
                ("R_VECS", self.vecs),
                ("R_ITEM_SHIFT", self.item_shift),
                ("R_GROUP", self.group),
                ("R_FLUSH", self.flush),
            ],
        )]
    }

    fn dynamic_smem(&self, _: &Items) -> usize {
        0
    }

    fn launch(&self, d: &mut Dispatch, input: u64, n: u64, out: Option<u64>) -> Result<u64> {
        let kernel = d.kernel(
            &self.kernels()[0],
            REDUCE_PORTABLE,
            self.block,
            0,
            self.name,
        )?;
        let node_items = self.group as u64 * self.block as u64 * (self.run * self.lane_runs) as u64;
        let nodes = n.div_ceil(node_items);
        let grid = plain_grid(d, &kernel, self.grid, nodes)?;
        launch_plain(d, &kernel, grid, nodes, (input, n), out)
    }
}

/// The portable segmented reduction with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(super) struct SegPortable {
    /// The algorithm asked for (`SegShuffle` or `Auto`), for errors.
    name: &'static str,
    shape: SegShape,
    block: u32,
    /// Items per run, and per lane (64 bytes of monoid values, at least one).
    run: u32,
    /// 16-byte vectors per lane (0: item-by-item loads).
    vecs: u32,
    grid: Option<u32>,
    /// Validated calls of the offsets form check the offsets on the marks' reads: their kernel
    /// is built with the check (`R_CHECK_OFFSETS`), a trusted call's without it, which keeps
    /// its registers for the fold (the check cost trusted calls 2-10% on an H100:
    /// docs/decisions/0090-portable-offsets-check.md).
    check_offsets: bool,
}

/// The most items of a tile by default: its marks (a 4-byte segment id per item, offsets form)
/// and its warps' stages (a value per item) live in dynamic shared memory, and
/// several blocks must fit an SM.
const SEG_TILE_ITEMS: u32 = 8192;

/// The portable segmented plan of `name` (`SegShuffle` or `Auto`, checked by the caller) for
/// `shape`, for trusted calls or validated ones.
pub(super) fn segmented(
    name: &'static str,
    knobs: &Knobs,
    shape: SegShape,
    trusted: bool,
) -> Result<SegPortable> {
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    refuse(name, "stages", knobs.stages)?;
    let why = " in portable mode (a lane holds one run: 64 bytes of monoid values)";
    if let Some(k) = knobs.items_per_thread {
        return Err(invalid(
            name,
            format!("items_per_thread {k} cannot be set{why}"),
        ));
    }
    let size = shape.items.m_size.max(1);
    let run = run_len_for_size(size) as u32;
    let block = match knobs.block {
        Some(block) => check_power_of_two(
            name,
            check_block(name, block)?,
            " in portable mode (a block tile is an aligned node of the tree)",
        )?,
        None => SEG_PORTABLE_BLOCK.min(SEG_TILE_ITEMS / run).max(32),
    };
    let mut plan = SegPortable {
        name,
        shape,
        block,
        run,
        vecs: lane_items(name, shape.items.in_size, Some(run))?.1,
        grid: check_grid(name, knobs.grid)?,
        check_offsets: shape.offsets_form && !trusted,
    };
    // Large values: the default block shrinks, down to 32 threads, until the block fits on any
    // device. A block the caller set stays. Either, past the static limit, is refused here, and
    // past the device's own shared memory when it launches (`Device::kernel`), as for SegShuffle.
    let fits_any_device = |p: &SegPortable| {
        p.static_smem() <= STATIC_SMEM_LIMIT
            && p.static_smem() + p.dynamic_smem() <= ANY_DEVICE_BLOCK_SMEM
    };
    while knobs.block.is_none() && plan.block > 32 && !fits_any_device(&plan) {
        plan.block /= 2;
    }
    if plan.static_smem() > STATIC_SMEM_LIMIT {
        return Err(invalid(
            name,
            format!(
                "{} threads need {} bytes of static shared memory for {size}-byte values in \
                 portable mode; the limit is {STATIC_SMEM_LIMIT}: use fewer threads",
                plan.block,
                plan.static_smem(),
            ),
        ));
    }
    Ok(plan)
}

/// The bytes of the portable segmented kernel's node summary (`kernels/seg_portable.cu`,
/// `r_node`: two values and two 4-byte words, padded to the value's alignment, which may pass
/// 16 bytes).
fn node_bytes(shape: SegShape) -> usize {
    let items = shape.items;
    (2 * items.m_size + 8).next_multiple_of(items.m_align.max(4))
}

/// The portable segmented kernel's static shared memory for `block` threads: two rings of a
/// node summary per warp (two values and two words, padded), a node's tiles
/// (`tuning::SEG_PORTABLE_MAX_GROUP`), and in the offsets form the warp edges' stamps, the
/// tile's entries and the layout check's words (`s_reach`, `s_upto`, `s_bad`).
pub(super) fn seg_static_smem(shape: SegShape, block: u32) -> usize {
    // Each node with room to spare for the arrays' alignment.
    let node = node_bytes(shape) + shape.items.m_align.max(16);
    let nodes = 2 * (block as usize / 32) + tuning::SEG_PORTABLE_MAX_GROUP as usize;
    let check = if shape.offsets_form { 24 } else { 0 };
    nodes * node + 8 * (block as usize / 32 + 3) + 16 + check
}

impl SegPortable {
    /// Items per tile (a node of the tree).
    fn tile(&self) -> u64 {
        self.block as u64 * self.run as u64
    }

    /// The kernel's static shared memory ([`seg_static_smem`]).
    fn static_smem(&self) -> usize {
        seg_static_smem(self.shape, self.block)
    }
}

impl SegPlan for SegPortable {
    /// Segment ids are 32 bits wide (one value marks "no segment"); items are not limited.
    fn limits(&self) -> Option<(u64, u64)> {
        Some((u64::MAX, u32::MAX as u64 - 1))
    }

    fn limited_by(&self) -> &'static str {
        "the portable segmented kernel"
    }

    fn variants(&self) -> Vec<KernelSpec> {
        vec![KernelSpec::new(
            Family::SegPortable,
            &[
                ("R_BLOCK", self.block),
                ("R_RUN", self.run),
                ("R_ITEMS", self.run),
                ("R_VECS", self.vecs),
                ("R_ITEM_SHIFT", self.shape.lane_shift(self.vecs)),
                ("R_OFFSETS", self.shape.offsets_form as u32),
                ("R_CHECK_OFFSETS", self.check_offsets as u32),
                ("R_INDEX_VEC", !self.shape.plain_index as u32),
                // 768 threads per SM: 80 registers, no spill (94 uncapped left two blocks of 256
                // per SM; 64 spilled: docs/decisions/0047-portable-segmented.md).
                ("R_MIN_BLOCKS", (768 / self.block).max(1)),
                ("R_IDX64", self.shape.wide as u32),
                ("R_NODE_BYTES", node_bytes(self.shape) as u32),
            ],
        )]
    }

    /// The warps' stages (a value per item of the tile) and, in the offsets form, the tile's
    /// marks (a 4-byte segment id per item; 16-byte aligned).
    fn dynamic_smem(&self) -> usize {
        let tile = self.tile() as usize;
        let stage = tile * self.shape.items.m_size;
        if self.shape.offsets_form {
            stage.div_ceil(16) * 16 + 4 * tile
        } else {
            stage
        }
    }

    /// Validated, the layout is checked on the launch's own reads and the status read back
    /// after it: the owners' first bad index, or (offsets) whether the marks' reads saw a bad
    /// entry, a gap or a wrong end, and then the exact check finds the first error. (Offsets
    /// validated with a trusted plan's kernel, which has no check, are checked exactly first.)
    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()> {
        if validate && job.layout.offsets_form && !self.check_offsets {
            d.validate_exact(job)?;
        }
        let check = validate && (self.check_offsets || !job.layout.offsets_form);
        let kernel = d.device.kernel(
            &job.module,
            REDUCE_SEG_PORTABLE,
            self.block,
            self.dynamic_smem(),
            self.name,
        )?;
        let n = job.n();
        let tiles = n.div_ceil(self.tile()).max(1);
        let grid = d.persistent_grid(&kernel, self.grid)?.min(tiles).max(1);
        let group = tuning::seg_portable_group(tiles, grid);
        let nodes = tiles.div_ceil(group);
        let grid = grid.min(nodes);
        let regions = d.carve(&[nodes as usize * node_bytes(self.shape)])?;
        let status_out = d.status_out(check)?;
        let args = SegPortableArgs {
            r#in: job.items.0,
            n,
            seg_index: job.layout.ptr,
            segments: job.segments as u64,
            out: job.out,
            nodes_out: regions[0],
            group,
            ticket: d.ticket(),
            status: d.seg_status(),
            fill_budget: d.fill_budget(),
            check: check as u64,
            status_out,
        };
        d.launch(&kernel, grid, args)?;
        if !check {
            return Ok(());
        }
        d.fused_verdict(job, self.name)
    }
}

/// (entry point, parameter names) of the kernels, for the signature test.
#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (REDUCE_PORTABLE.name, ShuffleArgs::PARAMS),
        (REDUCE_SEG_PORTABLE.name, SegPortableArgs::PARAMS),
    ]
}
