//! Sharding across devices: contiguous shards in rank order, the global segments each shard
//! touches, which rank owns which segment, and the rank-order join of the pieces of segments
//! that cross shard boundaries.
//!
//! Pure host logic, no device. `reduce-cuda`'s `cluster` module runs it around per-rank GPU
//! reductions; [`fold_sharded`], [`fold_sharded_segments`] and [`fold_sharded_by_owner`] run it
//! around the sequential references, so that the whole plan is tested against [`crate::fold`] and
//! [`crate::fold_segments`] on the CPU.
//!
//! **Shards.** Rank r holds items `range(r)`; the ranges are contiguous, in rank order, and may be
//! uneven or empty ([`Shards`]).
//!
//! **Segments.** Rank r's items fall in the global segments `first ..= last` (a [`Touch`]): the
//! segments of its first and last item. It reduces them locally, with its own layout (offsets
//! rebased to the shard, or owners minus `first`). Its first segment may have started on an
//! earlier rank, its last may go on into later ones.
//!
//! **Ownership.** Rank r owns the segments that start in its range: segment s starts at item
//! `offsets[s]`, and its owner is the last rank with a non-empty shard that starts at or before
//! it (so empty segments on a shard boundary belong to the later shard, and empty segments at
//! the very end to the last non-empty shard; with no items at all, rank 0 owns everything). Each
//! rank owns a contiguous range of segment ids, in rank order ([`SegmentPlan::owned`]).
//!
//! **Join.** The value of a segment that crosses shards is its owner's local partial, then the
//! first partial of every following rank that continues it, combined left to right in rank
//! order ([`SegmentPlan::join`]). Ranks exchange one [`Carry`] each (their first and last local
//! partial) to do this: a fixed amount of data per rank, whatever the layout.

use crate::fold::{fold, fold_by_owner, fold_segments};
use crate::Monoid;
use std::ops::Range;
use thiserror::Error;

/// Why a sharded input or layout was rejected. Item indices are global (across all shards).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ShardError {
    /// A cluster needs at least one rank.
    #[error("there must be at least one shard (one rank)")]
    NoRanks,
    /// The shard lengths add up to more than `usize::MAX` items.
    #[error("the shard lengths add up to more than usize::MAX items")]
    TooManyItems,
    /// A slice of items does not have the length the shards describe.
    #[error("{what}: {given} given, but the shards hold {expected}")]
    LengthMismatch {
        /// What was compared.
        what: &'static str,
        /// The length given.
        given: usize,
        /// The length the shards describe.
        expected: usize,
    },
    /// `offsets` is empty: it needs `segments + 1` entries.
    #[error("offsets is empty: it must hold segments + 1 entries, starting with 0 and ending with the item count")]
    OffsetsEmpty,
    /// `offsets[0] != 0`.
    #[error("offsets[0] = {value}, but the first offset must be 0")]
    FirstOffsetNotZero {
        /// `offsets[0]`.
        value: u64,
    },
    /// `offsets[index] < offsets[index - 1]`.
    #[error("offsets decrease: offsets[{index}] = {value} is smaller than offsets[{}] = {previous}", index - 1)]
    OffsetsDecreasing {
        /// First index whose offset is smaller than its predecessor's.
        index: usize,
        /// `offsets[index]`.
        value: u64,
        /// `offsets[index - 1]`.
        previous: u64,
    },
    /// The last offset is not the total item count.
    #[error("the last offset, offsets[{index}] = {value}, must equal the item count {items}")]
    LastOffsetNotLen {
        /// Index of the last offset.
        index: usize,
        /// Its value.
        value: u64,
        /// The number of items over all shards.
        items: usize,
    },
    /// `owner[index] < owner[index - 1]` (global item index).
    #[error("owner is not sorted: owner[{index}] = {value} is smaller than owner[{}] = {previous}", index - 1)]
    OwnerNotSorted {
        /// A global item index whose owner is smaller than its predecessor's.
        index: usize,
        /// `owner[index]`.
        value: u64,
        /// `owner[index - 1]`.
        previous: u64,
    },
    /// `owner[index] >= num_segments` (global item index).
    #[error("owner[{index}] = {value} is out of range: there are {num_segments} segments")]
    OwnerOutOfRange {
        /// A global item index with an owner out of range.
        index: usize,
        /// `owner[index]`.
        value: u64,
        /// The number of segments.
        num_segments: usize,
    },
    /// A shard's first item lies in a later segment than its last item.
    #[error("rank {rank}'s shard starts in segment {first} but ends in segment {last}: the owners are not sorted")]
    ShardUnsorted {
        /// The rank.
        rank: usize,
        /// The segment of its first item.
        first: u64,
        /// The segment of its last item.
        last: u64,
    },
    /// One [`Touch`] per rank is needed, `Some` exactly for the non-empty shards.
    #[error(
        "rank {rank}: a touch is needed exactly for non-empty shards (shard of {items} items)"
    )]
    TouchMismatch {
        /// The rank.
        rank: usize,
        /// Its shard length.
        items: usize,
    },
    /// One device's segmented reduction indexes items and segments with u32.
    #[error("rank {rank}'s shard has {what} = {value}, past the u32 index limit of one device's segmented reduction")]
    ShardTooLarge {
        /// The rank.
        rank: usize,
        /// "item count" or "segment count".
        what: &'static str,
        /// The value.
        value: usize,
    },
}

