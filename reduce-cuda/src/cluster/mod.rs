//! More than one GPU: ordered plain and segmented reductions over sharded data (feature `nccl`).
//!
//! A [`Cluster`] is a clique of ranks, one GPU each: either every GPU in this process
//! ([`Cluster::new`]) or one process per GPU, on one machine or many ([`Cluster::join`], with a
//! [`ClusterId`] the caller passes around — a file, an environment variable, MPI). The API is
//! the same; every call is collective: every rank makes the same calls in the same order. The
//! ranks exchange partials through peer-access kernels of this crate where every rank is in
//! this process and its GPUs can reach each other's memory, through NCCL otherwise
//! ([`Exchange`]); a launch thread per local rank queues the ranks' work at the same time.
//!
//! Data is sharded ([`Sharded`]): contiguous shards in rank order, uneven or empty, uploaded
//! from the host ([`Cluster::scatter`]) or made of each rank's own buffers ([`Cluster::shard`]).
//! Each rank reduces its shard with the single-GPU kernels; the exchange moves the partials, as
//! bytes (NCCL's own reduction operators are commutative and fixed), so the order — and with it
//! the result of a non-commutative monoid — comes from this crate. The result equals the
//! sequential fold of the whole sequence, bit for bit, for any associative monoid
//! ([`Cluster::reduce`]); segments that cross shard boundaries are joined in rank order
//! ([`Cluster::reduce_segments`], [`Cluster::reduce_by_owner`]). The host-side plan is
//! [`reduce_core::shard`].
//!
//! Nothing panics and nothing hangs: a missing `libnccl` (where NCCL is needed) is
//! [`ClusterError::NcclMissing`]; a missing peer, a wrong rank count or a peer that does not
//! make the same call is [`ClusterError::Timeout`] after [`Cluster::timeout`] (a watchdog
//! thread aborts NCCL's communicators when a call outlives it; the peer-access exchange's waits
//! on the device are bounded by it too). NVLink SHARP stays off: `NCCL_NVLS_ENABLE=0` is set
//! as the program loads, before `main`, unless the environment sets it.
//!
//! ```no_run
//! use reduce_cuda::cluster::Cluster;
//! use reduce_cuda::{Algorithm, Monoid};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
//! #[repr(C)]
//! #[monoid(identity = Affine { a: 1, b: 0 },
//!          combine = |l, r| Affine { a: l.a.wrapping_mul(r.a),
//!                                    b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
//! struct Affine { a: u32, b: u32 }
//!
//! # fn main() -> Result<(), reduce_cuda::cluster::ClusterError> {
//! let items: Vec<Affine> = (0..1_000_000u32).map(|i| Affine { a: 2 * i + 1, b: i }).collect();
//! let cluster = Cluster::new(&[0, 1])?;          // GPUs 0 and 1 of this process
//! let xs = cluster.scatter(&items)?;             // contiguous shards in rank order
//! assert_eq!(cluster.reduce(&xs, Algorithm::Auto)?, reduce_cuda::fold(&items));
//! # Ok(()) }
//! ```

mod agreement;
mod comm;
mod crew;
mod data;
mod error;
mod kernels;
#[cfg(test)]
pub(crate) use kernels::signatures;
pub(crate) use kernels::{join_scratch_bytes, JOIN_NODES};
mod peer;
mod plain;
mod portable;
mod portable_into;
mod replicated;
mod seg_portable;
mod segmented;
mod shard_ops;

pub use data::Sharded;
pub use error::{ClusterError, Result};
pub use reduce_core::shard::{SegmentPlan, ShardError, Shards};
pub use replicated::Replicated;
pub use segmented::{Placement, SegmentPart, Segments};

use crate::device::DeviceVec;
use crate::gpu::Gpu;
use comm::Nccl;
use crew::Crew;
use peer::Peers;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// A rank's status where the device join found its record of another monoid or of shards that
/// do not follow the rank before's (`kernels/shard_join.cu`, `R_JOIN_MISMATCH`); 1 is a rank that
/// failed, 0 a good one.
const STATUS_MISMATCH: u64 = 2;

/// The rendezvous of a one-process-per-GPU cluster: NCCL's 128-byte unique id. Rank 0 makes
/// one ([`ClusterId::new`]) and sends it to every other rank (as hex: [`ClusterId::to_hex`]).
/// NCCL's rendezvous runs in the process that made the id, so that process must stay alive
/// until every rank has joined (make it in rank 0, not in a helper that exits).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClusterId([u8; 128]);

