//! The sequential references every backend and every algorithm is compared against.

use crate::layout::{offsets_layout, owner_layout, LayoutError, SegIndex};
use crate::Monoid;

/// The sequential left fold `identity ⊕ items[0] ⊕ items[1] ⊕ … ⊕ items[n-1]`: THE reference.
///
/// ```
/// use reduce_core::{fold, Sum};
/// assert_eq!(fold(&[Sum(1u32), Sum(2), Sum(3)]), Sum(6));
/// assert_eq!(fold::<Sum<u32>>(&[]), Sum(0));
/// ```
pub fn fold<M: Monoid>(items: &[M]) -> M {
    items
        .iter()
        .fold(M::identity(), |acc, &item| M::combine(acc, item))
}

/// Folds each segment of a CSR layout: segment `s` is `items[offsets[s]..offsets[s + 1]]`.
/// `offsets` holds `segments + 1` entries, starts at 0, ends at `items.len()` and never decreases;
/// empty segments give the identity. `u32` or `u64` offsets. Errors: those of
/// [`check_offsets`](crate::layout::check_offsets), then [`LayoutError::HostMemory`] where the
/// host cannot hold the results.
///
/// ```
/// use reduce_core::{fold_segments, Sum};
/// let items = [Sum(1u32), Sum(2), Sum(3)];
/// assert_eq!(fold_segments(&items, &[0u32, 2, 2, 3]).unwrap(), vec![Sum(3), Sum(0), Sum(3)]);
/// ```
pub fn fold_segments<M: Monoid, I: SegIndex>(
    items: &[M],
    offsets: &[I],
) -> Result<Vec<M>, LayoutError> {
    per_segment(items.len(), offsets, |start, end| fold(&items[start..end]))
}

/// `value(start, end)` of each segment of checked CSR `offsets` over `items` items.
pub(crate) fn per_segment<M, I: SegIndex>(
    items: usize,
    offsets: &[I],
    value: impl Fn(usize, usize) -> M,
) -> Result<Vec<M>, LayoutError> {
    offsets_layout::<M, I>(offsets, items)?;
    Ok(offsets
        .windows(2)
        .map(|w| value(w[0].to_u64() as usize, w[1].to_u64() as usize))
        .collect())
}

/// The segments of checked owners as CSR offsets, for `by_offsets` (a CSR form's function).
pub(crate) fn per_owner<M, I: SegIndex>(
    items: &[M],
    owner: &[I],
    num_segments: usize,
    by_offsets: impl FnOnce(&[M], &[u64]) -> Result<Vec<M>, LayoutError>,
) -> Result<Vec<M>, LayoutError> {
    by_offsets(
        items,
        &owner_layout::<M, I>(owner, items.len(), num_segments)?,
    )
}

/// Folds the items of each owner: `owner[i]` is item `i`'s segment, non-decreasing and below
/// `num_segments` (`u32` or `u64`); segments that own no item give the identity. Errors: those
/// of [`check_owner`](crate::layout::check_owner), then [`LayoutError::HostMemory`] where the
/// host cannot hold the results and the layout's CSR offsets.
///
/// ```
/// use reduce_core::{fold_by_owner, Sum};
/// let items = [Sum(1u32), Sum(2), Sum(3)];
/// assert_eq!(fold_by_owner(&items, &[0u32, 0, 2], 3).unwrap(), vec![Sum(3), Sum(0), Sum(3)]);
/// ```
pub fn fold_by_owner<M: Monoid, I: SegIndex>(
    items: &[M],
    owner: &[I],
    num_segments: usize,
) -> Result<Vec<M>, LayoutError> {
    per_owner(items, owner, num_segments, fold_segments)
}
