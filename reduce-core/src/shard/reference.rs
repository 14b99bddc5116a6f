//! The whole sharded plan run around the sequential references, on the CPU: what a cluster
//! computes, testable against [`fold`], [`fold_segments`] and [`fold_by_owner`].

use super::check::check_shard_owner;
use super::error::ShardError;
use super::plan::SegmentPlan;
use super::shards::{Carry, Shards, Touch};
use crate::fold::{fold, fold_by_owner, fold_segments};
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

/// Every rank's owned values from every rank's local values.
fn finish<M: Monoid>(plan: &SegmentPlan, locals: &[Vec<M>]) -> Vec<Vec<M>> {
    let carries: Vec<Option<Carry<M>>> = locals.iter().map(|l| Carry::of(l)).collect();
    (0..locals.len())
        .map(|rank| plan.assemble(rank, &locals[rank], &carries))
        .collect()
}
