//! The shuffle family (ours). `Shuffle`: each lane loads a contiguous run of items with 16-byte
//! vector loads and folds it, lanes combine with shuffles at increasing offsets, warps in
//! order, over a persistent grid of contiguous ranges; one launch, whose last block folds the
//! block partials. `SegShuffle`: items split evenly over threads, run-length flushes,
//! segmented warp and block scans, block records joined by the last block; each segment is
//! written once. `SegPipeline`: SegShuffle's kernel fed by the tile pipeline (`pipe.cuh`, sm_90).
//! The order invariants are at the head of kernels/shuffle.cu and kernels/seg_shuffle.cu.

use super::algorithm::{Algorithm, SegAlgorithm};
use super::config::{check_block, check_grid, check_runs_on, invalid, refuse, Knobs};
use super::plan::{unless_it_spills, PlainPlan, SegPlan, SegShape};
use super::tuning::{
    self, ANY_DEVICE_BLOCK_SMEM, SEG_PIPE_BLOCKS_PER_SM, SEG_PIPE_SMEM_BUDGET, SEG_PIPE_STAGES,
    SEG_SHUFFLE_BLOCK, SHUFFLE_BLOCKS_PER_SM, SHUFFLE_GROUP,
};
use crate::device::DeviceInfo;
use crate::device::{kernel_signature, Entry, Kernel, Module};
use crate::dispatch::segmented::SegJob;
use crate::dispatch::{Dispatch, Loader};
use crate::error::Result;
use crate::jit::{Family, Items, JitReport, KernelSpec};
use std::sync::Arc;

/// Static shared memory a kernel may use without opting in.
pub(super) const STATIC_SMEM_LIMIT: usize = 48 * 1024;

kernel_signature! {
    /// The fold of the `n` items at `in` into `out[0]`; block partials (Portable: one value per
    /// node) in `partials`.
    pub(super) struct ShuffleArgs { r#in, n, partials, ticket, out }
}
kernel_signature! {
    /// One value per segment into `out`; block records in `rec_vals` / `rec_meta`; `check`
    /// (`Check`) and `status_out` for the layout check.
    struct SegShuffleArgs {
        r#in, n, seg_index, segments, out, rec_vals, rec_meta, ticket, status, fill_budget,
        seg_estimate, check, status_out,
    }
}

const REDUCE_SHUFFLE: Entry<ShuffleArgs> = Entry::new("reduce_shuffle");
const REDUCE_SEG_SHUFFLE: Entry<SegShuffleArgs> = Entry::new("reduce_seg_shuffle");

/// A lane's items per tile, checked (1 to 256), and the 16-byte vectors they fill exactly (0:
/// item-by-item loads). Unset: 64 bytes' worth (`tuning::shuffle_items`).
pub(super) fn lane_items(
    name: &'static str,
    item_size: usize,
    requested: Option<u32>,
) -> Result<(u32, u32)> {
    let items = match requested {
        Some(0) => return Err(invalid(name, "items_per_thread must be at least 1")),
        Some(n) if n > 256 => {
            return Err(invalid(
                name,
                format!("items_per_thread {n} is past the limit of 256"),
            ))
        }
        Some(n) => n,
        None => tuning::shuffle_items(item_size),
    };
    let bytes = items as usize * item_size.max(1);
    let vecs = if bytes.is_multiple_of(16) && bytes <= 16 * 64 {
        (bytes / 16) as u32
    } else {
        0
    };
    Ok((items, vecs))
}

/// `Shuffle` with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(super) struct Shuffle {
    block: u32,
    items: u32,
    vecs: u32,
    /// The input's offset in bytes from a 16-byte boundary (0 without vector loads).
    item_shift: u32,
    /// Block tiles per fold of the warp values (0: each warp owns a run of tiles).
    group: u32,
    /// The grid-stride form for commutative monoids (not the sequential order).
    order_free: bool,
    grid: Option<u32>,
}

