//! The configurations of the plain, segmented, axis and scan calls (an algorithm plus its
//! parameters: those the paper varies, and ours), the knobs they share, and the checks every
//! family applies to them.

use super::algorithm::{Algorithm, AxisAlgorithm, ScanAlgorithm, SegAlgorithm};
use crate::device::DeviceInfo;
use crate::error::{Error, Result};

/// The setters of the parameters both configurations have (the fields' docs say which
/// algorithms take each).
macro_rules! shared_setters {
    ($config:ident) => {
        impl $config {
            /// Sets B, the threads per block.
            pub fn block(mut self, threads: u32) -> Self {
                self.block = Some(threads);
                self
            }
            /// Sets W, the width of the matrix algorithms' 32 x W matrix.
            pub fn matrix_width(mut self, w: u32) -> Self {
                self.matrix_width = Some(w);
                self
            }
            /// Sets P, the producer warps of the DiffWarps algorithms.
            pub fn producers(mut self, p: u32) -> Self {
                self.producers = Some(p);
                self
            }
            /// Sets the items per thread (see the field).
            pub fn items_per_thread(mut self, items: u32) -> Self {
                self.items_per_thread = Some(items);
                self
            }
            /// Sets G, the grid of the persistent algorithms.
            pub fn grid(mut self, blocks: u32) -> Self {
                self.grid = Some(blocks);
                self
            }
        }
    };
}

/// An algorithm plus the parameters the paper varies. Unset parameters take the paper's
/// values (or, for `Shuffle`, ours); every setting is validated before anything is compiled.
///
/// ```
/// use reduce_cuda::{Algorithm, Config};
/// let config = Config::new(Algorithm::Matrix).block(128).matrix_width(16);
/// assert_eq!(config.algorithm, Algorithm::Matrix);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Config {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Threads per block, B (a multiple of 32). Tb2: a power of two; Tb4Warp: at most 256;
    /// DiffWarps: 32 * (producers + 1), so set `producers` instead.
    pub block: Option<u32>,
    /// W, the width of the 32 x W matrix (Matrix, PersistentMatrix, DiffWarps). Default 32.
    pub matrix_width: Option<u32>,
    /// P, producer warps of DiffWarps (one consumer warp). Default 8.
    pub producers: Option<u32>,
    /// Items each lane folds per tile (Shuffle). Default: 64 bytes' worth, rounded so that a
    /// lane's items fill whole 16-byte vectors.
    pub items_per_thread: Option<u32>,
    /// G, the number of blocks of the persistent algorithms. Default: SMs x resident blocks per
    /// SM from the occupancy API.
    pub grid: Option<u32>,
    /// Shuffle's work split: 0 = each warp owns a contiguous run of tiles; k >= 1 = each block
    /// owns a contiguous run of block tiles and folds its warps' values every k block tiles.
    /// Default 4 (with 512 threads and 2 blocks per SM). In portable mode: block tiles per
    /// node of the tree, a power of two (default: from the item sizes).
    pub tile_group: Option<u32>,
    /// The portable grouping (see [`Config::portable`]).
    pub portable: bool,
}

impl From<Algorithm> for Config {
    fn from(algorithm: Algorithm) -> Self {
        Config::new(algorithm)
    }
}

impl Config {
    /// The algorithm with its default parameters.
    pub fn new(algorithm: Algorithm) -> Self {
        Config {
            algorithm,
            ..Config::default()
        }
    }
    /// The portable mode: the grouping, and so the bits of a float result, depend only on N and
    /// the size of the monoid's type — never on the device, its SM count, the grid, the block,
    /// the tile group, the items per thread or timing. It is the grouping
    /// `reduce_core::portable::fold` defines (runs of 64 bytes of values at fixed positions, a
    /// fixed tree over them), so a GPU, another GPU and the CPU backend ([`crate::Backend`])
    /// give the same bits. Offered by `Shuffle` and `Auto` (the paper's algorithms keep their
    /// own groupings: [`Error::InvalidConfig`]); the order-free path for `commutative` monoids
    /// is off. In this mode `block` and `tile_group` must be powers of two and
    /// `items_per_thread` the run length times a power of two.
    ///
    /// ```
    /// use reduce_cuda::Config;
    /// assert!(Config::default().portable().portable);
    /// ```
    pub fn portable(mut self) -> Self {
        self.portable = true;
        self
    }

