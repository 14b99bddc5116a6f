//! The segmented algorithm catalogue, its knobs, their validation, and each plan's kernel.

use crate::algorithm::{
    check_block, check_grid, check_width, gcd, invalid, reject, shuffle_items, Named, MATRIX_ROWS,
    STATIC_SMEM_LIMIT,
};
use crate::codegen::KernelSpec;
use crate::error::Result;

/// A segmented reduction algorithm. All keep the left-to-right order inside every segment.
///
/// | variant | what | passes | output |
/// |---|---|---|---|
/// | `Tb2Seg` | Zhou et al.'s left-storing tree: siblings with different owners push the right child (paper IV.A) | multi | pre-filled, appended |
/// | `Tb4WarpSeg` | the intra-warp version, `__syncwarp()` between steps (paper IV.A) | multi | pre-filled, appended |
/// | `MatrixSeg` | Dotsenko rows fold runs, flush on owner change, row suffixes by a right-storing warp tree (paper IV.A) | multi | pre-filled, prepended |
/// | `PersistentMatrixSeg` | MatrixSeg with persistent blocks (paper IV.B) | 2 | pre-filled, prepended |
/// | `DiffWarps16Seg` | producer/consumer warps, W = 16 (paper IV.B) | 2 | pre-filled, prepended |
/// | `SegShuffle` | items split evenly over threads, run-length flush, segmented warp/block scans, block records joined by the last block (ours) | 1 | each segment written once |
/// | `SegMerge` | merge-path: items *and* segment ends split evenly over threads, pipelined through shared memory, the same scans and records (ours; sm_80+) | 1 | each segment written once |
/// | `Auto` | SegShuffle; SegMerge past 2^32 items or segments | | |
///
/// The paper's algorithms work on an internally identity-filled output (their read-modify-write
/// contract stays inside the call); the offsets form converts offsets to owners for them first.
/// `SegShuffle` and `SegMerge` take `u32` and `u64` layouts, the paper's algorithms `u32` ones;
/// only `SegMerge` takes 2^32 or more items or segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum SegAlgorithm {
    /// Left-storing shared-memory tree with pushes (paper IV.A, after Zhou et al.).
    Tb2Seg,
    /// Intra-warp left-storing trees with pushes (paper IV.A).
    Tb4WarpSeg,
    /// Dotsenko rows with run flushes and a right-storing warp tree (paper IV.A).
    MatrixSeg,
    /// MatrixSeg with persistent blocks (paper IV.B).
    PersistentMatrixSeg,
    /// Persistent MatrixSeg with producer/consumer warps and W = 16 (paper IV.B).
    DiffWarps16Seg,
    /// Ours: items split evenly over threads, single launch, each segment written once.
    SegShuffle,
    /// Ours: merge-path split of items and segment ends, single launch, each segment written
    /// once; its cost depends on N and the segment count only. Needs sm_80 or newer.
    SegMerge,
    /// SegShuffle (fastest measured on every distribution, u32 and u64 layouts); SegMerge past
    /// 2^32 items or segments.
    #[default]
    Auto,
}

impl SegAlgorithm {
    /// Every concrete algorithm (all but `Auto`), for tests and benchmarks.
    pub const ALL: [SegAlgorithm; 7] = [
        SegAlgorithm::Tb2Seg,
        SegAlgorithm::Tb4WarpSeg,
        SegAlgorithm::MatrixSeg,
        SegAlgorithm::PersistentMatrixSeg,
        SegAlgorithm::DiffWarps16Seg,
        SegAlgorithm::SegShuffle,
        SegAlgorithm::SegMerge,
    ];

    /// The algorithm's name in tables and benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            SegAlgorithm::Tb2Seg => "Tb2Seg",
            SegAlgorithm::Tb4WarpSeg => "Tb4WarpSeg",
            SegAlgorithm::MatrixSeg => "MatrixSeg",
            SegAlgorithm::PersistentMatrixSeg => "PersistentMatrixSeg",
            SegAlgorithm::DiffWarps16Seg => "DiffWarps16Seg",
            SegAlgorithm::SegShuffle => "SegShuffle",
            SegAlgorithm::SegMerge => "SegMerge",
            SegAlgorithm::Auto => "Auto",
        }
    }
}

impl Named for SegAlgorithm {
    fn name(self) -> &'static str {
        SegAlgorithm::name(self)
    }
}

impl std::fmt::Display for SegAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// A segmented algorithm plus its parameters and whether the layout is trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SegConfig {
    /// The algorithm.
    pub algorithm: SegAlgorithm,
    /// Threads per block (a multiple of 32; Tb2Seg: a power of two; Tb4WarpSeg: <= 256).
    pub block: Option<u32>,
    /// W of the 32 x W matrix (MatrixSeg, PersistentMatrixSeg: 32; DiffWarps16Seg: 16).
    pub matrix_width: Option<u32>,
    /// Producer warps of DiffWarps16Seg (default 8).
    pub producers: Option<u32>,
    /// Items per thread of SegShuffle (default: 64 bytes' worth); path steps (items plus
    /// segment ends) per thread and tile of SegMerge (default: from the item size).
    pub items_per_thread: Option<u32>,
    /// SegMerge's pipeline: tiles of each stream held in shared memory (3 to 8, default 3;
    /// up to `stages - 2` are in flight while one is reduced).
    pub stages: Option<u32>,
    /// Blocks of the persistent algorithms (default: SMs x resident blocks).
    pub grid: Option<u32>,
    /// Skip the layout validation (sorted, in-range owners; monotone offsets from 0 to N).
    /// With a bad layout the result is then unspecified (but memory-safe).
    pub trusted: bool,
}