/// `Shuffle` (order-free when `Auto` chose so) for `items` at device address `items_at`. The
/// kernel reads an input at any offset from a 16-byte boundary with vector loads (specialised
/// for the offset), each lane folding the same items in the same order, so the grouping and the
/// result do not depend on the address. Its default block: [`tuning::shuffle_block`].
pub(super) fn plain(
    knobs: &Knobs,
    items: Items,
    items_at: u64,
    order_free: bool,
) -> Result<Shuffle> {
    let name = Algorithm::Shuffle.name();
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    let size = items.m_size;
    lane_items(name, size, knobs.items_per_thread)?;
    let mut group = knobs.tile_group.unwrap_or(SHUFFLE_GROUP);
    let mut block = check_block(name, knobs.block.unwrap_or(tuning::shuffle_block(size)))?;
    // Two rings of `group` block tiles' warp values, a value a warp and a few words live in
    // static shared memory. Large items: shrink the defaults the caller left open (the group,
    // then the block) until they fit.
    let smem = |group: u32, block: u32| {
        let warps = block as usize / 32;
        (2 * group as usize * warps + warps) * size + 64
    };
    while smem(group, block) > STATIC_SMEM_LIMIT {
        if knobs.tile_group.is_none() && group > 1 {
            group -= 1;
        } else if knobs.block.is_none() && block > 32 {
            block /= 2;
        } else {
            return Err(invalid(
                name,
                format!(
                    "tile_group {group} with {block} threads needs {} bytes of shared memory for \
                     {size}-byte items; the static limit is {STATIC_SMEM_LIMIT}",
                    smem(group, block)
                ),
            ));
        }
    }
    let grid = check_grid(name, knobs.grid)?;
    if order_free {
        group = 0;
    }
    // The lanes' loads are sized by the items read (lifted ones may be narrower).
    let (lane, vecs) = lane_items(name, items.in_size, knobs.items_per_thread)?;
    Ok(Shuffle {
        block,
        items: lane,
        vecs,
        item_shift: if vecs > 0 { (items_at % 16) as u32 } else { 0 },
        group,
        order_free,
        grid,
    })
}

impl PlainPlan for Shuffle {
    fn kernels(&self) -> Vec<KernelSpec> {
        vec![KernelSpec::new(
            Family::Shuffle,
            &[
                ("R_BLOCK", self.block),
                ("R_ITEMS", self.items),
                ("R_VECS", self.vecs),
                ("R_ITEM_SHIFT", self.item_shift),
                ("R_GROUP", self.group),
                ("R_ORDER_FREE", self.order_free as u32),
            ],
        )]
    }

    fn dynamic_smem(&self, _: &Items) -> usize {
        0
    }

    fn launch(&self, d: &mut Dispatch, input: u64, n: u64, out: Option<u64>) -> Result<u64> {
        let name = Algorithm::Shuffle.name();
        let kernel = d.kernel(&self.kernels()[0], REDUCE_SHUFFLE, self.block, 0, name)?;
        let block_tiles = n.div_ceil(self.block as u64 * self.items as u64);
        let grid = plain_grid(d, &kernel, self.grid, block_tiles)?;
        launch_plain(d, &kernel, grid, grid, (input, n), out)
    }
}

/// The grid of the one-launch plain kernels (Shuffle, Portable): the caller's, else the resident
/// blocks, at most `SHUFFLE_BLOCKS_PER_SM` per SM and one per unit of work (at least one).
pub(super) fn plain_grid<A>(
    d: &Dispatch,
    kernel: &Kernel<A>,
    requested: Option<u32>,
    units: u64,
) -> Result<u64> {
    Ok(match requested {
        Some(grid) => grid as u64,
        None => {
            let preferred = SHUFFLE_BLOCKS_PER_SM * d.device.info.multiprocessors as u64;
            d.persistent_grid(kernel, None)?
                .min(preferred)
                .min(units.max(1))
        }
    })
}

