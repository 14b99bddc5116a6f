//! Every default parameter and every `Auto` rule, as plain data and pure functions, with the
//! measurement behind each (the decision records in docs/decisions/). The families validate
//! what a caller sets and take what a caller leaves open from here; nothing here launches.

use super::algorithm::SegAlgorithm;
use super::config::{gcd, Knobs, SegConfig};
use super::plan::SegShape;

/// Threads per block of the tree algorithms (Tb2, Tb4Warp and their segmented forms) and of the
/// matrix algorithms, the paper's.
pub(crate) const PAPER_BLOCK: u32 = 256;
/// The matrix width W of the matrix algorithms (the paper's 32 x 32 matrix).
pub(crate) const MATRIX_WIDTH: u32 = 32;
/// DiffWarps16Seg's W: 16 keeps the occupancy of its double buffers (paper IV.B).
pub(crate) const DIFF_WARPS_SEG_WIDTH: u32 = 16;
/// Producer warps of DiffWarps (paper Alg. 4: P = 8, C = 1).
pub(crate) const PRODUCERS: u32 = 8;
/// The block of the Matrix pass that reduces the persistent algorithms' block values.
pub(crate) const SECOND_PASS_BLOCK: u32 = 256;
/// The paper's segmented persistent kernels run at most this many blocks per SM (their first
/// pass leaves one (value, owner) pair per block).
pub(crate) const PAPER_SEG_BLOCKS_PER_SM: u64 = 32;

/// Shuffle's threads per block, tile group and resident blocks per SM: with 512 threads,
/// block-contiguous tiles folded every 4 tiles and 2 blocks per SM, each block streams one
/// contiguous region, and Shuffle reads at 0.99-1.00 of the read roof at 2^28 on an H100
/// (docs/decisions/0001-shuffle-defaults.md).
pub(crate) const SHUFFLE_BLOCK: u32 = 512;
pub(crate) const SHUFFLE_GROUP: u32 = 4;
pub(crate) const SHUFFLE_BLOCKS_PER_SM: u64 = 2;

/// Values past this many bytes live in local memory (one alone passes a thread's registers),
/// and their kernels' default blocks stay small: [`shuffle_block`] and [`seg_heads_block`].
/// On an H100 (`bench large`, 256 MiB of 1 KiB keep-last records) Shuffle took 3.98 ms at 128
/// threads where 256 took 9.11, SegHeads 7.77 ms at 32 where 64 took 8.70
/// (docs/decisions/0092-large-value-blocks.md). Their sizes before decided these blocks by
/// their static arrays alone.
pub(crate) const LARGE_VALUE_BYTES: usize = 512;

/// Shuffle's default block for values of `m_size` bytes: [`SHUFFLE_BLOCK`], 128 threads past
/// [`LARGE_VALUE_BYTES`].
pub(crate) fn shuffle_block(m_size: usize) -> u32 {
    if m_size > LARGE_VALUE_BYTES {
        128
    } else {
        SHUFFLE_BLOCK
    }
}

/// SegShuffle's threads per block.
pub(crate) const SEG_SHUFFLE_BLOCK: u32 = 256;

/// The resident blocks per SM SegShuffle's registers are capped for: 1024 threads' worth (4
/// blocks of 256 at 64 registers), except in the offsets form when a thread holds more than 64
/// bytes of values (`items` of `m_size` bytes: lifted items narrower than the monoid, 16 f32
/// items as 8-byte values, or a caller's larger `items_per_thread`). Those spill under 64
/// registers (lifted ArgMax: 67 spill instructions); at 3 blocks (80 registers) none do, and
/// lifted ArgMax per CSR segment takes 0.87-0.95 of the time, log-sum-exp per CSR row 0.93, on
/// an H200 (docs/decisions/0053-lifted-segshuffle-registers.md).
pub(crate) fn seg_shuffle_blocks_per_sm(
    block: u32,
    items: u32,
    m_size: usize,
    offsets_form: bool,
) -> u32 {
    let held = items as usize * m_size;
    if offsets_form && held > 64 {
        (768 / block).max(1)
    } else {
        (1024 / block).max(1)
    }
}

/// The portable segmented kernel's threads per block (fewer where a tile's marks would pass
/// the static shared memory: `catalogue/portable.rs`). The bits do not depend on it.
pub(crate) const SEG_PORTABLE_BLOCK: u32 = 256;

/// The most tiles in a node of the portable segmented kernel (its `R_MAX_GROUP`).
pub(crate) const SEG_PORTABLE_MAX_GROUP: u64 = 8;

/// The portable segmented kernel's tiles per node (a power of two up to
/// [`SEG_PORTABLE_MAX_GROUP`]): fewer nodes for its last block to join, while every block of
/// `grid` still gets four nodes or more (an even split of the tiles). The bits do not depend on
/// it.
pub(crate) fn seg_portable_group(tiles: u64, grid: u64) -> u64 {
    let mut group = 1;
    while group < SEG_PORTABLE_MAX_GROUP && tiles / (2 * group) >= 4 * grid {
        group *= 2;
    }
    group
}

/// The input bytes of a SegBlocks chunk: no block folds more (a segment past its first chunk is
/// cut at the chunks' boundaries, a block a piece). 256 KiB of f32 items is 4096 lane runs; the
/// prototype's 64 KiB chunks read 0.77-0.93 of plain where 256 KiB ones read 0.91-0.98 at mean
/// segment lengths 4096-16384 on an H100 (docs/decisions/0088-seg-blocks.md).
pub(crate) const SEG_BLOCKS_CHUNK_BYTES: usize = 256 * 1024;

/// The shortest mean segment length N / S at which a validated SegBlocks call checks its layout
/// in its launch; below it the exact check runs first. A bad layout's segments may overlap,
/// and once the launch has seen a bad entry a unit still folds up to an eighth of a chunk of
/// input items, 32 KiB (kernels/seg_blocks.cu): with S at most N / 500 that bounds a bad
/// layout's folds to about 65 ÷ the item's bytes good calls' reads (16 for 4-byte items), and
/// below every band of [`SEG_BLOCKS_BANDS`] SegBlocks is a slow choice anyway (a block a
/// segment).
pub(crate) const SEG_BLOCKS_FUSED_MIN_MEAN: u64 = 500;