impl std::fmt::Debug for ClusterId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClusterId({}…)", &self.to_hex()[..16])
    }
}

impl ClusterId {
    /// A new id (needs NCCL; [`ClusterError::NcclMissing`] without it).
    pub fn new() -> Result<ClusterId> {
        Ok(ClusterId(comm::unique_id()?))
    }

    /// The id's bytes.
    pub fn as_bytes(&self) -> &[u8; 128] {
        &self.0
    }

    /// An id from its 128 bytes.
    pub fn from_bytes(bytes: [u8; 128]) -> ClusterId {
        ClusterId(bytes)
    }

    /// The id as 256 lowercase hexadecimal digits (for an environment variable or a file).
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses [`ClusterId::to_hex`]'s text (surrounding whitespace is ignored).
    pub fn from_hex(text: &str) -> Result<ClusterId> {
        let text = text.trim();
        if text.len() != 256 || !text.is_ascii() {
            return Err(ClusterError::BadId {
                reason: format!("got {} characters", text.chars().count()),
            });
        }
        let mut bytes = [0u8; 128];
        for (i, byte) in bytes.iter_mut().enumerate() {
            let pair = &text[2 * i..2 * i + 2];
            // Digits only: `from_str_radix` also takes a sign ("+f").
            *byte = match u8::from_str_radix(pair, 16) {
                Ok(b) if pair.bytes().all(|c| c.is_ascii_hexdigit()) => b,
                _ => {
                    return Err(ClusterError::BadId {
                        reason: format!("{pair:?} at {} is not hexadecimal", 2 * i),
                    })
                }
            };
        }
        Ok(ClusterId(bytes))
    }
}

/// How the ranks of a [`Cluster`] exchange partials and records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Exchange {
    /// [`Exchange::PeerAccess`] where it is possible, [`Exchange::Nccl`] otherwise.
    #[default]
    Auto,
    /// Kernels that read the peers' memory directly, queued on the ranks' streams behind their
    /// reductions: every rank in this process (at most 32), and every pair of their GPUs able
    /// to access each other's memory (`cuDeviceCanAccessPeer`: NVLink or PCIe). NCCL is not
    /// needed. A synchronous [`Cluster::reduce`] folds the ranks' partials on the host, as
    /// they arrive in pinned memory, with no exchange at all.
    PeerAccess,
    /// NCCL collectives (the only exchange of a cluster of several processes).
    Nccl,
}

/// A clique of ranks, one GPU each; this process drives some of them (all, with
/// [`Cluster::new`]; one, with [`Cluster::join`]). `Send + Sync`; calls are serialised.
pub struct Cluster {
    /// First field: the communicators are aborted before the devices' contexts go.
    state: Mutex<State>,
    members: Vec<Member>,
    /// A launch thread per local rank after the first.
    crew: Crew,
    world: usize,
    timeout: Duration,
    /// NCCL's version, when the cluster uses NCCL.
    nccl_version: Option<i32>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("world", &self.world)
            .field(
                "local",
                &self
                    .members
                    .iter()
                    .map(|m| (m.rank, m.gpu.info().ordinal))
                    .collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .field("exchange", &self.exchange())
            .field("nccl", &self.nccl_version())
            .finish()
    }
}

/// A rank this process drives.
struct Member {
    rank: usize,
    gpu: Gpu,
}

/// The ranks' exchange: NCCL communicators (one per member) or peer access.
enum Transport {
    Nccl(Nccl),
    Peer(Peers),
}

/// What calls share: the exchange, whether it was aborted, and device buffers reused between
/// calls.
struct State {
    transport: Transport,
    aborted: bool,
    /// Per member: one u64 0 ("ok") and one u64 1 ("failed"), sent in status all-gathers.
    statuses: Vec<DeviceVec<u64>>,
    /// Per monoid type: the plain reduction's per-member buffers.
    plain: HashMap<TypeId, Box<dyn Any + Send>>,
}

impl State {
    /// Aborts the exchange (every communicator, or the waiting exchange kernels): the cluster
    /// cannot be used afterwards.
    fn abort(&mut self) {
        self.aborted = true;
        match &mut self.transport {
            Transport::Nccl(nccl) => nccl.abort(),
            Transport::Peer(peers) => {
                peers.abort();
            }
        }
    }
}

impl Cluster {
    /// The default [`Cluster::timeout`].
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

