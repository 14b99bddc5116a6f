//! The portable plain reduction (`Config::portable`, served by `Shuffle` and `Auto`): the
//! grouping `reduce_core::portable` defines — runs of 64 bytes of monoid values at fixed
//! positions, a fixed tree over their global indices — so the bits depend on N and the monoid's
//! size only. The kernel (kernels/portable.cu, its order invariant at its head) computes that
//! tree in nodes of whatever power-of-two size suits the device; block, grid, tile group and
//! items per thread change the speed, never the bits.

use super::config::{check_block, check_grid, check_power_of_two, invalid, refuse, Knobs};
use super::plan::PlainPlan;
use super::shuffle::{lane_items, launch_plain, plain_grid, ShuffleArgs, STATIC_SMEM_LIMIT};
use super::tuning::{self, SHUFFLE_BLOCK};
use crate::device::Entry;
use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::{Family, Items, KernelSpec};
use reduce_core::portable::run_len_for_size;

const REDUCE_PORTABLE: Entry<ShuffleArgs> = Entry::new("reduce_portable");

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
    let lane_runs = match knobs.items_per_thread {
        None => tuning::portable_lane_runs(run, items.in_size),
        Some(k) if k % run == 0 && (k / run).is_power_of_two() && k / run <= MAX_LANE_RUNS => {
            k / run
        }
        Some(k) => {
            return Err(invalid(
                name,
                format!(
                    "in portable mode items_per_thread must be the run length ({run} items of \
                     {size} bytes) times a power of two up to {MAX_LANE_RUNS}, not {k}"
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
    // Two rings of `flush` nodes' warp values and a warp's values live in static shared memory.
    // Large items: shrink the flush, then the defaults the caller left open (the group, then
    // the block) until they fit.
    let smem = |flush: u32, group: u32, block: u32| {
        (2 * (flush * group) as usize * (block as usize / 32) + 32) * size + 64
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

/// (entry point, parameter names) of the kernel, for the signature test.
#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![(REDUCE_PORTABLE.name, ShuffleArgs::PARAMS)]
}