/// Queues a one-launch plain kernel (Shuffle, Portable: the parameters of [`ShuffleArgs`]) on
/// `grid` blocks over the `n` items at `input`, with `partials` values of scratch; the result
/// goes to `out`, or to scratch memory whose address it returns.
pub(super) fn launch_plain(
    d: &mut Dispatch,
    kernel: &Kernel<ShuffleArgs>,
    grid: u64,
    partials: u64,
    (input, n): (u64, u64),
    out: Option<u64>,
) -> Result<u64> {
    let size = d.items().m_size;
    let regions = d.carve(&[partials.max(1) as usize * size, size])?;
    let out = out.unwrap_or(regions[1]);
    let args = ShuffleArgs {
        r#in: input,
        n,
        partials: regions[0],
        ticket: d.ticket(),
        out,
    };
    d.launch(kernel, grid, args)?;
    Ok(out)
}

/// What a validated SegShuffle launch checks of its layout (the kernel's `check`,
/// kernels/seg_common.cuh `R_CHECK_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Check {
    /// Nothing: a trusted call.
    None = 0,
    /// Fused into the launch's reads; the status comes from its last block.
    Fused = 1,
    /// CSR offsets, few of them: the exact check by the grid's last block before its tiles,
    /// which stores the first error key into the pinned word while the launch still runs (the
    /// call need not wait for the launch's end, which cost a validated call 5-6 us on 44 us
    /// calls: docs/decisions/0016-early-layout-check.md).
    Early = 2,
}

/// The offsets per thread of one block that [`Check::Early`] takes at most
/// (kernels/seg_common.cuh, `R_EARLY_PER_THREAD`).
const EARLY_PER_THREAD: usize = 16;

/// An upper bound on SegShuffle's static shared memory without the owner form's output stage
/// (kernels/seg_shuffle.cu): the block scan's warp aggregates (`s_agg`: two of R_WARP + 1
/// `r_seg`, a flag padded to the value's alignment and the value), the two carries, the entry
/// value, the offsets form's warp folds of a tile inside one segment (`s_single`), and a few
/// words. It grows with the monoid's size: past about 560 bytes (offsets form) or 650 (owner
/// form) it leaves no room, and `Auto` takes another algorithm (`tuning::resolve_segmented`).
pub(super) fn seg_static_smem(shape: SegShape, block: u32) -> usize {
    let m = shape.items.m_size.max(1);
    let seg = shape.items.flagged_value_bytes();
    let folds = if shape.offsets_form {
        2 * (block as usize / 32) * m
    } else {
        0
    };
    (2 * (32 + 1) + 2) * seg + m + folds + 128
}

/// The owner form's output stage slots that fit beside the rest of SegShuffle's static shared
/// memory (two stages of `slots + 1` values; 0 when not even one slot fits).
fn owner_stage_room(shape: SegShape, block: u32) -> u64 {
    let m = shape.items.m_size.max(1);
    let room = STATIC_SMEM_LIMIT.saturating_sub(seg_static_smem(shape, block)) / (2 * m);
    room.saturating_sub(1) as u64
}

/// Whether SegShuffle's static shared memory fits for this shape and block.
pub(super) fn seg_fits(shape: SegShape, block: u32) -> bool {
    if shape.offsets_form {
        seg_static_smem(shape, block) <= STATIC_SMEM_LIMIT
    } else {
        owner_stage_room(shape, block) >= 1
    }
}

/// The most items and segments SegShuffle takes: its kernel holds positions and segment ids in
/// 32 bits. With u64 layouts it reads every entry narrowed to 32 bits, an entry past 2^32 - 1 as
/// 2^32 - 1 (kernels/seg_tile.cuh, `r_narrow`): the items stay below that value, so that such an
/// entry is still past the last offset (n) and a bad one.
pub(super) fn seg_limits(shape: SegShape) -> (u64, u64) {
    let max = u32::MAX as u64;
    (if shape.wide { max - 1 } else { max }, max)
}

