//! Segmented reductions: the owner form (the paper's) and the CSR offsets form, the paper's
//! five segmented algorithms and our single-launch SegShuffle; host-side dispatch and the
//! device-side layout validation.

use crate::algorithm::{
    check_block, check_grid, check_width, invalid, reject, shuffle_items, Named, MATRIX_ROWS,
};
use crate::buffer::DeviceVec;
use crate::codegen::KernelSpec;
use crate::error::{DriverContext, Result};
use crate::gpu::{Gpu, Scratch};
use reduce_core::layout::check_index_limit;
use reduce_core::{CudaMonoid, LayoutError};

/// A segmented reduction algorithm. All keep the left-to-right order inside every segment.
///
/// | variant | what | passes | output |
/// |---|---|---|---|
/// | `Tb2Seg` | Zhou et al.'s left-storing tree: siblings with different owners push the right child (paper IV.A) | multi | pre-filled, appended |
/// | `Tb4WarpSeg` | the intra-warp version, `__syncwarp()` between steps (paper IV.A) | multi | pre-filled, appended |
/// | `MatrixSeg` | Dotsenko rows fold runs, flush on owner change, row suffixes by a right-storing warp tree (paper IV.A) | multi | pre-filled, prepended |
/// | `PersistentMatrixSeg` | MatrixSeg with persistent blocks (paper IV.B) | 2 | pre-filled, prepended |
/// | `DiffWarps16Seg` | producer/consumer warps, W = 16 (paper IV.B) | 2 | pre-filled, prepended |
/// | `SegShuffle` | contiguous items per thread, run-length flush, segmented warp/block scans, block records joined by the last block (ours) | 1 | each segment written once |
/// | `Auto` | picks by N / segments | | |
///
/// The paper's algorithms work on an internally identity-filled output (their read-modify-write
/// contract stays inside the call); the offsets form converts offsets to owners for them first.
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
    /// Ours: single launch, each segment written exactly once.
    SegShuffle,
    /// Chooses an algorithm from N / segments.
    #[default]
    Auto,
}

impl SegAlgorithm {
    /// Every concrete algorithm (all but `Auto`), for tests and benchmarks.
    pub const ALL: [SegAlgorithm; 6] = [
        SegAlgorithm::Tb2Seg,
        SegAlgorithm::Tb4WarpSeg,
        SegAlgorithm::MatrixSeg,
        SegAlgorithm::PersistentMatrixSeg,
        SegAlgorithm::DiffWarps16Seg,
        SegAlgorithm::SegShuffle,
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
    /// Items per thread of SegShuffle (default: 64 bytes' worth, whole 16-byte vectors).
    pub items_per_thread: Option<u32>,
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
    /// Sets SegShuffle's items per thread.
    pub fn items_per_thread(mut self, items: u32) -> Self {
        self.items_per_thread = Some(items);
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

/// A validated, concrete segmented algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SegPlan {
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
}

/// Where the segments come from.
#[derive(Clone, Copy)]
enum Layout<'a> {
    Owner(&'a DeviceVec<u32>, usize),
    Offsets(&'a DeviceVec<u32>),
}

/// Auto's choice: SegShuffle for every segment-length profile (measured fastest in every
/// scenario of docs/gpu-results.md).
fn resolve(config: SegConfig, _n: usize, _segments: usize) -> SegConfig {
    if config.algorithm == SegAlgorithm::Auto {
        SegConfig {
            algorithm: SegAlgorithm::SegShuffle,
            ..config
        }
    } else {
        config
    }
}

impl SegConfig {
    fn plan(&self, item_size: usize) -> Result<SegPlan> {
        let alg = self.algorithm;
        let c = self;
        let not_persistent = |what| reject(alg, what, c.grid.is_some());
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
                let (items, vecs) = shuffle_items(item_size, c.items_per_thread)
                    .map_err(|_| invalid(alg, "items_per_thread must be between 1 and 256"))?;
                Ok(SegPlan::Shuffle {
                    block: check_block(alg, c.block.unwrap_or(256))?,
                    items,
                    vecs,
                    grid: check_grid(alg, c.grid)?,
                })
            }
        }
    }
}

impl SegPlan {
    fn algorithm(&self) -> SegAlgorithm {
        match self {
            SegPlan::Tb2 { .. } => SegAlgorithm::Tb2Seg,
            SegPlan::Tb4Warp { .. } => SegAlgorithm::Tb4WarpSeg,
            SegPlan::Matrix { .. } => SegAlgorithm::MatrixSeg,
            SegPlan::PersistentMatrix { .. } => SegAlgorithm::PersistentMatrixSeg,
            SegPlan::DiffWarps { .. } => SegAlgorithm::DiffWarps16Seg,
            SegPlan::Shuffle { .. } => SegAlgorithm::SegShuffle,
        }
    }

