//! The matrix family (paper Alg. 3 and 4, III.B.1, and their segmented forms, paper IV):
//! `Matrix` (Dotsenko) loads a data block as a 32 x W matrix into shared memory, each of 32
//! threads folds a row, one warp folds the rows; multi-pass. `PersistentMatrix` runs a grid of
//! SMs x resident blocks, block b folding data blocks `b * q + min(b, r)` on, then a `Matrix`
//! pass folds the block values. `DiffWarps` is `PersistentMatrix` with P producer warps loading
//! the next matrix while one consumer warp folds the current one (double-buffered). The
//! segmented forms fold runs per row and flush on an owner change, and run the paper's
//! segmented procedure (`paper.rs`), the persistent ones reducing their pairs with `MatrixSeg`.

use super::algorithm::{Algorithm, SegAlgorithm};
use super::config::{check_block, check_grid, check_producers, check_width, refuse, Knobs};
use super::paper::{Paper, PaperPass, PersistentSegPassArgs, SegPassArgs};
use super::plan::{PlainPlan, SegShape};
use super::tuning::{
    DIFF_WARPS_SEG_WIDTH, MATRIX_WIDTH, PAPER_BLOCK, PRODUCERS, SECOND_PASS_BLOCK,
};
use crate::device::{kernel_signature, Entry};
use crate::dispatch::{pass_regions, Dispatch, PassArgs};
use crate::error::Result;
use crate::jit::{Family, Items, KernelSpec};

/// The matrix height: one warp folds the rows.
const ROWS: u32 = 32;

kernel_signature! {
    /// Block b folds data blocks `b * q + min(b, r)` on, q or q + 1 of them, into `out[b]`.
    struct PersistentArgs { r#in, n, q, r, out }
}

const REDUCE_MATRIX: Entry<PassArgs> = Entry::new("reduce_matrix");
const REDUCE_MATRIX_PERSISTENT: Entry<PersistentArgs> = Entry::new("reduce_matrix_persistent");
const REDUCE_DIFF_WARPS: Entry<PersistentArgs> = Entry::new("reduce_diff_warps");
const REDUCE_MATRIX_SEG: Entry<SegPassArgs> = Entry::new("reduce_matrix_seg");
const REDUCE_MATRIX_SEG_PERSISTENT: Entry<PersistentSegPassArgs> =
    Entry::new("reduce_matrix_seg_persistent");
const REDUCE_DIFF_WARPS_SEG: Entry<PersistentSegPassArgs> = Entry::new("reduce_diff_warps_seg");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Matrix,
    Persistent,
    DiffWarps,
}

/// A matrix algorithm with its parameters.
#[derive(Clone, Copy, Debug)]
pub(super) struct Matrix {
    kind: Kind,
    name: &'static str,
    /// Threads per block (DiffWarps: 32 * (producers + 1)).
    block: u32,
    width: u32,
    /// The persistent grid the caller fixed.
    grid: Option<u32>,
}

impl Matrix {
    /// Checks the parameters of `kind` (named `name`; `persistent` names the persistent form a
    /// caller who sets a grid on the multi-pass form wants).
    fn new(
        kind: Kind,
        name: &'static str,
        persistent: &str,
        knobs: &Knobs,
        default_width: u32,
    ) -> Result<Matrix> {
        let block = if kind == Kind::DiffWarps {
            let what = format!("block ({name} has 32 * (producers + 1) threads; set producers)");
            refuse(name, &what, knobs.block)?;
            refuse(name, "items_per_thread", knobs.items_per_thread)?;
            32 * (check_producers(name, knobs.producers.unwrap_or(PRODUCERS))? + 1)
        } else {
            refuse(name, "producers", knobs.producers)?;
            refuse(name, "items_per_thread", knobs.items_per_thread)?;
            if kind == Kind::Matrix {
                let what = format!("grid ({name} is multi-pass; use {persistent})");
                refuse(name, &what, knobs.grid)?;
            }
            check_block(name, knobs.block.unwrap_or(PAPER_BLOCK))?
        };
        let width = check_width(name, knobs.matrix_width.unwrap_or(default_width))?;
        let grid = check_grid(name, knobs.grid)?;
        Ok(Matrix {
            kind,
            name,
            block,
            width,
            grid,
        })
    }

    /// The multi-pass Matrix that reduces the block values of the persistent forms.
    fn second_pass(&self, name: &'static str) -> Matrix {
        Matrix {
            kind: Kind::Matrix,
            name,
            block: SECOND_PASS_BLOCK,
            width: self.width,
            grid: None,
        }
    }

    /// D = 32 x W, the values of one data block.
    fn tile(&self) -> u64 {
        (ROWS * self.width) as u64
    }

    /// The values in shared memory: the matrix with one pad column (two for DiffWarps's
    /// double buffer).
    fn slots(&self) -> usize {
        let matrix = (ROWS * (self.width + 1)) as usize;
        match self.kind {
            Kind::DiffWarps => 2 * matrix,
            _ => matrix,
        }
    }

    fn spec(&self) -> KernelSpec {
        let block = ("R_BLOCK", self.block);
        match self.kind {
            Kind::DiffWarps => KernelSpec::new(Family::DiffWarps, &[block, ("R_W", self.width)]),
            _ => KernelSpec::new(Family::Matrix, &[block, ("R_H", ROWS), ("R_W", self.width)]),
        }
    }