impl From<SegAlgorithm> for SegConfig {
    fn from(algorithm: SegAlgorithm) -> Self {
        SegConfig::new(algorithm)
    }
}

impl SegConfig {
    /// The algorithm with default parameters, validating the layout.
    pub fn new(algorithm: SegAlgorithm) -> Self {
        SegConfig {
            algorithm,
            ..SegConfig::default()
        }
    }
    /// Sets the threads per block.
    pub fn block(mut self, threads: u32) -> Self {
        self.block = Some(threads);
        self
    }
    /// Sets W.
    pub fn matrix_width(mut self, w: u32) -> Self {
        self.matrix_width = Some(w);
        self
    }
    /// Sets the producer warps of DiffWarps16Seg.
    pub fn producers(mut self, p: u32) -> Self {
        self.producers = Some(p);
        self
    }
    /// Sets SegShuffle's items (SegMerge's path steps) per thread.
    pub fn items_per_thread(mut self, items: u32) -> Self {
        self.items_per_thread = Some(items);
        self
    }
    /// Sets SegMerge's pipeline depth.
    pub fn stages(mut self, stages: u32) -> Self {
        self.stages = Some(stages);
        self
    }
    /// Sets the grid of the persistent algorithms.
    pub fn grid(mut self, blocks: u32) -> Self {
        self.grid = Some(blocks);
        self
    }
    /// Skips the layout validation: for layouts already known to be valid.
    pub fn trusted(mut self) -> Self {
        self.trusted = true;
        self
    }
}

/// What a plan is for: the element sizes and the layout's form and index width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Bytes of one input item (`r_in`).
    pub in_size: usize,
    /// Bytes of one monoid value.
    pub m_size: usize,
    /// CSR offsets (else owners).
    pub offsets_form: bool,
    /// u64 offsets or owners.
    pub wide: bool,
    /// The items are not 16-byte aligned (no vector loads or copies of them).
    pub plain_items: bool,
    /// The offsets or owners are not 16-byte aligned (no vector loads of them).
    pub plain_index: bool,
    /// The items are lifted into monoid values (`r_in`, `m_lift`): read by SegShuffle and SegMerge.
    pub lifted: bool,
}

/// A validated, concrete segmented algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SegPlan {
    Tb2 {
        block: u32,
    },
    Tb4Warp {
        block: u32,
    },
    Matrix {
        block: u32,
        width: u32,
    },
    PersistentMatrix {
        block: u32,
        width: u32,
        grid: Option<u32>,
    },
    DiffWarps {
        producers: u32,
        width: u32,
        grid: Option<u32>,
    },
    Shuffle {
        block: u32,
        items: u32,
        vecs: u32,
        grid: Option<u32>,
    },
    Merge {
        block: u32,
        steps: u32,
        stages: u32,
        grid: Option<u32>,
    },
}

/// SegMerge's default path steps per thread (a power of two): about 64 bytes of items
/// (measured on an H200: docs/gpu-results.md, `bench segvariants`).
fn merge_steps(item_size: usize) -> u32 {
    match item_size {
        0..=4 => 16,
        5..=8 => 8,
        9..=16 => 4,
        17..=32 => 2,
        _ => 1,
    }
}

/// SegShuffle's default threads per block.
const SHUFFLE_SEG_BLOCK: u32 = 256;

/// An upper bound on SegShuffle's static shared memory without the owner form's output stage
/// (kernels/seg_shuffle.cu): the block scan's warp aggregates (`s_agg`: two of R_WARP + 1
/// `r_seg`, a flag padded to the value's alignment and the value), the two carries, the entry
/// value, the offsets form's warp folds of a tile inside one segment (`s_single`), and a few
/// words. It grows with the monoid's size: past about 560 bytes (offsets form) or 650 (owner
/// form) it leaves no room, and `Auto` takes SegMerge, whose memory is dynamic.
fn shuffle_static_smem(shape: Shape, block: u32) -> usize {
    let m = shape.m_size.max(1);
    let seg = m + 16;
    let folds = if shape.offsets_form {
        2 * (block as usize / 32) * m
    } else {
        0
    };
    (2 * (32 + 1) + 2) * seg + m + folds + 128
}

/// SegShuffle's owner-form output stage slots that fit beside the rest of its static shared
/// memory (two stages of `slots + 1` values; 0 when not even one slot fits).
fn shuffle_owner_stage_room(shape: Shape, block: u32) -> u64 {
    let m = shape.m_size.max(1);
    let room = STATIC_SMEM_LIMIT.saturating_sub(shuffle_static_smem(shape, block)) / (2 * m);
    room.saturating_sub(1) as u64
}

/// Whether SegShuffle's static shared memory fits for this shape and block.
fn shuffle_fits(shape: Shape, block: u32) -> bool {
    if shape.offsets_form {
        shuffle_static_smem(shape, block) <= STATIC_SMEM_LIMIT
    } else {
        shuffle_owner_stage_room(shape, block) >= 1
    }
}

