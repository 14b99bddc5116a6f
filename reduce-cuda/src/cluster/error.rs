//! The error type of reductions over several GPUs: every failure is a value, never a panic or
//! a hang (a missing peer becomes [`ClusterError::Timeout`]).

use reduce_core::shard::ShardError;
use std::time::Duration;
use thiserror::Error;

/// Everything that can go wrong in a [`super::Cluster`].
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ClusterError {
    /// A single-GPU step failed (driver, NVRTC, memory, a layout, ...).
    #[error(transparent)]
    Gpu(#[from] crate::Error),
    /// A sharded input or a segment layout is malformed (indices are global).
    #[error(transparent)]
    Shard(#[from] ShardError),
    /// `libnccl` could not be loaded.
    #[error("the NCCL library (libnccl.so) was not found: install NCCL (e.g. the libnccl2 package, or the nvidia-nccl wheel) and put the folder holding libnccl.so on LD_LIBRARY_PATH")]
    NcclMissing,
    /// The NCCL library is older than this crate needs.
    #[error("NCCL {found} is too old: communicator configurations need NCCL 2.14 or later")]
    NcclTooOld {
        /// The version found, as `major.minor.patch`.
        found: String,
    },
    /// An NCCL call failed.
    #[error("NCCL error in {during}: {code} ({message})")]
    Nccl {
        /// What the cluster was doing.
        during: &'static str,
        /// NCCL's result code, by name.
        code: String,
        /// NCCL's last-error text.
        message: String,
    },
    /// A step did not finish in time: a peer is missing, has another world size or rank, or
    /// did not make the same call. The communicators of this process were aborted.
    #[error("{during} did not finish within {waited:?}: a peer is missing, was given another world size or rank, or did not make the same call; the communicators were aborted")]
    Timeout {
        /// What the cluster was waiting for.
        during: &'static str,
        /// How long it waited.
        waited: Duration,
    },
    /// Another rank failed in the same call (its process has the error).
    #[error("rank {rank} failed in {during}")]
    PeerFailed {
        /// The rank that failed.
        rank: usize,
        /// The call.
        during: &'static str,
    },
    /// An earlier timeout or NCCL error aborted this cluster's communicators.
    #[error("the cluster was aborted by an earlier error; create a new one")]
    Aborted,
    /// The cluster's arguments do not describe a valid group of ranks.
    #[error("invalid cluster: {reason}")]
    InvalidCluster {
        /// Which rule was broken.
        reason: String,
    },
    /// A sharded buffer or output does not belong to this cluster.
    #[error("{what} does not fit this cluster: {reason}")]
    Mismatch {
        /// What was passed.
        what: &'static str,
        /// How it differs.
        reason: String,
    },
    /// A cluster id could not be parsed.
    #[error("a cluster id is 256 hexadecimal digits (128 bytes): {reason}")]
    BadId {
        /// What is wrong with it.
        reason: String,
    },
}

/// The result type of the cluster.
pub type Result<T, E = ClusterError> = std::result::Result<T, E>;
