//! Segment layouts (CSR offsets or a sorted owner array) and their validation.
//!
//! Both the CPU references and the GPU runtime report a bad layout with the same
//! [`LayoutError`], naming the first offending index.

use crate::DeviceCopy;
use thiserror::Error;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// The element type of segment layouts — CSR offsets and owners: `u32`, or `u64` for more than
/// 2^32 items or segments (an H200 holds 2^35 f32 items).
pub trait SegIndex:
    DeviceCopy + Copy + Ord + Default + Send + Sync + std::fmt::Debug + 'static + sealed::Sealed
{
    /// The largest value, as a u64.
    const MAX: u64;
    /// Whether it is 8 bytes wide.
    const WIDE: bool;
    /// The value as a u64.
    fn to_u64(self) -> u64;
    /// `value` as this type; panics where `value > Self::MAX` (never truncates).
    fn from_u64(value: u64) -> Self;
}

impl SegIndex for u32 {
    const MAX: u64 = u32::MAX as u64;
    const WIDE: bool = false;
    fn to_u64(self) -> u64 {
        self as u64
    }
    fn from_u64(value: u64) -> Self {
        u32::try_from(value).unwrap_or_else(|_| panic!("{value} does not fit a u32 layout index"))
    }
}

impl SegIndex for u64 {
    const MAX: u64 = u64::MAX;
    const WIDE: bool = true;
    fn to_u64(self) -> u64 {
        self
    }
    fn from_u64(value: u64) -> Self {
        value
    }
}

/// Why a segment layout was rejected. Every variant names the first bad position.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
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
    /// `keys.len()` differs from the number of items (a scan by key: one key per item).
    #[error("keys has {keys} entries but there are {items} items (one key per item is required)")]
    KeysLengthMismatch {
        /// Number of items.
        items: usize,
        /// Number of keys.
        keys: usize,
    },
    /// `owner[index] < owner[index - 1]`: owners must be non-decreasing.
    #[error("owner is not sorted: owner[{index}] = {value} is smaller than owner[{}] = {previous}", index.saturating_sub(1))]
    OwnerNotSorted {
        /// First index whose owner is smaller than its predecessor's.
        index: usize,
        /// `owner[index]`.
        value: u64,
        /// `owner[index - 1]`.
        previous: u64,
    },
    /// `owner[index] >= num_segments`.
    #[error("owner[{index}] = {value} is out of range: there are {num_segments} segments")]
    OwnerOutOfRange {
        /// First index with an owner out of range.
        index: usize,
        /// `owner[index]`.
        value: u64,
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
        value: u64,
    },
    /// The last offset is not the number of items.
    #[error("the last offset, offsets[{index}] = {value}, must equal the item count {items}")]
    LastOffsetNotLen {
        /// Index of the last offset.
        index: usize,
        /// Its value.
        value: u64,
        /// The number of items.
        items: usize,
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
    /// An array of more dimensions than reductions along axes take.
    #[error("the shape has {dims} dimensions; at most {max} are supported")]
    TooManyDims {
        /// The shape's dimensions.
        dims: usize,
        /// The most allowed.
        max: usize,
    },
    /// An axis to reduce is not an axis of the shape.
    #[error("axis {axis} is out of range for a shape of {dims} dimensions")]
    AxisOutOfRange {
        /// The axis.
        axis: usize,
        /// The shape's dimensions.
        dims: usize,
    },
    /// An axis is listed twice.
    #[error("axis {axis} is listed more than once")]
    AxisRepeated {
        /// The axis.
        axis: usize,
    },
    /// The product of the shape's extents does not fit in `usize`.
    #[error("the product of the shape's extents overflows usize")]
    ShapeOverflow,
    /// The shape holds another number of items than given.
    #[error("the shape holds {product} items but {items} were given")]
    ShapeMismatch {
        /// The product of the shape's extents.
        product: usize,
        /// The number of items.
        items: usize,
    },
    /// A count does not fit the layout's index type (or an algorithm's index limit).
    #[error("{what} = {value} is past the limit {limit} of {why}")]
    TooLarge {
        /// What is too large ("item count", "segment count").
        what: &'static str,
        /// The value given.
        value: usize,
        /// The largest value allowed.
        limit: u64,
        /// Why ("u32 offsets: use u64 offsets", ...).
        why: &'static str,
    },
    /// A count within the limits that asks for more values than the host's memory holds (a
    /// segment count, or an empty array's kept extents, past memory with few items): the
    /// allocation of the results failed, and the call returns this instead of aborting.
    #[error(
        "{what} = {value} asks for {bytes} bytes of host memory, which could not be allocated"
    )]
    HostMemory {
        /// What asks for it ("segment count", "result count").
        what: &'static str,
        /// The value given.
        value: usize,
        /// The bytes asked for (saturating).
        bytes: u64,
    },
}