/// The default shared memory SegMerge's parameters are shrunk to for large items.
const MERGE_SMEM_BUDGET: usize = 96 * 1024;

/// SegMerge's dynamic shared memory: the item ring, the key ring (offsets or owners) and two
/// output stages, each 16-byte aligned; each ring with a 128-byte line of slack (alignment
/// shift and swizzle; see kernels/seg_merge.cu).
fn merge_smem(block: u32, steps: u32, stages: u32, shape: Shape) -> usize {
    let round16 = |b: usize| b.div_ceil(16) * 16;
    let tile = block as usize * steps as usize;
    let ring = stages as usize * tile;
    let index_size = if shape.wide { 8 } else { 4 };
    round16(ring * shape.in_size + 128) + round16(ring * index_size + 128) + 2 * tile * shape.m_size
}

/// Auto's choice, from what it knows without reading the layout (docs/gpu-results.md, `bench
/// segmented` and `bench segwide` on an H200): SegShuffle, the fastest on every distribution of
/// the benchmark in both forms and with u32 or u64 layouts; SegMerge only where SegShuffle
/// cannot run (2^32 or more items or segments: `SegPlan::index_limits`). Runs of empty segments were SegMerge's in the owner form until SegShuffle's
/// blocks filled them coalesced (`empty_90`, owner form: 0.87 of plain Shuffle against
/// SegMerge's 0.39, run 48); long segments in the offsets form until its short path for tiles
/// inside one segment (one segment: 0.92 against 0.48, run 33). Lifted items follow the same
/// rule.
/// The most items and segments SegShuffle takes: its kernel holds positions and segment ids in
/// 32 bits. With u64 layouts it reads every entry narrowed to 32 bits, an entry past 2^32 - 1 as
/// 2^32 - 1 (kernels/seg_tile.cuh, `r_narrow`): the items stay below that value, so that such an
/// entry is still past the last offset (n) and a bad one.
fn shuffle_limits(shape: Shape) -> (u64, u64) {
    let max = u32::MAX as u64;
    (if shape.wide { max - 1 } else { max }, max)
}

pub(crate) fn resolve(config: SegConfig, shape: Shape, n: usize, segments: usize) -> SegConfig {
    if config.algorithm != SegAlgorithm::Auto {
        return config;
    }
    let (max_items, max_segments) = shuffle_limits(shape);
    let beyond_u32 = n as u64 > max_items || segments as u64 > max_segments;
    let too_large = !shuffle_fits(shape, config.block.unwrap_or(SHUFFLE_SEG_BLOCK));
    let algorithm = if beyond_u32 || too_large {
        SegAlgorithm::SegMerge
    } else {
        SegAlgorithm::SegShuffle
    };
    // Lifted items narrower than the monoid: SegShuffle's items per thread sized by the item,
    // not the monoid (twice the bytes per tile for f32 -> (value, index): 10-28% faster, `bench
    // segargmax` runs 35-36, including power_3 at 1.48 items per segment), unless segments
    // average under 1.25 items (then the per-segment outputs, sized by the monoid, dominate:
    // 2x slower at one item per segment).
    let items_per_thread = match config.items_per_thread {
        None if algorithm == SegAlgorithm::SegShuffle
            && shape.lifted
            && shape.in_size < shape.m_size
            && 4 * n as u64 >= 5 * segments as u64 =>
        {
            shuffle_items(shape.in_size, None)
                .ok()
                .map(|(items, _)| items)
        }
        // The owner form with segments averaging under 1.25 items: half the items per thread
        // (32 bytes; `bench segvariants`, runs 86 and 88, H200: f32 size 1 0.77 -> 0.98 of plain
        // Shuffle, 90% empty 0.82 -> 0.90, affine 0.63 -> 0.74 and 0.66 -> 0.75; at 1.48 items
        // per segment (power_3) affine loses 0.91 -> 0.79, f32 is even; the offsets form and
        // longer segments are even or slower).
        None if algorithm == SegAlgorithm::SegShuffle
            && !shape.offsets_form
            && !shape.lifted
            && shape.m_size <= 8
            && 4 * (n as u64) < 5 * segments as u64 =>
        {
            shuffle_items(shape.m_size, None)
                .ok()
                .map(|(items, _)| (items / 2).max(1))
        }
        chosen => chosen,
    };
    // u64 owners: at most 12 per thread (96 bytes; the same whole 16-byte vectors of items),
    // unless the caller chose. With f32 items the default 16 spills under the register cap
    // (`bench segwide`, run 120 on an H200: 12 items 0.99-1.06 of plain Shuffle where 16 gave
    // 0.89-0.96 and 8 gave 0.91-1.00; with 8-byte items the default 8 is kept).
    let items_per_thread = match items_per_thread {
        chosen
            if config.items_per_thread.is_some()
                || algorithm != SegAlgorithm::SegShuffle
                || shape.offsets_form
                || !shape.wide =>
        {
            chosen
        }
        chosen => {
            let sized = shape.m_size.max(shape.in_size);
            let default = shuffle_items(sized, None).map_or(1, |(items, _)| items);
            let items = chosen.unwrap_or(default);
            let granule = (16 / gcd(shape.in_size.max(1), 16)) as u32;
            let cap = (WIDE_OWNERS_PER_THREAD / granule * granule).max(granule);
            (items > cap).then_some(cap).or(chosen)
        }
    };
    SegConfig {
        algorithm,
        items_per_thread,
        ..config
    }
}

