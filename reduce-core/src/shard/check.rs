//! Validation of global layouts: CSR offsets, and one shard's part of an owner array.

use super::error::ShardError;

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