    fn block(&self) -> u32 {
        match *self {
            SegPlan::Tb2 { block }
            | SegPlan::Tb4Warp { block }
            | SegPlan::Matrix { block, .. }
            | SegPlan::PersistentMatrix { block, .. }
            | SegPlan::Shuffle { block, .. } => block,
            SegPlan::DiffWarps { producers, .. } => 32 * (producers + 1),
        }
    }

    /// Items per data block (per tile for SegShuffle).
    fn data_block(&self) -> u64 {
        match *self {
            SegPlan::Tb2 { block } => 2 * block as u64,
            SegPlan::Tb4Warp { block } => 4 * block as u64,
            SegPlan::Matrix { width, .. }
            | SegPlan::PersistentMatrix { width, .. }
            | SegPlan::DiffWarps { width, .. } => (MATRIX_ROWS * width) as u64,
            SegPlan::Shuffle { block, items, .. } => block as u64 * items as u64,
        }
    }

    /// Dynamic shared memory: values, 16 bytes of alignment slack, owners.
    fn dynamic_smem(&self, item_size: usize, offsets_form: bool) -> usize {
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
            SegPlan::Shuffle { .. } => {
                return if offsets_form {
                    4 * self.window() as usize
                } else {
                    0
                };
            }
        };
        slots * item_size + 16 + slots * 4
    }

    /// SegShuffle's offsets window: a tile's worth of segments and some slack.
    fn window(&self) -> u64 {
        self.data_block() + 64
    }

    /// SegShuffle's shared output stage: a tile's worth of segments, at most 12 KiB.
    fn stage_slots(&self, item_size: usize) -> u64 {
        self.data_block()
            .min((12 * 1024 / item_size.max(1)) as u64)
            .max(1)
    }

    fn kernel(&self, offsets_form: bool, item_size: usize) -> (KernelSpec, &'static str) {
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
                        ("R_VECS", vecs),
                        ("R_OFFSETS", offsets_form as u32),
                        ("R_WIN", self.window() as u32),
                        ("R_STAGE", self.stage_slots(item_size) as u32),
                        ("R_MIN_BLOCKS", (1024 / self.block()).max(1)),
                    ],
                ),
                "reduce_seg_shuffle",
            ),
        }
    }

    /// The plan that reduces the (value, owner) pairs a pass leaves, until one block is left.
    fn next_pass(&self) -> SegPlan {
        match *self {
            SegPlan::Tb2 { .. } | SegPlan::Tb4Warp { .. } | SegPlan::Matrix { .. } => *self,
            SegPlan::PersistentMatrix { width, .. } | SegPlan::DiffWarps { width, .. } => {
                SegPlan::Matrix { block: 256, width }
            }
            SegPlan::Shuffle { .. } => unreachable!("single pass"),
        }
    }

    fn persistent(&self) -> bool {
        matches!(
            self,
            SegPlan::PersistentMatrix { .. } | SegPlan::DiffWarps { .. }
        )
    }
}

/// The kernel text of a segmented algorithm (owner or offsets form) for monoid `M`.
pub fn seg_kernel_source<M: CudaMonoid>(
    config: SegConfig,
    offsets_form: bool,
) -> Result<crate::KernelSource> {
    let plan = resolve(config, usize::MAX, 1).plan(std::mem::size_of::<M>())?;
    Ok(crate::codegen::assemble::<M>(
        &plan.kernel(offsets_form, std::mem::size_of::<M>()).0,
    ))
}

/// Compiles a segmented kernel for `arch` without a device (CI).
pub fn compile_seg_kernel<M: CudaMonoid>(
    config: SegConfig,
    offsets_form: bool,
    arch: &str,
) -> Result<Vec<u8>> {
    crate::compile::compile_cubin(&seg_kernel_source::<M>(config, offsets_form)?, arch)
}