/// SegShuffle's u64 owners per thread at most (see `resolve`).
const WIDE_OWNERS_PER_THREAD: u32 = 12;

impl SegConfig {
    /// Fixes every parameter of a concrete algorithm (`Auto` must be resolved first).
    pub(crate) fn plan(&self, shape: Shape) -> Result<SegPlan> {
        let alg = self.algorithm;
        let c = self;
        let not_persistent = |what| reject(alg, what, c.grid.is_some());
        if shape.lifted && !matches!(alg, SegAlgorithm::SegMerge | SegAlgorithm::SegShuffle) {
            return Err(invalid(
                alg,
                "lifted items are read by SegShuffle and SegMerge (and Auto) only",
            ));
        }
        if alg != SegAlgorithm::SegMerge {
            reject(alg, "stages (SegMerge's pipeline)", c.stages.is_some())?;
        }
        if shape.wide && !matches!(alg, SegAlgorithm::SegMerge | SegAlgorithm::SegShuffle) {
            return Err(invalid(
                alg,
                "u64 offsets or owners are taken by SegShuffle and SegMerge (and Auto) only",
            ));
        }
        match alg {
            SegAlgorithm::Auto => unreachable!("Auto is resolved first"),
            SegAlgorithm::Tb2Seg => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                not_persistent("grid (Tb2Seg is multi-pass)")?;
                let block = check_block(alg, c.block.unwrap_or(256))?;
                if !block.is_power_of_two() {
                    return Err(invalid(
                        alg,
                        format!("block size {block} must be a power of two"),
                    ));
                }
                Ok(SegPlan::Tb2 { block })
            }
            SegAlgorithm::Tb4WarpSeg => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                not_persistent("grid (Tb4WarpSeg is multi-pass)")?;
                let block = check_block(alg, c.block.unwrap_or(256))?;
                if block > 256 {
                    return Err(invalid(
                        alg,
                        format!("block size {block} is past 256 (at most 32 data-warp values)"),
                    ));
                }
                Ok(SegPlan::Tb4Warp { block })
            }
            SegAlgorithm::MatrixSeg => {
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                not_persistent("grid (MatrixSeg is multi-pass; use PersistentMatrixSeg)")?;
                Ok(SegPlan::Matrix {
                    block: check_block(alg, c.block.unwrap_or(256))?,
                    width: check_width(alg, c.matrix_width, 32)?,
                })
            }
            SegAlgorithm::PersistentMatrixSeg => {
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                Ok(SegPlan::PersistentMatrix {
                    block: check_block(alg, c.block.unwrap_or(256))?,
                    width: check_width(alg, c.matrix_width, 32)?,
                    grid: check_grid(alg, c.grid)?,
                })
            }
            SegAlgorithm::DiffWarps16Seg => {
                reject(
                    alg,
                    "block (set producers: 32 * (producers + 1) threads)",
                    c.block.is_some(),
                )?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                let producers = c.producers.unwrap_or(8);
                if producers == 0 || producers > 31 {
                    return Err(invalid(
                        alg,
                        format!("producers {producers} must be between 1 and 31"),
                    ));
                }
                Ok(SegPlan::DiffWarps {
                    producers,
                    width: check_width(alg, c.matrix_width, 16)?,
                    grid: check_grid(alg, c.grid)?,
                })
            }
            SegAlgorithm::SegShuffle => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                // Items per thread sized by the larger of the item and the monoid value; vector
                // loads when a lane's items fill whole 16-byte vectors.
                let bad = |_| invalid(alg, "items_per_thread must be between 1 and 256");
                let (items, _) = shuffle_items(shape.m_size.max(shape.in_size), c.items_per_thread)
                    .map_err(bad)?;
                let (_, vecs) = shuffle_items(shape.in_size, Some(items)).map_err(bad)?;
                let block = check_block(alg, c.block.unwrap_or(SHUFFLE_SEG_BLOCK))?;
                if !shuffle_fits(shape, block) {
                    return Err(invalid(
                        alg,
                        format!(
                            "{}-byte values leave no room in SegShuffle's static shared memory \
                             (its block scan keeps 66 of them; the limit is {STATIC_SMEM_LIMIT} \
                             bytes): use SegMerge (Auto does)",
                            shape.m_size
                        ),
                    ));
                }
                Ok(SegPlan::Shuffle {
                    block,
                    items,
                    vecs,
                    grid: check_grid(alg, c.grid)?,
                })
            }
            SegAlgorithm::SegMerge => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                let mut block = check_block(alg, c.block.unwrap_or(128))?;
                let mut steps = c
                    .items_per_thread
                    .unwrap_or_else(|| merge_steps(shape.in_size.max(shape.m_size)));
                let mut stages = c.stages.unwrap_or(3);
                if !block.is_power_of_two() {
                    return Err(invalid(
                        alg,
                        format!("block size {block} must be a power of two"),
                    ));
                }
                if !steps.is_power_of_two() || steps > 64 {
                    return Err(invalid(
                        alg,
                        format!(
                            "items_per_thread (path steps) {steps} must be a power of two up to 64"
                        ),
                    ));
                }
                if !(3..=8).contains(&stages) {
                    return Err(invalid(
                        alg,
                        format!("stages {stages} must be between 3 and 8"),
                    ));
                }
                // Large items: shrink the defaults the caller left open until the rings and
                // stages fit MERGE_SMEM_BUDGET (two blocks per SM on Ampere and Hopper).
                while merge_smem(block, steps, stages, shape) > MERGE_SMEM_BUDGET {
                    if c.items_per_thread.is_none() && steps > 1 {
                        steps /= 2;
                    } else if c.block.is_none() && block > 64 {
                        block /= 2;
                    } else if c.stages.is_none() && stages > 3 {
                        stages -= 1;
                    } else {
                        break; // the device's limit decides (a clear error at launch)
                    }
                }
                Ok(SegPlan::Merge {
                    block,
                    steps,
                    stages,
                    grid: check_grid(alg, c.grid)?,
                })
            }
        }
    }
}

