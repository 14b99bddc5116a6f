//! Plain reductions over shards: each rank reduces its shard with the single-GPU kernels
//! (`Gpu::reduce_into`), the partials are all-gathered as bytes, and every rank folds them in
//! rank order — on the host ([`Cluster::reduce`]) or on its device ([`Cluster::reduce_into`],
//! `shard_fold` of `kernels/shard.cu`), with the same grouping. With every rank in this process
//! and peer access ([`super::Exchange::PeerAccess`]), [`Cluster::reduce`] gathers nothing: each
//! rank's partial lands in pinned host memory, and the host folds them.
//!
//! Order: rank r's partial is the fold of items `range(r)`, the ranges are contiguous and in
//! rank order, and the all-gather (or the host) puts partial r at index r; folding the partials
//! left to right is the fold of the whole sequence (associativity alone; no commutativity).

use super::comm::{bind, Op};
use super::data::Sharded;
use super::error::{ClusterError, Result};
use super::kernels::{
    launch_shard, load_shard, take_shard_faults, ShardFoldArgs, SHARD_EXCHANGE, SHARD_FOLD,
};
use super::replicated::Replicated;
use super::{agreement, Cluster, State, Transport};
use crate::backend::on_host;
use crate::catalogue::Config;
use crate::device::DeviceVec;
use crate::gpu::Gpu;
use crate::jit::Family;
use reduce_core::{fold, CudaMonoid, DeviceCopy};
use std::any::TypeId;
use std::sync::Mutex;

/// Device buffers of the host-returning reduction, per local rank: the shard's partial, the
/// rank's signed statuses (`agreement::signed_statuses`) and the gathered statuses (with more than one
/// process) and partials.
struct PlainBuffers<M> {
    partials: Vec<DeviceVec<M>>,
    signs: Vec<DeviceVec<u64>>,
    gathered: Vec<DeviceVec<u8>>,
}

/// Bytes before the gathered partials: the ranks' statuses, 256-byte aligned.
fn status_bytes(world: usize) -> usize {
    (8 * world).div_ceil(256) * 256
}

impl Cluster {
    /// The fold of every item of `xs`, left to right over the whole sequence: bit for bit
    /// `reduce_core::fold` of the concatenated shards for any associative monoid, the same on
    /// every rank. Collective; waits for the result (at most [`Cluster::timeout`]).
    ///
    /// Each rank reduces its shard with `config`; the partials are folded in rank order on the
    /// host: read from pinned host memory where every rank is in this process and the exchange
    /// is [`super::Exchange::PeerAccess`], all-gathered through NCCL (as bytes) otherwise.
    /// With `Config::portable` the result has `reduce_core::portable::fold`'s bits, the same as
    /// one GPU's and the CPU's for any shards (each rank's shard in aligned blocks of runs, the
    /// runs that straddle shards folded from their items on the host: `portable.rs`).
    pub fn reduce<M: CudaMonoid>(&self, xs: &Sharded<M>, config: impl Into<Config>) -> Result<M> {
        let config = config.into();
        self.check_sharded(xs, "the items")?;
        let mut state = self.lock()?;
        if config.portable && self.world > 1 {
            let result = self.reduce_portable(&mut state, xs, config);
            return self.abort_on_failure(&mut state, result);
        }
        if matches!(state.transport, Transport::Peer(_)) {
            let result = self.reduce_here(xs, config);
            return self.abort_on_failure(&mut state, result);
        }
        let mut buffers = self.plain_buffers::<M>(&mut state)?;
        let result = self.reduce_with(&mut state, xs, config, &mut buffers);
        state.plain.insert(TypeId::of::<M>(), Box::new(buffers));
        result
    }

    /// [`Cluster::reduce`] with every rank in this process: each rank's thread reduces its shard
    /// into pinned host memory and waits for it (`Gpu::reduce`), and the host folds the
    /// partials.
    fn reduce_here<M: CudaMonoid>(&self, xs: &Sharded<M>, config: Config) -> Result<M> {
        let partials = self.crew.run(self.members.len(), |i| -> Result<M> {
            let gpu = &self.members[i].gpu;
            bind(gpu)?;
            Ok(gpu.reduce(xs.local(i), config)?)
        });
        let partials = partials.into_iter().collect::<Result<Vec<M>>>()?;
        Ok(on_host::<M, _>(|| fold(&partials))?)
    }

