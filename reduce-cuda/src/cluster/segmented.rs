//! Segmented reductions over shards, both forms (global CSR offsets, or a global owner per item
//! sharded with the items).
//!
//! 1. Each rank reduces the segments its shard touches with the single-GPU kernels, in its own
//!    layout: offsets rebased to the shard (on the host, where the global offsets are), or
//!    owners minus the shard's first segment (`kernels/shard.cu`, on the device, where the
//!    owners are).
//! 2. The ranks all-gather a fixed-size record each: which segments the shard touches and its
//!    first and last local partial (a [`Carry`]).
//! 3. Every rank plans the same ownership from those records ([`SegmentPlan`]) and joins, in
//!    rank order, the pieces of every segment that goes on into later shards — every rank's
//!    joins, so that a fault in user code there is every rank's error — then keeps the segments
//!    it owns, or, with [`Placement::All`], broadcasts them so that every rank has all of them.
//!
//! Order: a segment's value is its owner's local partial followed by the first partials of the
//! ranks that continue it, in rank order; each partial is a left-to-right fold of contiguous
//! items. So every segment is the fold of its items left to right, for any associative monoid.
//!
//! The portable grouping (`SegConfig::portable`) over several ranks gives every segment
//! `reduce_core::portable::fold_segments`' bits, whatever the shard boundaries: each rank
//! reduces its shard in pieces where the global tree splits (`seg_portable.rs`), and the carries
//! are the summaries of the shard's parts of its first and last segment (raw items and tree
//! nodes), joined by `reduce_core::portable::parts::combine`.

use super::comm::{bind, Op};
use super::data::Sharded;
use super::error::{ClusterError, Result};
use super::plain::value_from_device_bytes;
use super::shard_ops::{bad_owner, copy_device, diagnose, rebase_owner, write_values};
use super::{agreement, seg_portable};
use super::{Cluster, Member};
use crate::backend::on_host;
use crate::catalogue::{seg_plan, SegConfig, SegShape};
use crate::device::DeviceVec;
use crate::gpu::Gpu;
use crate::jit::{Own, Program};
use reduce_core::monoid::put_bytes;
use reduce_core::portable::parts::Summary;
use reduce_core::portable::record::record_bytes;
use reduce_core::portable::run_len;
use reduce_core::shard::portable::PortableCarry;
use reduce_core::shard::{Carry, Joined, SegmentPlan, Touch};
use reduce_core::CudaMonoid;
use std::ops::Range;

/// Where the segment values end up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// Each rank keeps the segments it owns: those that start in its range (see
    /// [`reduce_core::shard`] for the rule on empty segments).
    #[default]
    Owned,
    /// Every rank gets every segment (the owned parts are broadcast).
    All,
}

/// One local rank's segment values.
#[derive(Debug)]
pub struct SegmentPart<M> {
    /// The rank.
    pub rank: usize,
    /// The global segment ids `values` holds, in order: the owned ones, or all of them.
    pub segments: Range<usize>,
    /// One value per segment of `segments`, on the rank's GPU.
    pub values: DeviceVec<M>,
}

/// The result of a segmented reduction over shards: this process's parts, and the plan (the
/// owner of every segment).
#[derive(Debug)]
pub struct Segments<M> {
    plan: SegmentPlan,
    parts: Vec<SegmentPart<M>>,
}

impl<M> Segments<M> {
    /// The plan: who owns which segment, which segments each shard touches.
    pub fn plan(&self) -> &SegmentPlan {
        &self.plan
    }

    /// The local ranks' parts, ascending ranks.
    pub fn parts(&self) -> &[SegmentPart<M>] {
        &self.parts
    }

    /// Local rank `rank`'s part.
    pub fn part(&self, rank: usize) -> Option<&SegmentPart<M>> {
        self.parts.iter().find(|p| p.rank == rank)
    }

    /// The parts.
    pub fn into_parts(self) -> Vec<SegmentPart<M>> {
        self.parts
    }
}