impl SegPlan {
    pub fn algorithm(&self) -> SegAlgorithm {
        match self {
            SegPlan::Tb2 { .. } => SegAlgorithm::Tb2Seg,
            SegPlan::Tb4Warp { .. } => SegAlgorithm::Tb4WarpSeg,
            SegPlan::Matrix { .. } => SegAlgorithm::MatrixSeg,
            SegPlan::PersistentMatrix { .. } => SegAlgorithm::PersistentMatrixSeg,
            SegPlan::DiffWarps { .. } => SegAlgorithm::DiffWarps16Seg,
            SegPlan::Shuffle { .. } => SegAlgorithm::SegShuffle,
            SegPlan::Merge { .. } => SegAlgorithm::SegMerge,
        }
    }

    pub fn block(&self) -> u32 {
        match *self {
            SegPlan::Tb2 { block }
            | SegPlan::Tb4Warp { block }
            | SegPlan::Matrix { block, .. }
            | SegPlan::PersistentMatrix { block, .. }
            | SegPlan::Shuffle { block, .. }
            | SegPlan::Merge { block, .. } => block,
            SegPlan::DiffWarps { producers, .. } => 32 * (producers + 1),
        }
    }

    /// Items per data block (per tile for SegShuffle; path steps per tile for SegMerge).
    pub fn data_block(&self) -> u64 {
        match *self {
            SegPlan::Tb2 { block } => 2 * block as u64,
            SegPlan::Tb4Warp { block } => 4 * block as u64,
            SegPlan::Matrix { width, .. }
            | SegPlan::PersistentMatrix { width, .. }
            | SegPlan::DiffWarps { width, .. } => (MATRIX_ROWS * width) as u64,
            SegPlan::Shuffle { block, items, .. } => block as u64 * items as u64,
            SegPlan::Merge { block, steps, .. } => block as u64 * steps as u64,
        }
    }

    /// The grid the caller asked for (persistent algorithms).
    pub fn requested_grid(&self) -> Option<u32> {
        match *self {
            SegPlan::PersistentMatrix { grid, .. }
            | SegPlan::DiffWarps { grid, .. }
            | SegPlan::Shuffle { grid, .. }
            | SegPlan::Merge { grid, .. } => grid,
            _ => None,
        }
    }

    /// Dynamic shared memory: the paper's kernels hold values, 16 bytes of alignment slack and
    /// owners; SegShuffle its tile marks (offsets form); SegMerge its rings and output stages.
    pub fn dynamic_smem(&self, shape: Shape) -> usize {
        let slots = match *self {
            SegPlan::Tb2 { block } => {
                let d = 2 * block as usize;
                d + d / 32
            }
            SegPlan::Tb4Warp { block } => 4 * block as usize + 32,
            SegPlan::Matrix { width, .. } | SegPlan::PersistentMatrix { width, .. } => {
                (MATRIX_ROWS * (width + 1)) as usize
            }
            SegPlan::DiffWarps { width, .. } => 2 * (MATRIX_ROWS * (width + 1)) as usize,
            SegPlan::Shuffle { block, items, .. } => {
                // The offsets form's tile: the items' scan values (one of padding after every
                // `items` when `items` is even: R_VAL_SLOTS), an end position per stage slot (16
                // bits where tile positions fit, else 32: r_endpos) and a head byte per item.
                let tile = self.data_block() as usize;
                let val_slots = if items.is_multiple_of(2) {
                    tile + block as usize
                } else {
                    tile
                };
                return if shape.offsets_form {
                    let endpos = if tile < 0xfffe { 2 } else { 4 };
                    val_slots * shape.m_size + endpos * self.stage_slots(shape) as usize + tile
                } else {
                    0
                };
            }
            SegPlan::Merge {
                block,
                steps,
                stages,
                ..
            } => return merge_smem(block, steps, stages, shape),
        };
        slots * shape.m_size + 16 + slots * 4
    }

