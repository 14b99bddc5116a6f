//! The whole sharded plan run around the sequential references, on the CPU: what a cluster
//! computes, testable against [`fold`], [`fold_segments`] and [`fold_by_owner`].

use super::check::check_shard_owner;
use super::error::ShardError;
use super::plan::SegmentPlan;
use super::portable::{local_segment, piece_offsets, shard_on_cpu, PortableCarry};
use super::shards::{Carry, Shards, Touch};
use crate::fold::{fold, fold_by_owner, fold_segments};
use crate::layout::MAX_OWNER_SEGMENTS;
use crate::portable::{self, run_len};
use crate::Monoid;

/// The plain reduction the way a cluster does it: each shard folds its items, then the
/// partials are folded in rank order. Equal to [`fold`] of the whole sequence.
pub fn fold_sharded<M: Monoid>(shards: &Shards, items: &[M]) -> Result<M, ShardError> {
    let partials: Vec<M> = shards.split(items)?.into_iter().map(fold).collect();
    Ok(fold(&partials))
}

/// The offsets-form segmented reduction the way a cluster does it: each shard folds its local
/// segments (offsets rebased to the shard), the carries are joined in rank order, and each rank
/// assembles the segments it owns. Returns every rank's owned values; concatenated in rank order
/// they equal [`fold_segments`] of the whole sequence.
pub fn fold_sharded_segments<M: Monoid, O: Copy + Into<u64>>(
    shards: &Shards,
    items: &[M],
    offsets: &[O],
) -> Result<Vec<Vec<M>>, ShardError> {
    let parts = shards.split(items)?;
    let plan = SegmentPlan::from_offsets(shards, offsets)?;
    let mut locals = Vec::with_capacity(parts.len());
    for (rank, part) in parts.iter().enumerate() {
        plan.check_local_limits(rank)?;
        let local_offsets = plan.local_offsets(offsets, rank)?;
        locals.push(if part.is_empty() {
            Vec::new()
        } else {
            fold_segments(part, &local_offsets).expect("local offsets of a valid plan are valid")
        });
    }
    Ok(finish(&plan, &locals))
}

/// The owner-form segmented reduction the way a cluster does it: each shard checks its owners,
/// finds its first and last segment, folds its items by owner minus its first segment, and the
/// carries are joined in rank order. Returns every rank's owned values; concatenated in rank
/// order they equal [`fold_by_owner`] of the whole sequence.
pub fn fold_sharded_by_owner<M: Monoid>(
    shards: &Shards,
    items: &[M],
    owner: &[u32],
    num_segments: usize,
) -> Result<Vec<Vec<M>>, ShardError> {
    let (parts, owners, plan) = owner_plan(shards, items, owner, num_segments)?;
    let mut locals = Vec::with_capacity(parts.len());
    for (rank, (part, shard_owner)) in parts.iter().zip(&owners).enumerate() {
        plan.check_local_limits(rank)?;
        locals.push(match plan.touch(rank) {
            None => Vec::new(),
            Some(t) => {
                let local_owner: Vec<u32> =
                    shard_owner.iter().map(|&o| o - t.first as u32).collect();
                fold_by_owner(part, &local_owner, t.segments().len())
                    .expect("rebased owners of a checked shard are valid")
            }
        });
    }
    Ok(finish(&plan, &locals))
}

/// The shards of the items and of the owners, each shard's owners checked, and the plan of
/// their touches.
type OwnerPlan<'a, M> = (Vec<&'a [M]>, Vec<&'a [u32]>, SegmentPlan);

fn owner_plan<'a, M>(
    shards: &Shards,
    items: &'a [M],
    owner: &'a [u32],
    num_segments: usize,
) -> Result<OwnerPlan<'a, M>, ShardError> {
    // Before any shard's fold: owners far apart under a huge count would size one by them.
    if num_segments > MAX_OWNER_SEGMENTS {
        return Err(ShardError::TooManySegments {
            value: num_segments,
            limit: MAX_OWNER_SEGMENTS,
        });
    }
    let parts = shards.split(items)?;
    let owners = shards
        .split(owner)
        .map_err(|_| ShardError::LengthMismatch {
            what: "owners",
            given: owner.len(),
            expected: shards.items(),
        })?;
    let mut touch = Vec::with_capacity(parts.len());
    let mut previous = None;
    for (rank, shard_owner) in owners.iter().enumerate() {
        // Checking against the previous shard's last owner finds the first bad global index.
        check_shard_owner(
            shard_owner,
            shards.range(rank).start,
            previous,
            num_segments,
        )?;
        previous = shard_owner.last().copied().or(previous);
        touch.push(match (shard_owner.first(), shard_owner.last()) {
            (Some(&first), Some(&last)) => Some(Touch {
                first: first as usize,
                last: last as usize,
            }),
            _ => None,
        });
    }
    let plan = SegmentPlan::from_touches(shards, touch, num_segments)?;
    Ok((parts, owners, plan))
}

