//! Launches of each segmented family: grid sizes, scratch regions, passes.

use super::plan::{SegPlan, Shape};
use super::{Items, Layout};
use crate::error::{DriverContext, Result};
use crate::gpu::{Gpu, Scratch};
use crate::jit::LoadedKernel;
use reduce_core::CudaMonoid;
use std::sync::Arc;

/// One segmented reduction, planned.
pub(crate) struct Job {
    pub plan: SegPlan,
    pub shape: Shape,
    pub items: Items,
    pub layout: Layout,
    pub segments: usize,
    /// Device address of the output (`segments` values).
    pub out: u64,
    /// The loaded module of the plan's kernel (reading `M` items, or lifting another type);
    /// it also holds the shared helpers (fill, validation, conversion).
    pub module: Arc<LoadedKernel>,
}

impl Job {
    /// Whether a validated SegShuffle launch checks the layout early ([`Check::Early`]): CSR
    /// offsets, at most [`EARLY_PER_THREAD`] per thread of a block.
    pub fn checks_early(&self) -> bool {
        self.layout.offsets_form && self.layout.len <= EARLY_PER_THREAD * self.plan.block() as usize
    }
}

const ALIGN: usize = 256;

/// Carves 256-byte-aligned regions out of one scratch allocation.
pub(crate) struct Carver {
    sizes: Vec<usize>,
}

impl Carver {
    pub fn new() -> Self {
        Carver { sizes: Vec::new() }
    }
    pub fn add(&mut self, bytes: usize) -> usize {
        self.sizes.push(bytes.max(1).div_ceil(ALIGN) * ALIGN);
        self.sizes.len() - 1
    }
    /// Allocates (or reuses) the scratch and returns each region's address.
    pub fn carve(&self, gpu: &Gpu, scratch: &mut Scratch) -> Result<Vec<u64>> {
        let base = scratch.region(gpu, self.sizes.iter().sum())?;
        let mut at = base;
        Ok(self
            .sizes
            .iter()
            .map(|size| {
                let here = at;
                at += *size as u64;
                here
            })
            .collect())
    }
}

/// The offsets per thread of one block that [`Check::Early`] takes at most (kernels/
/// seg_common.cuh, `R_EARLY_PER_THREAD`).
const EARLY_PER_THREAD: usize = 16;

/// What a SegShuffle launch checks of its layout (the kernel's `check`, kernels/seg_common.cuh
/// `R_CHECK_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing: a trusted call.
    None = 0,
    /// Fused into the launch's reads; the status comes from its last block.
    Fused = 1,
    /// CSR offsets, few of them: the exact check by the grid's last block before its tiles,
    /// which stores the first error key into the pinned word while the launch still runs (the
    /// call need not wait for the launch's end, which cost a validated call 5-6 us more than a
    /// trusted one on 44 us calls: runs 159 and 168).
    Early = 2,
}

impl Gpu {
    /// The grid of a persistent single-launch kernel: the caller's, or SMs x resident blocks;
    /// never more blocks than tiles.
    fn persistent_grid(
        &self,
        f: &cudarc::driver::CudaFunction,
        plan: &SegPlan,
        smem: usize,
        tiles: u64,
    ) -> Result<u64> {
        let grid = match plan.requested_grid() {
            Some(g) => g as u64,
            None => self.full_grid(f, plan.block(), smem)? as u64,
        };
        Ok(grid.min(tiles).max(1))
    }

    /// SegMerge: one launch. Its status word (the scratch's `seg_status`, all ones between
    /// launches: the last block resets it, so no memset is queued): 0 when the fused layout check
    /// failed (meaningful when `validate`); with `validate` the kernel's last block also stores
    /// it into the scratch's pinned host word, which `poll_pinned_status` reads.
    pub(crate) fn seg_merge(&self, job: &Job, scratch: &mut Scratch, validate: bool) -> Result<()> {
        let f = job.module.function(job.plan.kernel(job.shape).1)?;
        let smem = job.plan.dynamic_smem(job.shape);
        self.prepare_smem(&f, job.plan.algorithm().name(), smem)?;
        let path = job.items.len as u64 + job.segments as u64;
        let tiles = path.div_ceil(job.plan.data_block());
        // At most 2^30 path steps per block: the kernel's ring offsets are 32-bit.
        let grid = self
            .persistent_grid(&f, &job.plan, smem, tiles)?
            .max(path.div_ceil(1 << 30))
            .min(tiles);
        let mut carve = Carver::new();
        let vals = carve.add(2 * grid as usize * job.shape.m_size);
        let meta = carve.add(3 * grid as usize * 8);
        let regions = carve.carve(self, scratch)?;
        let status_out = self.status_out(scratch, validate)?;
        let stream = &self.inner.stream;
        let args = [
            job.items.ptr,
            job.items.len as u64,
            job.layout.ptr,
            job.segments as u64,
            job.out,
            regions[vals],
            regions[meta],
            scratch.ticket.device_ptr(stream),
            scratch.seg_status.device_ptr(stream),
            validate as u64,
            status_out,
        ];
        self.launch(&f, grid, job.plan.block(), smem, &args)
    }