/// Contiguous shards of a global sequence, in rank order: rank r holds items `range(r)`.
/// Uneven and empty shards are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shards {
    /// `ranks + 1` non-decreasing bounds from 0 to the item count.
    bounds: Vec<usize>,
}

impl Shards {
    /// `items` items over `ranks` ranks as evenly as possible: the first `items % ranks` shards
    /// hold one item more.
    ///
    /// ```
    /// use reduce_core::shard::Shards;
    /// let s = Shards::even(10, 4).unwrap();
    /// assert_eq!(s.lens(), vec![3, 3, 2, 2]);
    /// assert_eq!(s.range(2), 6..8);
    /// ```
    pub fn even(items: usize, ranks: usize) -> Result<Shards, ShardError> {
        if ranks == 0 {
            return Err(ShardError::NoRanks);
        }
        let (q, r) = (items / ranks, items % ranks);
        Shards::from_lens(
            &(0..ranks)
                .map(|rank| q + usize::from(rank < r))
                .collect::<Vec<_>>(),
        )
    }

    /// Shards of the given lengths, in rank order.
    pub fn from_lens(lens: &[usize]) -> Result<Shards, ShardError> {
        if lens.is_empty() {
            return Err(ShardError::NoRanks);
        }
        let mut bounds = Vec::with_capacity(lens.len() + 1);
        bounds.push(0usize);
        for &len in lens {
            let end = bounds[bounds.len() - 1]
                .checked_add(len)
                .ok_or(ShardError::TooManyItems)?;
            bounds.push(end);
        }
        Ok(Shards { bounds })
    }

    /// The number of ranks (shards).
    pub fn ranks(&self) -> usize {
        self.bounds.len() - 1
    }

    /// The number of items over all shards.
    pub fn items(&self) -> usize {
        self.bounds[self.ranks()]
    }

    /// The global item indices rank `rank` holds. Panics if `rank >= ranks()`, like indexing.
    pub fn range(&self, rank: usize) -> Range<usize> {
        self.bounds[rank]..self.bounds[rank + 1]
    }

    /// Every shard's length, in rank order.
    pub fn lens(&self) -> Vec<usize> {
        self.bounds.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// Splits a global slice into the shards.
    pub fn split<'a, T>(&self, items: &'a [T]) -> Result<Vec<&'a [T]>, ShardError> {
        if items.len() != self.items() {
            return Err(ShardError::LengthMismatch {
                what: "items",
                given: items.len(),
                expected: self.items(),
            });
        }
        Ok((0..self.ranks()).map(|r| &items[self.range(r)]).collect())
    }
}

/// The global segments of a non-empty shard's first and last item: the shard's items fall in
/// segments `first ..= last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touch {
    /// The segment of the shard's first item.
    pub first: usize,
    /// The segment of the shard's last item.
    pub last: usize,
}

impl Touch {
    /// The segments the shard reduces locally, `first .. last + 1`.
    pub fn segments(self) -> Range<usize> {
        self.first..self.last + 1
    }
}

/// A non-empty shard's local partials of its first and last segment (the same value when the
/// shard lies inside one segment): all a rank sends to the others for the join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carry<M> {
    /// The fold of the shard's items in its first segment.
    pub first: M,
    /// The fold of the shard's items in its last segment.
    pub last: M,
}

