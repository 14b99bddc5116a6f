//! Segment layouts (CSR offsets or a sorted owner array) and their validation.
//!
//! Both the CPU references and the GPU runtime report a bad layout with the same
//! [`LayoutError`], naming the first offending index.

use thiserror::Error;

/// Why a segment layout was rejected. Every variant names the first bad position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// `owner.len()` differs from the number of items.
    #[error(
        "owner has {owners} entries but there are {items} items (one owner per item is required)"
    )]
    OwnerLengthMismatch {
        /// Number of items.
        items: usize,
        /// Number of owner entries.
        owners: usize,
    },
    /// `owner[index] < owner[index - 1]`: owners must be non-decreasing.
    #[error("owner is not sorted: owner[{index}] = {value} is smaller than owner[{}] = {previous}", index - 1)]
    OwnerNotSorted {
        /// First index whose owner is smaller than its predecessor's.
        index: usize,
        /// `owner[index]`.
        value: u32,
        /// `owner[index - 1]`.
        previous: u32,
    },
    /// `owner[index] >= num_segments`.
    #[error("owner[{index}] = {value} is out of range: there are {num_segments} segments")]
    OwnerOutOfRange {
        /// First index with an owner out of range.
        index: usize,
        /// `owner[index]`.
        value: u32,
        /// The number of segments the caller declared.
        num_segments: usize,
    },
    /// `offsets` is empty: it needs `segments + 1` entries, at least `[0, N]`... or `[0]` for zero segments.
    #[error("offsets is empty: it must hold segments + 1 entries, starting with 0 and ending with the item count")]
    OffsetsEmpty,
    /// `offsets[0] != 0`.
    #[error("offsets[0] = {value}, but the first offset must be 0")]
    FirstOffsetNotZero {
        /// `offsets[0]`.
        value: u32,
    },
    /// The last offset is not the number of items.
    #[error("the last offset, offsets[{index}] = {value}, must equal the item count {items}")]
    LastOffsetNotLen {
        /// Index of the last offset.
        index: usize,
        /// Its value.
        value: u32,
        /// The number of items.
        items: usize,
    },
    /// `offsets[index] < offsets[index - 1]`.
    #[error("offsets decrease: offsets[{index}] = {value} is smaller than offsets[{}] = {previous}", index - 1)]
    OffsetsDecreasing {
        /// First index whose offset is smaller than its predecessor's.
        index: usize,
        /// `offsets[index]`.
        value: u32,
        /// `offsets[index - 1]`.
        previous: u32,
    },
    /// Segmented reductions index items and segments with `u32`.
    #[error(
        "{what} = {value} is past the u32 index limit of segmented reductions ({})",
        u32::MAX
    )]
    TooLarge {
        /// What is too large ("item count", "segment count").
        what: &'static str,
        /// The value given.
        value: usize,
    },
}

/// Checks CSR offsets for `items` items: first 0, last `items`, non-decreasing.
/// Returns the number of segments (`offsets.len() - 1`).
pub fn check_offsets(offsets: &[u32], items: usize) -> Result<usize, LayoutError> {
    check_index_limit("item count", items)?;
    let (&first, rest) = offsets.split_first().ok_or(LayoutError::OffsetsEmpty)?;
    if first != 0 {
        return Err(LayoutError::FirstOffsetNotZero { value: first });
    }
    let mut previous = first;
    for (i, &value) in rest.iter().enumerate() {
        if value < previous {
            return Err(LayoutError::OffsetsDecreasing {
                index: i + 1,
                value,
                previous,
            });
        }
        previous = value;
    }
    if previous as usize != items {
        return Err(LayoutError::LastOffsetNotLen {
            index: offsets.len() - 1,
            value: previous,
            items,
        });
    }
    Ok(offsets.len() - 1)
}