/// `SegShuffle` or `SegPipeline` (SegShuffle's kernel fed by the tile pipeline,
/// kernels/pipe.cuh) with every parameter fixed, for its shape.
#[derive(Clone, Copy, Debug)]
pub(super) struct SegShuffle {
    algorithm: SegAlgorithm,
    /// SegPipeline's stages (0: SegShuffle, which loads its items itself).
    stages: u32,
    shape: SegShape,
    block: u32,
    items: u32,
    vecs: u32,
    grid: Option<u32>,
}

/// `SegShuffle` or `SegPipeline`: items per thread sized by the larger of the item and the
/// monoid value; vector loads when a thread's items fill whole 16-byte vectors; SegPipeline's
/// stages.
pub(super) fn segmented(
    algorithm: SegAlgorithm,
    knobs: &Knobs,
    shape: SegShape,
) -> Result<SegShuffle> {
    let name = algorithm.name();
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    let bad = |_| invalid(name, "items_per_thread must be between 1 and 256");
    let sized = shape.items.m_size.max(shape.items.in_size);
    let (items, _) = lane_items(name, sized, knobs.items_per_thread).map_err(bad)?;
    let (_, vecs) = lane_items(name, shape.items.in_size, Some(items)).map_err(bad)?;
    let block = check_block(name, knobs.block.unwrap_or(SEG_SHUFFLE_BLOCK))?;
    if !seg_fits(shape, block) {
        return Err(invalid(
            name,
            format!(
                "{}-byte values leave no room in {name}'s static shared memory (its block \
                 scan keeps 66 of them; the limit is {STATIC_SMEM_LIMIT} bytes): use Auto, \
                 which takes an algorithm that fits them where one does",
                shape.items.m_size
            ),
        ));
    }
    let stages = match (algorithm, knobs.stages) {
        (SegAlgorithm::SegPipeline, Some(s)) if !(1..=8).contains(&s) => {
            return Err(invalid(name, format!("stages {s} must be between 1 and 8")))
        }
        (SegAlgorithm::SegPipeline, s) => s.unwrap_or(SEG_PIPE_STAGES),
        _ => 0,
    };
    let mut plan = SegShuffle {
        algorithm,
        stages,
        shape,
        block,
        items,
        vecs,
        grid: check_grid(name, knobs.grid)?,
    };
    // SegPipeline's producer warp launches beside the block.
    let launched = plan.threads();
    if launched > 1024 {
        return Err(invalid(
            name,
            format!(
                "block size {block} with the producer warp is {launched} threads, past 1024: \
                 use at most {}",
                1024 - (launched - block)
            ),
        ));
    }
    // The defaults shrink for large items until a block's shared memory fits its budget:
    // SegPipeline's stages, SegShuffle's items per thread, then the block (what the caller set
    // stays).
    let budget = if stages > 0 {
        SEG_PIPE_SMEM_BUDGET
    } else {
        ANY_DEVICE_BLOCK_SMEM
    };
    while plan.block_smem() > budget {
        if knobs.stages.is_none() && plan.stages > 1 {
            plan.stages -= 1;
        } else if stages == 0 && knobs.items_per_thread.is_none() && plan.items > 1 {
            plan.items /= 2;
            plan.vecs = lane_items(name, shape.items.in_size, Some(plan.items))
                .map_err(bad)?
                .1;
        } else if knobs.block.is_none() && plan.block > 32 {
            plan.block /= 2;
        } else {
            break;
        }
    }
    Ok(plan)
}

/// Whether SegShuffle's blocks of `block` threads with `items` items per thread keep their
/// shared memory within [`ANY_DEVICE_BLOCK_SMEM`] for this shape (`Auto` asks before it sizes
/// a lifted input's items by the item).
pub(super) fn seg_tile_fits(shape: SegShape, block: u32, items: u32) -> bool {
    let plan = SegShuffle {
        algorithm: SegAlgorithm::SegShuffle,
        stages: 0,
        shape,
        block,
        items,
        vecs: 0,
        grid: None,
    };
    plan.block_smem() <= ANY_DEVICE_BLOCK_SMEM
}