impl<M: Monoid> Carry<M> {
    /// The carry of a shard's local segment values (`None` when there are none).
    pub fn of(local: &[M]) -> Option<Carry<M>> {
        Some(Carry {
            first: *local.first()?,
            last: *local.last()?,
        })
    }
}

/// A value the join fixes: the segment a rank owns last, completed with the pieces of the
/// following ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Joined<M> {
    /// The global segment id.
    pub segment: usize,
    /// Its index in the rank's owned output.
    pub index: usize,
    /// Its complete value.
    pub value: M,
}

/// How a rank's owned output is made from its local segment values: `leading` identities
/// (empty segments it owns before its first item), then `local[local]`, then `trailing`
/// identities (empty segments at the very end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembly {
    /// Identities before the local part.
    pub leading: usize,
    /// The indices of the local segment values that are owned.
    pub local: Range<usize>,
    /// Identities after the local part.
    pub trailing: usize,
}

impl Assembly {
    /// The owned output's length.
    pub fn len(&self) -> usize {
        self.leading + self.local.len() + self.trailing
    }

    /// Whether the rank owns no segment.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the owned output is exactly the `local_len` local values (no copy needed).
    pub fn is_whole(&self, local_len: usize) -> bool {
        self.leading == 0 && self.trailing == 0 && self.local == (0..local_len)
    }
}

/// The segmented plan over shards: which segments each rank touches and owns. Built from CSR
/// offsets ([`SegmentPlan::from_offsets`]) or from each shard's first and last owner
/// ([`SegmentPlan::from_touches`]); the same on every rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SegmentPlan {
    shards: Shards,
    segments: usize,
    touch: Vec<Option<Touch>>,
    /// `ranks + 1` bounds: rank r owns segments `owned[r] .. owned[r + 1]`.
    owned: Vec<usize>,
}

impl SegmentPlan {
    /// The plan of global CSR offsets (`segments + 1` entries from 0 to the item count, never
    /// decreasing), which are validated.
    pub fn from_offsets<O: Copy + Into<u64>>(
        shards: &Shards,
        offsets: &[O],
    ) -> Result<SegmentPlan, ShardError> {
        check_offsets(offsets, shards.items())?;
        let segments = offsets.len() - 1;
        // The segment of item i: the last s < segments with offsets[s] <= i.
        let segment_of =
            |i: usize| offsets[..segments].partition_point(|&o| o.into() <= i as u64) - 1;
        let touch = (0..shards.ranks())
            .map(|r| {
                let range = shards.range(r);
                (!range.is_empty()).then(|| Touch {
                    first: segment_of(range.start),
                    last: segment_of(range.end - 1),
                })
            })
            .collect();
        SegmentPlan::from_touches(shards, touch, segments)
    }

    /// The plan of each shard's [`Touch`] (`None` for empty shards), for layouts that live with
    /// the shards (an owner array per shard: first and last owner). Checks that the touches are
    /// in order across shards and below `segments`.
    pub fn from_touches(
        shards: &Shards,
        touch: Vec<Option<Touch>>,
        segments: usize,
    ) -> Result<SegmentPlan, ShardError> {
        if touch.len() != shards.ranks() {
            return Err(ShardError::LengthMismatch {
                what: "touches (one per rank)",
                given: touch.len(),
                expected: shards.ranks(),
            });
        }
        let mut previous: Option<usize> = None;
        for (rank, t) in touch.iter().enumerate() {
            let range = shards.range(rank);
            let Some(t) = t else {
                if !range.is_empty() {
                    return Err(ShardError::TouchMismatch {
                        rank,
                        items: range.len(),
                    });
                }
                continue;
            };
            if range.is_empty() {
                return Err(ShardError::TouchMismatch { rank, items: 0 });
            }
            if t.first > t.last {
                return Err(ShardError::ShardUnsorted {
                    rank,
                    first: t.first as u64,
                    last: t.last as u64,
                });
            }
            if let Some(p) = previous.filter(|&p| t.first < p) {
                return Err(ShardError::OwnerNotSorted {
                    index: range.start,
                    value: t.first as u64,
                    previous: p as u64,
                });
            }
            if t.last >= segments {
                return Err(ShardError::OwnerOutOfRange {
                    index: range.end - 1,
                    value: t.last as u64,
                    num_segments: segments,
                });
            }
            previous = Some(t.last);
        }
        // Rank r owns (last of the previous non-empty shard) + 1 ..= its own last; the last
        // non-empty shard also owns the empty segments after it.
        let last_nonempty = touch.iter().rposition(Option::is_some);
        let mut owned = Vec::with_capacity(touch.len() + 1);
        owned.push(0);
        for (rank, t) in touch.iter().enumerate() {
            let end = match (t, last_nonempty) {
                (_, None) => segments,
                (_, Some(l)) if rank >= l => segments,
                (Some(t), _) => t.last + 1,
                (None, _) => owned[rank],
            };
            owned.push(end);
        }
        Ok(SegmentPlan {
            shards: shards.clone(),
            segments,
            touch,
            owned,
        })
    }

