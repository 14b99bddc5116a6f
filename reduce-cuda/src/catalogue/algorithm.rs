//! The algorithms' public names: [`Algorithm`] (plain), [`SegAlgorithm`] (segmented),
//! [`AxisAlgorithm`] (along axes) and [`ScanAlgorithm`] (scans).

use crate::device::DeviceInfo;

/// A plain (unsegmented) reduction algorithm. All keep the left-to-right order of the items.
///
/// | variant | what | passes |
/// |---|---|---|
/// | `Tb2` | interleaved left-storing shared-memory tree, R = 2, D = 2B (paper Alg. 1) | multi |
/// | `Tb4Warp` | intra-warp left-storing trees with `__syncwarp()`, R = 4, D = 4B (paper Alg. 2) | multi |
/// | `Matrix` | Dotsenko: 32 x W matrix in shared memory, one thread per row, one warp tree (paper Alg. 3) | multi |
/// | `PersistentMatrix` | Matrix with G = SMs x resident blocks, q or q+1 data blocks each (paper III.B.1) | 2 |
/// | `DiffWarps` | PersistentMatrix with P producer warps and 1 consumer warp, double-buffered (paper Alg. 4) | 2 |
/// | `Shuffle` | contiguous 16-byte loads per lane, increasing-offset shuffle tree, persistent warps, last block folds the block partials (ours) | 1 |
/// | `Auto` | `Shuffle`; its order-free form when the monoid promises commutativity | 1 |
///
/// Only `Shuffle` (and `Auto`) read lifted inputs ([`crate::Gpu::reduce_lifted`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Algorithm {
    /// Paper Alg. 1: interleaved left-storing tree, R = 2.
    Tb2,
    /// Paper Alg. 2: intra-warp left-storing trees, R = 4.
    Tb4Warp,
    /// Paper Alg. 3: Dotsenko's sequential matrix reduction.
    Matrix,
    /// Paper III.B.1: Matrix with persistent blocks.
    PersistentMatrix,
    /// Paper Alg. 4: persistent Matrix with producer/consumer warps.
    DiffWarps,
    /// Ours: single-launch, order-keeping shuffle reduction at the memory roof.
    Shuffle,
    /// `Shuffle`, order-free for monoids that promise commutativity.
    #[default]
    Auto,
}