/// Checks an owner array for `items` items and `num_segments` segments: one owner per item,
/// non-decreasing, each below `num_segments`.
pub fn check_owner(owner: &[u32], items: usize, num_segments: usize) -> Result<(), LayoutError> {
    check_index_limit("item count", items)?;
    check_index_limit("segment count", num_segments)?;
    if owner.len() != items {
        return Err(LayoutError::OwnerLengthMismatch {
            items,
            owners: owner.len(),
        });
    }
    let mut previous = 0u32;
    for (index, &value) in owner.iter().enumerate() {
        if value < previous {
            return Err(LayoutError::OwnerNotSorted {
                index,
                value,
                previous,
            });
        }
        if value as usize >= num_segments {
            return Err(LayoutError::OwnerOutOfRange {
                index,
                value,
                num_segments,
            });
        }
        previous = value;
    }
    Ok(())
}

/// Segmented reductions count items and segments in `u32`.
pub fn check_index_limit(what: &'static str, value: usize) -> Result<(), LayoutError> {
    if value > u32::MAX as usize {
        Err(LayoutError::TooLarge { what, value })
    } else {
        Ok(())
    }
}

/// CSR offsets of a valid owner array (`num_segments + 1` entries). Call [`check_owner`] first.
pub fn owner_to_offsets(owner: &[u32], num_segments: usize) -> Vec<u32> {
    let mut offsets = Vec::with_capacity(num_segments + 1);
    offsets.push(0u32);
    let mut i = 0usize;
    for segment in 0..num_segments as u32 {
        i += owner[i..].partition_point(|&o| o <= segment);
        offsets.push(i as u32);
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_errors_name_the_first_bad_index() {
        assert_eq!(check_offsets(&[], 0), Err(LayoutError::OffsetsEmpty));
        assert_eq!(check_offsets(&[0], 0), Ok(0));
        assert_eq!(
            check_offsets(&[1, 2], 2),
            Err(LayoutError::FirstOffsetNotZero { value: 1 })
        );
        assert_eq!(
            check_offsets(&[0, 3, 2, 4], 4),
            Err(LayoutError::OffsetsDecreasing {
                index: 2,
                value: 2,
                previous: 3
            })
        );
        assert_eq!(
            check_offsets(&[0, 3], 4),
            Err(LayoutError::LastOffsetNotLen {
                index: 1,
                value: 3,
                items: 4
            })
        );
    }

    #[test]
    fn owner_errors_name_the_first_bad_index() {
        assert_eq!(
            check_owner(&[0, 0], 3, 1),
            Err(LayoutError::OwnerLengthMismatch {
                items: 3,
                owners: 2
            })
        );
        assert_eq!(
            check_owner(&[0, 2, 1], 3, 3),
            Err(LayoutError::OwnerNotSorted {
                index: 2,
                value: 1,
                previous: 2
            })
        );
        assert_eq!(
            check_owner(&[0, 1, 5], 3, 3),
            Err(LayoutError::OwnerOutOfRange {
                index: 2,
                value: 5,
                num_segments: 3
            })
        );
        assert_eq!(check_owner(&[], 0, 0), Ok(()));
    }

    #[test]
    fn sizes_past_the_u32_index_limit_are_rejected() {
        let past = u32::MAX as usize + 1;
        assert_eq!(
            check_offsets(&[0], past),
            Err(LayoutError::TooLarge {
                what: "item count",
                value: past
            })
        );
        assert_eq!(
            check_owner(&[], 0, past),
            Err(LayoutError::TooLarge {
                what: "segment count",
                value: past
            })
        );
    }

    #[test]
    fn owner_to_offsets_keeps_empty_segments() {
        assert_eq!(owner_to_offsets(&[1, 1, 3], 5), vec![0, 0, 2, 2, 3, 3]);
        assert_eq!(owner_to_offsets(&[], 2), vec![0, 0, 0]);
    }

    #[test]
    fn error_messages_read_well() {
        let e = LayoutError::OwnerNotSorted {
            index: 7,
            value: 1,
            previous: 4,
        };
        assert_eq!(
            e.to_string(),
            "owner is not sorted: owner[7] = 1 is smaller than owner[6] = 4"
        );
    }
}