    /// The shards.
    pub fn shards(&self) -> &Shards {
        &self.shards
    }

    /// The number of global segments.
    pub fn segments(&self) -> usize {
        self.segments
    }

    /// The segments rank `rank`'s items fall in (`None` for an empty shard).
    pub fn touch(&self, rank: usize) -> Option<Touch> {
        self.touch[rank]
    }

    /// The global segment ids rank `rank` owns.
    pub fn owned(&self, rank: usize) -> Range<usize> {
        self.owned[rank]..self.owned[rank + 1]
    }

    /// The rank that owns `segment` (`None` past the last segment).
    pub fn owner_of(&self, segment: usize) -> Option<usize> {
        (segment < self.segments).then(|| self.owned.partition_point(|&b| b <= segment) - 1)
    }

    /// Rank `rank`'s local CSR offsets (relative to its shard, `touch.last - touch.first + 2`
    /// entries from 0 to the shard length) from the global `offsets` this plan was built from.
    /// Empty for an empty shard.
    pub fn local_offsets<O: Copy + Into<u64>>(
        &self,
        offsets: &[O],
        rank: usize,
    ) -> Result<Vec<u32>, ShardError> {
        if offsets.len() != self.segments + 1 {
            return Err(ShardError::LengthMismatch {
                what: "offsets (segments + 1)",
                given: offsets.len(),
                expected: self.segments + 1,
            });
        }
        self.check_local_limits(rank)?;
        let Some(t) = self.touch[rank] else {
            return Ok(Vec::new());
        };
        let range = self.shards.range(rank);
        let (start, end) = (range.start as u64, range.end as u64);
        Ok(offsets[t.first..=t.last + 1]
            .iter()
            .map(|&o| (o.into().clamp(start, end) - start) as u32)
            .collect())
    }

    /// Checks that rank `rank`'s shard fits one device's segmented reduction (u32 indices) and
    /// that it owns at most `u32::MAX` segments.
    pub fn check_local_limits(&self, rank: usize) -> Result<(), ShardError> {
        let items = self.shards.range(rank).len();
        let segments = self.touch[rank].map_or(0, |t| t.segments().len());
        let owned = self.owned(rank).len();
        for (what, value) in [
            ("item count", items),
            ("segment count", segments),
            ("owned segment count", owned),
        ] {
            if value > u32::MAX as usize {
                return Err(ShardError::ShardTooLarge { rank, what, value });
            }
        }
        Ok(())
    }

    /// How rank `rank`'s owned output is made from its local values.
    pub fn assembly(&self, rank: usize) -> Assembly {
        let owned = self.owned(rank);
        let Some(t) = self.touch[rank] else {
            return Assembly {
                leading: owned.len(),
                local: 0..0,
                trailing: 0,
            };
        };
        let local = t.segments();
        let leading = owned.end.min(local.start).saturating_sub(owned.start);
        let trailing = owned.end.saturating_sub(owned.start.max(local.end));
        let (lo, hi) = (owned.start.max(local.start), owned.end.min(local.end));
        let local = if lo < hi {
            lo - t.first..hi - t.first
        } else {
            0..0
        };
        Assembly {
            leading,
            local,
            trailing,
        }
    }