/// The layout, as each rank needs it.
enum Layout<'a> {
    /// Validated global offsets: the plan, each local rank's rebased offsets, and the
    /// fingerprint of this rank's view of them (`agreement::offsets_view`).
    Offsets {
        plan: SegmentPlan,
        local: Vec<Vec<u32>>,
        view: u64,
    },
    /// Owners sharded like the items, and the global segment count.
    Owner {
        owner: &'a Sharded<u32>,
        segments: usize,
    },
}

/// A local rank's own reduction: the segments it touches, their values and, in the portable
/// grouping, its carry (none for an empty shard).
struct Local<M> {
    touch: Option<Touch>,
    values: Option<DeviceVec<M>>,
    carry: Option<PortableCarry<M>>,
}

impl<M> Local<M> {
    /// An empty shard's (or a failed rank's).
    fn none() -> Local<M> {
        Local {
            touch: None,
            values: None,
            carry: None,
        }
    }
}

/// Every rank's carry, as the join needs it.
enum Carries<M> {
    /// First and last local partials.
    Partials(Vec<Option<Carry<M>>>),
    /// The portable grouping's summaries, for runs of the given length.
    Summaries(Vec<Option<PortableCarry<M>>>, usize),
}

impl<M: CudaMonoid> Carries<M> {
    /// The bytes of one rank's carry in the exchange: two summaries' records in both modes (the
    /// partials use the first `2 · size_of::<M>()`), so that ranks that disagree on the mode
    /// still exchange the same sizes, and then fail on their headers' `PORTABLE` flags.
    fn bytes() -> usize {
        2 * record_bytes::<M>(run_len::<M>())
    }

    /// The carries from the gathered records (`touches[r]` says whether rank r sent one), of
    /// the `n` items: a portable summary that reaches past them (a misbehaving peer's) is
    /// [`ClusterError::Mismatch`].
    fn decode(
        portable: bool,
        records: &[u8],
        touches: &[Option<Touch>],
        n: usize,
    ) -> Result<Carries<M>> {
        let records = touches.iter().zip(records.chunks(Carries::<M>::bytes()));
        let size = std::mem::size_of::<M>();
        if !portable {
            let partials = records.map(|(t, r)| {
                let (first, last) = (&r[..size], &r[size..2 * size]);
                t.map(|_| Carry {
                    first: value_from_device_bytes(first),
                    last: value_from_device_bytes(last),
                })
            });
            return Ok(Carries::Partials(partials.collect()));
        }
        let run = run_len::<M>();
        let carries = records.enumerate().map(|(rank, (t, r))| {
            let (first, last) = r.split_at(record_bytes::<M>(run));
            let Some(_) = t else { return Ok(None) };
            // SAFETY: the ranks wrote their carries with `to_record` for this `M` and `run`
            // (their headers agree on the mode and the monoid's fingerprint).
            let carry = unsafe {
                PortableCarry {
                    first: Summary::from_record(first, run),
                    last: Summary::from_record(last, run),
                }
            };
            if !(carry.first.within(n, run) && carry.last.within(n, run)) {
                return Err(ClusterError::Mismatch {
                    what: "the carries",
                    reason: format!("rank {rank} sent a portable carry past the {n} items"),
                });
            }
            Ok(Some(carry))
        });
        Ok(Carries::Summaries(carries.collect::<Result<_>>()?, run))
    }

    /// [`SegmentPlan::join`] of rank `rank`.
    fn join(&self, plan: &SegmentPlan, rank: usize) -> Option<Joined<M>> {
        match self {
            Carries::Partials(c) => plan.join(rank, c),
            Carries::Summaries(c, run) => {
                plan.join_by(rank, c, |own, next| PortableCarry::join(own, next, *run))
            }
        }
    }

