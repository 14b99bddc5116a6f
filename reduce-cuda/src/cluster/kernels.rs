//! The kernels of `kernels/shard.cu` and `kernels/shard_join.cu` the cluster launches: their
//! argument lists, entry points, and how they are loaded and queued (compiled for a monoid like
//! every kernel, and cached).

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

kernel_signature! {
    /// `out[0]` = the portable join of the `world` gathered records of `record_bytes` bytes
    /// (runs of `run` values, `max_blocks` block slots), its nodes in `scratch` (`capacity` of
    /// them); each record's status into `statuses` (`kernels/shard_join.cu`).
    pub(super) struct PortableJoinArgs {
        records, world, record_bytes, run, max_blocks, scratch, capacity, out, statuses,
    }
}

/// The nodes the portable join keeps waiting for their right siblings: at most two per level
/// of a 64-bit run index, and a few more.
pub(crate) const JOIN_NODES: usize = 136;

/// The bytes of the portable join's scratch of `nodes` nodes of monoid `M`: the values, then
/// (16-byte aligned) as many u64 indices and u32 levels (`kernels/shard_join.cu`).
pub(crate) fn join_scratch_bytes<M>(nodes: usize) -> usize {
    let values = (nodes * std::mem::size_of::<M>()).next_multiple_of(16);
    values + nodes * (8 + 4)
}

/// An entry point of the cluster's kernels and the file it is in.
#[derive(Clone, Copy)]
pub(super) struct ShardEntry<A> {
    family: Family,
    entry: Entry<A>,
}

impl<A> ShardEntry<A> {
    const fn new(family: Family, name: &'static str) -> Self {
        ShardEntry {
            family,
            entry: Entry::new(name),
        }
    }
}

pub(super) const SHARD_REBASE_OWNER: ShardEntry<RebaseArgs> =
    ShardEntry::new(Family::Shard, "shard_rebase_owner");
pub(super) const SHARD_FOLD: ShardEntry<ShardFoldArgs> =
    ShardEntry::new(Family::Shard, "shard_fold");
pub(super) const SHARD_EXCHANGE: ShardEntry<ExchangeArgs> =
    ShardEntry::new(Family::Shard, "shard_exchange");
pub(super) const SHARD_PORTABLE_JOIN: ShardEntry<PortableJoinArgs> =
    ShardEntry::new(Family::ShardJoin, "shard_portable_join");

/// Queues entry `entry` of `kernels/shard.cu` or `shard_join.cu`, compiled for monoid `M`
/// (cached like every kernel), on `gpu`: a grid-stride launch over `count` elements, or one
/// block. No fault check follows (the launch stays queued): the caller checks the combines of a
/// monoid whose code can fault once every rank's launches are queued (`take_shard_faults`).
pub(super) fn launch_shard<M: CudaMonoid, A: KernelArgs>(
    gpu: &Gpu,
    shard_entry: ShardEntry<A>,
    block: u32,
    count: Option<u64>,
    args: A,
) -> Result<()> {
    let ShardEntry { family, entry } = shard_entry;
    let program = Own::<M>::new();
    let mut d = gpu.dispatch(&program)?;
    let (module, _) = d.module(&KernelSpec::new(family, &[]))?;
    let kernel = gpu.device().kernel(&module, entry, block, 0, entry.name)?;
    match count {
        Some(count) => d.launch_over(&kernel, count, args)?,
        None => d.launch(&kernel, 1, args)?,
    }
    Ok(())
}

/// The fault records of the cluster's kernels of `family` for monoid `M` on `gpu` (which
/// combined the ranks' partials: `shard_fold`, the peer exchange's fold, `shard_portable_join`),
/// read and cleared once their launches completed: the GPU's error for the first fault. For a
/// monoid whose code can fault (`M::CAN_FAULT`; no other records one).
pub(super) fn take_shard_faults<M: CudaMonoid>(gpu: &Gpu, family: Family) -> Result<()> {
    let program = Own::<M>::new();
    let mut d = gpu.dispatch(&program)?;
    let (module, _) = d.module(&KernelSpec::new(family, &[]))?;
    d.watch(&module);
    Ok(d.finish(Ok(()))?)
}

/// Loads entry `entry` of the cluster's kernels for monoid `M` on `gpu` without launching it.
///
/// The exchange kernels of ranks in one process wait for each other, and the driver may load a
/// kernel lazily at its first launch — which can wait for the context's running kernels, among
/// them an exchange still waiting for another rank's part. The rule: between queuing the first
/// rank's part of an exchange and the last rank's, no host call may wait on a context (a lazy
/// load among them); so each kernel launched in that window is loaded beforehand.
pub(super) fn load_shard<M: CudaMonoid, A>(
    gpu: &Gpu,
    shard_entry: ShardEntry<A>,
    block: u32,
) -> Result<()> {
    let ShardEntry { family, entry } = shard_entry;
    let program = Own::<M>::new();
    let (module, _) = gpu.loader(&program).module(&KernelSpec::new(family, &[]))?;
    gpu.device().kernel(&module, entry, block, 0, entry.name)?;
    Ok(())
}

#[cfg(test)]
pub(crate) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    vec![
        (SHARD_REBASE_OWNER.entry.name, RebaseArgs::PARAMS),
        (SHARD_FOLD.entry.name, ShardFoldArgs::PARAMS),
        (SHARD_EXCHANGE.entry.name, ExchangeArgs::PARAMS),
        (SHARD_PORTABLE_JOIN.entry.name, PortableJoinArgs::PARAMS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jit::codegen::assemble;
    use reduce_core::Sum;

    /// NVRTC compiles the cluster's kernels (fails without NVRTC when
    /// `REDUCE_REQUIRE_NVRTC=1`).
    #[test]
    fn the_shard_kernels_compile() {
        if !crate::jit::compile::nvrtc_available() {
            assert!(
                std::env::var("REDUCE_REQUIRE_NVRTC").map_or(true, |v| v != "1"),
                "REDUCE_REQUIRE_NVRTC=1 but libnvrtc could not be loaded"
            );
            eprintln!("skipped: no NVRTC");
            return;
        }
        fn compile<M: CudaMonoid>() {
            for (family, entries) in [
                (
                    Family::Shard,
                    &["shard_rebase_owner", "shard_fold", "shard_exchange"][..],
                ),
                (Family::ShardJoin, &["shard_portable_join"][..]),
            ] {
                let source = assemble(&KernelSpec::new(family, &[]), &Own::<M>::new());
                assert!(entries.iter().all(|e| source.text.contains(e)));
                let cubin =
                    crate::jit::compile::compile_cubin(&source, "sm_90").expect("NVRTC compiles");
                assert!(!cubin.is_empty());
            }
        }
        compile::<Sum<u32>>();
        compile::<reduce_core::Min<f64>>();
    }
}