/// SegBlocks' blocks, by the mean segment length N / S and the input's item size
/// ([`seg_blocks_block`]).
pub(crate) const SEG_BLOCKS_BLOCKS: [u32; 4] = [32, 64, 128, 256];

/// The mean segment length below which SegBlocks takes blocks of one warp: 1536 items of up to
/// 4 bytes, 512 of more (measured for 4- and 8-byte items; see [`seg_blocks_block`]).
pub(crate) fn seg_blocks_warp_below(item_bytes: usize) -> usize {
    if item_bytes <= 4 {
        1536
    } else {
        512
    }
}

/// SegBlocks' threads per block for `n` items of `item_bytes` bytes (the input's) in `segments`
/// segments: a block's overhead is paid per segment, so shorter segments take smaller blocks,
/// more of them resident: one warp below a mean length of [`seg_blocks_warp_below`] items, else
/// 64 threads below 3072, 128 below 12288, 256 from there. f32 sums by u32 offsets at 2^26 on
/// an H100 (`bench segsweep`), GB/s of 64 / 128 / 256 threads: mean 1024 2808 / 2151 / 1237,
/// 2048 2857 / 2807 / 2110, 4096 2818 / 2830 / 2722, 8192 2736 / 2800 / 2798, 16384 2599 /
/// 2720 / 2768; time of 32 threads over 64's (2026-12-06, one command): f32 0.58 at mean
/// lengths 64-256, 0.75 at 512, 0.99 at 1024, 1.03 at 2048; ArgMax lifted from f32 0.58, 0.75,
/// 0.92, 1.04; affine maps (8 bytes) 0.68-0.72 at 64-128, 0.87-0.90 at 256, 1.01 at 512, 1.02
/// at 1024 (docs/decisions/0088-seg-blocks.md): 4-byte items gain to 4 KiB a segment, 8-byte
/// ones lose from there. With no segments (a plan of unknown size): 256.
pub(crate) fn seg_blocks_block(n: usize, segments: usize, item_bytes: usize) -> u32 {
    match n.checked_div(segments) {
        Some(mean) if mean < seg_blocks_warp_below(item_bytes) => 32,
        Some(mean) if mean < 3072 => 64,
        Some(mean) if mean < 12_288 => 128,
        _ => 256,
    }
}

/// The resident blocks per SM SegBlocks' registers are budgeted for (the kernel's
/// `__launch_bounds__(block, R_MIN_BLOCKS)`) with values of up to 8 bytes: 1536 threads (40
/// registers a thread under NVRTC 13.0) for blocks of fewer than 256 threads, 1280 (48) from
/// 256; one-warp blocks reach the SM's 32 blocks first (1024 threads, 64 registers). At 64 to
/// 256 threads, left alone, ptxas took 32-40 registers and, to fit, issued a lane's four 16-byte
/// loads two or three at a time, folding the first items in between (8-byte values, lifted
/// ArgMax), a schedule that any change of the kernel could tip. H100, `bench segsweep` at 2^26
/// (docs/decisions/0088-seg-blocks.md): 1280 threads at every block over the kernel left alone,
/// in one command, 8-byte values 1.34-1.92x (u32 offsets, mean lengths 4096-2^20) and
/// 1.12-2.31x (u64, 8192-2^20), lifted ArgMax 1.05-1.15x from 2^17, f32 1.01-1.07x from 65536,
/// but 0.94-0.97x at 512-1024 for f32 and ArgMax (64-thread blocks: fewer resident where each
/// is short-lived); 1536 over 1280 in another (best of two rounds each), 1.03-1.06x at 1024
/// (f32, ArgMax), 0.99-1.02x at 512-8192 otherwise, 0.88-0.99x from 2^17. Larger values are
/// left to ptxas (0): under these budgets some spill (12-byte values at 40 registers), and none
/// was measured; blocks past 640 threads get none too (a second bound of 1). Where a budgeted
/// kernel spills (lifted ArgMax at a shifted address at 64 and 128 threads), the plan's fallback,
/// left to ptxas, runs.
pub(crate) fn seg_blocks_min_blocks(block: u32, value_bytes: usize) -> u32 {
    if value_bytes > 8 {
        return 0;
    }
    let threads = if block >= 256 { 1280 } else { 1536 };
    match threads / block {
        // A second bound of 1 is no budget, and ptxas takes more registers under it than
        // under none (catalogue/caps.rs).
        0 | 1 => 0,
        blocks => blocks.min(32),
    }
}

/// SegHeads' threads per block (a tile is a block's runs of about 64 bytes of items each).
pub(crate) const SEG_HEADS_BLOCK: u32 = 256;

/// SegHeads' default block for values of `m_size` bytes: [`SEG_HEADS_BLOCK`], one warp past
/// [`LARGE_VALUE_BYTES`].
pub(crate) fn seg_heads_block(m_size: usize) -> u32 {
    if m_size > LARGE_VALUE_BYTES {
        32
    } else {
        SEG_HEADS_BLOCK
    }
}
/// SegHeads' largest default block for items lifted into wider values (a thread's run is sized
/// by the item, so its values take more registers and staging than the monoid's own run): the
/// items a thread that 256 threads get, in half the tile a block. For ArgMax lifted from f32
/// the SM holds the same 40 warps either way (NVRTC 13.0: 48 registers and 10 blocks of 128
/// uncapped; 256 threads take 63, capped to 48 for 5 blocks), in twice the blocks, each block's
/// barrier-bound phases holding half the warps. ArgMax lifted from f32
/// read 1.03-1.10x the throughput of 256 threads on every layout of `bench segvariants` on an
/// H100, in two commands (docs/decisions/0085-seg-heads-lifted-and-u64-values.md).
pub(crate) const SEG_HEADS_LIFTED_BLOCK: u32 = 128;
/// The most shared memory SegHeads' default tile stages its values in (a value an item): two
/// blocks an SM at least. f32 and 8-byte values take 16 KiB; lifted u8 items into 32-byte
/// values would take 256 KiB at Shuffle's 32 items a thread, and take 11 instead (with the
/// static arrays within `ANY_DEVICE_BLOCK_SMEM`).
pub(crate) const SEG_HEADS_TILE_BYTES: usize = 96 * 1024;