    /// Every rank's join (index: the rank), made on every process with the monoid's `combine`
    /// on the host: the carries are everyone's, so a fault in user code in any rank's join is
    /// the same error on every rank — with one process per GPU, a rank that owns no crossing
    /// segment would otherwise go on to the broadcast and wait there for the faulted one.
    fn join_all(&self, plan: &SegmentPlan, world: usize) -> Result<Vec<Option<Joined<M>>>> {
        Ok(on_host::<M, _>(|| {
            (0..world).map(|rank| self.join(plan, rank)).collect()
        })?)
    }
}

/// Words of a record's header: status, flags (`NON_EMPTY`, `PORTABLE`), first segment, last
/// segment, the fingerprints of the monoid and of the rank's view of the layout (`agreement`).
const HEADER: usize = 6;
/// The rank's shard touches segments.
const NON_EMPTY: u64 = 1;
/// The rank reduced in the portable grouping's pieces (its carry is two summaries).
const PORTABLE: u64 = 2;

impl Cluster {
    /// One value per segment of global CSR `offsets` (`segments + 1` entries from 0 to the
    /// total item count, never decreasing; u32 or u64), for items sharded over the ranks;
    /// segments may cross any number of shard boundaries. Every rank passes the same offsets.
    /// Collective; waits for the result.
    ///
    /// The offsets are validated on the host (a bad one is
    /// [`ShardError`](reduce_core::shard::ShardError) naming the first bad index), so the local reductions run trusted. Each shard holds at most `u32::MAX` items
    /// and touches at most `u32::MAX` segments (one device's limit). With
    /// `SegConfig::portable` every segment has one GPU's portable bits
    /// (`reduce_core::portable::fold_segments`) whatever the shards, at the price of a launch
    /// per aligned block of a shard (O(log) per rank) and a host join of the segments that cross
    /// them.
    pub fn reduce_segments<M: CudaMonoid, O: Copy + Into<u64>>(
        &self,
        xs: &Sharded<M>,
        offsets: &[O],
        config: impl Into<SegConfig>,
        placement: Placement,
    ) -> Result<Segments<M>> {
        self.check_sharded(xs, "the items")?;
        let plan = SegmentPlan::from_offsets(xs.shards(), offsets)?;
        // Every rank checks every shard, so that all of them return the same error.
        for rank in 0..self.world {
            plan.check_local_limits(rank)?;
        }
        let local = self
            .members
            .iter()
            .map(|m| plan.local_offsets(offsets, m.rank))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let touches: Vec<_> = (0..self.world).map(|r| plan.touch(r)).collect();
        let edges: Vec<_> = (0..self.world)
            .map(|r| agreement::edges(offsets, xs.shards().range(r), touches[r]))
            .collect();
        let view = agreement::layout_fingerprint(agreement::offsets_view(&touches, &edges));
        let config = SegConfig {
            trusted: true,
            ..config.into()
        };
        let layout = Layout::Offsets { plan, local, view };
        self.segmented(xs, layout, config, placement)
    }

    /// One value per segment, where `owner` (sharded like `xs`) holds each item's global
    /// segment id, non-decreasing over the whole sequence and below `num_segments`; segments
    /// that own no item get the identity. Collective; waits for the result.
    ///
    /// Each rank validates its owners on its device (unless `config` is trusted) and the ranks
    /// check the order across shards; a bad layout is
    /// [`ShardError`](reduce_core::shard::ShardError) naming a bad global index.
    /// `SegConfig::portable` gives one GPU's portable bits whatever the shards, as
    /// [`Cluster::reduce_segments`] says.
    pub fn reduce_by_owner<M: CudaMonoid>(
        &self,
        xs: &Sharded<M>,
        owner: &Sharded<u32>,
        num_segments: usize,
        config: impl Into<SegConfig>,
        placement: Placement,
    ) -> Result<Segments<M>> {
        self.check_sharded(xs, "the items")?;
        self.check_sharded(owner, "the owners")?;
        if owner.shards() != xs.shards() {
            return Err(ClusterError::Mismatch {
                what: "the owners",
                reason: format!(
                    "sharded as {:?}, the items as {:?}",
                    owner.shards().lens(),
                    xs.shards().lens()
                ),
            });
        }
        let layout = Layout::Owner {
            owner,
            segments: num_segments,
        };
        self.segmented(xs, layout, config.into(), placement)
    }