    /// Every listed GPU of this process, one rank each, in the order given (rank i drives
    /// `ordinals[i]`), with [`Exchange::Auto`]. Errors: the driver or NVRTC missing, or NCCL
    /// where it is needed; no such device; an ordinal listed twice; no ordinal.
    pub fn new(ordinals: &[usize]) -> Result<Cluster> {
        Cluster::new_with_timeout(ordinals, Cluster::DEFAULT_TIMEOUT)
    }

    /// [`Cluster::new`] with a timeout for every step, creation included.
    pub fn new_with_timeout(ordinals: &[usize], timeout: Duration) -> Result<Cluster> {
        Cluster::new_with_exchange(ordinals, Exchange::Auto, timeout)
    }

    /// [`Cluster::new_with_timeout`] with the exchange chosen: [`Exchange::PeerAccess`] is
    /// [`ClusterError::InvalidCluster`] where some pair of the GPUs cannot access each other's
    /// memory; [`Exchange::Nccl`] needs NCCL even where peer access would do.
    pub fn new_with_exchange(
        ordinals: &[usize],
        exchange: Exchange,
        timeout: Duration,
    ) -> Result<Cluster> {
        if ordinals.is_empty() {
            return Err(ClusterError::InvalidCluster {
                reason: "no GPU was listed".into(),
            });
        }
        for (i, o) in ordinals.iter().enumerate() {
            if ordinals[..i].contains(o) {
                return Err(ClusterError::InvalidCluster {
                    reason: format!("GPU {o} is listed twice (one rank per device)"),
                });
            }
        }
        if exchange == Exchange::Nccl {
            comm::load()?;
        }
        let ranks: Vec<(usize, usize)> = ordinals.iter().copied().enumerate().collect();
        let members = Cluster::open_members(&ranks)?;
        let peers = match exchange {
            Exchange::Nccl => None,
            _ => Peers::open(&members.iter().map(|m| &m.gpu).collect::<Vec<_>>())?,
        };
        match peers {
            Some(peers) => Cluster::assemble(
                members,
                ordinals.len(),
                Transport::Peer(peers),
                None,
                timeout,
            ),
            None if exchange == Exchange::PeerAccess => Err(ClusterError::InvalidCluster {
                reason: format!(
                    "GPUs {ordinals:?} cannot all access each other's memory (or are more than {})",
                    peer::MAX_RANKS
                ),
            }),
            None => {
                let version = comm::load()?;
                let id = ClusterId::new()?;
                Cluster::start(version, &id, ordinals.len(), members, timeout)
            }
        }
    }

    /// Rank `rank` of a `world`-rank cluster whose ranks are in several processes, on GPU
    /// `ordinal` of this process. Every rank passes the same `id` (made once by
    /// [`ClusterId::new`]) and `world`. Returns [`ClusterError::Timeout`] when the other ranks
    /// do not join within [`Cluster::DEFAULT_TIMEOUT`].
    pub fn join(id: &ClusterId, rank: usize, world: usize, ordinal: usize) -> Result<Cluster> {
        Cluster::join_with_timeout(id, rank, world, ordinal, Cluster::DEFAULT_TIMEOUT)
    }

    /// [`Cluster::join`] with a timeout for every step, joining included.
    pub fn join_with_timeout(
        id: &ClusterId,
        rank: usize,
        world: usize,
        ordinal: usize,
        timeout: Duration,
    ) -> Result<Cluster> {
        if rank >= world {
            return Err(ClusterError::InvalidCluster {
                reason: format!("rank {rank} is not below the world size {world}"),
            });
        }
        let version = comm::load()?;
        let members = Cluster::open_members(&[(rank, ordinal)])?;
        Cluster::start(version, id, world, members, timeout)
    }

    /// The GPUs of the local ranks, (rank, ordinal) each.
    fn open_members(ranks: &[(usize, usize)]) -> Result<Vec<Member>> {
        let mut members = Vec::with_capacity(ranks.len());
        for &(rank, ordinal) in ranks {
            members.push(Member {
                rank,
                gpu: Gpu::new(ordinal)?,
            });
        }
        Ok(members)
    }

    /// A cluster joined by NCCL: creates the communicators of the local ranks.
    fn start(
        version: i32,
        id: &ClusterId,
        world: usize,
        members: Vec<Member>,
        timeout: Duration,
    ) -> Result<Cluster> {
        if world > i32::MAX as usize {
            return Err(ClusterError::InvalidCluster {
                reason: format!("world size {world} is past NCCL's limit"),
            });
        }
        let nccl = Nccl::init(
            version,
            &id.0,
            world,
            &members.iter().map(|m| (m.rank, &m.gpu)).collect::<Vec<_>>(),
            timeout,
        )?;
        Cluster::assemble(
            members,
            world,
            Transport::Nccl(nccl),
            Some(version),
            timeout,
        )
    }

