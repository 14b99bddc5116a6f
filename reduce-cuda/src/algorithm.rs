//! The algorithm catalogue, the knobs the paper varies, and their validation.

use crate::codegen::KernelSpec;
use crate::error::{Error, Result};

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
/// | `Auto` | picks one of the above from the item size, N and `COMMUTATIVE` | |
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
    /// Chooses an algorithm for the monoid and the size.
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
    /// Default 4 (with 512 threads and 2 blocks per SM).
    pub tile_group: Option<u32>,
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
    /// Sets B, the threads per block.
    pub fn block(mut self, threads: u32) -> Self {
        self.block = Some(threads);
        self
    }
    /// Sets W, the matrix width.
    pub fn matrix_width(mut self, w: u32) -> Self {
        self.matrix_width = Some(w);
        self
    }
    /// Sets P, the producer warps of DiffWarps.
    pub fn producers(mut self, p: u32) -> Self {
        self.producers = Some(p);
        self
    }
    /// Sets the items per lane per tile of Shuffle.
    pub fn items_per_thread(mut self, items: u32) -> Self {
        self.items_per_thread = Some(items);
        self
    }
    /// Sets Shuffle's work split (see [`Config::tile_group`]).
    pub fn tile_group(mut self, k: u32) -> Self {
        self.tile_group = Some(k);
        self
    }
    /// Sets G, the grid of the persistent algorithms.
    pub fn grid(mut self, blocks: u32) -> Self {
        self.grid = Some(blocks);
        self
    }
}

/// A validated, concrete algorithm with every parameter fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Plan {
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
        group: u32,
        order_free: bool,
        grid: Option<u32>,
    },
}

/// Shuffle's default threads per block.
const SHUFFLE_BLOCK: u32 = 512;
/// Shuffle's default tile group (block tiles per fold of the warp values).
const SHUFFLE_GROUP: u32 = 4;
/// Shuffle's default resident blocks per SM (fewer, longer contiguous streams read faster).
pub(crate) const SHUFFLE_BLOCKS_PER_SM: u32 = 2;

/// Static shared memory a kernel may use without opting in.
pub(crate) const STATIC_SMEM_LIMIT: usize = 48 * 1024;

/// The matrix height of every matrix algorithm: one warp folds the rows.
pub(crate) const MATRIX_ROWS: u32 = 32;

/// Anything with a name for error messages (both algorithm enums).
pub(crate) trait Named: Copy {
    fn name(self) -> &'static str;
}

impl Named for Algorithm {
    fn name(self) -> &'static str {
        Algorithm::name(self)
    }
}

pub(crate) fn invalid(algorithm: impl Named, reason: impl Into<String>) -> Error {
    Error::InvalidConfig {
        algorithm: algorithm.name(),
        reason: reason.into(),
    }
}

pub(crate) fn check_block(alg: impl Named, block: u32) -> Result<u32> {
    if block == 0 || !block.is_multiple_of(32) || block > 1024 {
        return Err(invalid(
            alg,
            format!("block size {block} must be a multiple of 32 between 32 and 1024"),
        ));
    }
    Ok(block)
}

pub(crate) fn reject(alg: impl Named, what: &str, set: bool) -> Result<()> {
    if set {
        Err(invalid(
            alg,
            format!("{what} does not apply to {}", alg.name()),
        ))
    } else {
        Ok(())
    }
}

pub(crate) fn check_width(alg: impl Named, width: Option<u32>, default: u32) -> Result<u32> {
    let width = width.unwrap_or(default);
    if width == 0 || width > 1024 {
        return Err(invalid(
            alg,
            format!("matrix width {width} must be between 1 and 1024"),
        ));
    }
    Ok(width)
}

pub(crate) fn check_grid(alg: impl Named, grid: Option<u32>) -> Result<Option<u32>> {
    match grid {
        Some(0) => Err(invalid(alg, "grid must have at least one block")),
        Some(g) if g > (1 << 20) => Err(invalid(
            alg,
            format!("grid {g} is past the limit of 2^20 persistent blocks"),
        )),
        g => Ok(g),
    }
}