    /// The rank-order join for rank `rank`: when it owns its last segment and later shards
    /// continue that segment, the segment's complete value — rank `rank`'s last partial, then
    /// the first partial of each continuing rank, left to right. `carries[r]` is rank r's carry
    /// (`None` for empty shards). `None` when there is nothing to join.
    pub fn join<M: Monoid>(&self, rank: usize, carries: &[Option<Carry<M>>]) -> Option<Joined<M>> {
        let t = self.touch[rank]?;
        let owned = self.owned(rank);
        if !owned.contains(&t.last) {
            return None;
        }
        let mut value = carries.get(rank)?.as_ref()?.last;
        let mut joined = false;
        for r in rank + 1..self.shards.ranks() {
            let Some(next) = self.touch[r] else {
                continue; // an empty shard in the middle
            };
            if next.first != t.last {
                break;
            }
            value = M::combine(value, carries.get(r)?.as_ref()?.first);
            joined = true;
            if next.last != t.last {
                break;
            }
        }
        joined.then_some(Joined {
            segment: t.last,
            index: t.last - owned.start,
            value,
        })
    }

    /// Rank `rank`'s owned values from its local segment values and every rank's carry: the
    /// [`Assembly`] with the [`Joined`] value in place. What a device does with its buffers.
    pub fn assemble<M: Monoid>(
        &self,
        rank: usize,
        local: &[M],
        carries: &[Option<Carry<M>>],
    ) -> Vec<M> {
        let a = self.assembly(rank);
        let mut out = Vec::with_capacity(a.len());
        out.extend(std::iter::repeat_n(M::identity(), a.leading));
        out.extend_from_slice(&local[a.local.clone()]);
        out.extend(std::iter::repeat_n(M::identity(), a.trailing));
        if let Some(j) = self.join(rank, carries) {
            out[j.index] = j.value;
        }
        out
    }
}

/// Checks global CSR offsets for `items` items: first 0, never decreasing, last `items`.
pub fn check_offsets<O: Copy + Into<u64>>(offsets: &[O], items: usize) -> Result<(), ShardError> {
    let (&first, rest) = offsets.split_first().ok_or(ShardError::OffsetsEmpty)?;
    let first: u64 = first.into();
    if first != 0 {
        return Err(ShardError::FirstOffsetNotZero { value: first });
    }
    let mut previous = first;
    for (i, &value) in rest.iter().enumerate() {
        let value: u64 = value.into();
        if value < previous {
            return Err(ShardError::OffsetsDecreasing {
                index: i + 1,
                value,
                previous,
            });
        }
        previous = value;
    }
    if previous != items as u64 {
        return Err(ShardError::LastOffsetNotLen {
            index: offsets.len() - 1,
            value: previous,
            items,
        });
    }
    Ok(())
}