impl SegShuffle {
    /// A block's shared memory: the dynamic part and a bound on the static part.
    fn block_smem(&self) -> usize {
        self.dynamic_smem() + seg_static_smem(self.shape, self.block)
    }

    /// Items per tile.
    fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }

    /// The threads a block is launched with: SegPipeline's producer warp after the block.
    fn threads(&self) -> u32 {
        self.block + if self.stages > 0 { 32 } else { 0 }
    }

    /// Where the items lie past a 16-byte boundary, as the kernel is specialised for it: for
    /// vector loads, and for the pipeline's stages, which hold the items at that offset.
    fn item_shift(&self) -> u32 {
        if self.vecs > 0 || self.stages > 0 {
            self.shape.item_shift
        } else {
            0
        }
    }

    /// One stage of the pipeline (kernels/pipe.cuh, `R_PIPE_STAGE_BYTES`): a tile of input items
    /// after the offset they lie at, rounded to 128 bytes.
    fn stage_bytes(&self) -> usize {
        (self.tile() as usize * self.shape.items.in_size + self.item_shift() as usize).div_ceil(128)
            * 128
    }

    /// The stage: the segment ids a tile closes that it writes in order. Owner form: a tile's
    /// worth of values, at most 16 KiB and what the rest of the static shared memory leaves;
    /// offsets form: end positions for twice a tile's segments (ids past the stage, from many
    /// empty segments, cost a re-read of their offsets).
    fn stage_slots(&self) -> u64 {
        if self.shape.offsets_form {
            return 2 * self.tile();
        }
        self.tile()
            .min((16 * 1024 / self.shape.items.m_size.max(1)) as u64)
            .min(owner_stage_room(self.shape, self.block))
            .max(1)
    }

    /// With u32 offsets the kernel loads a tile's first batch of offsets into registers while
    /// the tile before is scanned (`R_MARKS_AHEAD`): 2-7% faster on short segments, but it holds
    /// six registers more across the block scan, and under the 64-register cap larger monoids or
    /// more items per thread then spill, which makes long segments 2-7% slower
    /// (docs/decisions/0007-marks-ahead.md). So the load ahead
    /// is the preferred variant, and the one without it runs for a monoid whose preferred
    /// variant uses local memory ([`SegPlan::module`]). u64 entries are narrowed as they are
    /// read, which waits for the load where it is issued: loading them ahead only moves the wait
    /// (docs/decisions/0014-u64-layouts.md).
    fn loads_marks_ahead(&self) -> bool {
        self.shape.offsets_form && !self.shape.wide
    }

    /// The resident blocks per SM the kernel's registers are capped for: SegShuffle's from
    /// [`tuning::seg_shuffle_blocks_per_sm`]; SegPipeline's blocks carry a producer warp and its
    /// stages, and fewer fit.
    fn min_blocks(&self) -> u32 {
        if self.stages == 1 {
            SEG_PIPE_BLOCKS_PER_SM + 1
        } else if self.stages > 0 {
            SEG_PIPE_BLOCKS_PER_SM
        } else {
            let shape = self.shape;
            tuning::seg_shuffle_blocks_per_sm(
                self.block,
                self.items,
                shape.items.m_size,
                shape.offsets_form,
            )
        }
    }

    fn spec(&self, marks_ahead: bool) -> KernelSpec {
        let shape = self.shape;
        KernelSpec::new(
            Family::SegShuffle,
            &[
                ("R_BLOCK", self.block),
                ("R_ITEMS", self.items),
                ("R_VECS", self.vecs),
                ("R_ITEM_SHIFT", self.item_shift()),
                ("R_INDEX_VEC", !shape.plain_index as u32),
                ("R_OFFSETS", shape.offsets_form as u32),
                ("R_IDX64", shape.wide as u32),
                ("R_STAGE", self.stage_slots() as u32),
                ("R_MIN_BLOCKS", self.min_blocks()),
                ("R_PIPE", self.stages),
                ("R_MARKS_AHEAD", marks_ahead as u32),
            ],
        )
    }

    /// Queues one launch with `check`.
    fn launch_checked(&self, d: &mut Dispatch, job: &SegJob, check: Check) -> Result<()> {
        let name = self.algorithm.name();
        let smem = self.dynamic_smem();
        let kernel =
            d.device
                .kernel(&job.module, REDUCE_SEG_SHUFFLE, self.threads(), smem, name)?;
        let n = job.n();
        let tiles = n.div_ceil(self.tile()).max(1);
        // Every block owns a tile (the kernel's launch contract).
        let grid = d.persistent_grid(&kernel, self.grid)?.min(tiles).max(1);
        let m_size = self.shape.items.m_size;
        let regions = d.carve(&[2 * grid as usize * m_size, 3 * grid as usize * 8])?;
        let segments = job.segments as u64;
        let status_out = d.status_out(check != Check::None)?;
        let args = SegShuffleArgs {
            r#in: job.items.0,
            n,
            seg_index: job.layout.ptr,
            segments,
            out: job.out,
            rec_vals: regions[0],
            rec_meta: regions[1],
            ticket: d.ticket(),
            status: d.seg_status(),
            fill_budget: d.fill_budget(),
            // Segments per tile on average: sizes the L2 prefetch of each block's first tile's
            // offsets.
            seg_estimate: (segments * self.tile()).div_ceil(n.max(1)),
            check: check as u64,
            status_out,
        };
        d.launch(&kernel, grid, args)
    }
}

