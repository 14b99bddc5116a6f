//! Sharded data: contiguous shards in rank order, one device buffer per local rank; and the
//! exchange of small per-rank records (with a failure status) that keeps ranks in step.

use super::check_owned;
use super::comm::{bind, Op};
use super::error::{ClusterError, Result};
use super::{Cluster, State};
use crate::device::DeviceVec;
use reduce_core::shard::Shards;
use reduce_core::DeviceCopy;

/// A global sequence in contiguous shards, in rank order: rank r holds items
/// `shards().range(r)` on its GPU. This process holds the shards of its local ranks.
pub struct Sharded<T> {
    shards: Shards,
    /// (rank, its shard), in the cluster's local rank order.
    parts: Vec<(usize, DeviceVec<T>)>,
}

impl<T> std::fmt::Debug for Sharded<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharded")
            .field("type", &std::any::type_name::<T>())
            .field("lens", &self.shards.lens())
            .field(
                "local",
                &self.parts.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<T> Sharded<T> {
    /// Where every rank's shard lies in the global sequence.
    pub fn shards(&self) -> &Shards {
        &self.shards
    }

    /// The number of items over all shards.
    pub fn len(&self) -> usize {
        self.shards.items()
    }

    /// Whether no shard holds an item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Local rank `rank`'s shard.
    pub fn part(&self, rank: usize) -> Option<&DeviceVec<T>> {
        self.parts.iter().find(|(r, _)| *r == rank).map(|(_, p)| p)
    }

    /// The local shards: (rank, its buffer), ascending ranks.
    pub fn parts(&self) -> impl Iterator<Item = (usize, &DeviceVec<T>)> {
        self.parts.iter().map(|(r, p)| (*r, p))
    }

    /// The local shards' buffers, (rank, buffer).
    pub fn into_parts(self) -> Vec<(usize, DeviceVec<T>)> {
        self.parts
    }

    /// The buffer of the i-th local rank.
    pub(super) fn local(&self, i: usize) -> &DeviceVec<T> {
        &self.parts[i].1
    }
}

impl Cluster {
    /// Uploads a global host sequence in even shards (the first `len % world` shards hold one
    /// item more). With one process per GPU every rank passes the same items and uploads its
    /// own shard.
    pub fn scatter<T: DeviceCopy>(&self, items: &[T]) -> Result<Sharded<T>> {
        self.scatter_with(items, &Shards::even(items.len(), self.world)?)
    }

    /// Uploads a global host sequence in the given shards (uneven and empty ones allowed).
    /// Collective: the ranks check that they were given the same shards.
    pub fn scatter_with<T: DeviceCopy>(&self, items: &[T], shards: &Shards) -> Result<Sharded<T>> {
        self.check_shards(shards)?;
        let parts = shards.split(items)?;
        let uploads: Vec<Result<DeviceVec<T>>> = self.crew.run(self.members.len(), |i| {
            let m = &self.members[i];
            Ok(m.gpu.upload(parts[m.rank])?)
        });
        self.agree_on(shards, uploads, "scattering items")
    }

    /// Shards made of each local rank's own buffer (in [`Cluster::local_ranks`] order), on its
    /// GPU; the ranks' lengths may differ or be zero. Collective: the ranks exchange lengths.
    pub fn shard<T: DeviceCopy>(&self, parts: Vec<DeviceVec<T>>) -> Result<Sharded<T>> {
        if parts.len() != self.members.len() {
            return Err(ClusterError::Mismatch {
                what: "the local buffers",
                reason: format!(
                    "{} given, but this process drives {} rank(s)",
                    parts.len(),
                    self.members.len()
                ),
            });
        }
        let records: Vec<Result<Vec<u64>>> = self
            .members
            .iter()
            .zip(&parts)
            .map(|(m, p)| {
                check_owned(&m.gpu, p)?;
                Ok(vec![p.len() as u64])
            })
            .collect();
        let mut state = self.lock()?;
        let lens = self.exchange_records(&mut state, records, 1, "exchanging shard lengths")?;
        let lens: Vec<usize> = lens.iter().map(|&l| l as usize).collect();
        let shards = Shards::from_lens(&lens)?;
        Ok(Sharded {
            shards,
            parts: self.members.iter().map(|m| m.rank).zip(parts).collect(),
        })
    }

    /// Checks that shards describe this cluster's ranks.
    pub(super) fn check_shards(&self, shards: &Shards) -> Result<()> {
        if shards.ranks() != self.world {
            return Err(ClusterError::Mismatch {
                what: "the shards",
                reason: format!(
                    "{} shard(s) for a cluster of {} rank(s)",
                    shards.ranks(),
                    self.world
                ),
            });
        }
        Ok(())
    }

    /// Checks that a sharded buffer belongs to this cluster: one shard per rank, a buffer of
    /// the right length on each local rank's own GPU.
    pub(super) fn check_sharded<T>(&self, xs: &Sharded<T>, what: &'static str) -> Result<()> {
        self.check_shards(&xs.shards)?;
        let mismatch = |reason: String| Err(ClusterError::Mismatch { what, reason });
        if xs.parts.len() != self.members.len() {
            return mismatch(format!(
                "{} local shard(s), but this process drives {} rank(s)",
                xs.parts.len(),
                self.members.len()
            ));
        }
        for (m, (rank, part)) in self.members.iter().zip(&xs.parts) {
            if *rank != m.rank || part.len() != xs.shards.range(m.rank).len() {
                return mismatch(format!(
                    "the shard of rank {rank} ({} items) is not rank {}'s ({} items)",
                    part.len(),
                    m.rank,
                    xs.shards.range(m.rank).len()
                ));
            }
            check_owned(&m.gpu, part)?;
        }
        Ok(())
    }

    /// The local uploads as a [`Sharded`], after checking (with more than one process) that
    /// every rank was given the same shards.
    fn agree_on<T>(
        &self,
        shards: &Shards,
        uploads: Vec<Result<DeviceVec<T>>>,
        during: &'static str,
    ) -> Result<Sharded<T>> {
        let parts = if self.all_local() {
            uploads.into_iter().collect::<Result<Vec<_>>>()?
        } else {
            let mut parts = Vec::with_capacity(uploads.len());
            let mut records = Vec::with_capacity(uploads.len());
            for (upload, m) in uploads.into_iter().zip(&self.members) {
                match upload {
                    Ok(part) => {
                        parts.push(part);
                        records.push(Ok(vec![
                            shards.items() as u64,
                            shards.range(m.rank).len() as u64,
                        ]));
                    }
                    Err(e) => records.push(Err(e)),
                }
            }
            let mut state = self.lock()?;
            // Returns the first failed rank's error: past it, every upload succeeded.
            let all = self.exchange_records(&mut state, records, 2, during)?;
            let same = all.chunks(2).enumerate().all(|(rank, r)| {
                r[0] == shards.items() as u64 && r[1] == shards.range(rank).len() as u64
            });
            if !same {
                return Err(ClusterError::Mismatch {
                    what: "the shards",
                    reason: "the ranks were given different items or shards".into(),
                });
            }
            parts
        };
        Ok(Sharded {
            shards: shards.clone(),
            parts: self.members.iter().map(|m| m.rank).zip(parts).collect(),
        })
    }

    /// All-gathers `width` u64 values per rank, with a failure status: returns every rank's
    /// values (rank-major), or the first failed rank's error on every rank. `records[i]` is the
    /// i-th local rank's values or its error.
    pub(super) fn exchange_records(
        &self,
        state: &mut State,
        records: Vec<Result<Vec<u64>>>,
        width: usize,
        during: &'static str,
    ) -> Result<Vec<u64>> {
        let mut errors: Vec<Option<ClusterError>> = Vec::with_capacity(records.len());
        let mut sends = Vec::with_capacity(records.len());
        let mut recvs = Vec::with_capacity(records.len());
        for (m, record) in self.members.iter().zip(records) {
            let (status, payload) = match record {
                Ok(values) => {
                    errors.push(None);
                    (0u64, values)
                }
                Err(e) => {
                    errors.push(Some(e));
                    (1, Vec::new())
                }
            };
            debug_assert!(status == 1 || payload.len() == width);
            let mut send = Vec::with_capacity(width + 1);
            send.push(status);
            send.extend(payload);
            send.resize(width + 1, 0);
            sends.push(m.gpu.upload(&send)?);
            recvs.push(m.gpu.zeroed::<u64>(self.world * (width + 1))?);
        }
        if self.all_local() {
            if let Some(e) = errors.iter_mut().find_map(Option::take) {
                return Err(e);
            }
        }
        let ops: Vec<Vec<Op>> = sends
            .iter()
            .zip(&recvs)
            .map(|(send, recv)| {
                vec![Op::AllGather {
                    send: send.address(),
                    recv: recv.address(),
                    bytes: (width + 1) * 8,
                }]
            })
            .collect();
        self.collective(state, &ops, during, true)?;
        bind(&self.members[0].gpu)?;
        let all = self.members[0].gpu.download(&recvs[0])?;
        self.first_failure(all.chunks(width + 1).map(|r| r[0]), &mut errors, during)?;
        Ok(all
            .chunks(width + 1)
            .flat_map(|r| r[1..].iter().copied())
            .collect())
    }
}
