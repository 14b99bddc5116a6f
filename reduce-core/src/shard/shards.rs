//! Shards and what one shard sends: the items each rank holds ([`Shards`]), the segments a
//! shard's items fall in ([`Touch`]), and its first and last local partials ([`Carry`]).

use super::error::ShardError;
use crate::Monoid;
use std::ops::Range;

/// Contiguous shards of a global sequence, in rank order: rank r holds items `range(r)`.
/// Uneven and empty shards are allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shards {
    /// `ranks + 1` non-decreasing bounds from 0 to the item count.
    bounds: Vec<usize>,
}

/// Room for the `ranks + 1` bounds of `ranks` shards, or the error that names the count.
fn bounds_for(ranks: usize) -> Result<Vec<usize>, ShardError> {
    let mut bounds = Vec::new();
    ranks
        .checked_add(1)
        .and_then(|len| bounds.try_reserve_exact(len).ok())
        .ok_or(ShardError::TooManyRanks { ranks })?;
    Ok(bounds)
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
        let mut bounds = bounds_for(ranks)?;
        bounds.push(0usize);
        // Rank k starts after k shards, the first r of them one item longer.
        bounds.extend((1..=ranks).map(|k| k * q + k.min(r)));
        Ok(Shards { bounds })
    }

    /// Shards of the given lengths, in rank order.
    pub fn from_lens(lens: &[usize]) -> Result<Shards, ShardError> {
        if lens.is_empty() {
            return Err(ShardError::NoRanks);
        }
        let mut bounds = bounds_for(lens.len())?;
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
