//! The segmented plan over shards: which segments each rank touches and owns, how its owned
//! output is assembled from its local values, and the rank-order join of the segments that
//! cross shard boundaries.

use super::check::check_offsets;
use super::error::ShardError;
use super::shards::{Carry, Shards, Touch};
use crate::Monoid;
use std::ops::Range;

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

/// The global segment of item `i` under validated CSR `offsets`: the last segment that starts
/// at or before it.
pub(super) fn segment_of<O: Copy + Into<u64>>(offsets: &[O], i: usize) -> usize {
    offsets[..offsets.len() - 1].partition_point(|&o| o.into() <= i as u64) - 1
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
        let segment_of = |i: usize| segment_of(offsets, i);
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
    /// Empty for an empty shard. The entries it reads are checked against the plan (never
    /// decreasing, the shard's first and last items in the segments of its touch): other
    /// offsets there are an error, not a wrong local layout.
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
        let window = &offsets[t.first..=t.last + 1];
        let mut previous = window[0].into();
        for (i, &o) in window.iter().enumerate().skip(1) {
            let value = o.into();
            if value < previous {
                return Err(ShardError::OffsetsDecreasing {
                    index: t.first + i,
                    value,
                    previous,
                });
            }
            previous = value;
        }
        // The segment of the shard's first item starts at or before it and ends after it; the
        // last item's likewise.
        let at = |k: usize| window[k].into();
        let last = window.len() - 1;
        if !(at(0) <= start && start < at(1) && at(last - 1) < end && end <= at(last)) {
            return Err(ShardError::OffsetsNotThePlans {
                rank,
                first: t.first,
                last: t.last,
            });
        }
        Ok(window
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
        self.join_by(rank, carries, |own, next| {
            (next.iter()).fold(own.last, |value, c| M::combine(value, c.first))
        })
    }

    /// The join of [`SegmentPlan::join`] for any kind of carry: `join(own, next)` makes the
    /// segment's value from rank `rank`'s carry and those of the ranks that continue its last
    /// segment, in rank order (at least one).
    pub fn join_by<C, M>(
        &self,
        rank: usize,
        carries: &[Option<C>],
        join: impl FnOnce(&C, &[&C]) -> M,
    ) -> Option<Joined<M>> {
        let t = self.touch[rank]?;
        let owned = self.owned(rank);
        if !owned.contains(&t.last) {
            return None;
        }
        let own = carries.get(rank)?.as_ref()?;
        let mut next = Vec::new();
        for r in rank + 1..self.shards.ranks() {
            let Some(touch) = self.touch[r] else {
                continue; // an empty shard in the middle
            };
            if touch.first != t.last {
                break;
            }
            next.push(carries.get(r)?.as_ref()?);
            if touch.last != t.last {
                break;
            }
        }
        (!next.is_empty()).then(|| Joined {
            segment: t.last,
            index: t.last - owned.start,
            value: join(own, &next),
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
        self.assemble_joined(rank, local, self.join(rank, carries))
    }

    /// [`SegmentPlan::assemble`] with the join already made (`joined`, from
    /// [`SegmentPlan::join_by`]).
    pub fn assemble_joined<M: Monoid>(
        &self,
        rank: usize,
        local: &[M],
        joined: Option<Joined<M>>,
    ) -> Vec<M> {
        let a = self.assembly(rank);
        let mut out = Vec::with_capacity(a.len());
        out.extend(std::iter::repeat_n(M::identity(), a.leading));
        out.extend_from_slice(&local[a.local.clone()]);
        out.extend(std::iter::repeat_n(M::identity(), a.trailing));
        if let Some(j) = joined {
            out[j.index] = j.value;
        }
        out
    }
}