/// Checks one shard of a global owner array: `owner` holds the owners of the items from global
/// index `start` on; `previous` is the owner of the item before (the previous shard's last).
/// Errors name global indices.
pub fn check_shard_owner(
    owner: &[u32],
    start: usize,
    previous: Option<u32>,
    num_segments: usize,
) -> Result<(), ShardError> {
    let mut previous = previous.unwrap_or(0);
    for (i, &value) in owner.iter().enumerate() {
        if value < previous {
            return Err(ShardError::OwnerNotSorted {
                index: start + i,
                value: value as u64,
                previous: previous as u64,
            });
        }
        if value as usize >= num_segments {
            return Err(ShardError::OwnerOutOfRange {
                index: start + i,
                value: value as u64,
                num_segments,
            });
        }
        previous = value;
    }
    Ok(())
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sum;

    #[test]
    fn even_shards_put_the_remainder_first() {
        assert_eq!(Shards::even(10, 4).unwrap().lens(), vec![3, 3, 2, 2]);
        assert_eq!(Shards::even(2, 4).unwrap().lens(), vec![1, 1, 0, 0]);
        assert_eq!(Shards::even(0, 3).unwrap().lens(), vec![0, 0, 0]);
        assert_eq!(Shards::even(5, 0), Err(ShardError::NoRanks));
        assert_eq!(Shards::from_lens(&[]), Err(ShardError::NoRanks));
        assert_eq!(
            Shards::from_lens(&[usize::MAX, 1]),
            Err(ShardError::TooManyItems)
        );
    }

    #[test]
    fn a_segment_over_every_shard_with_an_empty_shard_in_the_middle() {
        let shards = Shards::from_lens(&[2, 0, 3, 1]).unwrap();
        // segment 0 = [0, 0) empty, 1 = all six items, 2 and 3 empty at the end.
        let offsets = [0u64, 0, 6, 6, 6];
        let plan = SegmentPlan::from_offsets(&shards, &offsets).unwrap();
        assert_eq!(plan.touch(0), Some(Touch { first: 1, last: 1 }));
        assert_eq!(plan.touch(1), None);
        assert_eq!(plan.owned(0), 0..2);
        assert_eq!(plan.owned(1), 2..2);
        assert_eq!(plan.owned(2), 2..2);
        assert_eq!(plan.owned(3), 2..4);
        assert_eq!(plan.owner_of(1), Some(0));
        assert_eq!(plan.owner_of(3), Some(3));
        assert_eq!(plan.owner_of(4), None);
        let items: Vec<Sum<u32>> = (1..=6).map(Sum).collect();
        let owned = fold_sharded_segments(&shards, &items, &offsets).unwrap();
        assert_eq!(
            owned,
            vec![vec![Sum(0), Sum(21)], vec![], vec![], vec![Sum(0), Sum(0)]]
        );
    }

    #[test]
    fn empty_segments_on_a_boundary_belong_to_the_later_shard() {
        let shards = Shards::from_lens(&[2, 2]).unwrap();
        let plan = SegmentPlan::from_offsets(&shards, &[0u32, 2, 2, 2, 4]).unwrap();
        assert_eq!(plan.owned(0), 0..1);
        assert_eq!(plan.owned(1), 1..4);
        assert_eq!(
            plan.assembly(1),
            Assembly {
                leading: 2,
                local: 0..1,
                trailing: 0
            }
        );
    }

    #[test]
    fn no_items_rank_zero_owns_everything() {
        let shards = Shards::even(0, 3).unwrap();
        let plan = SegmentPlan::from_offsets(&shards, &[0u64, 0, 0]).unwrap();
        assert_eq!(plan.owned(0), 0..2);
        assert_eq!(plan.owned(2), 2..2);
        let owned = fold_sharded_segments::<Sum<u32>, u64>(&shards, &[], &[0, 0, 0]).unwrap();
        assert_eq!(owned, vec![vec![Sum(0), Sum(0)], vec![], vec![]]);
    }

    #[test]
    fn bad_layouts_name_global_indices() {
        let shards = Shards::from_lens(&[2, 2]).unwrap();
        let items = [Sum(1u32); 4];
        assert_eq!(
            fold_sharded_by_owner(&shards, &items, &[0, 1, 0, 1], 2),
            Err(ShardError::OwnerNotSorted {
                index: 2,
                value: 0,
                previous: 1
            })
        );
        assert_eq!(
            fold_sharded_by_owner(&shards, &items, &[0, 0, 1, 0], 2),
            Err(ShardError::OwnerNotSorted {
                index: 3,
                value: 0,
                previous: 1
            })
        );
        assert_eq!(
            fold_sharded_by_owner(&shards, &items, &[0, 0, 1, 2], 2),
            Err(ShardError::OwnerOutOfRange {
                index: 3,
                value: 2,
                num_segments: 2
            })
        );
        assert_eq!(
            fold_sharded_segments(&shards, &items, &[0u32, 3, 2, 4]),
            Err(ShardError::OffsetsDecreasing {
                index: 2,
                value: 2,
                previous: 3
            })
        );
        assert_eq!(
            SegmentPlan::from_touches(&shards, vec![None, None], 1),
            Err(ShardError::TouchMismatch { rank: 0, items: 2 })
        );
        assert_eq!(
            SegmentPlan::from_touches(
                &shards,
                vec![
                    Some(Touch { first: 1, last: 0 }),
                    Some(Touch { first: 1, last: 1 })
                ],
                2
            ),
            Err(ShardError::ShardUnsorted {
                rank: 0,
                first: 1,
                last: 0
            })
        );
    }

    #[test]
    fn local_offsets_are_rebased_and_clamped() {
        let shards = Shards::from_lens(&[3, 4]).unwrap();
        let offsets = [0u32, 2, 5, 7];
        let plan = SegmentPlan::from_offsets(&shards, &offsets).unwrap();
        assert_eq!(plan.local_offsets(&offsets, 0).unwrap(), vec![0, 2, 3]);
        assert_eq!(plan.local_offsets(&offsets, 1).unwrap(), vec![0, 2, 4]);
        assert!(matches!(
            plan.local_offsets(&offsets[..3], 1),
            Err(ShardError::LengthMismatch { .. })
        ));
    }
}