/// SegPipeline's stages (tiles of items in its shared-memory ring) and the resident blocks per
/// SM its registers are capped for (each block: SegShuffle's 256 threads and a producer warp).
pub(crate) const SEG_PIPE_STAGES: u32 = 2;
pub(crate) const SEG_PIPE_BLOCKS_PER_SM: u32 = 3;
/// The shared memory a SegPipeline block's defaults shrink to for large items (fewer stages,
/// then fewer threads): f32 and 8-byte values keep 2 stages of 256 threads (about 70 KiB, 3
/// blocks per SM), 512-byte records fit with 32 threads and one stage.
pub(crate) const SEG_PIPE_SMEM_BUDGET: usize = 96 * 1024;
/// The most shared memory a block may take on every device from sm_80 on: 99 KiB on sm_86 and
/// sm_89 (an A100 allows 163 KiB, an H100 or H200 227 KiB). SegShuffle's defaults and the
/// portable segmented kernel's block stay within it, so that `Auto`'s segmented plans launch
/// anywhere: a lifted input's items per thread sized by the input only as far as the tile fits
/// ([`resolve_segmented`]), then SegShuffle's items per thread and block halved for large
/// values. Every value of up to 64 bytes keeps SegShuffle's 256 threads and default items.
/// SegHeads' and SegMerge's defaults count their static arrays against it too (SegMerge's alone
/// pass it for values past about 420 bytes). Knobs a caller sets stay; the launch checks them
/// against the device's own limit.
pub(crate) const ANY_DEVICE_BLOCK_SMEM: usize = 99 * 1024;
/// SegShuffle's items per thread at most in the owner form where an item brings more than its
/// value and a 4-byte owner: u64 owners, or lifted items narrower than the monoid (see
/// [`resolve_segmented`]).
const OWNER_FORM_ITEMS_CAP: u32 = 12;

/// SegMerge's threads per block and pipeline depth.
pub(crate) const MERGE_BLOCK: u32 = 128;
pub(crate) const MERGE_STAGES: u32 = 3;
/// The shared memory SegMerge's defaults shrink to for large items: two blocks per SM on
/// Ampere and Hopper.
pub(crate) const MERGE_SMEM_BUDGET: usize = 96 * 1024;

/// Items each Shuffle or SegShuffle thread folds per tile by default: 64 bytes' worth, rounded
/// up so that a lane's items fill whole 16-byte vectors.
pub(crate) fn shuffle_items(item_size: usize) -> u32 {
    let size = item_size.max(1);
    let granule = 16 / gcd(size, 16); // items per whole number of vectors
    ((64usize.div_ceil(size)).div_ceil(granule).max(1) * granule) as u32
}

/// SegMerge's default path steps per thread (a power of two): about 64 bytes of items
/// (docs/decisions/0005-segmerge-steps.md).
pub(crate) fn merge_steps(item_size: usize) -> u32 {
    match item_size {
        0..=4 => 16,
        5..=8 => 8,
        9..=16 => 4,
        17..=32 => 2,
        _ => 1,
    }
}

/// The portable reduction's block tiles per node (`Config::portable`; any power of two gives the
/// same bits): the fewest whose node reads at least 4096 times the bytes of the value it writes,
/// so that the launch's last block, which takes the tree over the nodes, reads little next to
/// the input (f32: one block tile of 512 threads; 64-byte values: 8), while the nodes stay
/// small enough to share out evenly over the grid.
pub(crate) fn portable_group(block: u32, lane_items: u32, in_size: usize, m_size: usize) -> u32 {
    let tile_bytes = (block as usize * lane_items as usize * in_size).max(1);
    let wanted = (4096 * m_size).div_ceil(tile_bytes);
    (wanted.max(1).next_power_of_two() as u32).min(64)
}

/// The portable reduction's nodes per barrier: Shuffle's tile group in block tiles (the block's
/// warps run that far ahead of warp 0, which takes the nodes' trees), at least one node.
pub(crate) fn portable_flush(group: u32) -> u32 {
    (SHUFFLE_GROUP / group).max(1)
}

/// The portable reduction's runs per lane: as many as make Shuffle's lane of input items
/// (about 64 bytes, `shuffle_items`), a power of two up to 16 — fewer warp-tree steps per item
/// where the runs are short (8-byte values lifted from 4-byte items: two runs of 8).
pub(crate) fn portable_lane_runs(run: u32, in_size: usize) -> u32 {
    let runs = (shuffle_items(in_size) / run).clamp(1, 16);
    1 << (31 - runs.leading_zeros())
}

/// Plain `Auto`: Shuffle, order-free when the monoid promises commutativity and the caller
/// left the tile group open (the order-free kernel has none). Returns whether order-free.
pub(crate) fn plain_order_free(commutative: bool, tile_group: Option<u32>) -> bool {
    commutative && tile_group.is_none()
}

/// What segmented `Auto` needs to know of SegShuffle for a shape: whether its static shared
/// memory fits, the most items and segments it indexes, and whether a tile of the given items
/// per thread keeps a block within [`ANY_DEVICE_BLOCK_SMEM`]; whether SegMerge's static shared
/// memory fits; and the largest Tb2Seg block whose shared memory does.
pub(crate) struct SegShuffleFacts<'a> {
    pub fits: bool,
    pub limits: (u64, u64),
    pub tile_fits: &'a dyn Fn(u32) -> bool,
    pub merge_fits: bool,
    pub tb2_block: Option<u32>,
}