const NO_INDEX: u64 = u64::MAX;
const ALIGN: usize = 256;

fn align(bytes: usize) -> usize {
    bytes.div_ceil(ALIGN) * ALIGN
}

/// Carves 256-byte-aligned regions out of one scratch allocation.
struct Carver {
    sizes: Vec<usize>,
}

impl Carver {
    fn new() -> Self {
        Carver { sizes: Vec::new() }
    }
    fn add(&mut self, bytes: usize) -> usize {
        self.sizes.push(align(bytes.max(1)));
        self.sizes.len() - 1
    }
    fn total(&self) -> usize {
        self.sizes.iter().sum()
    }
    fn at(&self, base: u64, index: usize) -> u64 {
        base + self.sizes[..index].iter().sum::<usize>() as u64
    }
}

impl Gpu {
    /// One value per segment, where `owner[i]` is item i's segment (non-decreasing, below
    /// `num_segments`); segments that own no item get the identity. The layout is validated on
    /// the device (unless `SegConfig::trusted`) and a bad one returns [`crate::Error::Layout`] naming the
    /// first bad index.
    pub fn reduce_by_owner<M: CudaMonoid>(
        &self,
        items: &DeviceVec<M>,
        owner: &DeviceVec<u32>,
        num_segments: usize,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        self.check_owned(owner)?;
        if owner.len() != items.len() {
            return Err(LayoutError::OwnerLengthMismatch {
                items: items.len(),
                owners: owner.len(),
            }
            .into());
        }
        check_index_limit("segment count", num_segments)?;
        self.segmented(items, Layout::Owner(owner, num_segments), config.into())
    }

    /// One value per CSR segment: segment s is items `offsets[s] .. offsets[s + 1]`;
    /// `offsets` holds segments + 1 entries, starts at 0, ends at N, never decreases. Validated on
    /// the device unless `SegConfig::trusted`.
    pub fn reduce_segments<M: CudaMonoid>(
        &self,
        items: &DeviceVec<M>,
        offsets: &DeviceVec<u32>,
        config: impl Into<SegConfig>,
    ) -> Result<DeviceVec<M>> {
        self.check_owned(offsets)?;
        if offsets.is_empty() {
            return Err(LayoutError::OffsetsEmpty.into());
        }
        self.segmented(items, Layout::Offsets(offsets), config.into())
    }

    /// Compiles (or loads) the kernel of a segmented configuration; see [`Gpu::prepare`].
    pub fn prepare_segmented<M: CudaMonoid>(
        &self,
        config: impl Into<SegConfig>,
        offsets_form: bool,
    ) -> Result<crate::JitReport> {
        let plan = resolve(config.into(), 0, 0).plan(std::mem::size_of::<M>())?;
        Ok(self
            .kernel::<M>(&plan.kernel(offsets_form, std::mem::size_of::<M>()).0)?
            .1)
    }

    fn segmented<M: CudaMonoid>(
        &self,
        items: &DeviceVec<M>,
        layout: Layout<'_>,
        config: SegConfig,
    ) -> Result<DeviceVec<M>> {
        self.check_owned(items)?;
        let n = items.len();
        check_index_limit("item count", n)?;
        let segments = match layout {
            Layout::Owner(_, s) => s,
            Layout::Offsets(offsets) => offsets.len() - 1,
        };
        let config = resolve(config, n, segments);
        let plan = config.plan(std::mem::size_of::<M>())?;
        let mut scratch = self.lock_scratch();
        let stream = &self.inner.stream;

        // Scratch layout: status word, then per-algorithm regions.
        let mut carve = Carver::new();
        let status_region = carve.add(8);
        let base_regions = carve.sizes.len();
        let plan_regions = self.seg_regions::<M>(&plan, n as u64, &layout, &mut carve);
        let base = scratch.region(self, carve.total())?;
        let status = carve.at(base, status_region);

        if !config.trusted {
            self.validate_layout::<M>(&plan, &layout, n, segments, status)?;
        }
        let out = DeviceVec::<M>::alloc(stream, self.info().ordinal, segments)?;
        if segments == 0 {
            if let (Layout::Owner(owner, _), false, true) = (&layout, config.trusted, n > 0) {
                // Every owner is out of range when there are no segments.
                let value = owner.read_at(stream, 0)?;
                return Err(LayoutError::OwnerOutOfRange {
                    index: 0,
                    value,
                    num_segments: 0,
                }
                .into());
            }
            return Ok(out);
        }
        if n == 0 {
            self.fill_identity::<M>(&plan, out.device_ptr(stream), segments as u64)?;
            return Ok(out);
        }
        let regions: Vec<u64> = (base_regions..base_regions + plan_regions)
            .map(|i| carve.at(base, i))
            .collect();
        match plan {
            SegPlan::Shuffle { .. } => {
                self.seg_shuffle::<M>(
                    &plan, items, &layout, segments, &out, &scratch, status, &regions,
                )?;
                if !config.trusted && matches!(layout, Layout::Owner(..)) {
                    self.check_status(&layout, status, n, segments)?;
                }
            }
            _ => self.seg_paper::<M>(&plan, items, &layout, segments, &out, &regions)?,
        }
        drop(scratch);
        Ok(out)
    }

