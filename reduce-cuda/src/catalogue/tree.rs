//! The tree family (paper Alg. 1 and 2, and their segmented forms, paper IV.A): `Tb2` folds a
//! data block of D = 2B values with an interleaved left-storing tree in shared memory;
//! `Tb4Warp` folds D = 4B values with left-storing trees inside each warp (`__syncwarp()`
//! between steps). Both are multi-pass: each pass leaves one value per data block, in order.
//! `Tb2Seg` and `Tb4WarpSeg` push a right child into the output where siblings' owners differ
//! (after Zhou et al.) and run the paper's segmented procedure (`paper.rs`).

use super::algorithm::{Algorithm, SegAlgorithm};
use super::config::{check_block, check_power_of_two, invalid, refuse, Knobs};
use super::paper::{pass_smem, Paper, PaperPass, SegPassArgs};
use super::plan::{PlainPlan, SegShape};
use super::tuning::PAPER_BLOCK;
use crate::device::Entry;
use crate::dispatch::{Dispatch, PassArgs};
use crate::error::Result;
use crate::jit::{Family, Items, KernelSpec};

const REDUCE_TB2: Entry<PassArgs> = Entry::new("reduce_tb2");
const REDUCE_TB4_WARP: Entry<PassArgs> = Entry::new("reduce_tb4_warp");
const REDUCE_TB2_SEG: Entry<SegPassArgs> = Entry::new("reduce_tb2_seg");
const REDUCE_TB4_WARP_SEG: Entry<SegPassArgs> = Entry::new("reduce_tb4_warp_seg");

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tb2,
    Tb4Warp,
}

/// A tree algorithm with its block size.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tree {
    kind: Kind,
    name: &'static str,
    block: u32,
}

impl Tree {
    fn new(kind: Kind, name: &'static str, knobs: &Knobs) -> Result<Tree> {
        refuse(name, "matrix_width", knobs.matrix_width)?;
        refuse(name, "producers", knobs.producers)?;
        refuse(name, "items_per_thread", knobs.items_per_thread)?;
        refuse(name, &format!("grid ({name} is multi-pass)"), knobs.grid)?;
        let block = check_block(name, knobs.block.unwrap_or(PAPER_BLOCK))?;
        match kind {
            Kind::Tb2 => {
                check_power_of_two(name, block, " (D = 2B is a full tree)")?;
            }
            Kind::Tb4Warp if block > 256 => {
                return Err(invalid(
                    name,
                    format!(
                        "block size {block} is past 256: warp 0 reduces the D / 32 = B / 8 \
                         data-warp values and holds at most 32"
                    ),
                ));
            }
            Kind::Tb4Warp => {}
        }
        Ok(Tree { kind, name, block })
    }

    /// D, the values of one data block.
    fn tile(&self) -> u64 {
        match self.kind {
            Kind::Tb2 => 2 * self.block as u64,
            Kind::Tb4Warp => 4 * self.block as u64,
        }
    }

    /// The values the block keeps in shared memory, counted in values of `items`' size: Tb2's
    /// data block with one pad slot per 32, its slots [`slot_pitch`] bytes apart (bank
    /// conflicts); Tb4Warp's data block and one value per warp.
    fn slots(&self, items: &Items) -> usize {
        match self.kind {
            Kind::Tb2 => {
                let d = 2 * self.block as usize;
                let size = items.m_size.max(1);
                ((d + d / 32) * slot_pitch(items)).div_ceil(size)
            }
            Kind::Tb4Warp => 4 * self.block as usize + 32,
        }
    }

    fn defines(&self) -> [(&'static str, u32); 1] {
        [("R_BLOCK", self.block)]
    }
}

/// The bytes from one of Tb2's slots to the next (kernels/common.cuh's `R_SLOT_PITCH`): the
/// value's size, and one alignment unit more for values of 64 bytes or more that are an even
/// number of units long, so that consecutive slots' same words lie in different banks.
pub(super) fn slot_pitch(items: &Items) -> usize {
    let (size, align) = (items.m_size, items.m_align.max(1));
    if size >= 64 && (size / align) % 2 == 0 {
        size + align
    } else {
        size
    }
}

/// `Tb2` or `Tb4Warp`.
pub(super) fn plain(algorithm: Algorithm, knobs: &Knobs) -> Result<Tree> {
    let kind = match algorithm {
        Algorithm::Tb2 => Kind::Tb2,
        _ => Kind::Tb4Warp,
    };
    Tree::new(kind, algorithm.name(), knobs)
}

impl PlainPlan for Tree {
    fn kernels(&self) -> Vec<KernelSpec> {
        let family = match self.kind {
            Kind::Tb2 => Family::Tb2,
            Kind::Tb4Warp => Family::Tb4Warp,
        };
        vec![KernelSpec::new(family, &self.defines())]
    }

    fn dynamic_smem(&self, items: &Items) -> usize {
        self.slots(items) * items.m_size
    }

    fn launch(&self, d: &mut Dispatch, input: u64, n: u64, out: Option<u64>) -> Result<u64> {
        let smem = self.dynamic_smem(&d.items());
        let entry = match self.kind {
            Kind::Tb2 => REDUCE_TB2,
            Kind::Tb4Warp => REDUCE_TB4_WARP,
        };
        let kernel = d.kernel(&self.kernels()[0], entry, self.block, smem, self.name)?;
        d.multi_pass(&kernel, self.tile(), input, n, out)
    }
}

/// The largest `Tb2Seg` block (32 to 1024 threads) whose pass keeps `items`' values within
/// `budget` bytes of shared memory: segmented `Auto`'s block for values too large for SegShuffle
/// and SegMerge.
pub(super) fn tb2_seg_block_within(items: &Items, budget: usize) -> Option<u32> {
    (5..=10).rev().map(|k| 1u32 << k).find(|&block| {
        let tree = Tree {
            kind: Kind::Tb2,
            name: SegAlgorithm::Tb2Seg.name(),
            block,
        };
        pass_smem(tree.slots(items), items.m_size.max(1)) <= budget
    })
}

/// `Tb2Seg` or `Tb4WarpSeg`: every pass is the same kernel.
pub(super) fn segmented(algorithm: SegAlgorithm, knobs: &Knobs, shape: SegShape) -> Result<Paper> {
    let (kind, entry) = match algorithm {
        SegAlgorithm::Tb2Seg => (Kind::Tb2, REDUCE_TB2_SEG),
        _ => (Kind::Tb4Warp, REDUCE_TB4_WARP_SEG),
    };
    let tree = Tree::new(kind, algorithm.name(), knobs)?;
    let pass = PaperPass::per_block(
        KernelSpec::new(Family::SegTree, &tree.defines()),
        entry,
        algorithm.name(),
        tree.block,
        tree.tile(),
        tree.slots(&shape.items),
    );
    Ok(Paper::new(shape, pass.clone(), pass))
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (REDUCE_TB2.name, PassArgs::PARAMS),
        (REDUCE_TB4_WARP.name, PassArgs::PARAMS),
        (REDUCE_TB2_SEG.name, SegPassArgs::PARAMS),
        (REDUCE_TB4_WARP_SEG.name, SegPassArgs::PARAMS),
    ]
}