    /// SegShuffle: one launch. Its status word (the scratch's `seg_status`, all ones between
    /// launches: the last block resets it, so no memset is queued): the first bad owner index
    /// (owner form), or, offsets form with [`Check::Fused`], 0 when its reads of the offsets
    /// saw a bad entry or did not cover them all (u64::MAX: neither). Unless [`Check::None`],
    /// the last block first stores it into the scratch's pinned host word (mapped for the
    /// device): `poll_pinned_status` reads it as soon as it lands, with no copy queued behind
    /// the kernel. With [`Check::Early`] the pinned word receives the offsets' first error key
    /// instead (see [`Check::Early`]).
    pub(crate) fn seg_shuffle(&self, job: &Job, scratch: &mut Scratch, check: Check) -> Result<()> {
        let f = job.module.function(job.plan.kernel(job.shape).1)?;
        let smem = job.plan.dynamic_smem(job.shape);
        self.prepare_smem(&f, job.plan.algorithm().name(), smem)?;
        let n = job.items.len as u64;
        let tiles = n.div_ceil(job.plan.data_block()).max(1);
        let grid = self.persistent_grid(&f, &job.plan, smem, tiles)?;
        let mut carve = Carver::new();
        let vals = carve.add(2 * grid as usize * job.shape.m_size);
        let meta = carve.add(3 * grid as usize * 8);
        let regions = carve.carve(self, scratch)?;
        // Segments per tile on average: sizes the L2 prefetch of each block's first tile's offsets.
        let segments = job.segments as u64;
        let estimate = (segments * job.plan.data_block()).div_ceil(n.max(1));
        let status_out = self.status_out(scratch, check != Check::None)?;
        let stream = &self.inner.stream;
        let args = [
            job.items.ptr,
            n,
            job.layout.ptr,
            segments,
            job.out,
            regions[vals],
            regions[meta],
            scratch.ticket.device_ptr(stream),
            scratch.seg_status.device_ptr(stream),
            estimate,
            check as u64,
            status_out,
        ];
        self.launch(&f, grid, job.plan.block(), smem, &args)
    }

    /// A grid-stride launch of 256-thread blocks over `count` elements.
    pub(crate) fn launch_over(
        &self,
        f: &cudarc::driver::CudaFunction,
        count: u64,
        args: &[u64],
    ) -> Result<()> {
        let grid = count
            .div_ceil(256)
            .clamp(1, self.info().multiprocessors as u64 * 16);
        self.launch(f, grid, 256, 0, args)
    }

    /// Fills the job's output with the identity.
    pub(crate) fn fill_identity(&self, job: &Job) -> Result<()> {
        let f = job.module.function("seg_fill_identity")?;
        let count = job.segments as u64;
        self.launch_over(&f, count, &[job.out, count])
    }

    /// A single-launch kernel's `status_out` argument: the device address of the scratch's
    /// pinned host word when the call waits for the status (`validate`), else null.
    fn status_out(&self, scratch: &mut Scratch, validate: bool) -> Result<u64> {
        if validate {
            self.arm_pinned_status(scratch)
        } else {
            Ok(0)
        }
    }

    /// Sets the 8-byte status word at `status` to all ones, "no bad index" (stream-ordered).
    pub(crate) fn clear_status(&self, status: u64) -> Result<()> {
        // SAFETY: `status` is an 8-byte scratch region.
        unsafe {
            cudarc::driver::result::memset_d8_async(status, 0xff, 8, self.inner.stream.cu_stream())
        }
        .during("setting the validation status")
    }

    /// The paper's algorithms: identity-filled output, then passes of (value, owner) pairs.
    pub(crate) fn seg_paper<M: CudaMonoid>(&self, job: &Job, scratch: &mut Scratch) -> Result<()> {
        let plan = &job.plan;
        let shape = job.shape;
        let size = shape.m_size;
        let n = job.items.len as u64;
        let segments = job.segments as u64;
        let first = if plan.persistent() {
            (self.info().multiprocessors as u64 * 32).min(n.div_ceil(plan.data_block()).max(1))
        } else {
            n.div_ceil(plan.data_block()).max(1)
        };
        let second = first.div_ceil(plan.next_pass().data_block()).max(1);
        let mut carve = Carver::new();
        let owners = job.layout.offsets_form.then(|| carve.add(n as usize * 4));
        let pair_regions = [
            (
                carve.add(first as usize * size),
                carve.add(first as usize * 4),
            ),
            (
                carve.add(second as usize * size),
                carve.add(second as usize * 4),
            ),
        ];
        let regions = carve.carve(self, scratch)?;
        let pairs = pair_regions.map(|(v, o)| (regions[v], regions[o]));

        self.fill_identity(job)?;
        let owner = match owners {
            None => job.layout.ptr,
            Some(r) => {
                let f = job.module.function("seg_offsets_to_owner")?;
                self.launch_over(&f, n, &[job.layout.ptr, segments, regions[r], n])?;
                regions[r]
            }
        };

        // Pass 1.
        let f = job.module.function(plan.kernel(shape).1)?;
        let smem = plan.dynamic_smem(shape);
        self.prepare_smem(&f, plan.algorithm().name(), smem)?;
        let data_blocks = n.div_ceil(plan.data_block()).max(1);
        let (vals, owners_out) = pairs[0];
        let mut args = vec![job.items.ptr, owner, n, segments];
        let grid = if plan.persistent() {
            let full = match plan.requested_grid() {
                Some(g) => g as u64,
                None => self.full_grid(&f, plan.block(), smem)? as u64,
            };
            let grid = full
                .min(data_blocks)
                .min(self.info().multiprocessors as u64 * 32);
            args.extend([data_blocks / grid, data_blocks % grid]); // q, r
            grid
        } else {
            data_blocks
        };
        args.extend([job.out, vals, owners_out]);
        self.launch(&f, grid, plan.block(), smem, &args)?;
        let mut len = grid;

        // Further passes over the (value, owner) pairs, until one block writes the last piece.
        let next = plan.next_pass();
        let (spec, entry) = next.kernel(shape);
        let (kernel, _) = self.kernel::<M>(&spec)?;
        let g = kernel.function(entry)?;
        let smem = next.dynamic_smem(shape);
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
                    src_vals, src_owners, len, segments, job.out, dst_vals, dst_owners,
                ],
            )?;
            len = blocks;
            pass += 1;
        }
        Ok(())
    }
}