    /// Scratch regions a plan needs (after the status word); returns how many it added.
    fn seg_regions<M: CudaMonoid>(
        &self,
        plan: &SegPlan,
        n: u64,
        layout: &Layout<'_>,
        carve: &mut Carver,
    ) -> usize {
        let size = std::mem::size_of::<M>();
        let before = carve.sizes.len();
        match plan {
            SegPlan::Shuffle { .. } => {
                let blocks = self.seg_shuffle_grid_bound(plan, n) as usize;
                carve.add(2 * blocks * size); // records: entry part, exit value
                carve.add(3 * blocks * 4); // records: entry, exit, single
            }
            _ => {
                if matches!(layout, Layout::Offsets(_)) {
                    carve.add(n as usize * 4); // owners built from the offsets
                }
                let first = if plan.persistent() {
                    (self.info().multiprocessors as u64 * 32)
                        .min(n.div_ceil(plan.data_block()).max(1))
                } else {
                    n.div_ceil(plan.data_block()).max(1)
                };
                let d = plan.next_pass().data_block();
                let second = first.div_ceil(d).max(1);
                carve.add(first as usize * size);
                carve.add(first as usize * 4);
                carve.add(second as usize * size);
                carve.add(second as usize * 4);
            }
        }
        carve.sizes.len() - before
    }

    /// An upper bound of SegShuffle's grid, for sizing its records before launch.
    fn seg_shuffle_grid_bound(&self, plan: &SegPlan, n: u64) -> u64 {
        let tiles = n.div_ceil(plan.data_block()).max(1);
        let bound = match plan {
            SegPlan::Shuffle { grid: Some(g), .. } => *g as u64,
            _ => self.info().multiprocessors as u64 * 64,
        };
        bound.min(tiles)
    }

    fn common_kernel<M: CudaMonoid>(
        &self,
        plan: &SegPlan,
        entry: &'static str,
    ) -> Result<cudarc::driver::CudaFunction> {
        // Any segmented family carries the shared helpers; use the plan's own module.
        let (spec, _) = plan.kernel(false, std::mem::size_of::<M>());
        let (kernel, _) = self.kernel::<M>(&spec)?;
        kernel.function(entry)
    }

    fn fill_identity<M: CudaMonoid>(&self, plan: &SegPlan, out: u64, count: u64) -> Result<()> {
        let f = self.common_kernel::<M>(plan, "seg_fill_identity")?;
        let grid = count
            .div_ceil(256)
            .clamp(1, self.info().multiprocessors as u64 * 8);
        self.launch(&f, grid, 256, 0, &[out, count])
    }

    fn reset_status(&self, status: u64) -> Result<()> {
        // SAFETY: `status` is an 8-byte scratch region.
        unsafe {
            cudarc::driver::result::memset_d8_async(status, 0xff, 8, self.inner.stream.cu_stream())
        }
        .during("resetting the validation status")
    }

    fn read_status(&self, status: u64) -> Result<u64> {
        let mut value = [0u64];
        // SAFETY: `status` holds one u64 written by a kernel or the memset.
        unsafe {
            cudarc::driver::result::memcpy_dtoh_async(
                &mut value[..],
                status,
                self.inner.stream.cu_stream(),
            )
        }
        .during("reading the validation status")?;
        self.synchronize()?;
        Ok(value[0])
    }