/// Segmented `Auto`, from what is known without reading the layout: SegShuffle, the fastest on
/// every distribution of `bench segmented` in both forms and with u32 or u64 layouts (but
/// SegBlocks where [`seg_blocks_wins`], else SegHeads where [`seg_heads_wins`]); SegMerge
/// only where SegShuffle cannot run (2^32 or more items or segments, or values too large for
/// its static shared memory; docs/decisions/0004-segmerge-as-auto-choice.md); for values too
/// large for SegMerge's static arrays too (about 700 bytes), Tb2Seg by u32 owners of the
/// monoid's own values, on a block its data block fits, and SegHeads for the rest: CSR
/// offsets, and owners it turns into offsets first (values past about 1.5 KB, u64 owners,
/// lifted items). Then the items per thread the caller left open, by three rules:
///
/// - lifted items narrower than the monoid: sized by the item, not the monoid (twice the bytes
///   per tile for f32 -> (value, index): 10-28% faster on `bench segargmax`), halved while the
///   tile would pass [`ANY_DEVICE_BLOCK_SMEM`] (the offsets form stages a value an item: 16 f32
///   items a thread into 112-byte values would need 500 KiB) and kept only while more than the
///   monoid's own default, unless segments
///   average under 1.25 items in the owner form, under 1 in the offsets form (then the
///   per-segment outputs, sized by the monoid, dominate;
///   docs/decisions/0013-lifted-items-per-thread.md; the offsets form at one item per segment
///   takes 0.91 of the time with 16 f32 items at 3 blocks per SM, 90% empty segments 1.02:
///   docs/decisions/0053-lifted-segshuffle-registers.md);
/// - the owner form of values up to 8 bytes with segments averaging under 1.25 items: half as
///   many (32 bytes; up to 0.77 -> 0.98 of plain Shuffle on an H200; the offsets form and
///   longer segments are even or slower; docs/decisions/0012-owner-half-items.md);
/// - the owner form with u64 owners or lifted items narrower than the monoid: at most 12 per
///   thread (whole 16-byte vectors of items). u64 owners with f32 items: the default 16 spills
///   under the register cap (12 items: 0.99-1.06 of plain Shuffle where 16 gave 0.89-0.96 on an
///   H200; docs/decisions/0014-u64-layouts.md); lifted ArgMax from f32: 12 items take
///   0.67-0.96 of 16's time, and no layout slower
///   (docs/decisions/0053-lifted-segshuffle-registers.md).
///
/// A concrete algorithm is kept as it is.
pub(crate) fn resolve_segmented(
    config: SegConfig,
    shape: SegShape,
    n: usize,
    segments: usize,
    shuffle: SegShuffleFacts<'_>,
) -> SegConfig {
    if config.algorithm != SegAlgorithm::Auto {
        return config;
    }
    let items = shape.items;
    let (max_items, max_segments) = shuffle.limits;
    let beyond_u32 = n as u64 > max_items || segments as u64 > max_segments;
    let algorithm = if beyond_u32 || (!shuffle.fits && shuffle.merge_fits) {
        SegAlgorithm::SegMerge
    } else if !shuffle.fits {
        // Large values: Tb2Seg by owners on the largest block whose shared memory fits any
        // device, else SegHeads (its block shrinks to fit them; owners become offsets).
        return match (
            shape.offsets_form,
            shape.wide || items.lifted,
            shuffle.tb2_block,
        ) {
            (false, false, Some(block)) => SegConfig {
                algorithm: SegAlgorithm::Tb2Seg,
                block: config.block.or(Some(block)),
                ..config
            },
            _ => SegConfig {
                algorithm: SegAlgorithm::SegHeads,
                ..config
            },
        };
    } else if seg_blocks_wins(&config, shape, n, segments) {
        return SegConfig {
            algorithm: SegAlgorithm::SegBlocks,
            ..config
        };
    } else if seg_heads_wins(&config, shape, n, segments) {
        return SegConfig {
            algorithm: SegAlgorithm::SegHeads,
            ..config
        };
    } else {
        SegAlgorithm::SegShuffle
    };
    let short_segments = 4 * (n as u64) < 5 * segments as u64;
    let lifted_narrower = items.lifted_narrower();
    let outputs_dominate = if shape.offsets_form {
        segments > n
    } else {
        short_segments
    };
    let on_shuffle = algorithm == SegAlgorithm::SegShuffle;
    let items_per_thread = match config.items_per_thread {
        None if on_shuffle && lifted_narrower && !outputs_dominate => {
            let by_monoid = shuffle_items(items.m_size);
            let mut sized = shuffle_items(items.in_size);
            while sized > by_monoid && !(shuffle.tile_fits)(sized) {
                sized /= 2;
            }
            (sized > by_monoid).then_some(sized)
        }
        None if on_shuffle
            && !shape.offsets_form
            && !items.lifted
            && items.m_size <= 8
            && short_segments =>
        {
            Some((shuffle_items(items.m_size) / 2).max(1))
        }
        chosen => chosen,
    };
    let items_per_thread = if config.items_per_thread.is_none()
        && on_shuffle
        && !shape.offsets_form
        && (shape.wide || lifted_narrower)
    {
        let default = shuffle_items(items.m_size.max(items.in_size));
        let granule = (16 / gcd(items.in_size.max(1), 16)) as u32;
        let cap = (OWNER_FORM_ITEMS_CAP / granule * granule).max(granule);
        let chosen = items_per_thread.unwrap_or(default);
        (chosen > cap).then_some(cap).or(items_per_thread)
    } else {
        items_per_thread
    };
    SegConfig {
        algorithm,
        items_per_thread,
        ..config
    }
}

/// Whether `Auto` takes SegHeads: where it measured faster than SegShuffle, with every knob left
/// to it — CSR offsets of the item and value sizes, offset widths, sizes and mean lengths N / S
/// of [`SEG_HEADS_BANDS`]. Other item and value sizes are not measured in a band and stay on
/// SegShuffle. A known risk in the bands: tens of thousands
/// of short and empty segments crowded into a few tiles cost those tiles a round of offsets per
/// block's worth of segments (about twice a normal layout's time where 1/400 of the items are
/// such: docs/decisions/0083-seg-heads-flagged-rounds.md).
pub(crate) fn seg_heads_wins(
    config: &SegConfig,
    shape: SegShape,
    n: usize,
    segments: usize,
) -> bool {
    holds(&SEG_HEADS_BANDS, config, shape, n, segments)
}

