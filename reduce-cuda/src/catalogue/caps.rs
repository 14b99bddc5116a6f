//! Register caps: a kernel whose throughput comes from the blocks resident on an SM (each
//! holding its tile's loads in flight, or its SM slot while it waits) is compiled with
//! `__launch_bounds__(block, R_MIN_BLOCKS)` where ptxas, left alone, takes more registers than
//! the SM's threads and shared memory need. The rule is the same for every family that caps
//! (the scans' `scan_tiles`: docs/decisions/0063-scan-register-caps.md; SegHeads' fold:
//! docs/decisions/0081-seg-heads-register-cap.md). Others fix their bound by a rule of their
//! own: SegShuffle and SegPipeline (`tuning::seg_shuffle_blocks_per_sm`), the portable
//! segmented kernel (`catalogue/portable.rs`) and SegBlocks, whose budget is for the loads a
//! lane holds in flight (`tuning::seg_blocks_min_blocks`; at one-warp blocks it is the SM's
//! 32 blocks that set it).

use crate::device::{Entry, Module};
use crate::dispatch::Loader;
use crate::error::Result;
use crate::jit::{JitReport, KernelSpec};
use std::sync::Arc;

/// The module of the kernels `spec(cap)` gives, `entry` (launched with `block` threads and
/// `dynamic_smem` bytes) capped for `cap` resident blocks per SM (`spec(0)`: uncapped). The
/// uncapped module, unless it holds fewer blocks than the SM's threads, blocks and shared memory
/// allow (`room`, the carveout's reserve included): then `entry` capped for `room`, then for
/// `room - 1` — the first that compiles without local memory and holds more blocks than the
/// uncapped one (the occupancy API's word). At most two compilations more, cached like any
/// other kernel. A cap of 1 (`__launch_bounds__(block, 1)`) is never asked for (the uncapped
/// kernel holds at least one block): it is no cap, and ptxas takes more registers under it than
/// under none.
pub(super) fn capped_module<A>(
    loader: &Loader,
    entry: Entry<A>,
    block: u32,
    dynamic_smem: usize,
    algorithm: &'static str,
    spec: impl Fn(u32) -> KernelSpec,
) -> Result<(Arc<Module>, JitReport)> {
    let uncapped = loader.module(&spec(0))?;
    let device = loader.device;
    let info = &device.info;
    let per_sm = |module: &Arc<Module>| -> Result<u64> {
        let kernel = device.kernel(module, entry, block, dynamic_smem, algorithm)?;
        Ok(device.resident_blocks(&kernel)? / info.multiprocessors.max(1) as u64)
    };
    let have = per_sm(&uncapped.0)?;
    let per_block =
        uncapped.0.entry(entry.name)?.static_smem + dynamic_smem + info.reserved_shared_per_block;
    let room = [
        info.threads_per_sm / block,
        info.blocks_per_sm,
        (info.shared_per_sm / per_block.max(1)) as u32,
    ]
    .into_iter()
    .min()
    .unwrap_or(0) as u64;
    let mut report = uncapped.1;
    for cap in (have + 1..=room).rev().take(2) {
        let Ok((module, compiled)) = loader.module(&spec(cap as u32)) else {
            break;
        };
        report = report.then(compiled);
        if !module.uses_local_memory(entry.name)? && per_sm(&module)? > have {
            return Ok((module, report));
        }
    }
    Ok((uncapped.0, report))
}