    /// Validates the layout on the device; SegShuffle's owner form validates inside the
    /// reduction instead (see `check_status`).
    fn validate_layout<M: CudaMonoid>(
        &self,
        plan: &SegPlan,
        layout: &Layout<'_>,
        n: usize,
        segments: usize,
        status: u64,
    ) -> Result<()> {
        let stream = &self.inner.stream;
        self.reset_status(status)?;
        let grid = (n as u64)
            .div_ceil(256)
            .clamp(1, self.info().multiprocessors as u64 * 16);
        match layout {
            Layout::Owner(owner, _) => {
                if matches!(plan, SegPlan::Shuffle { .. }) || n == 0 {
                    return Ok(());
                }
                let f = self.common_kernel::<M>(plan, "seg_validate_owner")?;
                self.launch(
                    &f,
                    grid,
                    256,
                    0,
                    &[owner.device_ptr(stream), n as u64, segments as u64, status],
                )?;
                self.check_status(layout, status, n, segments)
            }
            Layout::Offsets(offsets) => {
                let count = offsets.len() as u64;
                let f = self.common_kernel::<M>(plan, "seg_validate_offsets")?;
                let grid = count
                    .div_ceil(256)
                    .clamp(1, self.info().multiprocessors as u64 * 16);
                self.launch(
                    &f,
                    grid,
                    256,
                    0,
                    &[offsets.device_ptr(stream), count, n as u64, status],
                )?;
                let bad = self.read_status(status)?;
                if bad == NO_INDEX {
                    return Ok(());
                }
                let index = (bad & ((1 << 62) - 1)) as usize;
                let value = offsets.read_at(stream, index)?;
                Err(match bad >> 62 {
                    0 => LayoutError::FirstOffsetNotZero { value },
                    1 => LayoutError::OffsetsDecreasing {
                        index,
                        value,
                        previous: offsets.read_at(stream, index - 1)?,
                    },
                    _ => LayoutError::LastOffsetNotLen {
                        index,
                        value,
                        items: n,
                    },
                }
                .into())
            }
        }
    }

    /// Turns the first bad owner index a kernel reported into its typed error.
    fn check_status(
        &self,
        layout: &Layout<'_>,
        status: u64,
        n: usize,
        segments: usize,
    ) -> Result<()> {
        let Layout::Owner(owner, _) = layout else {
            return Ok(());
        };
        let bad = self.read_status(status)?;
        if bad == NO_INDEX || bad as usize >= n {
            return Ok(());
        }
        let stream = &self.inner.stream;
        let index = bad as usize;
        let value = owner.read_at(stream, index)?;
        if index > 0 {
            let previous = owner.read_at(stream, index - 1)?;
            if value < previous {
                return Err(LayoutError::OwnerNotSorted {
                    index,
                    value,
                    previous,
                }
                .into());
            }
        }
        Err(LayoutError::OwnerOutOfRange {
            index,
            value,
            num_segments: segments,
        }
        .into())
    }

    #[allow(clippy::too_many_arguments)]
    fn seg_shuffle<M: CudaMonoid>(
        &self,
        plan: &SegPlan,
        items: &DeviceVec<M>,
        layout: &Layout<'_>,
        segments: usize,
        out: &DeviceVec<M>,
        scratch: &Scratch,
        status: u64,
        regions: &[u64],
    ) -> Result<()> {
        let stream = &self.inner.stream;
        let offsets_form = matches!(layout, Layout::Offsets(_));
        let (spec, entry) = plan.kernel(offsets_form, std::mem::size_of::<M>());
        let (kernel, _) = self.kernel::<M>(&spec)?;
        let f = kernel.function(entry)?;
        let smem = plan.dynamic_smem(std::mem::size_of::<M>(), offsets_form);
        self.prepare_smem(&f, plan.algorithm().name(), smem)?;
        let n = items.len() as u64;
        let tiles = n.div_ceil(plan.data_block()).max(1);
        let grid = match plan {
            SegPlan::Shuffle { grid: Some(g), .. } => (*g as u64).min(tiles),
            _ => (self.full_grid(&f, plan.block(), smem)? as u64)
                .min(self.seg_shuffle_grid_bound(plan, n)),
        };
        let index = match layout {
            Layout::Owner(owner, _) => owner.device_ptr(stream),
            Layout::Offsets(offsets) => offsets.device_ptr(stream),
        };
        // The first tile's window: the average segments per tile, with slack.
        let estimate = (segments as u64 * plan.data_block()).div_ceil(n.max(1)) * 5 / 4 + 64;
        self.reset_status(status)?;
        let ticket = scratch.ticket.device_ptr(stream);
        let args = [
            items.device_ptr(stream),
            n,
            index,
            segments as u64,
            out.device_ptr(stream),
            regions[0],
            regions[1],
            ticket,
            status,
            estimate,
        ];
        self.launch(&f, grid, plan.block(), smem, &args)
    }