    fn assemble(
        members: Vec<Member>,
        world: usize,
        transport: Transport,
        nccl_version: Option<i32>,
        timeout: Duration,
    ) -> Result<Cluster> {
        let mut statuses = Vec::with_capacity(members.len());
        for m in &members {
            statuses.push(m.gpu.upload(&[0u64, 1])?);
        }
        Ok(Cluster {
            state: Mutex::new(State {
                transport,
                aborted: false,
                statuses,
                plain: HashMap::new(),
            }),
            crew: Crew::new(members.len()),
            members,
            world,
            timeout,
            nccl_version,
        })
    }

    /// The number of ranks in the cluster (all processes).
    pub fn world_size(&self) -> usize {
        self.world
    }

    /// The ranks this process drives, ascending.
    pub fn local_ranks(&self) -> Vec<usize> {
        self.members.iter().map(|m| m.rank).collect()
    }

    /// The GPU of local rank `rank` (`None` when this process does not drive it).
    pub fn gpu(&self, rank: usize) -> Option<&Gpu> {
        self.members.iter().find(|m| m.rank == rank).map(|m| &m.gpu)
    }

    /// How long a step may wait for the other ranks before it fails with
    /// [`ClusterError::Timeout`] (and aborts the cluster).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Sets [`Cluster::timeout`] for the calls that follow.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The NCCL version in use, as `major.minor.patch`; empty when the cluster does not use
    /// NCCL ([`Exchange::PeerAccess`]).
    pub fn nccl_version(&self) -> String {
        self.nccl_version
            .map(comm::version_string)
            .unwrap_or_default()
    }

    /// The exchange in use: [`Exchange::PeerAccess`] or [`Exchange::Nccl`].
    pub fn exchange(&self) -> Exchange {
        match self.nccl_version {
            None => Exchange::PeerAccess,
            Some(_) => Exchange::Nccl,
        }
    }

    /// Whether an earlier timeout or NCCL error aborted the cluster.
    pub fn is_aborted(&self) -> bool {
        self.lock_any().aborted
    }

    fn lock_any(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The shared state, unless the cluster was aborted.
    fn lock(&self) -> Result<MutexGuard<'_, State>> {
        let state = self.lock_any();
        if state.aborted {
            return Err(ClusterError::Aborted);
        }
        Ok(state)
    }

    /// Whether every rank is in this process (no peer can wait on a local error).
    fn all_local(&self) -> bool {
        self.members.len() == self.world
    }

    fn gpus(&self) -> Vec<&Gpu> {
        self.members.iter().map(|m| &m.gpu).collect()
    }

    /// Posts `ops` (per member) in one NCCL group and, with `wait`, waits for them; a timeout
    /// or an NCCL error aborts the cluster.
    fn collective(
        &self,
        state: &mut State,
        ops: &[Vec<comm::Op>],
        during: &'static str,
        wait: bool,
    ) -> Result<()> {
        let result = match &mut state.transport {
            Transport::Nccl(nccl) => nccl.run(&self.gpus(), ops, during, self.timeout, wait),
            Transport::Peer(peers) => peers.run(ops, during, self.timeout, wait),
        };
        self.abort_on_exchange_failure(state, result)
    }

    /// Waits until every local stream is idle (aborting the cluster on a timeout).
    fn wait(&self, state: &mut State, during: &'static str) -> Result<()> {
        let result = match &state.transport {
            Transport::Nccl(nccl) => nccl.wait_all(&self.gpus(), during, self.timeout),
            Transport::Peer(peers) => peers.wait_all(during, self.timeout),
        };
        self.abort_on_exchange_failure(state, result)
    }

    /// [`Cluster::abort_on_failure`] for a step that queued exchanges: with peer access, any
    /// error aborts, so that no rank's exchange waits for one that will not come.
    fn abort_on_exchange_failure(&self, state: &mut State, result: Result<()>) -> Result<()> {
        if result.is_err() && matches!(state.transport, Transport::Peer(_)) {
            state.abort();
        }
        self.abort_on_failure(state, result)
    }