    fn reduce_with<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        config: Config,
        buffers: &mut PlainBuffers<M>,
    ) -> Result<M> {
        let size = std::mem::size_of::<M>();
        let with_status = !self.all_local();
        let head = if with_status {
            status_bytes(self.world)
        } else {
            0
        };
        let mut errors = Vec::with_capacity(self.members.len());
        for (i, m) in self.members.iter().enumerate() {
            bind(&m.gpu)?;
            match m
                .gpu
                .reduce_into(xs.local(i), &mut buffers.partials[i], config)
            {
                Ok(()) => errors.push(None),
                Err(e) if !with_status => return Err(e.into()),
                Err(e) => errors.push(Some(ClusterError::from(e))),
            }
        }
        let ops: Vec<Vec<Op>> = (0..self.members.len())
            .map(|i| {
                let recv = buffers.gathered[i].address();
                let mut ops = Vec::with_capacity(2);
                if with_status {
                    let failed = errors[i].is_some() as u64;
                    ops.push(Op::AllGather {
                        send: buffers.signs[i].address() + 8 * failed,
                        recv,
                        bytes: 8,
                    });
                }
                ops.push(Op::AllGather {
                    send: buffers.partials[i].address(),
                    recv: recv + head as u64,
                    bytes: size,
                });
                ops
            })
            .collect();
        self.collective(state, &ops, "the all-gather of the partials", true)?;
        let first = &self.members[0].gpu;
        let bytes = read_bytes(
            first,
            buffers.gathered[0].address(),
            head + self.world * size,
        )?;
        if with_status {
            let statuses = bytes[..8 * self.world]
                .chunks(8)
                .map(|c| u64::from_ne_bytes(c.try_into().expect("8 bytes")));
            let statuses = agreement::unsign(statuses, agreement::monoid_fingerprint::<M>());
            self.first_failure(statuses, &mut errors, "reduce")?;
        }
        let partials: Vec<M> = bytes[head..]
            .chunks(size)
            .map(value_from_device_bytes::<M>)
            .collect();
        Ok(on_host::<M, _>(|| fold(&partials))?)
    }

    /// This process's buffers for monoid `M` (taken out of the cache; put them back after use).
    fn plain_buffers<M: CudaMonoid>(&self, state: &mut State) -> Result<PlainBuffers<M>> {
        if let Some(b) = state.plain.remove(&TypeId::of::<M>()) {
            if let Ok(b) = b.downcast::<PlainBuffers<M>>() {
                return Ok(*b);
            }
        }
        let bytes = status_bytes(self.world) + self.world * std::mem::size_of::<M>();
        let mut buffers = PlainBuffers {
            partials: Vec::new(),
            signs: Vec::new(),
            gathered: Vec::new(),
        };
        for m in &self.members {
            buffers.partials.push(m.gpu.identities::<M>(1)?);
            buffers
                .signs
                .push(m.gpu.upload(&agreement::signed_statuses::<M>())?);
            buffers.gathered.push(m.gpu.zeroed::<u8>(bytes)?);
        }
        Ok(buffers)
    }
}

impl Cluster {
    /// Queues the reduction of `xs` into `out` on every local rank and returns without waiting:
    /// each rank reduces its shard, the partials are all-gathered, and each rank folds them in
    /// rank order on its own GPU (one thread, left to right: the same bits as the host fold of
    /// [`Cluster::reduce`]). Collective. The values are equal on every rank; [`Cluster::read`]
    /// waits and reads one (and reports a failure of any rank).
    ///
    /// With `Config::portable` over several ranks every copy has `reduce_core::portable::fold`'s
    /// bits (each rank's summary of its shard written on its GPU, gathered, joined on every GPU:
    /// `portable_into.rs`); a call whose shard layout differs from the last one into `out`
    /// waits (for the calls in flight, then to write the summaries' headers).
    ///
    /// For a monoid whose device code can fault (`CudaMonoid::CAN_FAULT`) the call waits after
    /// all, as [`Gpu::reduce_into`] does: a fault in the combines of the ranks' partials is the
    /// GPU's error for it ([`crate::Error::DeviceFault`], [`crate::Error::DivisionFault`]).
    pub fn reduce_into<M: CudaMonoid>(
        &self,
        xs: &Sharded<M>,
        out: &mut Replicated<M>,
        config: impl Into<Config>,
    ) -> Result<()> {
        let config = config.into();
        self.check_sharded(xs, "the items")?;
        self.check_replicated(out)?;
        let mut state = self.lock()?;
        let (queued, combines) = if config.portable && self.world > 1 {
            let result = self.reduce_into_portable(&mut state, xs, out, config);
            (self.abort_on_failure(&mut state, result), Family::ShardJoin)
        } else if matches!(state.transport, Transport::Peer(_)) {
            let result = self.reduce_into_here(&mut state, xs, out, config);
            (result, Family::Shard)
        } else {
            let result = self.reduce_into_nccl(&mut state, xs, out, config);
            (result, Family::Shard)
        };
        if M::CAN_FAULT {
            // Read (and cleared) after a failure too: folds it queued must not leave a record
            // for the next call. The failure comes first.
            let checked = self.check_combines(&mut state, out, combines);
            queued?;
            return checked;
        }
        queued
    }

