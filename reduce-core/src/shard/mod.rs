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
//!
//! **The portable grouping** ([`portable`]): each shard is cut where the global tree splits,
//! each piece reduced alone, and the segments that cross pieces or shards joined from their
//! raw items and tree nodes, so that every segment gets [`crate::portable::fold_segments`]'s
//! bits ([`fold_sharded_segments_portable`], [`fold_sharded_by_owner_portable`]).

mod check;
mod error;
mod plan;
pub mod portable;
mod reference;
mod shards;
#[cfg(test)]
mod tests;

pub use check::{check_offsets, check_shard_owner};
pub use error::ShardError;
pub use plan::{Assembly, Joined, SegmentPlan};
pub use reference::{
    fold_sharded, fold_sharded_by_owner, fold_sharded_by_owner_portable, fold_sharded_segments,
    fold_sharded_segments_portable,
};
pub use shards::{Carry, Shards, Touch};