    /// The paper's algorithms: identity-filled output, then passes of (value, owner) pairs.
    fn seg_paper<M: CudaMonoid>(
        &self,
        plan: &SegPlan,
        items: &DeviceVec<M>,
        layout: &Layout<'_>,
        segments: usize,
        out: &DeviceVec<M>,
        regions: &[u64],
    ) -> Result<()> {
        let stream = &self.inner.stream;
        let size = std::mem::size_of::<M>();
        let n = items.len() as u64;
        let out_ptr = out.device_ptr(stream);
        self.fill_identity::<M>(plan, out_ptr, segments as u64)?;
        let (owner, regions) = match layout {
            Layout::Owner(owner, _) => (owner.device_ptr(stream), regions),
            Layout::Offsets(offsets) => {
                let f = self.common_kernel::<M>(plan, "seg_offsets_to_owner")?;
                let grid = n
                    .div_ceil(256)
                    .clamp(1, self.info().multiprocessors as u64 * 16);
                self.launch(
                    &f,
                    grid,
                    256,
                    0,
                    &[offsets.device_ptr(stream), segments as u64, regions[0], n],
                )?;
                (regions[0], &regions[1..])
            }
        };
        let pairs = [(regions[0], regions[1]), (regions[2], regions[3])];

        // Pass 1.
        let (spec, entry) = plan.kernel(false, size);
        let (kernel, _) = self.kernel::<M>(&spec)?;
        let f = kernel.function(entry)?;
        let smem = plan.dynamic_smem(size, false);
        self.prepare_smem(&f, plan.algorithm().name(), smem)?;
        let data_blocks = n.div_ceil(plan.data_block()).max(1);
        let (vals, owners) = pairs[0];
        let mut args = vec![items.device_ptr(stream), owner, n, segments as u64];
        let grid = if plan.persistent() {
            let full = match plan {
                SegPlan::PersistentMatrix { grid: Some(g), .. }
                | SegPlan::DiffWarps { grid: Some(g), .. } => *g as u64,
                _ => self.full_grid(&f, plan.block(), smem)? as u64,
            };
            let grid = full
                .min(data_blocks)
                .min(self.info().multiprocessors as u64 * 32);
            args.extend([data_blocks / grid, data_blocks % grid]); // q, r
            grid
        } else {
            data_blocks
        };
        args.extend([out_ptr, vals, owners]);
        self.launch(&f, grid, plan.block(), smem, &args)?;
        let mut len = grid;

        // Further passes over the (value, owner) pairs, until one block writes the last piece.
        let next = plan.next_pass();
        let (spec, entry) = next.kernel(false, size);
        let (kernel, _) = self.kernel::<M>(&spec)?;
        let g = kernel.function(entry)?;
        let smem = next.dynamic_smem(size, false);
        self.prepare_smem(&g, next.algorithm().name(), smem)?;
        let mut pass = 0usize;
        while len > 1 {
            let (src_vals, src_owners) = pairs[pass % 2];
            let (dst_vals, dst_owners) = pairs[(pass + 1) % 2];
            let blocks = len.div_ceil(next.data_block());
            self.launch(
                &g,
                blocks,
                next.block(),
                smem,
                &[
                    src_vals,
                    src_owners,
                    len,
                    segments as u64,
                    out_ptr,
                    dst_vals,
                    dst_owners,
                ],
            )?;
            len = blocks;
            pass += 1;
        }
        Ok(())
    }
}
