//! The kernels of `kernels/shard.cu` the cluster launches: their argument lists, entry points,
//! and how they are loaded and queued (compiled for a monoid like every kernel, and cached).

use super::error::Result;
use crate::device::{kernel_signature, Entry, KernelArgs};
use crate::gpu::Gpu;
use crate::jit::{Family, KernelSpec, Own};
use reduce_core::CudaMonoid;

kernel_signature! {
    /// `out[i] = owner[i] - base` for the `n` owners of a shard.
    pub(super) struct RebaseArgs { owner, n, base, out }
}
kernel_signature! {
    /// `out[0]` = the fold of the `count` values at `partials`, left to right (one thread).
    pub(super) struct ShardFoldArgs { partials, count, out }
}
kernel_signature! {
    /// One rank's part of an exchange over peer access (see `peer.rs`).
    pub(super) struct ExchangeArgs {
        rank, world, root, seq, send, bytes, recv, out, mailbox, mailboxes, timeout_ns, abort,
        status,
    }
}

pub(super) const SHARD_REBASE_OWNER: Entry<RebaseArgs> = Entry::new("shard_rebase_owner");
pub(super) const SHARD_FOLD: Entry<ShardFoldArgs> = Entry::new("shard_fold");
pub(super) const SHARD_EXCHANGE: Entry<ExchangeArgs> = Entry::new("shard_exchange");

/// Queues entry `entry` of `kernels/shard.cu`, compiled for monoid `M` (cached like every
/// kernel), on `gpu`: a grid-stride launch over `count` elements, or one block. No fault check
/// follows (the launch stays queued): an index fault in `shard_fold`'s combines is not reported
/// (the ranks' own reductions, which combine the same kind of values, are checked).
pub(super) fn launch_shard<M: CudaMonoid, A: KernelArgs>(
    gpu: &Gpu,
    entry: Entry<A>,
    block: u32,
    count: Option<u64>,
    args: A,
) -> Result<()> {
    let program = Own::<M>::new();
    let mut d = gpu.dispatch(&program)?;
    let (module, _) = d.module(&KernelSpec::new(Family::Shard, &[]))?;
    let kernel = gpu.device().kernel(&module, entry, block, 0, entry.name)?;
    match count {
        Some(count) => d.launch_over(&kernel, count, args)?,
        None => d.launch(&kernel, 1, args)?,
    }
    Ok(())
}

/// Loads entry `entry` of `kernels/shard.cu` for monoid `M` on `gpu` without launching it.
///
/// The exchange kernels of ranks in one process wait for each other, and the driver may load a
/// kernel lazily at its first launch — which can wait for the context's running kernels, among
/// them an exchange still waiting for another rank's part. The rule: between queuing the first
/// rank's part of an exchange and the last rank's, no host call may wait on a context (a lazy
/// load among them); so each kernel launched in that window is loaded beforehand.
pub(super) fn load_shard<M: CudaMonoid, A>(gpu: &Gpu, entry: Entry<A>, block: u32) -> Result<()> {
    let program = Own::<M>::new();
    let (module, _) = gpu
        .loader(&program)
        .module(&KernelSpec::new(Family::Shard, &[]))?;
    gpu.device().kernel(&module, entry, block, 0, entry.name)?;
    Ok(())
}

#[cfg(test)]
pub(crate) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        (SHARD_REBASE_OWNER.name, RebaseArgs::PARAMS),
        (SHARD_FOLD.name, ShardFoldArgs::PARAMS),
        (SHARD_EXCHANGE.name, ExchangeArgs::PARAMS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::codegen::assemble;
    use reduce_core::Sum;

    /// NVRTC compiles the shard kernel (fails without NVRTC when `REDUCE_REQUIRE_NVRTC=1`).
    #[test]
    fn the_shard_kernel_compiles() {
        if !crate::jit::compile::nvrtc_available() {
            assert!(
                std::env::var("REDUCE_REQUIRE_NVRTC").map_or(true, |v| v != "1"),
                "REDUCE_REQUIRE_NVRTC=1 but libnvrtc could not be loaded"
            );
            eprintln!("skipped: no NVRTC");
            return;
        }
        fn compile<M: CudaMonoid>() {
            let source = assemble(&KernelSpec::new(Family::Shard, &[]), &Own::<M>::new());
            assert!(source.text.contains("shard_rebase_owner"));
            assert!(source.text.contains("shard_fold"));
            assert!(source.text.contains("shard_exchange"));
            let cubin =
                crate::jit::compile::compile_cubin(&source, "sm_90").expect("NVRTC compiles");
            assert!(!cubin.is_empty());
        }
        compile::<Sum<u32>>();
        compile::<reduce_core::Min<f64>>();
    }
}