/// Whether `Auto` takes SegBlocks: calls in the bands of [`SEG_BLOCKS_BANDS`], trusted or
/// validated (the bands start above [`SEG_BLOCKS_FUSED_MIN_MEAN`], so a validated call checks
/// its layout in its launch), with every knob left to it.
pub(crate) fn seg_blocks_wins(
    config: &SegConfig,
    shape: SegShape,
    n: usize,
    segments: usize,
) -> bool {
    holds(&SEG_BLOCKS_BANDS, config, shape, n, segments)
}

/// Whether `Auto` takes SegHeads for some N and S of calls of `shape` ([`seg_heads_wins`]'s
/// rule without them): what `Gpu::prepare_segmented` compiles besides N = 0's plan.
pub(crate) fn seg_heads_may_win(config: &SegConfig, shape: SegShape) -> bool {
    bands(&SEG_HEADS_BANDS, config, shape).next().is_some()
}

/// The same for SegBlocks ([`seg_blocks_wins`]).
pub(crate) fn seg_blocks_may_win(config: &SegConfig, shape: SegShape) -> bool {
    bands(&SEG_BLOCKS_BANDS, config, shape).next().is_some()
}

/// Whether a band of `table` holds `n` items in `segments` segments of `shape`.
fn holds(
    table: &'static [SegBand],
    config: &SegConfig,
    shape: SegShape,
    n: usize,
    segments: usize,
) -> bool {
    segments > 0
        && bands(table, config, shape)
            .any(|band| n >= band.min_items && band.mean_lengths.contains(&(n / segments)))
}

/// The bands of `table` for `shape`'s items and offsets, with every knob left to `Auto` (none
/// otherwise).
fn bands(
    table: &'static [SegBand],
    config: &SegConfig,
    shape: SegShape,
) -> impl Iterator<Item = &'static SegBand> {
    let items = shape.items;
    let eligible = config.knobs() == Knobs::default() && shape.offsets_form;
    table.iter().filter(move |band| {
        eligible
            && band.item_bytes == items.in_size
            && band.value_bytes == items.m_size
            && band.lifted == items.lifted
            && band.u64_offsets == shape.wide
    })
}

/// Items of `item_bytes` bytes (`lifted` into values of `value_bytes`, else values themselves)
/// with `u64_offsets` or u32 ones, at `min_items` items or more, whose mean segment length
/// N / S, rounded down, lies in `mean_lengths`: `Auto` takes the band's algorithm there. (A layout of
/// N / S = 31.99 is below a band from 32: at 2^24 items `bench segsweep`'s "mean 32" and "mean
/// 16" layouts were, so `Auto` kept SegShuffle on those band edges there.)
pub(crate) struct SegBand {
    item_bytes: usize,
    value_bytes: usize,
    lifted: bool,
    u64_offsets: bool,
    min_items: usize,
    mean_lengths: std::ops::RangeInclusive<usize>,
}

impl SegBand {
    /// A band of values read as they are: (value bytes, u64 offsets, fewest items, mean
    /// lengths N / S).
    const fn new(
        value_bytes: usize,
        u64_offsets: bool,
        min_items: usize,
        mean_lengths: std::ops::RangeInclusive<usize>,
    ) -> Self {
        SegBand {
            item_bytes: value_bytes,
            value_bytes,
            lifted: false,
            u64_offsets,
            min_items,
            mean_lengths,
        }
    }

    /// The same band for items of `item_bytes` bytes lifted into the values.
    const fn lifted_from(self, item_bytes: usize) -> Self {
        SegBand {
            item_bytes,
            lifted: true,
            ..self
        }
    }
}

/// Where SegHeads read more bytes a second than SegShuffle on an H200 (`bench segsweep`, f32
/// sums and the 8-byte affine monoid, trusted, 2^24, 20·2^20, 24·2^20, 28·2^20, 2^25, 2^26 and
/// 2^28 items; docs/results.md, "Head bits"): 4-byte values with u32 offsets 1.01-1.15x at 2^25
/// items (1.04-1.24x at 2^26 and more) from mean length 32 to 4096, but 0.95-1.08x at 2^24;
/// with u64 offsets (which cost SegHeads within 2% of u32 ones, and SegShuffle 6-12% more)
/// 1.01-1.24x from 2^24 to below 2^25 items from 32 to 2048, 0.98-1.09x at 4096 and 0.96-1.04x
/// at 8192, 1.05-1.21x at 2^25 from 32 to 8192 (1.10-1.35x at 2^26 and more); 8-byte values
/// with u32 offsets 1.04-1.19x at 2^24 and 1.10-1.26x at 2^25 from 16 to 2048, 0.99-1.04x at
/// 4096 and 0.93-0.97x at 8192 (1.07-1.27x at 2^26 and more from 16 to 2048). The bands end at
/// 4096 there: they take the sweep's layouts of mean 1024 and 2048 (N / S a little above 1024
/// and 2048 at most sizes, which the earlier edges left out) and of mean 4096 (N / S
/// 4061-4093), where SegHeads was even or a little faster; at mean 8192 SegShuffle was as fast
/// or faster, or within 4%. 8-byte values with u64 offsets, and 4-byte items lifted into
/// 8-byte values with u32 ones, measured the same way on an H200 and an H100 (the lift: ArgMax
/// from f32; other lifts of these sizes, log-sum-exp of f32 among them, follow by size,
/// unmeasured): u64 1.06-1.42x at 16-4096 from 2^24 items on the H200 (the H100 0.97-1.25x)
/// and 1.03-1.08x at 8192 from 2^25; lifted 1.02-1.12x at 32-4096 at 2^24 on the H200 (the
/// H100 even there, 1.04-1.26x from 2^25) and 1.08-1.09x at 8192 from 2^26. Fewer items, and lengths
/// outside the bands, were slower or even: its three launches, and its marks at short segments
/// (docs/decisions/0080-seg-heads.md, 0081-seg-heads-register-cap.md,
/// 0082-seg-heads-u64-offsets.md, 0084-seg-heads-band-edges.md,
/// 0085-seg-heads-lifted-and-u64-values.md).
pub(crate) const SEG_HEADS_BANDS: [SegBand; 8] = [
    SegBand::new(4, false, 1 << 25, 32..=4096),
    SegBand::new(4, true, 1 << 24, 32..=4096),
    SegBand::new(4, true, 1 << 25, 32..=8192),
    SegBand::new(8, false, 1 << 24, 16..=4096),
    SegBand::new(8, true, 1 << 24, 16..=4096),
    SegBand::new(8, true, 1 << 25, 16..=8192),
    SegBand::new(8, false, 1 << 24, 32..=4096).lifted_from(4),
    SegBand::new(8, false, 1 << 26, 32..=8192).lifted_from(4),
];

