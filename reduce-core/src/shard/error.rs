//! The errors of sharded inputs and layouts.

use thiserror::Error;

/// Why a sharded input or layout was rejected. Item indices are global (across all shards).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ShardError {
    /// A cluster needs at least one rank.
    #[error("there must be at least one shard (one rank)")]
    NoRanks,
    /// More ranks than the host has room for their shards' bounds.
    #[error("{ranks} ranks: no room for their shards' bounds on the host")]
    TooManyRanks {
        /// The rank count given.
        ranks: usize,
    },
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
    #[error("offsets decrease: offsets[{index}] = {value} is smaller than offsets[{}] = {previous}", index.saturating_sub(1))]
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
    #[error("owner is not sorted: owner[{index}] = {value} is smaller than the owner before it, {previous}")]
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
    /// One [`Touch`](crate::shard::Touch) per rank is needed, `Some` exactly for the non-empty
    /// shards.
    #[error(
        "rank {rank}: a touch is needed exactly for non-empty shards (shard of {items} items)"
    )]
    TouchMismatch {
        /// The rank.
        rank: usize,
        /// Its shard length.
        items: usize,
    },
    /// More segments than an owner array may declare ([`crate::layout::MAX_OWNER_SEGMENTS`]:
    /// their offsets must fit one allocation), as the global reference refuses them.
    #[error("{value} segments: an owner array may declare at most {limit}")]
    TooManySegments {
        /// The segment count given.
        value: usize,
        /// The most there may be.
        limit: usize,
    },
    /// Offsets given to [`SegmentPlan::local_offsets`](crate::shard::SegmentPlan::local_offsets)
    /// that are not the plan's where rank `rank` reads them: its shard's first item is not in
    /// segment `first` or its last item not in segment `last`.
    #[error("the offsets are not the plan's: rank {rank}'s shard does not start in segment {first} and end in segment {last} under them")]
    OffsetsNotThePlans {
        /// The rank.
        rank: usize,
        /// The segment of its first item under the plan.
        first: usize,
        /// The segment of its last item under the plan.
        last: usize,
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