/// Shuffle's items per lane: a lane's items must fill whole 16-byte vectors, about 64 bytes.
pub(crate) fn shuffle_items(item_size: usize, requested: Option<u32>) -> Result<(u32, u32)> {
    let size = item_size.max(1);
    let granule = 16 / gcd(size, 16); // items per whole number of vectors
    let items = match requested {
        Some(0) => {
            return Err(invalid(
                Algorithm::Shuffle,
                "items_per_thread must be at least 1",
            ))
        }
        Some(n) if n > 256 => {
            return Err(invalid(
                Algorithm::Shuffle,
                format!("items_per_thread {n} is past the limit of 256"),
            ))
        }
        Some(n) => n as usize,
        None => (64usize.div_ceil(size)).div_ceil(granule).max(1) * granule,
    };
    let vecs = if (items * size).is_multiple_of(16) && items * size <= 16 * 64 {
        (items * size / 16) as u32
    } else {
        0 // item-by-item loads
    };
    Ok((items as u32, vecs))
}

pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Config {
    /// Fixes every parameter of a concrete algorithm (`Auto` must be resolved first).
    pub(crate) fn plan(&self, item_size: usize) -> Result<Plan> {
        let alg = self.algorithm;
        let c = self;
        if alg != Algorithm::Shuffle && alg != Algorithm::Auto {
            reject(alg, "tile_group", c.tile_group.is_some())?;
        }
        match alg {
            Algorithm::Auto => unreachable!("Auto is resolved before planning"),
            Algorithm::Tb2 => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                reject(alg, "grid (Tb2 is multi-pass)", c.grid.is_some())?;
                let block = check_block(alg, c.block.unwrap_or(256))?;
                if !block.is_power_of_two() {
                    return Err(invalid(
                        alg,
                        format!(
                            "block size {block} must be a power of two (D = 2B is a full tree)"
                        ),
                    ));
                }
                Ok(Plan::Tb2 { block })
            }
            Algorithm::Tb4Warp => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                reject(alg, "grid (Tb4Warp is multi-pass)", c.grid.is_some())?;
                let block = check_block(alg, c.block.unwrap_or(256))?;
                if block > 256 {
                    return Err(invalid(alg, format!("block size {block} is past 256: warp 0 reduces the D / 32 = B / 8 data-warp values and holds at most 32")));
                }
                Ok(Plan::Tb4Warp { block })
            }
            Algorithm::Matrix => {
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                reject(
                    alg,
                    "grid (Matrix is multi-pass; use PersistentMatrix)",
                    c.grid.is_some(),
                )?;
                Ok(Plan::Matrix {
                    block: check_block(alg, c.block.unwrap_or(256))?,
                    width: check_width(alg, c.matrix_width, 32)?,
                })
            }
            Algorithm::PersistentMatrix => {
                reject(alg, "producers", c.producers.is_some())?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                Ok(Plan::PersistentMatrix {
                    block: check_block(alg, c.block.unwrap_or(256))?,
                    width: check_width(alg, c.matrix_width, 32)?,
                    grid: check_grid(alg, c.grid)?,
                })
            }
            Algorithm::DiffWarps => {
                reject(
                    alg,
                    "block (DiffWarps has 32 * (producers + 1) threads; set producers)",
                    c.block.is_some(),
                )?;
                reject(alg, "items_per_thread", c.items_per_thread.is_some())?;
                let producers = c.producers.unwrap_or(8);
                if producers == 0 || producers > 31 {
                    return Err(invalid(alg, format!("producers {producers} must be between 1 and 31 (one consumer warp, at most 1024 threads)")));
                }
                Ok(Plan::DiffWarps {
                    producers,
                    width: check_width(alg, c.matrix_width, 32)?,
                    grid: check_grid(alg, c.grid)?,
                })
            }
            Algorithm::Shuffle => {
                reject(alg, "matrix_width", c.matrix_width.is_some())?;
                reject(alg, "producers", c.producers.is_some())?;
                let (items, vecs) = shuffle_items(item_size, c.items_per_thread)?;
                // Defaults measured on an H100 (docs/gpu-results.md, 2026-11-22): 512 threads,
                // block-contiguous tiles folded every 4 tiles, 2 blocks per SM, so that each
                // block streams one contiguous region: 0.99-1.00 of the read roof at 2^28.
                let mut group = c.tile_group.unwrap_or(SHUFFLE_GROUP);
                let mut block = check_block(alg, c.block.unwrap_or(SHUFFLE_BLOCK))?;
                // Two rings of `group` block tiles' warp values, a warp's values and a few words
                // live in static shared memory. Large items: shrink the defaults the caller left
                // open (the group, then the block) until they fit.
                let smem = |group: u32, block: u32| {
                    (2 * group as usize * (block as usize / 32) + 32) * item_size + 64
                };
                while smem(group, block) > STATIC_SMEM_LIMIT {
                    if c.tile_group.is_none() && group > 1 {
                        group -= 1;
                    } else if c.block.is_none() && block > 32 {
                        block /= 2;
                    } else {
                        return Err(invalid(
                            alg,
                            format!(
                                "tile_group {group} with {block} threads needs {} bytes of shared \
                                 memory for {item_size}-byte items; the static limit is \
                                 {STATIC_SMEM_LIMIT}",
                                smem(group, block)
                            ),
                        ));
                    }
                }
                Ok(Plan::Shuffle {
                    block,
                    items,
                    vecs,
                    group,
                    order_free: false,
                    grid: check_grid(alg, c.grid)?,
                })
            }
        }
    }
}