    fn segmented<M: CudaMonoid>(
        &self,
        xs: &Sharded<M>,
        layout: Layout<'_>,
        config: SegConfig,
        placement: Placement,
    ) -> Result<Segments<M>> {
        // One rank's shard starts at item 0: its own portable reduction has the global bits.
        let pieces = config.portable && self.world > 1;
        if pieces {
            // Checked here, the same on every rank: a rank whose shard has no aligned block
            // would never plan a launch.
            let offsets_form = matches!(layout, Layout::Offsets { .. });
            let items = Own::<M>::new().items();
            seg_plan(
                config,
                SegShape::new(items, offsets_form, false, 0, 0),
                0,
                0,
            )?;
        }
        let mut state = self.lock()?;
        // 1. Local reductions, one host thread per local rank (a single-GPU segmented call
        //    waits for its validation).
        let locals: Vec<Result<Local<M>>> = self.crew.run(self.members.len(), |i| {
            local_segments(i, &self.members[i], xs, &layout, config, pieces)
        });

        // 2. Every rank's record (its header: `HEADER`) and its carry.
        let carry_bytes = Carries::<M>::bytes();
        let monoid = agreement::monoid_fingerprint::<M>();
        let (view, what) = match &layout {
            Layout::Offsets { view, .. } => (*view, "the offsets"),
            Layout::Owner { segments, .. } => (
                agreement::layout_fingerprint([*segments as u64]),
                "the segment count",
            ),
        };
        let mut errors = Vec::with_capacity(locals.len());
        let mut mine = Vec::with_capacity(locals.len());
        let mut sends = Vec::with_capacity(locals.len());
        for (m, local) in self.members.iter().zip(locals) {
            let local = match local {
                Ok(local) => local,
                Err(e) if self.all_local() => return Err(e),
                Err(e) => {
                    errors.push(Some(e));
                    mine.push(Local::none());
                    let none = Local::<M>::none();
                    sends.push(record(&m.gpu, 1, &none, pieces, [monoid, view])?);
                    continue;
                }
            };
            errors.push(None);
            sends.push(record(&m.gpu, 0, &local, pieces, [monoid, view])?);
            mine.push(local);
        }
        let mut recvs = Vec::with_capacity(self.members.len());
        for m in &self.members {
            recvs.push((
                DeviceVec::<u64>::alloc(m.gpu.device(), HEADER * self.world)?,
                DeviceVec::<u8>::alloc(m.gpu.device(), carry_bytes * self.world)?,
            ));
        }
        let ops: Vec<Vec<Op>> = sends
            .iter()
            .zip(&recvs)
            .map(|((header, carry), (all_headers, all_carries))| {
                vec![
                    Op::AllGather {
                        send: header.address(),
                        recv: all_headers.address(),
                        bytes: HEADER * 8,
                    },
                    Op::AllGather {
                        send: carry.address(),
                        recv: all_carries.address(),
                        bytes: carry_bytes,
                    },
                ]
            })
            .collect();
        self.collective(&mut state, &ops, "the all-gather of the carries", true)?;
        let first = &self.members[0].gpu;
        bind(first)?;
        let headers = first.download(&recvs[0].0)?;
        let carries = first.download(&recvs[0].1)?;
        drop((sends, recvs));
        self.first_failure(
            headers.chunks(HEADER).map(|h| h[0]),
            &mut errors,
            "a segmented reduction",
        )?;
        // With one process per GPU the ranks' configurations may differ: their carries could
        // not be read as one kind.
        if headers
            .chunks(HEADER)
            .any(|h| (h[1] & PORTABLE != 0) != pieces)
        {
            return Err(ClusterError::Mismatch {
                what: "the configuration",
                reason: "the ranks disagree on SegConfig::portable".into(),
            });
        }
        // Before any carry is read as an `M`: the same monoid, and one view of the layout (so
        // partials of the same items), on every rank alike.
        agreement::check(headers.chunks(HEADER).map(|h| h[4]), monoid, "the monoid")?;
        agreement::check(headers.chunks(HEADER).map(|h| h[5]), view, what)?;
        let touches: Vec<Option<Touch>> = headers
            .chunks(HEADER)
            .map(|h| {
                (h[1] & NON_EMPTY != 0).then_some(Touch {
                    first: h[2] as usize,
                    last: h[3] as usize,
                })
            })
            .collect();
        let carries = Carries::<M>::decode(pieces, &carries, &touches, xs.len())?;

        // 3. The plan (the same on every rank), then each local rank's owned values.
        let plan = match layout {
            // The views' check above holds every rank's touches to this rank's plan.
            Layout::Offsets { plan, .. } => plan,
            Layout::Owner { segments, .. } => {
                SegmentPlan::from_touches(xs.shards(), touches, segments)?
            }
        };
        for rank in 0..self.world {
            plan.check_local_limits(rank)?;
        }
        let mut joins = carries.join_all(&plan, self.world)?;
        let mut parts = Vec::with_capacity(self.members.len());
        for (m, local) in self.members.iter().zip(mine) {
            parts.push(SegmentPart {
                rank: m.rank,
                segments: plan.owned(m.rank),
                values: owned_values(&m.gpu, &plan, m.rank, local.values, joins[m.rank].take())?,
            });
        }
        if placement == Placement::All {
            parts = self.broadcast_all(&mut state, &plan, parts)?;
        }
        Ok(Segments { plan, parts })
    }

