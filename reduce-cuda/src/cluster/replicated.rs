//! [`Replicated`]: the result of [`Cluster::reduce_into`] on every local rank's GPU, and the
//! buffers each rank's calls reuse (the default mode's partials, the portable grouping's
//! records).

use super::agreement::signed_statuses;
use super::error::{ClusterError, Result};
use super::kernels::{join_scratch_bytes, JOIN_NODES};
use super::{check_owned, Cluster};
use crate::device::DeviceVec;
use crate::gpu::Gpu;
use reduce_core::portable::record::{record_bytes, MAX_BLOCKS};
use reduce_core::portable::run_len;
use reduce_core::CudaMonoid;

/// Results that stay on the devices: the reduced value on every local rank's GPU, for
/// pipelines of [`Cluster::reduce_into`] calls that do not wait. Made by
/// [`Cluster::replicated`]; read back with [`Cluster::read`].
pub struct Replicated<M> {
    pub(super) world: usize,
    pub(super) parts: Vec<ReplicatedPart<M>>,
    /// The reductions queued into it (which of the two partials or records the next one
    /// writes).
    pub(super) calls: u64,
    /// Whether the last call's statuses are the default mode's, signed with the monoid's
    /// fingerprint (`agreement::signed_statuses`), rather than the portable join's.
    pub(super) signed: bool,
}

pub(super) struct ReplicatedPart<M> {
    pub(super) rank: usize,
    /// The result (one value).
    pub(super) value: DeviceVec<M>,
    /// The fold of this rank's shard, one value in each: the calls use them in turn (an
    /// exchange over peer access reads a rank's partial until the next exchange).
    pub(super) partials: [DeviceVec<M>; 2],
    /// Every rank's partial, in rank order.
    pub(super) gathered: DeviceVec<M>,
    /// This rank's two statuses in the default mode, signed (`agreement::signed_statuses`).
    pub(super) signs: DeviceVec<u64>,
    /// Every rank's status (with more than one process).
    pub(super) statuses: DeviceVec<u64>,
    /// The portable grouping's records and buffers (`portable_into.rs`), with more than one
    /// rank.
    pub(super) portable: Option<PortableRecords<M>>,
}

impl<M> std::fmt::Debug for Replicated<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replicated")
            .field("type", &std::any::type_name::<M>())
            .field(
                "local",
                &self.parts.iter().map(|p| p.rank).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<M> Replicated<M> {
    /// Local rank `rank`'s copy of the result (one value, on its GPU), for device code that
    /// consumes it without a read back. It is unchecked: where a rank's reduction failed, the
    /// value may hold a stale partial or the previous call's result while `reduce_into` still
    /// returned `Ok` on the other ranks (it queues, it does not wait); [`Cluster::read`] checks
    /// every rank's status before it returns the value.
    pub fn value(&self, rank: usize) -> Option<&DeviceVec<M>> {
        self.parts.iter().find(|p| p.rank == rank).map(|p| &p.value)
    }
}

/// What a local rank's copy of a [`Replicated`] keeps for the portable grouping
/// (`portable_into.rs`), allocated with it, so that a call never fails to take part in the
/// exchange for want of memory.
pub(super) struct PortableRecords<M> {
    /// The shard lengths its records' headers were written for (none yet: empty).
    pub(super) lens: Vec<usize>,
    /// Its record, twice: the calls use them in turn.
    pub(super) records: [DeviceVec<u8>; 2],
    /// Every rank's record, in rank order.
    pub(super) gathered: DeviceVec<u8>,
    /// The blocks' values, reduced here (aligned for `M`) and then copied into the record.
    pub(super) blocks: DeviceVec<M>,
    /// The join's nodes (`kernels/shard_join.cu`).
    pub(super) scratch: DeviceVec<u8>,
}

impl<M: CudaMonoid> PortableRecords<M> {
    /// The buffers of a cluster of `world` ranks on `gpu` (no header written yet).
    fn alloc(gpu: &Gpu, world: usize) -> Result<Self> {
        let bytes = record_bytes::<M>(run_len::<M>());
        Ok(PortableRecords {
            lens: Vec::new(),
            records: [gpu.zeroed::<u8>(bytes)?, gpu.zeroed::<u8>(bytes)?],
            gathered: gpu.zeroed::<u8>(bytes * world)?,
            blocks: gpu.zeroed::<M>(MAX_BLOCKS)?,
            scratch: gpu.zeroed::<u8>(join_scratch_bytes::<M>(JOIN_NODES))?,
        })
    }
}

impl Cluster {
    /// Device buffers for [`Cluster::reduce_into`] results of monoid `M` (the identity until
    /// the first reduction). With more than one rank they include the portable grouping's: per
    /// rank, `world + 2` records of about `64 + 2·64 + 128·(16 + S)` bytes for monoids of `S`
    /// bytes (2.6 KB for f32, 135 KB for 1 KiB), and 2–3 times the record for the join.
    pub fn replicated<M: CudaMonoid>(&self) -> Result<Replicated<M>> {
        let mut parts = Vec::with_capacity(self.members.len());
        for m in &self.members {
            parts.push(ReplicatedPart {
                rank: m.rank,
                value: m.gpu.identities::<M>(1)?,
                partials: [m.gpu.identities::<M>(1)?, m.gpu.identities::<M>(1)?],
                gathered: m.gpu.identities::<M>(self.world)?,
                signs: m.gpu.upload(&signed_statuses::<M>())?,
                statuses: m.gpu.zeroed::<u64>(self.world)?,
                portable: match self.world {
                    1 => None,
                    world => Some(PortableRecords::alloc(&m.gpu, world)?),
                },
            });
        }
        Ok(Replicated {
            world: self.world,
            parts,
            calls: 0,
            signed: false,
        })
    }

    pub(super) fn check_replicated<M>(&self, out: &Replicated<M>) -> Result<()> {
        let fits = out.world == self.world
            && out.parts.len() == self.members.len()
            && self
                .members
                .iter()
                .zip(&out.parts)
                .all(|(m, p)| p.rank == m.rank && check_owned(&m.gpu, &p.value).is_ok());
        if !fits {
            return Err(ClusterError::Mismatch {
                what: "the output",
                reason: "it was made by another cluster".into(),
            });
        }
        Ok(())
    }
}