/// Where `Auto` takes SegBlocks: values lifted from 4-byte items into 8-byte ones (such as
/// ArgMax of f32) by u32 offsets, where SegBlocks at the blocks of [`seg_blocks_block`] read more
/// bytes a second than the faster of SegShuffle and SegHeads on an H100 (`bench segsweep` at
/// 2^26 items, trusted, 2026-12-06; docs/decisions/0088-seg-blocks.md): ArgMax lifted from f32
/// 1.13-1.34x at mean lengths 1024-65536, 1.01-1.07x to 2^20, 0.69x at 512; past 2^20 each
/// segment is cut into chunks as at 2^20 (one segment of 2^26 items: 1.11x SegShuffle, `bench
/// segargmax`, H100, 2026-12-07), so the bands have no upper end. From 64-thread
/// blocks (mean lengths from 1536) it stays ahead on heavy tails too, `bench segargmax`'s
/// (2026-12-07): 1.03-1.12x at mean lengths 2186-21156. At one-warp blocks (1000-1535) it is a
/// trade: 0.84x on the heavy tail of mean length 1318, against the others' 0.82x at an even
/// 1024. From 30·2^20 to 2^26 items the band starts where 256-thread blocks measured faster
/// (the smaller blocks were measured at 2^26 only). Validated calls, which check their layouts in
/// the launch here, read 1.06-1.31x the faster validated one to 65536 and 1.07-1.10x to 2^20
/// (with the register budget of [`seg_blocks_min_blocks`]).
///
/// Values read as they are (f32, 8-byte values; u32 and u64 offsets) have no band: SegBlocks
/// read 1.03-1.18x the faster of the others where segments are of even lengths (mean lengths
/// 512-65536), but 0.70-0.94x for f32 and 0.83-0.96x for affine maps, at every block size, on
/// power laws of the same mean lengths whose few long segments hold most of the items
/// (`reduce_bench::layouts::HEAVY_TAILS`; H100, 2026-12-07): there SegBlocks read 0.65-0.92 of
/// plain `Shuffle`, the two others 0.90-0.95, and `Auto` cannot see the spread.
pub(crate) const SEG_BLOCKS_BANDS: [SegBand; 2] = [
    SegBand::new(8, false, 1 << 26, 1000..=usize::MAX).lifted_from(4),
    SegBand::new(8, false, 30 << 20, 4000..=usize::MAX).lifted_from(4),
];

// Every band of SEG_BLOCKS_BANDS starts at or above the mean length of the fused check: a
// validated call `Auto` gives SegBlocks checks its layout in its launch.
const _: () = {
    let mut i = 0;
    while i < SEG_BLOCKS_BANDS.len() {
        assert!(*SEG_BLOCKS_BANDS[i].mean_lengths.start() as u64 >= SEG_BLOCKS_FUSED_MIN_MEAN);
        i += 1;
    }
};

/// Threads per SM the axes family's launches aim to keep busy (a strip per thread): enough
/// loads in flight to cover memory latency.
pub(crate) const AXES_THREADS_PER_SM: u64 = 2048;
/// The fewest items a thread folds down a strip by default: each launch over strips shortens K
/// at least this many times.
pub(crate) const AXES_MIN_STRIP: u32 = 16;
/// Rows (the reduced run innermost), and few columns (`AXES_COLS_ROW_BYTES`), at least this
/// long are folded by a warp per strip, its lanes reading neighbouring runs; shorter rows by a
/// thread per row.
pub(crate) const AXES_ROWS_MIN: u64 = 64;
/// Rows of at most 16 items and this many bytes (in one strip) are folded a thread per row,
/// each thread taking `AXES_SHORT_BYTES / (k rounded up to a power of two × item bytes)` rows
/// at a time, all their loads issued first (the kernel's `R_AXES_SHORT_BYTES`).
pub(crate) const AXES_SHORT_BYTES: u64 = 64;
/// Few columns (C of 2, 4 or 8, reduced down K) whose rows take at most this many bytes go to
/// the rows schedule, the C columns of a row folded side by side: a warp's lanes then read
/// neighbouring runs of whole rows.
pub(crate) const AXES_COLS_ROW_BYTES: u64 = 64;
/// With the order kept, few columns go to the rows schedule only where a lane's run holds at
/// least this many rows (H200, 2^26 f32 / 2^25 affine, against strips: order-free f32 columns
/// of 2, 4, 8 at 0.79 / 0.79 / 0.73 of the read roof against 0.48 / 0.54 / 0.62; affine with the
/// order kept, 4, 2 and 1 rows a lane: 0.70 / 0.55 / 0.36 against 0.47 / 0.54 / 0.68).
pub(crate) const AXES_COLS_KEPT_ROWS: u64 = 4;
/// The longest run of a lane over few columns (the kernel's `R_AXES_COLS_FIT`): with the order
/// kept, 4 rows of 4 columns of 8-byte values.
pub(crate) const AXES_COLS_RUN_BYTES: u64 = 128;
/// Few columns whose lane run and column values take at most this many bytes run at 4 blocks
/// per SM (64 registers: affine columns of 2, f32 and f64 columns of 4); more (affine columns
/// of 4 with the order kept, f64 columns of 8, 16-byte values) spill there and run at 3 (the
/// kernel's `R_AXES_COLS_SHORT_BYTES`).
pub(crate) const AXES_COLS_SHORT_BYTES: u64 = 96;
/// The bytes of items a lane folds per tile of the rows schedule (rows, and few columns side
/// by side), read as 16-byte vectors (the kernel's `R_AXES_RUN_ROWS`): each instruction of a
/// warp then spans 32 such runs, and the shuffle tree of a tile (order kept) runs once per
/// column for this many bytes.
pub(crate) const AXES_LANE_BYTES: u64 = 64;