    /// Sets Shuffle's work split (see [`Config::tile_group`]).
    pub fn tile_group(mut self, k: u32) -> Self {
        self.tile_group = Some(k);
        self
    }

    /// The parameters, as the families read them.
    pub(crate) fn knobs(&self) -> Knobs {
        Knobs {
            block: self.block,
            matrix_width: self.matrix_width,
            producers: self.producers,
            items_per_thread: self.items_per_thread,
            grid: self.grid,
            tile_group: self.tile_group,
            stages: None,
        }
    }
}

shared_setters!(Config);

/// A segmented algorithm plus its parameters and whether the layout is trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SegConfig {
    /// The algorithm.
    pub algorithm: SegAlgorithm,
    /// Threads per block (a multiple of 32; Tb2Seg: a power of two; Tb4WarpSeg: <= 256;
    /// SegPipeline: <= 992, its producer warp beside them).
    pub block: Option<u32>,
    /// W of the 32 x W matrix (MatrixSeg, PersistentMatrixSeg: 32; DiffWarps16Seg: 16).
    pub matrix_width: Option<u32>,
    /// Producer warps of DiffWarps16Seg (default 8).
    pub producers: Option<u32>,
    /// Items per thread of SegShuffle and SegPipeline (default: 64 bytes' worth); path steps
    /// (items plus segment ends) per thread and tile of SegMerge (default: from the item size).
    pub items_per_thread: Option<u32>,
    /// SegMerge's pipeline: tiles of each stream held in shared memory (3 to 8, default 3;
    /// up to `stages - 2` are in flight while one is reduced). SegPipeline's ring: tiles of
    /// items in shared-memory stages (1 to 8, default 2).
    pub stages: Option<u32>,
    /// Blocks of the persistent algorithms (default: SMs x resident blocks).
    pub grid: Option<u32>,
    /// Skip the layout validation (sorted, in-range owners; monotone offsets from 0 to N).
    /// With a bad layout the result is then unspecified (but memory-safe).
    pub trusted: bool,
    /// The portable grouping (see [`SegConfig::portable`]).
    pub portable: bool,
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
    /// Sets SegMerge's or SegPipeline's pipeline depth.
    pub fn stages(mut self, stages: u32) -> Self {
        self.stages = Some(stages);
        self
    }
    /// Skips the layout validation: for layouts already known to be valid.
    pub fn trusted(mut self) -> Self {
        self.trusted = true;
        self
    }
    /// The portable mode: every segment's value has the bits of
    /// `reduce_core::portable::fold_segments` — its grouping depends only on the segment's items
    /// and position and the size of the monoid's type, never on the device, the grid, the
    /// block, the other segments or the layout's form (CSR or owners) — so a GPU, another GPU
    /// and the CPU backend ([`crate::Backend`]) give the same bits, floats included. Offered by
    /// `SegShuffle` and `Auto`, which run the portable kernel (the other algorithms keep their
    /// own groupings: [`Error::InvalidConfig`]); `block` must then be a power of two, and
    /// `items_per_thread` and `stages` stay unset. At most 2^32 - 2 segments.
    ///
    /// ```
    /// use reduce_cuda::SegConfig;
    /// assert!(SegConfig::default().portable().portable);
    /// ```
    pub fn portable(mut self) -> Self {
        self.portable = true;
        self
    }

    /// The parameters, as the families read them.
    pub(crate) fn knobs(&self) -> Knobs {
        Knobs {
            block: self.block,
            matrix_width: self.matrix_width,
            producers: self.producers,
            items_per_thread: self.items_per_thread,
            grid: self.grid,
            tile_group: None,
            stages: self.stages,
        }
    }
}

shared_setters!(SegConfig);

/// An algorithm of the reductions along axes plus its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct AxisConfig {
    /// The algorithm.
    pub algorithm: AxisAlgorithm,
    /// The fewest items a thread folds down a strip (Strips; default 16): fewer strips, so
    /// fewer passes over them, against fewer threads for short axes.
    pub min_strip: Option<u32>,
    /// The portable grouping (see [`AxisConfig::portable`]).
    pub portable: bool,
}