    fn abort_on_failure<T>(&self, state: &mut State, result: Result<T>) -> Result<T> {
        if matches!(
            result,
            Err(ClusterError::Timeout { .. } | ClusterError::Nccl { .. })
        ) {
            state.abort();
        }
        result
    }

    /// The first failed rank's error from per-rank statuses: this process's own error when the
    /// failed rank is local, [`ClusterError::PeerFailed`] otherwise; a status of
    /// [`STATUS_MISMATCH`] (the device join's: a record of another monoid or of shards that do
    /// not follow the one before) or [`agreement::STATUS_OTHER_MONOID`] is [`ClusterError::Mismatch`].
    fn first_failure(
        &self,
        statuses: impl IntoIterator<Item = u64>,
        local: &mut [Option<ClusterError>],
        during: &'static str,
    ) -> Result<()> {
        let Some((rank, status)) = statuses.into_iter().enumerate().find(|&(_, s)| s != 0) else {
            return Ok(());
        };
        if status == agreement::STATUS_OTHER_MONOID {
            return Err(ClusterError::Mismatch {
                what: "the monoid",
                reason: format!(
                    "in {during}, rank {rank} reduced another monoid (its fingerprint differs \
                     from this rank's): every rank must make the same call"
                ),
            });
        }
        if status == STATUS_MISMATCH {
            return Err(ClusterError::Mismatch {
                what: "the monoid or the shards",
                reason: format!(
                    "in {during}, rank {rank}'s record is of another monoid, or of shards that \
                     do not follow the rank before's: the ranks were given different monoids \
                     or different `Sharded` data"
                ),
            });
        }
        if let Some(i) = self.members.iter().position(|m| m.rank == rank) {
            if let Some(e) = local.get_mut(i).and_then(Option::take) {
                return Err(e);
            }
        }
        Err(ClusterError::PeerFailed { rank, during })
    }
}

/// A `DeviceVec` `gpu` made (on its stream), else `ForeignBuffer`.
fn check_owned<T>(gpu: &Gpu, buffer: &DeviceVec<T>) -> crate::Result<()> {
    if **buffer.home() != **gpu.stream() {
        return Err(crate::Error::ForeignBuffer {
            buffer_ordinal: buffer.device(),
            gpu_ordinal: gpu.info().ordinal,
        });
    }
    Ok(())
}

/// The shard kernels' signatures (checked against kernels/shard.cu).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_hex() {
        let mut bytes = [0u8; 128];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (i * 37 % 256) as u8;
        }
        let id = ClusterId::from_bytes(bytes);
        let hex = id.to_hex();
        assert_eq!(hex.len(), 256);
        assert_eq!(ClusterId::from_hex(&format!(" {hex}\n")).unwrap(), id);
        assert!(matches!(
            ClusterId::from_hex("abc"),
            Err(ClusterError::BadId { .. })
        ));
        for bad in [format!("zz{}", &hex[2..]), format!("+f{}", &hex[2..])] {
            assert!(matches!(
                ClusterId::from_hex(&bad),
                Err(ClusterError::BadId { .. })
            ));
        }
    }

    #[test]
    fn bad_arguments_are_errors_before_nccl_is_needed() {
        assert!(matches!(
            Cluster::new(&[]),
            Err(ClusterError::InvalidCluster { .. })
        ));
        assert!(matches!(
            Cluster::new(&[0, 1, 0]),
            Err(ClusterError::InvalidCluster { .. })
        ));
        let id = ClusterId::from_bytes([0; 128]);
        assert!(matches!(
            Cluster::join(&id, 2, 2, 0),
            Err(ClusterError::InvalidCluster { .. })
        ));
    }

    /// Without libnccl (CI), creating a cluster that needs it is a typed error, not cudarc's
    /// panic (before any device is opened).
    #[test]
    fn missing_nccl_is_an_error() {
        let present = comm::load().is_ok();
        match Cluster::new_with_exchange(&[0], Exchange::Nccl, Duration::from_secs(5)) {
            Err(ClusterError::NcclMissing) => assert!(!present),
            Err(e) => assert!(present, "unexpected error without NCCL: {e}"),
            Ok(_) => assert!(present),
        }
        // Set as the program loaded (to 0, unless the environment had set it).
        assert!(std::env::var_os("NCCL_NVLS_ENABLE").is_some());
    }

    #[test]
    fn version_codes_read_well() {
        assert_eq!(comm::version_string(22703), "2.27.3");
        assert_eq!(comm::version_string(2804), "2.8.4");
    }
}