    /// Every segment on every local rank: each rank's owned values, broadcast from it.
    fn broadcast_all<M: CudaMonoid>(
        &self,
        state: &mut super::State,
        plan: &SegmentPlan,
        owned: Vec<SegmentPart<M>>,
    ) -> Result<Vec<SegmentPart<M>>> {
        let size = std::mem::size_of::<M>();
        let mut all = Vec::with_capacity(self.members.len());
        for m in &self.members {
            all.push(DeviceVec::<M>::alloc(m.gpu.device(), plan.segments())?);
        }
        let ops: Vec<Vec<Op>> = self
            .members
            .iter()
            .zip(owned.iter().zip(&all))
            .map(|(m, (part, all))| {
                let base = all.address();
                (0..self.world)
                    .filter(|&root| !plan.owned(root).is_empty())
                    .map(|root| {
                        let segments = plan.owned(root);
                        let recv = base + (segments.start * size) as u64;
                        Op::Broadcast {
                            send: if root == m.rank {
                                part.values.address()
                            } else {
                                recv
                            },
                            recv,
                            bytes: segments.len() * size,
                            root,
                        }
                    })
                    .collect()
            })
            .collect();
        self.collective(state, &ops, "the broadcast of the segments", true)?;
        drop(owned);
        Ok(self
            .members
            .iter()
            .zip(all)
            .map(|(m, values)| SegmentPart {
                rank: m.rank,
                segments: 0..plan.segments(),
                values,
            })
            .collect())
    }
}