impl From<AxisAlgorithm> for AxisConfig {
    fn from(algorithm: AxisAlgorithm) -> Self {
        AxisConfig::new(algorithm)
    }
}

impl AxisConfig {
    /// The algorithm with default parameters.
    pub fn new(algorithm: AxisAlgorithm) -> Self {
        AxisConfig {
            algorithm,
            ..AxisConfig::default()
        }
    }
    /// Sets the fewest items a thread folds down a strip (see the field).
    pub fn min_strip(mut self, items: u32) -> Self {
        self.min_strip = Some(items);
        self
    }
    /// The portable mode: every result has the bits of `reduce_core::portable::fold_axes` —
    /// `reduce_core::portable::fold` of its own reduced sequence, whose grouping depends only on
    /// that sequence's length and the size of the monoid's type, never on the device, the grid,
    /// the block or the rest of the shape — so a GPU, another GPU and the CPU backend
    /// ([`crate::Backend`]) give the same bits, floats included. Offered by `Strips` and
    /// `Auto`, which run the portable kernel; `min_strip` stays unset
    /// ([`Error::InvalidConfig`] otherwise).
    ///
    /// ```
    /// use reduce_cuda::AxisConfig;
    /// assert!(AxisConfig::default().portable().portable);
    /// ```
    pub fn portable(mut self) -> Self {
        self.portable = true;
        self
    }
}

/// An algorithm of the scans plus its parameters. The grouping of a float scan, and so its
/// bits, follows from N, the layout, `block` and `items_per_thread` only.
///
/// ```
/// use reduce_cuda::{ScanAlgorithm, ScanConfig};
/// let config = ScanConfig::new(ScanAlgorithm::LookBack).block(128).trusted();
/// assert!(config.trusted);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ScanConfig {
    /// The algorithm.
    pub algorithm: ScanAlgorithm,
    /// Threads per block (a multiple of 32 up to 1024; default 256).
    pub block: Option<u32>,
    /// Items each thread scans per tile (1 to 32; default: 128 bytes' worth of the larger of
    /// the input item and the monoid value; LookAhead's, `Auto`'s included, by key and where
    /// that run leaves it too few stages: an odd number of 16-byte vectors, e.g. 28 f32 or 14
    /// 8-byte values by key, 12 12-byte items).
    pub items_per_thread: Option<u32>,
    /// Skip the check of CSR offsets (monotone from 0 to N). With bad offsets the result is
    /// then unspecified (but memory-safe). Keys need no check.
    pub trusted: bool,
    /// The portable grouping (see [`ScanConfig::portable`]).
    pub portable: bool,
    /// LookAhead's persistent grid: the blocks that take the tiles in turn (default: as many
    /// as are resident at once; never more than the tiles). The grouping does not depend on it:
    /// it changes the speed, never the bits. For LookAhead and `Auto` only (asked of LookBack or
    /// ReduceThenScan, which launch a block per tile, it is [`Error::InvalidConfig`]); unused
    /// where they run LookBack's kernel instead (before sm_90, items or outputs off a 16-byte
    /// boundary, `Auto`'s lifted scans and scans by few CSR offsets of values over 8 bytes).
    pub grid: Option<u32>,
}

impl From<ScanAlgorithm> for ScanConfig {
    fn from(algorithm: ScanAlgorithm) -> Self {
        ScanConfig::new(algorithm)
    }
}

impl ScanConfig {
    /// The algorithm with default parameters, checking offsets.
    pub fn new(algorithm: ScanAlgorithm) -> Self {
        ScanConfig {
            algorithm,
            ..ScanConfig::default()
        }
    }
    /// Sets the threads per block.
    pub fn block(mut self, threads: u32) -> Self {
        self.block = Some(threads);
        self
    }
    /// Sets the items each thread scans per tile.
    pub fn items_per_thread(mut self, items: u32) -> Self {
        self.items_per_thread = Some(items);
        self
    }
    /// Skips the check of CSR offsets: for offsets already known to be valid.
    pub fn trusted(mut self) -> Self {
        self.trusted = true;
        self
    }
    /// Sets LookAhead's persistent grid (see [`ScanConfig::grid`](#structfield.grid)).
    pub fn grid(mut self, blocks: u32) -> Self {
        self.grid = Some(blocks);
        self
    }
    /// The portable mode: the tile is fixed by the monoid's size alone (256 threads ×
    /// `reduce_core::portable::scan_items`), so a float scan has the bits of
    /// `reduce_core::portable::{scan, scan_segments, scan_by_key}` on any GPU and on the CPU
    /// backend ([`crate::Backend`]). The default settings' tile is the same for the monoid's own
    /// values but LookAhead's by key and for 12-byte items (runs of an odd number of vectors);
    /// `block` and `items_per_thread` are refused in this mode ([`Error::InvalidConfig`]).
    ///
    /// ```
    /// use reduce_cuda::ScanConfig;
    /// assert!(ScanConfig::default().portable().portable);
    /// ```
    pub fn portable(mut self) -> Self {
        self.portable = true;
        self
    }
}