/// Checks that there is one key per item, given their counts (keys of a scan by key are
/// labels: any values).
pub fn check_keys(items: usize, keys: usize) -> Result<(), LayoutError> {
    if keys != items {
        return Err(LayoutError::KeysLengthMismatch { items, keys });
    }
    Ok(())
}

/// Checks CSR offsets for `items` items: first 0, last `items`, non-decreasing.
/// Returns the number of segments (`offsets.len() - 1`).
pub fn check_offsets<I: SegIndex>(offsets: &[I], items: usize) -> Result<usize, LayoutError> {
    check_fits::<I>("item count", items)?;
    let (&first, rest) = offsets.split_first().ok_or(LayoutError::OffsetsEmpty)?;
    if first.to_u64() != 0 {
        return Err(LayoutError::FirstOffsetNotZero {
            value: first.to_u64(),
        });
    }
    let mut previous = first;
    for (i, &value) in rest.iter().enumerate() {
        if value < previous {
            return Err(LayoutError::OffsetsDecreasing {
                index: i + 1,
                value: value.to_u64(),
                previous: previous.to_u64(),
            });
        }
        previous = value;
    }
    if previous.to_u64() != items as u64 {
        return Err(LayoutError::LastOffsetNotLen {
            index: offsets.len() - 1,
            value: previous.to_u64(),
            items,
        });
    }
    Ok(offsets.len() - 1)
}

/// The most segments an owner array may declare: the reductions by owner make its
/// `num_segments + 1` CSR offsets (u64), which must fit one allocation (`isize::MAX` bytes).
pub const MAX_OWNER_SEGMENTS: usize = isize::MAX as usize / std::mem::size_of::<u64>() - 1;