    /// For a monoid whose code can fault, once a [`Cluster::reduce_into`] is queued: waits
    /// for it, then reads and clears the fault records of its kernels of `combines` on every
    /// local rank (each folded the same partials). A rank's failure comes first (with one
    /// process per GPU, from the gathered statuses: the others folded its stale partial), then
    /// the first fault.
    fn check_combines<M: CudaMonoid>(
        &self,
        state: &mut State,
        out: &Replicated<M>,
        combines: Family,
    ) -> Result<()> {
        self.wait(state, "checking the combines' fault records")?;
        let mut first = Ok(());
        for m in &self.members {
            let read = bind(&m.gpu).and_then(|()| take_shard_faults::<M>(&m.gpu, combines));
            if first.is_ok() {
                first = read;
            }
        }
        if !self.all_local() {
            let statuses = self.statuses_of(out)?;
            self.first_failure(statuses, &mut [], "reduce_into")?;
        }
        first
    }

    /// [`Cluster::reduce_into`] through NCCL (several processes, or GPUs without peer access).
    fn reduce_into_nccl<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        out: &mut Replicated<M>,
        config: Config,
    ) -> Result<()> {
        let with_status = !self.all_local();
        let mut failure = None;
        let mut failed = Vec::with_capacity(self.members.len());
        for (i, m) in self.members.iter().enumerate() {
            bind(&m.gpu)?;
            let partial = m
                .gpu
                .reduce_into(xs.local(i), &mut out.parts[i].partials[0], config)
                .map_err(ClusterError::from)
                // The fold behind the exchange is loaded before it is queued (see `load_shard`):
                // a lazy load may wait for the all-gather, and so for a peer that never comes.
                .and_then(|()| load_shard::<M, _>(&m.gpu, SHARD_FOLD, 32));
            match partial {
                Ok(()) => failed.push(0u64),
                Err(e) if !with_status => return Err(e),
                Err(e) => {
                    failure.get_or_insert(e);
                    failed.push(1);
                }
            }
        }
        let size = std::mem::size_of::<M>();
        let ops: Vec<Vec<Op>> = (0..self.members.len())
            .map(|i| {
                let part = &out.parts[i];
                let mut ops = Vec::with_capacity(2);
                if with_status {
                    ops.push(Op::AllGather {
                        send: part.signs.address() + 8 * failed[i],
                        recv: part.statuses.address(),
                        bytes: 8,
                    });
                }
                ops.push(Op::AllGather {
                    send: part.partials[0].address(),
                    recv: part.gathered.address(),
                    bytes: size,
                });
                ops
            })
            .collect();
        self.collective(state, &ops, "the all-gather of the partials", false)?;
        out.signed = true;
        if let Some(e) = failure {
            return Err(e);
        }
        for (m, part) in self.members.iter().zip(&out.parts) {
            bind(&m.gpu)?;
            let args = ShardFoldArgs {
                partials: part.gathered.address(),
                count: self.world as u64,
                out: part.value.address(),
            };
            launch_shard::<M, _>(&m.gpu, SHARD_FOLD, 32, None, args)?;
        }
        Ok(())
    }

    /// [`Cluster::reduce_into`] over peer access: every rank's launches are queued at once
    /// (one thread per rank): its reduction, its part of the exchange, its fold.
    fn reduce_into_here<M: CudaMonoid>(
        &self,
        state: &mut State,
        xs: &Sharded<M>,
        out: &mut Replicated<M>,
        config: Config,
    ) -> Result<()> {
        let Transport::Peer(peers) = &mut state.transport else {
            unreachable!("called for the peer-access exchange only")
        };
        let ranks = self.members.len();
        // The partial of the calls' turn; the turn passes once this call's exchange is queued
        // (a call that fails before it leaves the partial to the next one).
        let which = (out.calls % 2) as usize;
        // 1. The partials. A failure here has queued no exchange: no rank waits for another.
        //    (Each job gets its own rank's partial; the mutexes only carry the `&mut` through
        //    the crew's shared closure.)
        let partials: Vec<Mutex<&mut DeviceVec<M>>> = out
            .parts
            .iter_mut()
            .map(|p| Mutex::new(&mut p.partials[which]))
            .collect();
        let queued = self.crew.run(ranks, |i| -> Result<()> {
            let gpu = &self.members[i].gpu;
            bind(gpu)?;
            let mut partial = partials[i].lock().unwrap_or_else(|e| e.into_inner());
            gpu.reduce_into(xs.local(i), &mut **partial, config)?;
            // Loaded before the exchange is queued (see `load_shard`).
            load_shard::<M, _>(gpu, SHARD_EXCHANGE, super::peer::BLOCK)
        });
        drop(partials);
        queued.into_iter().collect::<Result<Vec<()>>>()?;
        // 2. The exchange of the partials and each rank's fold, in one launch per rank. A
        //    failure here may leave ranks waiting for this one: the cluster is aborted.
        let seq = peers.reserve(1);
        let peers = &*peers;
        let launched = self.crew.run(ranks, |i| -> Result<()> {
            let part = &out.parts[i];
            let op = Op::AllGather {
                send: part.partials[which].address(),
                recv: part.gathered.address(),
                bytes: std::mem::size_of::<M>(),
            };
            peers.launch::<M>(i, seq, op, Some(part.value.address()), self.timeout)
        });
        let launched = launched.into_iter().collect::<Result<Vec<()>>>();
        if launched.is_err() {
            state.abort();
        }
        out.calls += 1;
        launched.map(drop)
    }

    /// Waits (at most [`Cluster::timeout`]) for the queued reductions and returns the result;
    /// [`ClusterError::PeerFailed`] when a rank failed in the last [`Cluster::reduce_into`].
    pub fn read<M: CudaMonoid>(&self, out: &Replicated<M>) -> Result<M> {
        self.check_replicated(out)?;
        let mut state = self.lock()?;
        self.wait(&mut state, "waiting for a reduction")?;
        if !self.all_local() {
            let statuses = self.statuses_of(out)?;
            self.first_failure(statuses, &mut [], "reduce_into")?;
        }
        let first = &self.members[0].gpu;
        bind(first)?;
        Ok(first.download(&out.parts[0].value)?[0])
    }

    /// The ranks' statuses of the last [`Cluster::reduce_into`] into `out` (with more than one
    /// process; its calls have finished), as [`Cluster::first_failure`] reads them: the default
    /// mode's are signed with the monoid's fingerprint (`agreement::signed_statuses`), the portable
    /// join's are plain.
    fn statuses_of<M: CudaMonoid>(&self, out: &Replicated<M>) -> Result<Vec<u64>> {
        let first = &self.members[0].gpu;
        bind(first)?;
        let words = first.download(&out.parts[0].statuses)?;
        Ok(match out.signed {
            true => agreement::unsign(words, agreement::monoid_fingerprint::<M>()).collect(),
            false => words,
        })
    }
}

/// Copies `len` bytes from device address `ptr` of `gpu` (whose stream is idle).
fn read_bytes(gpu: &Gpu, ptr: u64, len: usize) -> Result<Vec<u8>> {
    bind(gpu)?;
    // SAFETY: `ptr` points at `len` readable device bytes (the caller's buffer).
    Ok(unsafe { gpu.device().copy_to_host::<u8>(ptr, len) }?)
}

/// A value from bytes a device wrote for an `M`.
pub(super) fn value_from_device_bytes<M: DeviceCopy>(bytes: &[u8]) -> M {
    // SAFETY: the bytes are those of an `M` produced on a device (a reduction's partial), and
    // `DeviceCopy` promises that every such byte pattern is a valid `M`.
    unsafe { reduce_core::portable::record::value_from_bytes(bytes) }
}