impl Algorithm {
    /// Every concrete algorithm (all but `Auto`), for tests and benchmarks.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Tb2,
        Algorithm::Tb4Warp,
        Algorithm::Matrix,
        Algorithm::PersistentMatrix,
        Algorithm::DiffWarps,
        Algorithm::Shuffle,
    ];

    /// The algorithm's name as written in the paper's tables and in our benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Tb2 => "Tb2",
            Algorithm::Tb4Warp => "Tb4Warp",
            Algorithm::Matrix => "Matrix",
            Algorithm::PersistentMatrix => "PersistentMatrix",
            Algorithm::DiffWarps => "DiffWarps",
            Algorithm::Shuffle => "Shuffle",
            Algorithm::Auto => "Auto",
        }
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

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
/// | `SegPipeline` | SegShuffle's tile fed by a producer warp: bulk copies (`cp.async.bulk`) of each tile's items into a ring of shared-memory stages guarded by mbarriers (ours; sm_90+) | 1 | each segment written once |
/// | `SegHeads` | CSR offsets only: head bits from a pass over the offsets, then a block per tile folds items and bits, then a join of the tiles' records (ours) | 3 | each segment written once |
/// | `SegBlocks` | CSR offsets only: a block per segment (CUB's schedule), each block's work capped at a chunk of items, a long segment's pieces joined by the block that brings the last (ours) | 1 | each segment written once |
/// | `Auto` | SegShuffle; SegBlocks for CSR offsets (u32, trusted or validated) of 4-byte items lifted into 8-byte values from 2^26 items at mean lengths from 1000 (from 30·2^20 items: from 4000); else SegHeads for CSR offsets of 4-byte values at 2^25+ items at mean lengths 32-4096 (u32) or 32-8192 (u64; 32-4096 from 2^24 items), of 8-byte values at 2^24+ items at 16-4096 (u64: to 8192 from 2^25), of 4-byte items lifted into 8-byte values (u32 offsets) at 2^24+ items at 32-4096 (to 8192 from 2^26); SegMerge past 2^32 items or segments, or for values too large for SegShuffle's static shared memory; past SegMerge's too (about 650 bytes), SegHeads by offsets and Tb2Seg by u32 owners | | |
///
/// The paper's algorithms work on an internally identity-filled output (their read-modify-write
/// contract stays inside the call); the offsets form converts offsets to owners for them first.
/// `SegShuffle`, `SegPipeline`, `SegHeads`, `SegBlocks` and `SegMerge` take `u32` and `u64` layouts and lifted items, the paper's
/// algorithms `u32` layouts of monoid values; only `SegMerge` takes 2^32 or more items or
/// segments.
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
    /// Ours: SegShuffle's tile with its items moved by a producer warp's bulk copies through a
    /// ring of shared-memory stages (`SegConfig::stages`), so that the threads that fold never
    /// wait on a global load of items. Needs sm_90 (Hopper) or newer; at any item offset.
    SegPipeline,
    /// Ours, for the CSR form: three launches. A thread per segment sets a head bit where each
    /// non-empty segment starts (and writes the empty ones); a block per tile folds its items
    /// with their head bits alone, no offsets read, writing the segments that start and end in
    /// the tile by their heads' ranks; a join finishes the segments that cross tiles. Asked for
    /// the owner form, it runs what `Auto` runs there.
    SegHeads,
    /// Ours, for the CSR form: one launch, a block per segment as CUB's `DeviceSegmentedReduce`
    /// schedules it (32 to 256 threads as the mean segment length grows), but no block
    /// folds more than a chunk of items (256 KiB of input items):
    /// a segment past its first chunk is cut at the chunks' boundaries, a block a piece, and
    /// the block that brings its last piece joins them in order. For long segments: a block's
    /// overhead is paid per segment. A validated call checks the entries each block reads
    /// (at mean segment lengths below 500, in a launch of its own first). Asked for the owner
    /// form, it runs what `Auto` runs there.
    SegBlocks,
    /// SegShuffle (fastest measured on every distribution, u32 and u64 layouts), but SegBlocks
    /// for calls by u32 CSR offsets (trusted or validated) of 4-byte items lifted into 8-byte
    /// values from 2^26 items whose mean segment length N / S is 1000 or more (from 30·2^20
    /// items: 4000 or more), where it measured 1.01-1.36x the speed of the faster of SegShuffle
    /// and SegHeads on an H100 (validated 1.06-1.31x) and 0.84-1.12x on heavy-tailed lengths
    /// (values read as they are lose more there, 0.70-0.96x, and have no band); else SegHeads
    /// for CSR offsets of 4-byte values at 2^25 items or more with segments of 32 to 4096
    /// items on average (u32 offsets) or 32 to 8192 (u64; 32 to 4096 from 2^24 items), of
    /// 8-byte values from 2^24 items at 16 to 4096 (u64 offsets: to 8192 from 2^25), and of
    /// 4-byte items lifted into 8-byte values with u32 offsets from 2^24 items at 32 to 4096
    /// (to 8192 from 2^26), where it measured 0.98-1.42x SegShuffle's speed on an H200;
    /// SegMerge past 2^32 items or segments, or for values too large for SegShuffle; past
    /// SegMerge's static arrays too (about 650 bytes), SegHeads by offsets and Tb2Seg by u32
    /// owners.
    #[default]
    Auto,
}

impl SegAlgorithm {
    /// Every concrete algorithm (all but `Auto`), for tests and benchmarks.
    pub const ALL: [SegAlgorithm; 10] = [
        SegAlgorithm::Tb2Seg,
        SegAlgorithm::Tb4WarpSeg,
        SegAlgorithm::MatrixSeg,
        SegAlgorithm::PersistentMatrixSeg,
        SegAlgorithm::DiffWarps16Seg,
        SegAlgorithm::SegShuffle,
        SegAlgorithm::SegMerge,
        SegAlgorithm::SegPipeline,
        SegAlgorithm::SegHeads,
        SegAlgorithm::SegBlocks,
    ];

    /// One of the paper's five algorithms, which take `u32` layouts of monoid values only (no
    /// `u64` layouts, no lifted items).
    pub fn is_paper(self) -> bool {
        matches!(
            self,
            SegAlgorithm::Tb2Seg
                | SegAlgorithm::Tb4WarpSeg
                | SegAlgorithm::MatrixSeg
                | SegAlgorithm::PersistentMatrixSeg
                | SegAlgorithm::DiffWarps16Seg
        )
    }

    /// What a device needs to run it: the compute capability's major version, what for, and
    /// what to take instead. SegPipeline's bulk copies and mbarriers need sm_90, SegMerge's
    /// `cp.async` sm_80; the others run on every device the library does.
    pub(crate) fn needs(self) -> Option<(i32, &'static str, &'static str)> {
        match self {
            SegAlgorithm::SegPipeline => Some((
                9,
                "bulk copies and mbarriers",
                ": use SegShuffle (Auto does)",
            )),
            SegAlgorithm::SegMerge => Some((8, "cp.async", "")),
            _ => None,
        }
    }