impl SegPlan for SegShuffle {
    fn limits(&self) -> Option<(u64, u64)> {
        Some(seg_limits(self.shape))
    }

    fn variants(&self) -> Vec<KernelSpec> {
        let preferred = self.loads_marks_ahead();
        let mut variants = vec![self.spec(preferred)];
        if preferred {
            variants.push(self.spec(false));
        }
        variants
    }

    /// The offsets form's tile: the items' scan values (one of padding after every `items`
    /// when `items` is even: R_VAL_SLOTS), an end position per stage slot (16 bits where tile
    /// positions fit, else 32: r_endpos) and a head byte per item. The owner form uses static
    /// shared memory only.
    fn dynamic_smem(&self) -> usize {
        let stages = self.stages as usize * self.stage_bytes();
        if !self.shape.offsets_form {
            return stages;
        }
        let tile = self.tile() as usize;
        let val_slots = if self.items.is_multiple_of(2) {
            tile + self.block as usize
        } else {
            tile
        };
        let endpos = if tile < 0xfffe { 2 } else { 4 };
        stages + val_slots * self.shape.items.m_size + endpos * self.stage_slots() as usize + tile
    }

    /// SegPipeline's bulk copies and mbarrier waits need sm_90.
    fn check_device(&self, info: &DeviceInfo) -> Result<()> {
        check_runs_on(self.algorithm, info)
    }

    fn module(&self, kernels: &Loader) -> Result<(Arc<Module>, JitReport)> {
        unless_it_spills(kernels, &self.variants(), REDUCE_SEG_SHUFFLE.name)
    }

    /// Unvalidated: one launch. Validated: few CSR offsets are checked early (their first error
    /// key arrives before the launch ends); otherwise the check is fused into the launch in both
    /// forms: the owner form reports the first bad owner, the offsets form only that its reads
    /// saw a bad entry, and the exact check finds it.
    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()> {
        if !validate {
            return self.launch_checked(d, job, Check::None);
        }
        let early =
            job.layout.offsets_form && job.layout.len <= EARLY_PER_THREAD * self.block as usize;
        if early {
            self.launch_checked(d, job, Check::Early)?;
            let key = d.poll_status()?;
            return d.status_error(job, key);
        }
        self.launch_checked(d, job, Check::Fused)?;
        d.fused_verdict(job, self.algorithm.name())
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (REDUCE_SHUFFLE.name, ShuffleArgs::PARAMS),
        (REDUCE_SEG_SHUFFLE.name, SegShuffleArgs::PARAMS),
    ]
}