    /// SegShuffle's stage: the segment ids a tile closes that it writes in order. Owner form: a
    /// tile's worth of values, at most 16 KiB and what the rest of its static shared memory
    /// leaves; offsets form: end positions for twice a tile's segments (ids past the stage, from
    /// many empty segments, cost a re-read of their offsets).
    fn stage_slots(&self, shape: Shape) -> u64 {
        if shape.offsets_form {
            return 2 * self.data_block();
        }
        self.data_block()
            .min((16 * 1024 / shape.m_size.max(1)) as u64)
            .min(shuffle_owner_stage_room(shape, self.block()))
            .max(1)
    }

    /// The kernel family with its compile-time parameters, and the entry point: the preferred
    /// variant (see [`SegPlan::fallback_kernel`]).
    pub fn kernel(&self, shape: Shape) -> (KernelSpec, &'static str) {
        self.kernel_variant(shape, self.loads_marks_ahead(shape))
    }

    /// SegShuffle with u32 offsets loads a tile's first batch of offsets into registers while
    /// the tile before is scanned (`R_MARKS_AHEAD`): 2-7% faster on short segments (runs 124,
    /// 126 and 131, H100; Affine 3-9%, run 142), but it holds six registers more across the
    /// block scan, and under the 64-register cap larger monoids or more items per thread then
    /// spill (NVRTC 13.0 for sm_90: Affine with 12 items 16 bytes, 2x2 matrices of u64 104; with
    /// the default items Affine spilled 44 bytes before run 142's leaner loop, a 2x2 matrix of u32
    /// 24 before session 15's head bits), which made long segments 2-7% slower. So the load ahead
    /// is the preferred variant, and this one, without it, the kernel for a monoid whose
    /// preferred variant uses local memory (the caller checks after loading it). `None` where
    /// there is no such choice. (u64 entries are narrowed as they are read, which waits for the
    /// load where it is issued: loading them ahead only moved the wait, and measured up to 11%
    /// slower, run 128.)
    pub fn fallback_kernel(&self, shape: Shape) -> Option<(KernelSpec, &'static str)> {
        self.loads_marks_ahead(shape)
            .then(|| self.kernel_variant(shape, false))
    }

    fn loads_marks_ahead(&self, shape: Shape) -> bool {
        matches!(self, SegPlan::Shuffle { .. }) && shape.offsets_form && !shape.wide
    }

    fn kernel_variant(&self, shape: Shape, marks_ahead: bool) -> (KernelSpec, &'static str) {
        let block = ("R_BLOCK", self.block());
        match *self {
            SegPlan::Tb2 { .. } => (KernelSpec::new("seg_tree", &[block]), "reduce_tb2_seg"),
            SegPlan::Tb4Warp { .. } => {
                (KernelSpec::new("seg_tree", &[block]), "reduce_tb4_warp_seg")
            }
            SegPlan::Matrix { width, .. } => (
                KernelSpec::new("seg_matrix", &[block, ("R_W", width)]),
                "reduce_matrix_seg",
            ),
            SegPlan::PersistentMatrix { width, .. } => (
                KernelSpec::new("seg_matrix", &[block, ("R_W", width)]),
                "reduce_matrix_seg_persistent",
            ),
            SegPlan::DiffWarps { width, .. } => (
                KernelSpec::new("seg_matrix", &[block, ("R_W", width)]),
                "reduce_diff_warps_seg",
            ),
            SegPlan::Shuffle { items, vecs, .. } => (
                KernelSpec::new(
                    "seg_shuffle",
                    &[
                        block,
                        ("R_ITEMS", items),
                        ("R_VECS", if shape.plain_items { 0 } else { vecs }),
                        ("R_INDEX_VEC", !shape.plain_index as u32),
                        ("R_OFFSETS", shape.offsets_form as u32),
                        ("R_IDX64", shape.wide as u32),
                        ("R_STAGE", self.stage_slots(shape) as u32),
                        ("R_MIN_BLOCKS", (1024 / self.block()).max(1)),
                        ("R_MARKS_AHEAD", marks_ahead as u32),
                    ],
                ),
                "reduce_seg_shuffle",
            ),
            SegPlan::Merge { steps, stages, .. } => (
                KernelSpec::new(
                    "seg_merge",
                    &[
                        block,
                        ("R_STEPS", steps),
                        ("R_RING", stages),
                        ("R_OFFSETS", shape.offsets_form as u32),
                        ("R_IDX64", shape.wide as u32),
                        ("R_PLAIN_ITEMS", shape.plain_items as u32),
                    ],
                ),
                "reduce_seg_merge",
            ),
        }
    }

    /// The plan that reduces the (value, owner) pairs a pass leaves, until one block is left.
    pub fn next_pass(&self) -> SegPlan {
        match *self {
            SegPlan::Tb2 { .. } | SegPlan::Tb4Warp { .. } | SegPlan::Matrix { .. } => *self,
            SegPlan::PersistentMatrix { width, .. } | SegPlan::DiffWarps { width, .. } => {
                SegPlan::Matrix { block: 256, width }
            }
            SegPlan::Shuffle { .. } | SegPlan::Merge { .. } => unreachable!("single pass"),
        }
    }

    /// Whether the algorithm runs further passes (`next_pass`) over (value, owner) pairs.
    pub fn multi_pass(&self) -> bool {
        !matches!(self, SegPlan::Shuffle { .. } | SegPlan::Merge { .. })
    }

    pub fn persistent(&self) -> bool {
        matches!(
            self,
            SegPlan::PersistentMatrix { .. } | SegPlan::DiffWarps { .. }
        )
    }