/// The parameters of either configuration, for the families that serve both (the default:
/// none set).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Knobs {
    pub block: Option<u32>,
    pub matrix_width: Option<u32>,
    pub producers: Option<u32>,
    pub items_per_thread: Option<u32>,
    pub grid: Option<u32>,
    pub tile_group: Option<u32>,
    pub stages: Option<u32>,
}

/// The error of a broken rule of `algorithm`'s parameters.
/// [`SegAlgorithm::runs_on`] as the error of a call on a device that does not run `algorithm`.
pub(crate) fn check_runs_on(algorithm: SegAlgorithm, info: &DeviceInfo) -> Result<()> {
    match algorithm.needs() {
        Some((major, why, instead)) if !algorithm.runs_on(info) => Err(invalid(
            algorithm.name(),
            format!(
                "needs sm_{major}0 or newer ({why}); this device is {}{instead}",
                info.arch()
            ),
        )),
        _ => Ok(()),
    }
}

pub(crate) fn invalid(algorithm: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidConfig {
        algorithm,
        reason: reason.into(),
    }
}

/// An error if a parameter `algorithm` does not take was set (`what` names it, with a hint).
pub(crate) fn refuse(algorithm: &'static str, what: &str, value: Option<u32>) -> Result<()> {
    match value {
        Some(_) => Err(invalid(
            algorithm,
            format!("{what} does not apply to {algorithm}"),
        )),
        None => Ok(()),
    }
}

/// Threads per block: a multiple of 32 from 32 to 1024.
pub(crate) fn check_block(algorithm: &'static str, block: u32) -> Result<u32> {
    if block == 0 || !block.is_multiple_of(32) || block > 1024 {
        return Err(invalid(
            algorithm,
            format!("block size {block} must be a multiple of 32 between 32 and 1024"),
        ));
    }
    Ok(block)
}

/// A power-of-two block (a full tree, or a merge path split in halves).
pub(crate) fn check_power_of_two(algorithm: &'static str, block: u32, why: &str) -> Result<u32> {
    if !block.is_power_of_two() {
        return Err(invalid(
            algorithm,
            format!("block size {block} must be a power of two{why}"),
        ));
    }
    Ok(block)
}

/// The matrix width W: 1 to 1024.
pub(crate) fn check_width(algorithm: &'static str, width: u32) -> Result<u32> {
    if width == 0 || width > 1024 {
        return Err(invalid(
            algorithm,
            format!("matrix width {width} must be between 1 and 1024"),
        ));
    }
    Ok(width)
}

/// A persistent grid the caller fixed: 1 to 2^20 blocks.
pub(crate) fn check_grid(algorithm: &'static str, grid: Option<u32>) -> Result<Option<u32>> {
    match grid {
        Some(0) => Err(invalid(algorithm, "grid must have at least one block")),
        Some(g) if g > (1 << 20) => Err(invalid(
            algorithm,
            format!("grid {g} is past the limit of 2^20 persistent blocks"),
        )),
        g => Ok(g),
    }
}

/// Producer warps beside one consumer warp: 1 to 31 (at most 1024 threads).
pub(crate) fn check_producers(algorithm: &'static str, producers: u32) -> Result<u32> {
    if producers == 0 || producers > 31 {
        return Err(invalid(
            algorithm,
            format!(
                "producers {producers} must be between 1 and 31 (one consumer warp, at most \
                 1024 threads)"
            ),
        ));
    }
    Ok(producers)
}

pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