    /// Whether the device of `info` runs it; where not, its calls are `Error::InvalidConfig`
    /// (`Auto` never takes such an algorithm there).
    pub fn runs_on(self, info: &DeviceInfo) -> bool {
        self.needs()
            .is_none_or(|(major, ..)| info.compute_capability.0 >= major)
    }

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
            SegAlgorithm::SegPipeline => "SegPipeline",
            SegAlgorithm::SegHeads => "SegHeads",
            SegAlgorithm::SegBlocks => "SegBlocks",
            SegAlgorithm::Auto => "Auto",
        }
    }
}

impl std::fmt::Display for SegAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// An algorithm of the reductions along the axes of arrays ([`crate::Gpu::reduce_axes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum AxisAlgorithm {
    /// The array as (B, K, C) along K, one pass per run of adjacent reduced axes (innermost
    /// first): each thread folds a strip of one (b, c) down K (neighbouring threads own
    /// neighbouring c), and the strips are folded again in order until one is left.
    Strips,
    /// Strips, but rows (one reduced run, innermost) of 64 bytes of items or more (lifted
    /// items: up to 16 KiB) by the portable kernel's tree (in order; a warp over 32 short
    /// rows' 16-byte loads, or over nodes of a long row on its own). Other rows and shapes by
    /// strips, whose rows schedule folds each lane's runs by itself for monoids that declare
    /// `commutative` (the order of the items is then not kept).
    #[default]
    Auto,
}

impl AxisAlgorithm {
    /// Every concrete algorithm (all but `Auto`), for tests and benchmarks.
    pub const ALL: [AxisAlgorithm; 1] = [AxisAlgorithm::Strips];

    /// The algorithm's name in tables and benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            AxisAlgorithm::Strips => "Strips",
            AxisAlgorithm::Auto => "Auto",
        }
    }
}

impl std::fmt::Display for AxisAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// An algorithm of the scans ([`crate::Gpu::scan`] and its segmented forms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ScanAlgorithm {
    /// One pass: tiles in order, each tile's prefix from its predecessors by decoupled
    /// look-back, with a fixed grouping (the same bits from run to run, whatever the timing).
    LookBack,
    /// The multi-pass baseline of the paper's lineage: the tiles' aggregates, then their
    /// prefixes (the groups' folds, then the chain of the groups), then the tiles' outputs;
    /// each item read twice. The same tiles and grouping as `LookBack`, so the same bits
    /// (floats too); no tile ever waits for another. A research algorithm: `LookBack` moves a
    /// third fewer bytes.
    ReduceThenScan,
    /// LookBack's tiles, grouping and bits (for the same tile: by key and for 12-byte items its
    /// default runs are an odd number of 16-byte vectors, 28 f32 where LookBack's are 32, so its
    /// float bits differ from LookBack's default there) in a persistent grid of warp-specialised blocks: a
    /// producer warp bulk-copies tiles into shared-memory stages, the block's threads reduce
    /// each tile as soon as it lands and write its outputs a few tiles later, and a look-back
    /// warp folds each tile's prefix from the aggregates published before it, so that no block
    /// waits for another's prefix. Segmented scans mark their heads in a bitmap: by key as the
    /// keys arrive, by CSR offsets in a launch of its own before. On sm_90 (Hopper) or newer;
    /// elsewhere, for items or outputs not at a 16-byte boundary, values past 48 bytes and
    /// tiles of which fewer than five fit in shared memory, it runs LookBack's kernel on its own
    /// tile (its bits).
    LookAhead,
    /// LookAhead for scans of the monoid's own values (on an H200 at 2^28, 0.875-0.91 of the
    /// copy roof for f32 sums, affine maps, the f32 recurrence and 12-byte values where LookBack
    /// reads 0.76-0.79, 0.84-0.85 for 2x2 matrices where it reads 0.71; at 2^26 by key
    /// 0.86-0.95 (2x2 matrices 0.69-0.71) where LookBack reads 0.73-0.77, by offsets 0.69-0.80
    /// where LookBack reads 0.52-0.73), but by CSR offsets of fewer segments than tiles for
    /// values of more than 8 bytes (long segments: LookBack's kernel on the same tile, whose walk
    /// of a tile's offsets is cheaper there; the same bits) and for lifted items: LookBack.
    #[default]
    Auto,
}

impl ScanAlgorithm {
    /// Every concrete algorithm (all but `Auto`), for tests and benchmarks.
    pub const ALL: [ScanAlgorithm; 3] = [
        ScanAlgorithm::LookBack,
        ScanAlgorithm::ReduceThenScan,
        ScanAlgorithm::LookAhead,
    ];

    /// The algorithm's name in tables and benchmarks.
    pub fn name(self) -> &'static str {
        match self {
            ScanAlgorithm::LookBack => "LookBack",
            ScanAlgorithm::ReduceThenScan => "ReduceThenScan",
            ScanAlgorithm::LookAhead => "LookAhead",
            ScanAlgorithm::Auto => "Auto",
        }
    }
}

impl std::fmt::Display for ScanAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}
