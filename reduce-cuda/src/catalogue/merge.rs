//! The merge-path family (ours): `SegMerge` splits the items *and* the segment ends evenly over
//! threads (merge path), streams both through a pipeline of shared-memory tiles (`cp.async`,
//! so sm_80 or newer), and joins the pieces with the same segmented scans and block records as
//! SegShuffle: one launch, each segment written once, a cost that depends on N and the segment
//! count only. It indexes with 64 bits, so it takes any number of items and segments, and its
//! shared memory is dynamic, so it takes values of any size. The order invariant is at the head
//! of kernels/seg_merge.cu.

use super::algorithm::SegAlgorithm;
use super::config::{
    check_block, check_grid, check_power_of_two, check_runs_on, invalid, refuse, Knobs,
};
use super::plan::{SegPlan, SegShape};
use super::tuning::{
    merge_steps, ANY_DEVICE_BLOCK_SMEM, MERGE_BLOCK, MERGE_SMEM_BUDGET, MERGE_STAGES,
};
use crate::device::{kernel_signature, DeviceInfo, Entry};
use crate::dispatch::segmented::{SegJob, NO_INDEX};
use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::{Family, KernelSpec};

kernel_signature! {
    /// One value per segment into `out`; block records in `rec_vals` / `rec_meta`; with
    /// `validate`, the fused layout check's status into `status_out`.
    struct SegMergeArgs {
        r#in, n, index, segments, out, rec_vals, rec_meta, ticket, status, validate, status_out,
    }
}

const REDUCE_SEG_MERGE: Entry<SegMergeArgs> = Entry::new("reduce_seg_merge");

/// `SegMerge` with every parameter fixed, for its shape.
#[derive(Clone, Copy, Debug)]
pub(super) struct Merge {
    shape: SegShape,
    block: u32,
    /// Path steps (items plus segment ends) per thread and tile.
    steps: u32,
    /// Tiles of each stream held in shared memory.
    stages: u32,
    grid: Option<u32>,
}

/// SegMerge's dynamic shared memory: the item ring, the key ring (offsets or owners) and two
/// output stages, each 16-byte aligned; each ring with a 128-byte line of slack (alignment
/// shift and swizzle; see kernels/seg_merge.cu).
fn smem(block: u32, steps: u32, stages: u32, shape: SegShape) -> usize {
    let round16 = |b: usize| b.div_ceil(16) * 16;
    let tile = block as usize * steps as usize;
    let ring = stages as usize * tile;
    round16(ring * shape.items.in_size + 128)
        + round16(ring * shape.index_bytes() + 128)
        + 2 * tile * shape.items.m_size
}

/// A bound on SegMerge's static shared memory (kernels/seg_merge.cu: the rings' barriers, the
/// block scan's `r_seg` values and the warps' values of two tiles, the coordinates, the entry
/// value, and two kilobytes for the helpers' own: NVRTC's count for 256-byte values is 19,824
/// bytes at 64 threads, this 21,584).
pub(super) fn static_smem(block: u32, stages: u32, shape: SegShape) -> usize {
    let (m, seg) = (shape.items.m_size.max(1), shape.items.flagged_value_bytes());
    16 * stages as usize + 2 * 33 * seg + 2 * (block as usize / 32) * m + 2 * m + 2048
}