/// Checks an owner array for `items` items and `num_segments` segments: one owner per item,
/// non-decreasing, each below `num_segments`; `num_segments` fits the index type and is at most
/// [`MAX_OWNER_SEGMENTS`].
pub fn check_owner<I: SegIndex>(
    owner: &[I],
    items: usize,
    num_segments: usize,
) -> Result<(), LayoutError> {
    check_fits::<I>("segment count", num_segments)?;
    if num_segments > MAX_OWNER_SEGMENTS {
        return Err(LayoutError::TooLarge {
            what: "segment count",
            value: num_segments,
            limit: MAX_OWNER_SEGMENTS as u64,
            why: "the CSR offsets (segment count + 1 u64 values) of one allocation",
        });
    }
    if owner.len() != items {
        return Err(LayoutError::OwnerLengthMismatch {
            items,
            owners: owner.len(),
        });
    }
    let mut previous = 0u64;
    for (index, &value) in owner.iter().enumerate() {
        let value = value.to_u64();
        if value < previous {
            return Err(LayoutError::OwnerNotSorted {
                index,
                value,
                previous,
            });
        }
        if value >= num_segments as u64 {
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

/// `value` must fit index type `I` (an offset equal to it, or an owner below it).
pub fn check_fits<I: SegIndex>(what: &'static str, value: usize) -> Result<(), LayoutError> {
    if value as u64 > I::MAX {
        Err(LayoutError::TooLarge {
            what,
            value,
            limit: I::MAX,
            why: "u32 layouts (use u64 offsets or owners)",
        })
    } else {
        Ok(())
    }
}

/// Room on the host for `count` values of `T`, or [`LayoutError::HostMemory`] naming `what` =
/// `value`: a call whose layout or shape asks for more values than the host can hold (a segment
/// count or a kept extent past memory, with few items) gets this error instead of the allocator
/// aborting the process, or the system killing it once the values are written. Refused: more
/// bytes than the host's memory and swap together ([`host_memory`]), which no allocation can
/// back even where the system overcommits memory (allocations then succeed for anything the
/// address space holds); then an allocation asked for and given back. Best effort below that:
/// memory other programs use, or a container's limit, may still make a granted count fail later.
pub(crate) fn host_room<T>(
    what: &'static str,
    value: usize,
    count: usize,
) -> Result<(), LayoutError> {
    let bytes = (count as u64).saturating_mul(std::mem::size_of::<T>() as u64);
    let refused = LayoutError::HostMemory { what, value, bytes };
    if host_memory().is_some_and(|total| bytes > total) {
        return Err(refused);
    }
    Vec::<T>::new()
        .try_reserve_exact(count)
        .map_err(|_| refused)
}

/// The host's memory and swap in bytes (`MemTotal` and `SwapTotal` of Linux's `/proc/meminfo`),
/// read once; `None` where it cannot be read.
fn host_memory() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| meminfo_bytes(&std::fs::read_to_string("/proc/meminfo").ok()?))
}

/// `MemTotal` plus `SwapTotal` (0 if absent) of a `/proc/meminfo` text, in bytes.
fn meminfo_bytes(info: &str) -> Option<u64> {
    let kib = |key: &str| {
        info.lines().find_map(|line| {
            let rest = line.strip_prefix(key)?.trim();
            rest.strip_suffix("kB")?.trim().parse::<u64>().ok()
        })
    };
    let total = kib("MemTotal:")?.saturating_add(kib("SwapTotal:").unwrap_or(0));
    Some(total.saturating_mul(1024))
}

/// The segment count of CSR `offsets` over `items` items, checked ([`check_offsets`]), with
/// room on the host for a value of `M` per segment ([`host_room`]): what every reduction by
/// offsets on the host starts with (2^28 empty segments of a 256-byte monoid take 64 GiB).
pub(crate) fn offsets_layout<M, I: SegIndex>(
    offsets: &[I],
    items: usize,
) -> Result<usize, LayoutError> {
    let segments = check_offsets(offsets, items)?;
    host_room::<M>("segment count", segments, segments)?;
    Ok(segments)
}

/// The CSR offsets of `owner` for `items` items and `num_segments` segments, checked
/// ([`check_owner`]), with room on the host for them and for the results, values of `M`
/// ([`host_room`]): what every reduction by owner on the host starts with.
pub(crate) fn owner_layout<M, I: SegIndex>(
    owner: &[I],
    items: usize,
    num_segments: usize,
) -> Result<Vec<u64>, LayoutError> {
    check_owner(owner, items, num_segments)?;
    // the offsets and the results are alive together
    host_room::<(M, u64)>("segment count", num_segments, num_segments + 1)?;
    Ok(offsets_of_checked_owner(owner, num_segments))
}

/// The CSR offsets (`num_segments + 1` entries) of `owner`, a segment id per item: the same
/// segments, or the [`check_owner`] error that names the first bad owner, or
/// [`LayoutError::HostMemory`] where the host has no room for the offsets.
///
/// ```
/// use reduce_core::layout::owner_to_offsets;
/// assert_eq!(owner_to_offsets(&[0u32, 0, 2], 4).unwrap(), [0, 2, 2, 3, 3]);
/// assert!(owner_to_offsets(&[1u32, 0], 2).is_err()); // not sorted
/// ```
pub fn owner_to_offsets<I: SegIndex>(
    owner: &[I],
    num_segments: usize,
) -> Result<Vec<u64>, LayoutError> {
    check_owner(owner, owner.len(), num_segments)?;
    host_room::<u64>("segment count", num_segments, num_segments + 1)?;
    Ok(offsets_of_checked_owner(owner, num_segments))
}

/// [`owner_to_offsets`] of an owner array [`check_owner`] accepted, with room on the host.
fn offsets_of_checked_owner<I: SegIndex>(owner: &[I], num_segments: usize) -> Vec<u64> {
    let mut offsets = Vec::with_capacity(num_segments + 1);
    offsets.push(0u64);
    let mut i = 0usize;
    for segment in 0..num_segments as u64 {
        i += owner[i..].partition_point(|&o| o.to_u64() <= segment);
        offsets.push(i as u64);
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_reads_memory_and_swap() {
        let info = "MemTotal:       131072 kB\nMemFree:  5 kB\nSwapTotal:        1024 kB\n";
        assert_eq!(meminfo_bytes(info), Some((131072 + 1024) * 1024));
        assert_eq!(meminfo_bytes("MemTotal: 8 kB\n"), Some(8 * 1024));
        assert_eq!(meminfo_bytes("SwapTotal: 8 kB\n"), None);
        assert_eq!(meminfo_bytes("MemTotal: lots\n"), None);
        // More than the host holds is refused whatever the allocator would grant.
        if let Some(total) = host_memory() {
            let count = (total / 4096 + 1) as usize;
            let e = host_room::<[u8; 4096]>("segment count", 7, count).unwrap_err();
            assert!(
                matches!(e, LayoutError::HostMemory { value: 7, .. }),
                "{e:?}"
            );
        }
    }

    #[test]
    fn offsets_errors_name_the_first_bad_index() {
        assert_eq!(check_offsets::<u32>(&[], 0), Err(LayoutError::OffsetsEmpty));
        assert_eq!(check_offsets(&[0u32], 0), Ok(0));
        assert_eq!(
            check_offsets(&[1u32, 2], 2),
            Err(LayoutError::FirstOffsetNotZero { value: 1 })
        );
        assert_eq!(
            check_offsets(&[0u64, 3, 2, 4], 4),
            Err(LayoutError::OffsetsDecreasing {
                index: 2,
                value: 2,
                previous: 3
            })
        );
        assert_eq!(
            check_offsets(&[0u32, 3], 4),
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
            check_owner(&[0u32, 0], 3, 1),
            Err(LayoutError::OwnerLengthMismatch {
                items: 3,
                owners: 2
            })
        );
        assert_eq!(
            check_owner(&[0u64, 2, 1], 3, 3),
            Err(LayoutError::OwnerNotSorted {
                index: 2,
                value: 1,
                previous: 2
            })
        );
        assert_eq!(
            check_owner(&[0u32, 1, 5], 3, 3),
            Err(LayoutError::OwnerOutOfRange {
                index: 2,
                value: 5,
                num_segments: 3
            })
        );
        assert_eq!(check_owner::<u32>(&[], 0, 0), Ok(()));
    }

    #[test]
    fn sizes_past_the_u32_index_limit_are_rejected() {
        let past = u32::MAX as usize + 1;
        let too_large = |what| LayoutError::TooLarge {
            what,
            value: past,
            limit: u32::MAX as u64,
            why: "u32 layouts (use u64 offsets or owners)",
        };
        assert_eq!(check_offsets(&[0u32], past), Err(too_large("item count")));
        assert_eq!(
            check_owner::<u32>(&[], 0, past),
            Err(too_large("segment count"))
        );
        // u64 layouts take them.
        assert_eq!(
            check_offsets(&[0u64], past),
            Err(LayoutError::LastOffsetNotLen {
                index: 0,
                value: 0,
                items: past
            })
        );
        assert_eq!(check_owner::<u64>(&[], 0, past), Ok(()));
        // u64 owners stop where their CSR offsets could not be allocated.
        assert_eq!(check_owner::<u64>(&[], 0, MAX_OWNER_SEGMENTS), Ok(()));
        assert!(matches!(
            check_owner::<u64>(&[], 0, MAX_OWNER_SEGMENTS + 1),
            Err(LayoutError::TooLarge {
                what: "segment count",
                ..
            })
        ));
    }

    #[test]
    fn owner_to_offsets_keeps_empty_segments() {
        assert_eq!(
            owner_to_offsets(&[1u32, 1, 3], 5),
            Ok(vec![0, 0, 2, 2, 3, 3])
        );
        assert_eq!(owner_to_offsets::<u64>(&[], 2), Ok(vec![0, 0, 0]));
    }

    #[test]
    #[should_panic(expected = "does not fit a u32 layout index")]
    fn a_u32_index_never_truncates() {
        assert_eq!(<u32 as SegIndex>::from_u64(u32::MAX as u64), u32::MAX);
        <u32 as SegIndex>::from_u64(1 << 32);
    }

    #[test]
    fn owner_to_offsets_rejects_what_check_owner_rejects() {
        // Unchecked, these gave offsets of other segments (or decreasing ones).
        assert_eq!(
            owner_to_offsets(&[2u32, 1, 1], 3),
            Err(LayoutError::OwnerNotSorted {
                index: 1,
                value: 1,
                previous: 2
            })
        );
        assert_eq!(
            owner_to_offsets(&[0u64, 3], 3),
            Err(LayoutError::OwnerOutOfRange {
                index: 1,
                value: 3,
                num_segments: 3
            })
        );
        assert!(matches!(
            owner_to_offsets::<u32>(&[], 1 << 33),
            Err(LayoutError::TooLarge { .. })
        ));
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