impl Plan {
    pub(crate) fn algorithm(&self) -> Algorithm {
        match self {
            Plan::Tb2 { .. } => Algorithm::Tb2,
            Plan::Tb4Warp { .. } => Algorithm::Tb4Warp,
            Plan::Matrix { .. } => Algorithm::Matrix,
            Plan::PersistentMatrix { .. } => Algorithm::PersistentMatrix,
            Plan::DiffWarps { .. } => Algorithm::DiffWarps,
            Plan::Shuffle { .. } => Algorithm::Shuffle,
        }
    }

    /// The kernel's entry point (one per plan; multi-pass plans relaunch it).
    pub(crate) fn entry(&self) -> &'static str {
        match self {
            Plan::Tb2 { .. } => "reduce_tb2",
            Plan::Tb4Warp { .. } => "reduce_tb4_warp",
            Plan::Matrix { .. } => "reduce_matrix",
            Plan::PersistentMatrix { .. } => "reduce_matrix_persistent",
            Plan::DiffWarps { .. } => "reduce_diff_warps",
            Plan::Shuffle { .. } => "reduce_shuffle",
        }
    }

    /// Threads per block.
    pub(crate) fn block(&self) -> u32 {
        match *self {
            Plan::Tb2 { block }
            | Plan::Tb4Warp { block }
            | Plan::Matrix { block, .. }
            | Plan::PersistentMatrix { block, .. }
            | Plan::Shuffle { block, .. } => block,
            Plan::DiffWarps { producers, .. } => 32 * (producers + 1),
        }
    }

    /// Items one block reduces per data block (multi-pass and matrix algorithms).
    pub(crate) fn data_block(&self) -> u64 {
        match *self {
            Plan::Tb2 { block } => 2 * block as u64,
            Plan::Tb4Warp { block } => 4 * block as u64,
            Plan::Matrix { width, .. }
            | Plan::PersistentMatrix { width, .. }
            | Plan::DiffWarps { width, .. } => (MATRIX_ROWS * width) as u64,
            Plan::Shuffle { block, items, .. } => block as u64 * items as u64,
        }
    }

    /// Dynamic shared memory per block, in bytes, for items of `item_size` bytes.
    pub(crate) fn dynamic_smem(&self, item_size: usize) -> usize {
        let items = match *self {
            Plan::Tb2 { block } => {
                let d = 2 * block as usize;
                d + d / 32
            }
            Plan::Tb4Warp { block } => 4 * block as usize + 32,
            Plan::Matrix { width, .. } | Plan::PersistentMatrix { width, .. } => {
                (MATRIX_ROWS * (width + 1)) as usize
            }
            Plan::DiffWarps { width, .. } => 2 * (MATRIX_ROWS * (width + 1)) as usize,
            Plan::Shuffle { .. } => 0,
        };
        items * item_size
    }

    /// The plan for an input at device address `address`: Shuffle's 16-byte vector loads need
    /// a 16-byte-aligned input, and one that is not (a borrowed view at an odd offset, a raw
    /// pointer) is read item by item instead. Each lane still folds the same items in the
    /// same order, so the grouping, and the result, are the same bit for bit.
    pub(crate) fn for_input(self, address: u64) -> Plan {
        match self {
            Plan::Shuffle {
                block,
                items,
                vecs,
                group,
                order_free,
                grid,
            } if vecs > 0 && !address.is_multiple_of(16) => Plan::Shuffle {
                block,
                items,
                vecs: 0,
                group,
                order_free,
                grid,
            },
            plan => plan,
        }
    }

    /// The persistent grid the caller fixed, if any.
    pub(crate) fn fixed_grid(&self) -> Option<u32> {
        match *self {
            Plan::PersistentMatrix { grid, .. }
            | Plan::DiffWarps { grid, .. }
            | Plan::Shuffle { grid, .. } => grid,
            _ => None,
        }
    }

    /// The kernel text and its compile-time parameters (the JIT key, with the monoid and arch).
    pub(crate) fn kernel(&self) -> KernelSpec {
        let block = ("R_BLOCK", self.block());
        match *self {
            Plan::Tb2 { .. } => KernelSpec::new("tb2", &[block]),
            Plan::Tb4Warp { .. } => KernelSpec::new("tb4_warp", &[block]),
            Plan::Matrix { width, .. } | Plan::PersistentMatrix { width, .. } => {
                KernelSpec::new("matrix", &[block, ("R_H", MATRIX_ROWS), ("R_W", width)])
            }
            Plan::DiffWarps { width, .. } => {
                KernelSpec::new("diff_warps", &[block, ("R_W", width)])
            }
            Plan::Shuffle {
                items,
                vecs,
                group,
                order_free,
                ..
            } => KernelSpec::new(
                "shuffle",
                &[
                    block,
                    ("R_ITEMS", items),
                    ("R_VECS", vecs),
                    ("R_GROUP", group),
                    ("R_ORDER_FREE", order_free as u32),
                ],
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shuffle's static rings shrink for large items (the tile group, then the block) where
    /// the caller left the defaults; explicit parameters that do not fit are an error.
    #[test]
    fn shuffle_defaults_shrink_for_large_items() {
        let shuffle = Config::new(Algorithm::Shuffle);
        for size in [4, 72, 256, 512, 1024, 1400] {
            let Plan::Shuffle { block, group, .. } = shuffle.plan(size).unwrap() else {
                panic!("{size}")
            };
            let smem = (2 * group as usize * (block as usize / 32) + 32) * size + 64;
            assert!(
                smem <= STATIC_SMEM_LIMIT,
                "{size}: {block} threads, group {group}"
            );
            if size <= 256 {
                assert_eq!((block, group), (SHUFFLE_BLOCK, SHUFFLE_GROUP), "{size}");
            }
        }
        assert!(shuffle.tile_group(4).block(512).plan(512).is_err());
        assert!(shuffle.block(512).plan(1400).is_err());
        assert!(shuffle.plan(4096).is_err());
    }

    #[test]
    fn shuffle_lanes_fill_whole_vectors() {
        assert_eq!(shuffle_items(4, None).unwrap(), (16, 4));
        assert_eq!(shuffle_items(8, None).unwrap(), (8, 4));
        assert_eq!(shuffle_items(16, None).unwrap(), (4, 4));
        assert_eq!(shuffle_items(12, None).unwrap(), (8, 6));
        assert_eq!(shuffle_items(72, None).unwrap(), (2, 9));
        assert_eq!(shuffle_items(1, None).unwrap(), (64, 4));
        assert_eq!(shuffle_items(4, Some(3)).unwrap(), (3, 0));
    }

    #[test]
    fn unaligned_inputs_keep_the_shuffle_grouping_without_vector_loads() {
        let plan = Config::new(Algorithm::Shuffle).plan(4).unwrap();
        let Plan::Shuffle { items, vecs, .. } = plan else {
            unreachable!()
        };
        assert_eq!((items, vecs), (16, 4));
        assert_eq!(plan.for_input(0x7f00_0000_0100), plan);
        let unaligned = plan.for_input(0x7f00_0000_0104);
        let Plan::Shuffle {
            items: items_unaligned,
            vecs: 0,
            ..
        } = unaligned
        else {
            panic!("{unaligned:?} still loads vectors")
        };
        assert_eq!(items_unaligned, items);
        let tb2 = Config::new(Algorithm::Tb2).plan(4).unwrap();
        assert_eq!(tb2.for_input(0x7f00_0000_0104), tb2);
    }

    /// The item-by-item Shuffle kernels that unaligned inputs get compile, ordered and
    /// order-free (NVRTC only; a missing NVRTC fails under `REDUCE_REQUIRE_NVRTC=1`).
    #[test]
    fn unaligned_shuffle_kernels_compile() {
        use reduce_core::{Max, Min, Sum};
        if !crate::compile::nvrtc_available() {
            let required = std::env::var("REDUCE_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
            assert!(
                !required,
                "REDUCE_REQUIRE_NVRTC=1 but libnvrtc cannot be loaded"
            );
            eprintln!("NVRTC test skipped: libnvrtc not found");
            return;
        }
        fn compiles<M: reduce_core::CudaMonoid>(algorithm: Algorithm) {
            let plan = crate::plain::plan_for::<M>(Config::new(algorithm))
                .unwrap()
                .for_input(4);
            assert!(matches!(plan, Plan::Shuffle { vecs: 0, .. }), "{plan:?}");
            let source = crate::codegen::assemble::<M>(&plan.kernel());
            crate::compile::compile_cubin(&source, "sm_90")
                .unwrap_or_else(|e| panic!("{plan:?}: {e}"));
        }
        compiles::<Sum<f32>>(Algorithm::Auto); // order-free
        compiles::<Min<f32>>(Algorithm::Shuffle);
        compiles::<Max<f64>>(Algorithm::Shuffle);
        compiles::<Sum<u8>>(Algorithm::Shuffle);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = Config::new(Algorithm::Tb2).block(96).plan(4).unwrap_err();
        assert!(e.to_string().contains("power of two"), "{e}");
        let e = Config::new(Algorithm::Matrix)
            .block(100)
            .plan(4)
            .unwrap_err();
        assert!(e.to_string().contains("multiple of 32"), "{e}");
        let e = Config::new(Algorithm::Tb4Warp)
            .block(512)
            .plan(4)
            .unwrap_err();
        assert!(e.to_string().contains("past 256"), "{e}");
        let e = Config::new(Algorithm::DiffWarps)
            .producers(0)
            .plan(4)
            .unwrap_err();
        assert!(e.to_string().contains("producers 0"), "{e}");
        let e = Config::new(Algorithm::Matrix).grid(10).plan(4).unwrap_err();
        assert!(e.to_string().contains("multi-pass"), "{e}");
        assert!(Config::new(Algorithm::Shuffle)
            .items_per_thread(0)
            .plan(4)
            .is_err());
    }
}