/// Local rank `i`'s reduction of the segments its shard touches: with one launch, or in
/// `pieces` (the portable grouping over several ranks: `seg_portable.rs`).
fn local_segments<M: CudaMonoid>(
    i: usize,
    m: &Member,
    xs: &Sharded<M>,
    layout: &Layout<'_>,
    config: SegConfig,
    pieces: bool,
) -> Result<Local<M>> {
    bind(&m.gpu)?;
    let items = xs.local(i);
    if items.is_empty() {
        return Ok(Local::none());
    }
    let start = xs.shards().range(m.rank).start;
    match layout {
        Layout::Offsets { plan, local, .. } if pieces => {
            let (values, carry) =
                seg_portable::by_offsets(&m.gpu, items, start, &local[i], config)?;
            Ok(Local {
                touch: plan.touch(m.rank),
                values: Some(values),
                carry: Some(carry),
            })
        }
        Layout::Owner { owner, segments } if pieces => {
            let owners = owner.local(i);
            let (touch, (values, carry)) =
                seg_portable::by_owner(&m.gpu, m.rank, items, owners, start, *segments, config)?;
            Ok(Local {
                touch: Some(touch),
                values: Some(values),
                carry: Some(carry),
            })
        }
        Layout::Offsets { plan, local, .. } => {
            let offsets = m.gpu.upload(&local[i])?;
            Ok(Local {
                touch: plan.touch(m.rank),
                values: Some(m.gpu.reduce_segments(items, &offsets, config)?),
                carry: None,
            })
        }
        Layout::Owner { owner, segments } => {
            let owners = owner.local(i);
            let device = m.gpu.device();
            let (first, last) = (
                owners.read_at(device, 0)?,
                owners.read_at(device, items.len() - 1)?,
            );
            if first > last || last as usize >= *segments {
                return Err(bad_owner(&m.gpu, m.rank, owners, start, *segments));
            }
            let local_owner = rebase_owner(&m.gpu, owners, first)?;
            let count = (last - first) as usize + 1;
            match m.gpu.reduce_by_owner(items, &local_owner, count, config) {
                Ok(values) => Ok(Local {
                    touch: Some(Touch {
                        first: first as usize,
                        last: last as usize,
                    }),
                    values: Some(values),
                    carry: None,
                }),
                Err(e @ crate::Error::Layout(_)) => {
                    Err(diagnose(&m.gpu, owners, start, *segments).unwrap_or(e.into()))
                }
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// A rank's record: the header (`HEADER`: status, flags, first and last segment, then
/// `fingerprints`: the monoid's and the layout view's) and its carry's bytes: the first and last
/// of its local values (identities when it has none), or in `pieces` (the portable grouping)
/// the two summaries of its carry (zeros when it has none).
fn record<M: CudaMonoid>(
    gpu: &Gpu,
    status: u64,
    local: &Local<M>,
    pieces: bool,
    fingerprints: [u64; 2],
) -> Result<(DeviceVec<u64>, DeviceVec<u8>)> {
    let mode = if pieces { PORTABLE } else { 0 };
    let [monoid, view] = fingerprints;
    let header: [u64; HEADER] = match local.touch {
        Some(t) => [
            status,
            NON_EMPTY | mode,
            t.first as u64,
            t.last as u64,
            monoid,
            view,
        ],
        None => [status, mode, 0, 0, monoid, view],
    };
    let header = gpu.upload(&header)?;
    let mut bytes = vec![0u8; Carries::<M>::bytes()];
    if pieces {
        if let Some(c) = &local.carry {
            let run = run_len::<M>();
            let (first, last) = bytes.split_at_mut(record_bytes::<M>(run));
            first.copy_from_slice(&c.first.to_record(run));
            last.copy_from_slice(&c.last.to_record(run));
        }
        return Ok((header, gpu.upload(&bytes)?));
    }
    let size = std::mem::size_of::<M>();
    put_bytes(&mut bytes[..2 * size], &[M::identity(); 2]);
    let carry = gpu.upload(&bytes)?;
    if let Some(values) = local.values.as_ref().filter(|v| !v.is_empty()) {
        let (src, dst) = (values.address(), carry.address());
        copy_device(gpu, dst, src, size)?;
        copy_device(
            gpu,
            dst + size as u64,
            src + ((values.len() - 1) * size) as u64,
            size,
        )?;
    }
    Ok((header, carry))
}

/// A local rank's owned values from its local values: identities for the empty segments it
/// owns before its first item and after the last item of all, its local values in between,
/// and the joined value of its last segment when later shards continue it (`joined`).
fn owned_values<M: CudaMonoid>(
    gpu: &Gpu,
    plan: &SegmentPlan,
    rank: usize,
    local: Option<DeviceVec<M>>,
    joined: Option<Joined<M>>,
) -> Result<DeviceVec<M>> {
    let size = std::mem::size_of::<M>();
    let assembly = plan.assembly(rank);
    let out = match local {
        Some(values) if assembly.is_whole(values.len()) => values,
        local => {
            // Identities (a host buffer that fails with an error, not an abort), then the local
            // values over their place.
            let out = gpu.identities::<M>(assembly.len())?;
            if let Some(values) = &local {
                let src = values.address() + (assembly.local.start * size) as u64;
                let dst = out.address() + (assembly.leading * size) as u64;
                copy_device(gpu, dst, src, assembly.local.len() * size)?;
            }
            out
        }
    };
    if let Some(joined) = joined {
        let dst = out.address() + (joined.index * size) as u64;
        write_values(gpu, dst, &[joined.value])?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::tests::Picky;
    use crate::Error;
    use reduce_core::shard::Shards;

    /// Three shards of two items; segment 1 (items 1..5) starts on rank 0 and crosses ranks 1
    /// and 2. Only rank 0's join combines anything, and it divides by zero: every rank — also
    /// 1 and 2, whose own joins are empty — gets the fault, so none waits for a broadcast.
    #[test]
    fn a_fault_in_any_ranks_join_is_every_ranks_error() {
        let plan =
            SegmentPlan::from_offsets(&Shards::even(6, 3).unwrap(), &[0u32, 1, 5, 6]).unwrap();
        let carry = |first, last| {
            Some(Carry {
                first: Picky { v: first },
                last: Picky { v: last },
            })
        };
        let good = Carries::Partials(vec![carry(1, 3), carry(4, 4), carry(4, 1)]);
        let joins = good.join_all(&plan, 3).unwrap();
        assert_eq!(
            joins.iter().map(Option::is_some).collect::<Vec<_>>(),
            [true, false, false]
        );
        let faulty = Carries::Partials(vec![carry(1, 3), carry(0, 0), carry(4, 1)]);
        assert!(on_host::<Picky, _>(|| faulty.join(&plan, 1))
            .unwrap()
            .is_none());
        assert!(on_host::<Picky, _>(|| faulty.join(&plan, 2))
            .unwrap()
            .is_none());
        let error = faulty.join_all(&plan, 3);
        assert!(
            matches!(error, Err(ClusterError::Gpu(Error::DivisionFault { .. }))),
            "{error:?}"
        );
    }

    /// A peer's portable carry is read only where its every piece lies within the items: one
    /// past them (a block too high for 64 bits, a tail past the end) is an error, not a shift
    /// past 64 bits or a wrong value.
    #[test]
    fn portable_carries_past_the_items_are_refused() {
        type M = crate::Sum<f32>;
        let run = run_len::<M>();
        let n = 40 * run;
        let items: Vec<M> = (0..n).map(|i| crate::Sum(i as f32)).collect();
        let touch = Some(Touch { first: 0, last: 0 });
        let gathered = |last: &Summary<M>| {
            let first = Summary::of(&items, 0, 3 * run + 1, run);
            let mut record = first.to_record(run);
            record.extend(last.to_record(run));
            record
        };
        let good = Summary::of(&items, 5 * run + 2, n, run);
        let decoded = Carries::<M>::decode(true, &gathered(&good), &[touch], n);
        assert!(matches!(decoded, Ok(Carries::Summaries(..))));
        let mut high = good.clone();
        high.blocks[0].0 = 64;
        let mut past = good.clone();
        past.tail_at = n;
        past.tail = vec![crate::Sum(1.0)];
        for bad in [high, past] {
            let decoded = Carries::<M>::decode(true, &gathered(&bad), &[touch], n);
            assert!(
                matches!(decoded, Err(ClusterError::Mismatch { .. })),
                "{bad:?}"
            );
        }
    }
}