/// `Auto` along axes: rows (one reduced run, innermost) from one run of 64 bytes of monoid
/// values up to `AXES_ROWS_MIN` items go to the portable kernel's tree, whose warps take 32
/// rows' 16-byte loads at once (H200: rows of 16 f32 0.88 of the read roof against the short
/// rows' 0.48); longer ones to the strips' rows schedule, a warp's lanes reading 64-byte runs
/// as vectors (H200, same run: f32 rows of 4096, 65536, 2^20 0.94 / 0.82 / 0.89 against the
/// tree's 0.80 / 0.78 / 0.76; affine rows of 4096 and 2^20 0.88 / 0.89 against 0.76 / 0.73;
/// per-row ArgMax lifted from 64 logits 0.80 against 0.56; rows of 64 and 256 equal).
/// Whether rows of `k` items (runs of `run` values) go to the tree:
pub(crate) fn axes_rows_by_tree(k: u64, run: u32) -> bool {
    k >= run as u64 && k < AXES_ROWS_MIN
}

/// The most 16-byte parts a scan tile's entry takes (values up to 48 bytes): a look-up loads
/// them at once; larger values keep their states apart (kernels/scan.cu's THE ENTRIES).
pub(crate) const SCAN_WORD_PARTS: usize = 4;

/// LookBack's threads per block (scans). Items per thread: [`scan_items`].
pub(crate) const SCAN_BLOCK: u32 = 256;

/// The most bytes of a scan tile's items its warps stage in shared memory (kernels/scan.cu: a
/// warp loads its items coalesced and each thread reads its own run from the stage; unstaged,
/// each thread reads its run from global memory, uncoalesced, twice). 48 KiB holds the default
/// tile of 12-, 20-, 24-, 40- and 48-byte items (256 threads of 160 or 192 bytes) and leaves
/// 16 KiB for the kernel's own shared memory on every device from sm_75 (64 KiB a block).
pub(crate) const SCAN_STAGE_MAX: usize = 48 * 1024;

/// The most bytes of a scan tile's stage kept in static shared memory (a block's static shared
/// memory ends at 48 KiB); larger stages are the launch's dynamic shared memory. The static
/// stage's address folds into the instructions: the kernels of 16-byte-vector items keep the
/// code and registers they had before stages could be dynamic (a dynamic base held in a
/// register cost f32 by offsets a spill under its cap for 6 blocks per SM).
pub(crate) const SCAN_STATIC_STAGE_MAX: usize = 32 * 1024;

/// LookAhead's shared-memory stages (kernels/scan_ahead.cu): at most this many tiles of items a
/// block holds at once; a plan with fewer than [`SCAN_AHEAD_LEAD`] + 2 runs LookBack. Six tiles
/// of f32 (32 KiB each) fill an SM: one block of 320 threads. At 2^28
/// on an H200, lead 2: f32 scans read 0.838 of the copy roof with four stages, 0.882 with six;
/// affine ones 0.849 with four, 0.837 with five (docs/decisions/0070-scan-look-ahead.md).
pub(crate) const SCAN_AHEAD_STAGES: u32 = 6;

/// LookAhead's rounds between a tile's reduction and its outputs (kernels/scan_ahead.cu's
/// `R_LEAD`): the time the look-back warp has to fold the tile's prefix; the other stages load
/// ahead. On an H200 at 2^28 (f32 with six stages, affine with five), lead 3 reads f32 / affine
/// scans at 0.888 / 0.857 of the copy roof, lead 2 at 0.882 / 0.837 (and 128 x 32 f32 tiles at
/// 0.57 against 0.82), lead 4 at 0.858 / 0.516 (affine: no stage left to load ahead).
pub(crate) const SCAN_AHEAD_LEAD: u32 = 3;

/// The dynamic shared memory LookAhead's stages may take, with a value per thread (segmented,
/// and a bit per item) for each of the lead's tiles and one more (catalogue/scan/mod.rs's
/// `ahead_smem`): six 32 KiB tiles of f32 and of 8-byte values, f32 by offsets, six 28 KiB
/// tiles of 8- and 16-byte values by u32 key ([`scan_ahead_items`]'s runs); five of f32 by key
/// (room for a tile's keys, in tiles of 28 KiB), of 8-byte values by offsets and of 16-byte
/// values; three of 12-byte ones at their default run (too few: three with a lead of 1 read
/// 12-byte scans at 0.65 of the copy roof where LookBack read 0.72,
/// docs/decisions/0071-scan-look-ahead-by-key.md), five at runs of 12.
/// On an H200 at 2^24 / 2^26 items, six stages against five read affine scans at 0.788 / 0.832
/// of the copy roof against 0.733 / 0.826, f32 sums by offsets 0.65–0.73 against 0.59–0.70
/// (docs/decisions/0072-scan-look-ahead-by-offsets.md); a value per stage instead, six of
/// 8-byte values took 216 KiB and read 0.829 where five read 0.852.
/// A device whose blocks may not take the stages beside the kernel's static shared memory runs
/// LookBack.
pub(crate) const SCAN_AHEAD_SMEM: usize = 200 * 1024;

