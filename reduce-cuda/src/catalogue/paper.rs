//! The procedure the paper's five segmented algorithms share (paper IV): the output is filled
//! with the identity first; CSR offsets are turned into one owner per item; the first pass
//! reduces the items, writing every segment that ends inside a data block into the output and
//! leaving one (value, owner) pair per block for the segment still open at its end; further
//! passes reduce those pairs the same way until one block is left.
//!
//! ORDER INVARIANT. The pairs a pass leaves are in block order, so each is (earlier items) of
//! its owner relative to the next pass's later pairs: every combine of a segment's pieces is
//! (earlier, later). A piece that reaches the output is combined with what the output holds
//! in the kernel's order (appended or prepended, see the kernels' heads).

use super::plan::{SegPlan, SegShape};
use super::tuning::PAPER_SEG_BLOCKS_PER_SM;
use crate::device::{kernel_signature, Entry};
use crate::dispatch::segmented::SegJob;
use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::KernelSpec;

kernel_signature! {
    /// A pass over (value, owner) pairs: segments that end inside the block go to `out`, the
    /// block's last piece to `next_vals` / `next_owner` at the block's index.
    pub(super) struct SegPassArgs { r#in, owner, n, segments, out, next_vals, next_owner }
}
kernel_signature! {
    /// A persistent first pass: block b folds data blocks `b * q + min(b, r)` on, q or q + 1
    /// of them, leaving one (value, owner) pair.
    pub(super) struct PersistentSegPassArgs { r#in, owner, n, segments, q, r, out, next_vals, next_owner }
}

/// How a pass's kernel covers the data blocks.
#[derive(Clone, Debug)]
enum Blocks {
    /// One CUDA block per data block.
    PerBlock(Entry<SegPassArgs>),
    /// A persistent grid (the caller's, else the device's resident blocks), each block
    /// folding consecutive data blocks.
    Persistent(Entry<PersistentSegPassArgs>, Option<u32>),
}

/// One pass's kernel: its spec and entry point, threads, data block and shared-memory values.
#[derive(Clone, Debug)]
pub(super) struct PaperPass {
    spec: KernelSpec,
    blocks: Blocks,
    name: &'static str,
    block: u32,
    tile: u64,
    /// Values (and owners) the block keeps in shared memory.
    slots: usize,
}

impl PaperPass {
    /// A pass with one CUDA block per data block.
    pub fn per_block(
        spec: KernelSpec,
        entry: Entry<SegPassArgs>,
        name: &'static str,
        block: u32,
        tile: u64,
        slots: usize,
    ) -> Self {
        PaperPass {
            spec,
            blocks: Blocks::PerBlock(entry),
            name,
            block,
            tile,
            slots,
        }
    }

    /// A persistent pass (the first pass of PersistentMatrixSeg and DiffWarps16Seg).
    pub fn persistent(
        spec: KernelSpec,
        entry: Entry<PersistentSegPassArgs>,
        name: &'static str,
        block: u32,
        tile: u64,
        slots: usize,
        grid: Option<u32>,
    ) -> Self {
        PaperPass {
            spec,
            blocks: Blocks::Persistent(entry, grid),
            name,
            block,
            tile,
            slots,
        }
    }

    fn smem(&self, m_size: usize) -> usize {
        pass_smem(self.slots, m_size)
    }
}

/// A pass's shared memory for `slots` values of `m_size` bytes: the values, 16 bytes of
/// alignment slack and the owners.
pub(super) fn pass_smem(slots: usize, m_size: usize) -> usize {
    slots * m_size + 16 + slots * 4
}

/// A paper algorithm: its first pass and the pass that reduces the pairs (the same kernel for
/// the per-block algorithms, a MatrixSeg pass for the persistent ones).
pub(super) struct Paper {
    shape: SegShape,
    first: PaperPass,
    next: PaperPass,
}

impl Paper {
    pub fn new(shape: SegShape, first: PaperPass, next: PaperPass) -> Self {
        Paper { shape, first, next }
    }
}

impl SegPlan for Paper {
    fn variants(&self) -> Vec<KernelSpec> {
        vec![self.first.spec.clone()]
    }

    fn dynamic_smem(&self) -> usize {
        self.first.smem(self.shape.items.m_size)
    }

    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()> {
        if validate {
            d.validate_exact(job)?;
        }
        let size = self.shape.items.m_size;
        let n = job.n();
        let segments = job.segments as u64;
        let data_blocks = n.div_ceil(self.first.tile).max(1);
        let resident_cap = d.device.info.multiprocessors as u64 * PAPER_SEG_BLOCKS_PER_SM;
        let first_blocks = match self.first.blocks {
            Blocks::Persistent(..) => resident_cap.min(data_blocks),
            Blocks::PerBlock(_) => data_blocks,
        };
        let second_blocks = first_blocks.div_ceil(self.next.tile).max(1);
        // The (value, owner) pairs of the passes, and, for CSR offsets, one owner per item.
        let mut sizes = vec![
            first_blocks as usize * size,
            first_blocks as usize * 4,
            second_blocks as usize * size,
            second_blocks as usize * 4,
        ];
        if job.layout.offsets_form {
            sizes.push(n as usize * 4);
        }
        let regions = d.carve(&sizes)?;
        let pairs = [(regions[0], regions[1]), (regions[2], regions[3])];

        d.fill_identity(job)?;
        let owner = if job.layout.offsets_form {
            d.owners_of_offsets(job, regions[4])?;
            regions[4]
        } else {
            job.layout.ptr
        };

        // The first pass.
        let first = &self.first;
        let smem = first.smem(size);
        let (vals, owners_out) = pairs[0];
        let len = match first.blocks {
            Blocks::PerBlock(entry) => {
                let kernel = d
                    .device
                    .kernel(&job.module, entry, first.block, smem, first.name)?;
                let args = SegPassArgs {
                    r#in: job.items.0,
                    owner,
                    n,
                    segments,
                    out: job.out,
                    next_vals: vals,
                    next_owner: owners_out,
                };
                d.launch(&kernel, data_blocks, args)?;
                data_blocks
            }
            Blocks::Persistent(entry, requested) => {
                let kernel = d
                    .device
                    .kernel(&job.module, entry, first.block, smem, first.name)?;
                let grid = d
                    .persistent_grid(&kernel, requested)?
                    .min(data_blocks)
                    .min(resident_cap);
                let args = PersistentSegPassArgs {
                    r#in: job.items.0,
                    owner,
                    n,
                    segments,
                    q: data_blocks / grid,
                    r: data_blocks % grid,
                    out: job.out,
                    next_vals: vals,
                    next_owner: owners_out,
                };
                d.launch(&kernel, grid, args)?;
                grid
            }
        };

        // Further passes over the (value, owner) pairs, until one block writes the last piece.
        let next = &self.next;
        let Blocks::PerBlock(entry) = next.blocks else {
            unreachable!("the pairs are reduced one data block per CUDA block")
        };
        let kernel = d.kernel(&next.spec, entry, next.block, next.smem(size), next.name)?;
        if len > 1 {
            d.pass_loop(len, next.tile, |d, index, count, blocks| {
                let ((src_vals, src_owners), (dst_vals, dst_owners)) =
                    (pairs[index % 2], pairs[(index + 1) % 2]);
                d.launch(
                    &kernel,
                    blocks,
                    SegPassArgs {
                        r#in: src_vals,
                        owner: src_owners,
                        n: count,
                        segments,
                        out: job.out,
                        next_vals: dst_vals,
                        next_owner: dst_owners,
                    },
                )
            })?;
        }
        Ok(())
    }
}