/// [`fold_sharded_segments`] in the portable grouping, the way a cluster does it
/// ([`super::portable`]): each shard's pieces reduced alone (a block by
/// [`portable::fold_segments`] of its items and its own offsets, as its device's portable kernel
/// does), the segments that cross pieces or shards joined on the host. Concatenated in rank order
/// the owned values equal [`portable::fold_segments`] of the whole sequence, bit for bit.
pub fn fold_sharded_segments_portable<M: Monoid, O: Copy + Into<u64>>(
    shards: &Shards,
    items: &[M],
    offsets: &[O],
) -> Result<Vec<Vec<M>>, ShardError> {
    let parts = shards.split(items)?;
    let plan = SegmentPlan::from_offsets(shards, offsets)?;
    portable_ranks(&plan, &parts, |rank, t, part| {
        let lo = shards.range(rank).start;
        let local = plan.local_offsets(offsets, rank)?;
        let local_of = |i: usize| local_segment(&local, lo, i);
        Ok(shard_on_cpu(
            part,
            lo,
            t.segments().len(),
            local_of,
            |piece, segments| {
                let block = &items[piece.items.clone()];
                let offsets = piece_offsets(&local, lo, segments, piece.items.clone());
                portable::fold_segments(block, &offsets).expect("a piece's offsets are valid")
            },
        ))
    })
}

/// [`fold_sharded_by_owner`] in the portable grouping, the way a cluster does it (a block by
/// [`portable::fold_by_owner`] of its items and its owners minus its first segment).
/// Concatenated in rank order the owned values equal [`portable::fold_by_owner`] of the whole
/// sequence, bit for bit.
pub fn fold_sharded_by_owner_portable<M: Monoid>(
    shards: &Shards,
    items: &[M],
    owner: &[u32],
    num_segments: usize,
) -> Result<Vec<Vec<M>>, ShardError> {
    let (parts, owners, plan) = owner_plan(shards, items, owner, num_segments)?;
    portable_ranks(&plan, &parts, |rank, t, part| {
        let lo = shards.range(rank).start;
        let local_of = |i: usize| owners[rank][i - lo] as usize - t.first;
        Ok(shard_on_cpu(
            part,
            lo,
            t.segments().len(),
            local_of,
            |piece, segments| {
                let block = &items[piece.items.clone()];
                let rebased: Vec<u32> = (piece.items.clone())
                    .map(|i| (local_of(i) - segments.start) as u32)
                    .collect();
                portable::fold_by_owner(block, &rebased, segments.len())
                    .expect("a piece's owners are valid")
            },
        ))
    })
}

/// Every rank's owned values in the portable grouping: `shard(rank, touch, items)` gives a
/// non-empty shard's local values and carry ([`shard_on_cpu`]), and the segments that cross
/// shards are joined from the carries.
fn portable_ranks<M: Monoid>(
    plan: &SegmentPlan,
    parts: &[&[M]],
    mut shard: impl FnMut(usize, Touch, &[M]) -> Result<(Vec<M>, PortableCarry<M>), ShardError>,
) -> Result<Vec<Vec<M>>, ShardError> {
    let mut locals = Vec::with_capacity(parts.len());
    let mut carries = Vec::with_capacity(parts.len());
    for (rank, part) in parts.iter().enumerate() {
        plan.check_local_limits(rank)?;
        let (local, carry) = match plan.touch(rank) {
            Some(t) => {
                let (local, carry) = shard(rank, t, part)?;
                (local, Some(carry))
            }
            None => (Vec::new(), None),
        };
        locals.push(local);
        carries.push(carry);
    }
    let run = run_len::<M>();
    Ok((0..locals.len())
        .map(|rank| {
            let joined = plan.join_by(rank, &carries, |own, next| {
                PortableCarry::join(own, next, run)
            });
            plan.assemble_joined(rank, &locals[rank], joined)
        })
        .collect())
}

/// Every rank's owned values from every rank's local values.
fn finish<M: Monoid>(plan: &SegmentPlan, locals: &[Vec<M>]) -> Vec<Vec<M>> {
    let carries: Vec<Option<Carry<M>>> = locals.iter().map(|l| Carry::of(l)).collect();
    (0..locals.len())
        .map(|rank| plan.assemble(rank, &locals[rank], &carries))
        .collect()
}