/// LookAhead's look-back warps (kernels/scan_ahead.cu's `R_AHEAD_LOOKERS`) for values of
/// `value_bytes`, by CSR offsets or not: as many as keep up with the tiles (warp j of L takes the
/// block's tiles j, j + L, …), no more: each warp reads the entries since its own previous tile,
/// so more warps read more of them. On an H200 at 2^28, two against one read plain scans of 8-
/// and 12-byte values at 0.89–0.90 of the copy roof against 0.85–0.86, of 2×2 matrices at 0.81
/// against 0.73; f32 sums by offsets at 0.73–0.86 against 0.69–0.81 (2^26); f32 sums plain and
/// by key at 0.87 / 0.92–0.95 against 0.89 / 0.96–0.99: the second warp's reads of the entries
/// and its 4 KiB of rows cost more there than it waits
/// (docs/decisions/0075-scan-two-look-back-warps.md). Three against two: 2×2 matrices 0.84
/// against 0.81 (plain), 0.69–0.71 against 0.65–0.66 (by key); 8- and 12-byte values 0.83–0.89
/// against 0.89–0.91 (docs/decisions/0076-scan-three-look-back-warps.md).
pub(crate) fn scan_ahead_look_backs(value_bytes: usize, by_offsets: bool) -> u32 {
    if value_bytes >= 16 {
        3
    } else if value_bytes > 4 || by_offsets {
        2
    } else {
        1
    }
}

/// Whether `Auto`'s scan of `n` items by `segments` CSR segments runs LookBack's kernel rather
/// than LookAhead (the same tiles of `tile` items, the same bits), for the values for which
/// [`scan_offsets_few_by_look_back`] says so: where the segments are fewer than the whole tiles,
/// LookBack walks each tile's few offsets itself, which can cost less than LookAhead's pass that
/// marks them in a bitmap and its segmented kernel (on an H200 at 2^26 items with one look-back
/// warp, f32 / affine: LookAhead 0.67-0.70 / 0.65-0.66 of the copy roof on segments of 67,000
/// items and more, LookBack 0.68-0.69 / 0.72; LookAhead ahead on segments of 30 items and fewer:
/// docs/decisions/0072-scan-look-ahead-by-offsets.md).
pub(crate) fn scan_offsets_look_back(segments: u64, n: u64, tile: u64) -> bool {
    segments < n / tile
}

/// Whether `Auto`'s scans by CSR offsets of values of `value_bytes` take LookBack's kernel where
/// the segments are few ([`scan_offsets_look_back`]): values of more than 8 bytes. Since LookAhead
/// by offsets has two look-back warps, three for 2x2 matrices
/// (docs/decisions/0075-scan-two-look-back-warps.md, 0076-scan-three-look-back-warps.md), on an
/// H200 at 2^26 items on segments of 67,000 items and more it takes 0.90-0.95x LookBack's time
/// for f32 sums and 0.96-1.02x for affine maps, but 1.05-1.09x for 2x2 matrices
/// (docs/decisions/0078-scan-few-offsets-look-ahead.md); 12-byte values, not measured, keep
/// LookBack as before.
pub(crate) fn scan_offsets_few_by_look_back(value_bytes: usize) -> bool {
    value_bytes > 8
}

/// Whether LookBack's `scan_tiles` may have its registers capped for more resident blocks per
/// SM (`ScanPlan::module`): tiles resident per SM hide the look-back's wait, but not where a
/// thread's keys (`items` of `key_bytes`, read as 16-byte vectors and compared in registers)
/// take more than 64 bytes: there fewer registers cost more than the blocks win (f32 by keys,
/// 128 bytes, 1.03-1.19x the time capped on an H200; affine by keys, 64 bytes, 0.95-0.97x:
/// docs/decisions/0063-scan-register-caps.md).
pub(crate) fn scan_may_cap(keys: bool, items: u32, key_bytes: usize) -> bool {
    !keys || items as usize * key_bytes <= 64
}

/// Items each LookBack thread scans per tile by default: 128 bytes' worth of the larger of the
/// input item and the monoid value (twice Shuffle's), at most 32 (a thread's segment starts are
/// one word). Each tile waits for its predecessors, so larger tiles keep more bytes in flight:
/// on an H200 at 2^28, f32 and affine scans move 0.56-0.58 of the copy roof with 128 bytes per
/// thread against 0.45-0.46 with 64 and 0.32-0.33 with 32 (`bench scan`'s tile shapes;
/// docs/decisions/0045-scan-look-back.md).
pub(crate) fn scan_items(in_size: usize, m_size: usize) -> u32 {
    reduce_core::portable::scan_items(in_size.max(m_size)) as u32
}

/// LookAhead's other run: items per thread of `in_size` bytes making 7 or 9 16-byte vectors (112
/// or 144 bytes, beside the default's 128; at most 32 items): f32 28, 8-byte values 14, 12-byte
/// 12, 16-byte 7, 24-byte 6; `None` where no such run exists (1-, 2-, 20- or 32-byte items).
/// With an odd number of vectors the runs of a quarter warp's lanes start in distinct bank
/// groups, so a lane reads its run in order as copied, where an even run is swizzled in place by
/// its first read (kernels/scan_ahead.cu's `r_ahead_first_read`). `catalogue/scan/mod.rs` takes it
/// by key and where the default run leaves LookAhead too few stages. On an H200, by u32 key at
/// 2^26 (eleven distributions): f32 0.90-0.94x the time of 32 items, affine 0.90-0.94x that of
/// 16 (against even runs read rotated, with selects to undo it, before
/// docs/decisions/0074-scan-swizzled-runs.md; by key the two were not measured again after);
/// 12-byte values, plain, 0.85 of the copy roof at 2^28 with 12 items (LookAhead, five stages)
/// against 0.78 with 16 (too few stages: LookBack). Plain f32 and affine scans take 1.02-1.05x
/// the time with it, by CSR offsets f32 1.00-1.06x, and LookBack's kernel 0.99-1.22x
/// (docs/decisions/0073-scan-odd-vector-runs.md).
pub(crate) fn scan_ahead_items(in_size: usize) -> Option<u32> {
    let size = in_size.max(1);
    [7, 9].into_iter().find_map(|vectors: usize| {
        let bytes = 16 * vectors;
        (bytes.is_multiple_of(size) && (1..=32).contains(&(bytes / size)))
            .then_some((bytes / size) as u32)
    })
}