    /// Whether the algorithm indexes items and segments with u32.
    /// The most items and segments the plan's kernel takes (`None`: no limit but memory).
    pub fn index_limits(&self, shape: Shape) -> Option<(u64, u64)> {
        match self {
            SegPlan::Merge { .. } => None,
            SegPlan::Shuffle { .. } => Some(shuffle_limits(shape)),
            _ => Some((u32::MAX as u64, u32::MAX as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_picks_from_cheap_statistics() {
        let auto = SegConfig::new(SegAlgorithm::Auto);
        let pick = |wide, offsets, n, s| resolve(auto, shape(wide, offsets, false), n, s).algorithm;
        assert_eq!(pick(false, false, 1000, 100), SegAlgorithm::SegShuffle);
        assert_eq!(pick(false, true, 1000, 1000), SegAlgorithm::SegShuffle);
        // More segments than items: SegShuffle in both forms (the owner form's blocks fill runs
        // of empty segments coalesced; the offsets form writes them from the offsets).
        assert_eq!(pick(false, false, 1000, 1001), SegAlgorithm::SegShuffle);
        assert_eq!(pick(false, true, 1000, 1001), SegAlgorithm::SegShuffle);
        // u64 layouts: SegShuffle up to 2^32 - 2 items; only SegMerge takes more than 2^32
        // items or segments.
        assert_eq!(pick(true, false, 10, 1), SegAlgorithm::SegShuffle);
        assert_eq!(pick(true, true, 1000, 2000), SegAlgorithm::SegShuffle);
        let most = u32::MAX as usize;
        assert_eq!(pick(true, true, most - 1, 2), SegAlgorithm::SegShuffle);
        assert_eq!(pick(true, true, most, 2), SegAlgorithm::SegMerge);
        assert_eq!(pick(false, true, most, 2), SegAlgorithm::SegShuffle);
        assert_eq!(pick(true, false, 10, most + 1), SegAlgorithm::SegMerge);
        assert_eq!(pick(false, false, 1 << 33, 2), SegAlgorithm::SegMerge);
        // Long segments: SegShuffle in both forms.
        assert_eq!(pick(false, true, 1 << 20, 100), SegAlgorithm::SegShuffle);
        assert_eq!(pick(false, false, 1 << 20, 100), SegAlgorithm::SegShuffle);
        assert_eq!(pick(false, true, 1 << 20, 1000), SegAlgorithm::SegShuffle);
        // A concrete choice is kept.
        let tb2 = SegConfig::new(SegAlgorithm::Tb2Seg);
        assert_eq!(
            resolve(tb2, shape(false, true, false), 1, 5).algorithm,
            SegAlgorithm::Tb2Seg
        );
        // Lifted items: the same choice; SegShuffle and SegMerge read them, the others refuse.
        let lifted = shape(false, true, true);
        assert_eq!(
            resolve(auto, lifted, 1 << 20, 1000).algorithm,
            SegAlgorithm::SegShuffle
        );
        assert_eq!(
            resolve(auto, lifted, 1000, 1001).algorithm,
            SegAlgorithm::SegShuffle
        );
        assert_eq!(
            resolve(auto, shape(false, false, true), 1000, 1001).algorithm,
            SegAlgorithm::SegShuffle
        );
        // Items per thread sized by the narrower lifted item unless segments are that short.
        assert_eq!(
            resolve(auto, lifted, 1 << 20, 1000).items_per_thread,
            Some(16)
        );
        assert_eq!(resolve(auto, lifted, 1000, 999).items_per_thread, None);
        let not_lifted = shape(false, true, false);
        assert_eq!(
            resolve(auto, not_lifted, 1 << 20, 1000).items_per_thread,
            None
        );
        // The owner form (8-byte values here: 8 by default) with segments averaging under 1.25
        // items: half as many; the offsets form, longer segments and 16-byte values keep theirs.
        let owner = shape(false, false, false);
        assert_eq!(resolve(auto, owner, 1000, 801).items_per_thread, Some(4));
        assert_eq!(resolve(auto, owner, 1000, 800).items_per_thread, None);
        assert_eq!(resolve(auto, not_lifted, 1000, 2000).items_per_thread, None);
        let wide_values = Shape {
            m_size: 16,
            in_size: 16,
            ..owner
        };
        assert_eq!(
            resolve(auto, wide_values, 1000, 2000).items_per_thread,
            None
        );
        // u64 owners: at most 12 per thread (f32: 16 -> 12; short segments' 8 and 8-byte
        // items' 8 kept); the offsets form and a caller's choice are left alone.
        let f32_owner = Shape {
            m_size: 4,
            in_size: 4,
            ..shape(true, false, false)
        };
        let items = |shape, n, s| resolve(auto, shape, n, s).items_per_thread;
        assert_eq!(items(f32_owner, 1 << 20, 1000), Some(12));
        assert_eq!(items(f32_owner, 1000, 2000), Some(8));
        let affine_owner = Shape {
            m_size: 8,
            in_size: 8,
            ..f32_owner
        };
        assert_eq!(items(affine_owner, 1 << 20, 1000), None);
        let f32_offsets = Shape {
            offsets_form: true,
            ..f32_owner
        };
        assert_eq!(items(f32_offsets, 1 << 20, 1000), None);
        let chosen = auto.items_per_thread(32);
        assert_eq!(
            resolve(chosen, f32_owner, 1 << 20, 1000).items_per_thread,
            Some(32)
        );
        for alg in SegAlgorithm::ALL {
            let readable = matches!(alg, SegAlgorithm::SegShuffle | SegAlgorithm::SegMerge);
            assert_eq!(
                SegConfig::new(alg).plan(lifted).is_ok(),
                readable,
                "{alg:?}"
            );
        }
    }

    /// A second kernel (without the marks' first offsets loaded ahead) exactly for SegShuffle
    /// with u32 offsets, lifted items or not; it differs from the first in that alone.
    #[test]
    fn only_seg_shuffle_u32_offsets_has_a_fallback_kernel() {
        for alg in SegAlgorithm::ALL {
            for wide in [false, true] {
                for offsets_form in [false, true] {
                    for lifted in [false, true] {
                        let shape = shape(wide, offsets_form, lifted);
                        let Ok(plan) = SegConfig::new(alg).plan(shape) else {
                            continue;
                        };
                        let has = alg == SegAlgorithm::SegShuffle && offsets_form && !wide;
                        let fallback = plan.fallback_kernel(shape);
                        assert_eq!(fallback.is_some(), has, "{alg:?} {shape:?}");
                        let (first, entry) = plan.kernel(shape);
                        let Some((second, second_entry)) = fallback else {
                            continue;
                        };
                        assert_eq!(entry, second_entry);
                        let ahead = |on: u32| ("R_MARKS_AHEAD", on);
                        let mut first_defines = first.defines.clone();
                        let mut second_defines = second.defines.clone();
                        first_defines.retain(|d| *d != ahead(1));
                        second_defines.retain(|d| *d != ahead(0));
                        assert_eq!(first_defines, second_defines);
                        assert_ne!(first.defines, second.defines);
                    }
                }
            }
        }
    }

    fn shape(wide: bool, offsets_form: bool, lifted: bool) -> Shape {
        Shape {
            in_size: 4,
            m_size: 8,
            offsets_form,
            wide,
            plain_items: false,
            plain_index: false,
            lifted,
        }
    }

    #[test]
    fn seg_merge_defaults_shrink_for_large_items() {
        let shape = |size| Shape {
            in_size: size,
            m_size: size,
            offsets_form: true,
            wide: false,
            plain_items: false,
            plain_index: false,
            lifted: false,
        };
        let merge = SegConfig::new(SegAlgorithm::SegMerge);
        for size in [1, 4, 8, 12, 72, 256] {
            let plan = merge.plan(shape(size)).unwrap();
            let SegPlan::Merge {
                block,
                steps,
                stages,
                ..
            } = plan
            else {
                panic!("{plan:?}")
            };
            assert!(
                merge_smem(block, steps, stages, shape(size)) <= MERGE_SMEM_BUDGET,
                "{size}: {plan:?}"
            );
            assert!(block.is_power_of_two() && steps.is_power_of_two());
        }
        // Explicit parameters are kept, and checked.
        assert!(merge.items_per_thread(3).plan(shape(4)).is_err());
        assert!(merge.block(96).plan(shape(4)).is_err());
        assert!(merge.stages(9).plan(shape(4)).is_err());
    }

    /// SegShuffle keeps its block scan's values (and the owner form its output stage) in static
    /// shared memory: the stage shrinks for large values, and values that leave no room are a
    /// clear error for SegShuffle and SegMerge for `Auto`. (224-byte values overflowed the owner
    /// form's 48 KiB before, and NVRTC failed for `Auto`.)
    #[test]
    fn seg_shuffle_fits_static_shared_memory_or_auto_takes_seg_merge() {
        let shape = |size, offsets_form| Shape {
            in_size: size,
            m_size: size,
            offsets_form,
            wide: false,
            plain_items: false,
            plain_index: false,
            lifted: false,
        };
        let auto = SegConfig::new(SegAlgorithm::Auto);
        let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
        for offsets_form in [false, true] {
            for size in [4, 8, 72, 216, 224, 256, 512] {
                let s = shape(size, offsets_form);
                assert_eq!(
                    resolve(auto, s, 1000, 10).algorithm,
                    SegAlgorithm::SegShuffle
                );
                let plan = shuffle.plan(s).unwrap();
                let stage = if offsets_form {
                    0
                } else {
                    2 * (plan.stage_slots(s) as usize + 1) * size
                };
                assert!(
                    shuffle_static_smem(s, plan.block()) + stage <= STATIC_SMEM_LIMIT,
                    "{size} bytes, offsets form {offsets_form}: {plan:?}"
                );
            }
            let huge = shape(1024, offsets_form);
            assert_eq!(
                resolve(auto, huge, 1000, 10).algorithm,
                SegAlgorithm::SegMerge
            );
            let err = shuffle.plan(huge).unwrap_err().to_string();
            assert!(err.contains("SegMerge"), "{err}");
        }
        // The default stage of small values is unchanged: a tile, at most 16 KiB.
        let plan = shuffle.plan(shape(8, false)).unwrap();
        assert_eq!(plan.stage_slots(shape(8, false)), plan.data_block());
    }
}