/// `SegMerge`; for large items the defaults the caller left open shrink until the rings and
/// stages fit [`MERGE_SMEM_BUDGET`] and the whole block [`ANY_DEVICE_BLOCK_SMEM`] (values past
/// about 420 bytes cannot: their static arrays alone take a third of it, and the device decides;
/// past about 700 bytes the static arrays pass what a block may declare, and the kernel's load
/// is an `InvalidConfig` that says so: `Auto` then takes another algorithm, [`Merge::static_fits`]).
pub(super) fn plan(knobs: &Knobs, shape: SegShape) -> Result<Merge> {
    let name = SegAlgorithm::SegMerge.name();
    refuse(name, "matrix_width", knobs.matrix_width)?;
    refuse(name, "producers", knobs.producers)?;
    let mut block = check_block(name, knobs.block.unwrap_or(MERGE_BLOCK))?;
    let items = shape.items;
    let mut steps = knobs
        .items_per_thread
        .unwrap_or_else(|| merge_steps(items.in_size.max(items.m_size)));
    let mut stages = knobs.stages.unwrap_or(MERGE_STAGES);
    check_power_of_two(name, block, "")?;
    if !steps.is_power_of_two() || steps > 64 {
        return Err(invalid(
            name,
            format!("items_per_thread (path steps) {steps} must be a power of two up to 64"),
        ));
    }
    if !(3..=8).contains(&stages) {
        return Err(invalid(
            name,
            format!("stages {stages} must be between 3 and 8"),
        ));
    }
    // Within the budget, and with the static arrays within what every device allows a block.
    let fits = |block, steps, stages| {
        let dynamic = smem(block, steps, stages, shape);
        dynamic <= MERGE_SMEM_BUDGET
            && dynamic + static_smem(block, stages, shape) <= ANY_DEVICE_BLOCK_SMEM
    };
    while !fits(block, steps, stages) {
        if knobs.items_per_thread.is_none() && steps > 1 {
            steps /= 2;
        } else if knobs.block.is_none() && block > 32 {
            block /= 2;
        } else if knobs.stages.is_none() && stages > 3 {
            stages -= 1;
        } else {
            break; // the device's limit decides (an InvalidConfig at launch)
        }
    }
    Ok(Merge {
        shape,
        block,
        steps,
        stages,
        grid: check_grid(name, knobs.grid)?,
    })
}

impl Merge {
    /// Whether the kernel's static arrays (by [`static_smem`]'s model, which counts a little
    /// more than NVRTC) stay within what a block may declare: past it the kernel does not
    /// compile (values of about 700 bytes at 32 threads), and `Auto` takes another algorithm.
    pub(super) fn static_fits(&self) -> bool {
        static_smem(self.block, self.stages, self.shape) <= super::shuffle::STATIC_SMEM_LIMIT
    }
}

impl SegPlan for Merge {
    fn limits(&self) -> Option<(u64, u64)> {
        None
    }

    fn variants(&self) -> Vec<KernelSpec> {
        let shape = self.shape;
        vec![KernelSpec::new(
            Family::SegMerge,
            &[
                ("R_BLOCK", self.block),
                ("R_STEPS", self.steps),
                ("R_RING", self.stages),
                ("R_OFFSETS", shape.offsets_form as u32),
                ("R_IDX64", shape.wide as u32),
                ("R_PLAIN_ITEMS", (shape.item_shift != 0) as u32),
            ],
        )]
    }

    fn dynamic_smem(&self) -> usize {
        smem(self.block, self.steps, self.stages, self.shape)
    }

    fn check_device(&self, info: &DeviceInfo) -> Result<()> {
        check_runs_on(SegAlgorithm::SegMerge, info)
    }

    /// One launch. Its status word is 0 when the fused layout check failed (meaningful when
    /// `validate`); with `validate` the kernel's last block also stores it into the pinned
    /// host word, and a bad layout is then found by the exact check.
    fn launch(&self, d: &mut Dispatch, job: &SegJob, validate: bool) -> Result<()> {
        let name = SegAlgorithm::SegMerge.name();
        let kernel = d.device.kernel(
            &job.module,
            REDUCE_SEG_MERGE,
            self.block,
            self.dynamic_smem(),
            name,
        )?;
        let path = job.n() + job.segments as u64;
        let tiles = path.div_ceil(self.block as u64 * self.steps as u64);
        // At most 2^30 path steps per block: the kernel's ring offsets are 32-bit.
        let grid = d
            .persistent_grid(&kernel, self.grid)?
            .min(tiles)
            .max(1)
            .max(path.div_ceil(1 << 30))
            .min(tiles);
        let m_size = self.shape.items.m_size;
        let regions = d.carve(&[2 * grid as usize * m_size, 3 * grid as usize * 8])?;
        let status_out = d.status_out(validate)?;
        let args = SegMergeArgs {
            r#in: job.items.0,
            n: job.n(),
            index: job.layout.ptr,
            segments: job.segments as u64,
            out: job.out,
            rec_vals: regions[0],
            rec_meta: regions[1],
            ticket: d.ticket(),
            status: d.seg_status(),
            validate: validate as u64,
            status_out,
        };
        d.launch(&kernel, grid, args)?;
        if validate && d.poll_status()? != NO_INDEX {
            return d.confirm_bad_layout(job, name);
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![(REDUCE_SEG_MERGE.name, SegMergeArgs::PARAMS)]
}