    fn seg_spec(&self) -> KernelSpec {
        KernelSpec::new(
            Family::SegMatrix,
            &[("R_BLOCK", self.block), ("R_W", self.width)],
        )
    }
}

/// `Matrix`, `PersistentMatrix` or `DiffWarps`.
pub(super) fn plain(algorithm: Algorithm, knobs: &Knobs) -> Result<Matrix> {
    let kind = match algorithm {
        Algorithm::Matrix => Kind::Matrix,
        Algorithm::PersistentMatrix => Kind::Persistent,
        _ => Kind::DiffWarps,
    };
    let persistent = Algorithm::PersistentMatrix.name();
    Matrix::new(kind, algorithm.name(), persistent, knobs, MATRIX_WIDTH)
}

impl PlainPlan for Matrix {
    fn kernels(&self) -> Vec<KernelSpec> {
        let mut specs = vec![self.spec()];
        if self.kind != Kind::Matrix {
            specs.push(self.second_pass(Algorithm::Matrix.name()).spec());
        }
        specs
    }

    fn dynamic_smem(&self, items: &Items) -> usize {
        self.slots() * items.m_size
    }

    fn launch(&self, d: &mut Dispatch, input: u64, n: u64, out: Option<u64>) -> Result<u64> {
        let size = d.items().m_size;
        let smem = self.dynamic_smem(&d.items());
        if self.kind == Kind::Matrix {
            let kernel = d.kernel(&self.spec(), REDUCE_MATRIX, self.block, smem, self.name)?;
            return d.multi_pass(&kernel, self.tile(), input, n, out);
        }
        // Pass 1: G persistent blocks fold q or q + 1 data blocks each into G values, in block
        // order; pass 2 (Matrix) folds those.
        let entry = match self.kind {
            Kind::DiffWarps => REDUCE_DIFF_WARPS,
            _ => REDUCE_MATRIX_PERSISTENT,
        };
        let kernel = d.kernel(&self.spec(), entry, self.block, smem, self.name)?;
        let data_blocks = n.div_ceil(self.tile()).max(1);
        let grid = d.persistent_grid(&kernel, self.grid)?.min(data_blocks);
        let (q, r) = (data_blocks / grid, data_blocks % grid);
        let second = self.second_pass(Algorithm::Matrix.name());
        let [a, b] = pass_regions(grid, second.tile(), size);
        let regions = d.carve(&[grid as usize * size, a, b, size])?;
        let out = out.unwrap_or(regions[3]);
        let partials = if grid == 1 { out } else { regions[0] };
        let args = PersistentArgs {
            r#in: input,
            n,
            q,
            r,
            out: partials,
        };
        d.launch(&kernel, grid, args)?;
        if grid > 1 {
            let pass = d.kernel(
                &second.spec(),
                REDUCE_MATRIX,
                second.block,
                second.slots() * size,
                second.name,
            )?;
            let passes = [regions[1], regions[2]];
            d.passes(&pass, second.tile(), regions[0], grid, passes, out)?;
        }
        Ok(out)
    }
}

/// `MatrixSeg`, `PersistentMatrixSeg` or `DiffWarps16Seg`.
pub(super) fn segmented(algorithm: SegAlgorithm, knobs: &Knobs, shape: SegShape) -> Result<Paper> {
    let (kind, width) = match algorithm {
        SegAlgorithm::MatrixSeg => (Kind::Matrix, MATRIX_WIDTH),
        SegAlgorithm::PersistentMatrixSeg => (Kind::Persistent, MATRIX_WIDTH),
        _ => (Kind::DiffWarps, DIFF_WARPS_SEG_WIDTH),
    };
    let persistent = SegAlgorithm::PersistentMatrixSeg.name();
    let matrix = Matrix::new(kind, algorithm.name(), persistent, knobs, width)?;
    let pass = |m: &Matrix, entry| {
        PaperPass::per_block(m.seg_spec(), entry, m.name, m.block, m.tile(), m.slots())
    };
    let first = match kind {
        Kind::Matrix => pass(&matrix, REDUCE_MATRIX_SEG),
        _ => PaperPass::persistent(
            matrix.seg_spec(),
            match kind {
                Kind::DiffWarps => REDUCE_DIFF_WARPS_SEG,
                _ => REDUCE_MATRIX_SEG_PERSISTENT,
            },
            matrix.name,
            matrix.block,
            matrix.tile(),
            matrix.slots(),
            matrix.grid,
        ),
    };
    let next = match kind {
        Kind::Matrix => first.clone(),
        _ => pass(
            &matrix.second_pass(SegAlgorithm::MatrixSeg.name()),
            REDUCE_MATRIX_SEG,
        ),
    };
    Ok(Paper::new(shape, first, next))
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (REDUCE_MATRIX.name, PassArgs::PARAMS),
        (REDUCE_MATRIX_PERSISTENT.name, PersistentArgs::PARAMS),
        (REDUCE_DIFF_WARPS.name, PersistentArgs::PARAMS),
        (REDUCE_MATRIX_SEG.name, SegPassArgs::PARAMS),
        (
            REDUCE_MATRIX_SEG_PERSISTENT.name,
            PersistentSegPassArgs::PARAMS,
        ),
        (REDUCE_DIFF_WARPS_SEG.name, PersistentSegPassArgs::PARAMS),
    ]
}
