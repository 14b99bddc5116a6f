//! Scans (prefix folds): the sequential references [`scan`], [`scan_segments`] and
//! [`scan_by_key`], which every backend is compared with.
//!
//! An inclusive scan's output `i` is `x_0 ⊕ … ⊕ x_i`; an exclusive scan's is the fold of the
//! items before `i` (`identity` at 0). A segmented scan restarts at every segment: output `i` is
//! the prefix of `i`'s own segment. Each output is a left fold of contiguous items, so for any
//! associative monoid the order — and with it the result of a non-commutative one — is the
//! sequence's.

use crate::layout::{check_keys, check_offsets, LayoutError, SegIndex};
use crate::Monoid;

/// Which prefixes a scan returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scan {
    /// Output `i` is `x_0 ⊕ x_1 ⊕ … ⊕ x_i` (the prefix that includes item `i`).
    Inclusive,
    /// Output `i` is `x_0 ⊕ … ⊕ x_{i−1}`; output 0 (and, segmented, the first output of each
    /// segment) is the identity.
    Exclusive,
}

/// The scan of `xs`, left to right: one output per item.
///
/// ```
/// use reduce_core::{scan, Scan, Sum};
/// let xs = [Sum(1u32), Sum(2), Sum(3)];
/// assert_eq!(scan(&xs, Scan::Inclusive), vec![Sum(1), Sum(3), Sum(6)]);
/// assert_eq!(scan(&xs, Scan::Exclusive), vec![Sum(0), Sum(1), Sum(3)]);
/// ```
pub fn scan<M: Monoid>(xs: &[M], kind: Scan) -> Vec<M> {
    let mut out = Vec::with_capacity(xs.len());
    let mut acc = M::identity();
    for &x in xs {
        let next = M::combine(acc, x);
        out.push(match kind {
            Scan::Inclusive => next,
            Scan::Exclusive => acc,
        });
        acc = next;
    }
    out
}

/// The scan of each segment of a CSR layout, restarting at every segment: segment `s` is
/// `xs[offsets[s]..offsets[s + 1]]`, and its outputs are [`scan`] of it. `offsets` holds
/// `segments + 1` entries (`u32` or `u64`), starts at 0, ends at `xs.len()` and never decreases
/// (the layout errors of [`crate::fold_segments`]); empty segments have no outputs.
///
/// ```
/// use reduce_core::{scan_segments, Scan, Sum};
/// let xs = [Sum(1u32), Sum(2), Sum(3), Sum(4)];
/// let out = scan_segments(&xs, &[0u32, 2, 2, 4], Scan::Inclusive).unwrap();
/// assert_eq!(out, vec![Sum(1), Sum(3), Sum(3), Sum(7)]);
/// ```
pub fn scan_segments<M: Monoid, I: SegIndex>(
    xs: &[M],
    offsets: &[I],
    kind: Scan,
) -> Result<Vec<M>, LayoutError> {
    check_offsets(offsets, xs.len())?;
    let mut out = Vec::with_capacity(xs.len());
    for w in offsets.windows(2) {
        out.extend(scan(
            &xs[w[0].to_u64() as usize..w[1].to_u64() as usize],
            kind,
        ));
    }
    Ok(out)
}

/// The scan of each run of equal keys, restarting wherever the key changes (CUB's scan by key):
/// a segment is a maximal run of equal adjacent keys (`u32` or `u64`).
///
/// Keys are labels, not segment ids: they need not be sorted, the same key may come back later
/// (a new segment), and no segment count is passed — unlike the owners of
/// [`crate::fold_by_owner`], which are sorted ids below a count. So the only error is a length
/// mismatch ([`LayoutError::KeysLengthMismatch`]).
///
/// ```
/// use reduce_core::{scan_by_key, Scan, Sum};
/// let xs = [Sum(1u32), Sum(2), Sum(3), Sum(4)];
/// let out = scan_by_key(&xs, &[7u32, 7, 3, 7], Scan::Inclusive).unwrap();
/// assert_eq!(out, vec![Sum(1), Sum(3), Sum(3), Sum(4)]);
/// ```
pub fn scan_by_key<M: Monoid, K: SegIndex>(
    xs: &[M],
    keys: &[K],
    kind: Scan,
) -> Result<Vec<M>, LayoutError> {
    check_keys(xs.len(), keys.len())?;
    let mut out = Vec::with_capacity(xs.len());
    let mut start = 0;
    for i in 1..=xs.len() {
        if i == xs.len() || keys[i] != keys[i - 1] {
            out.extend(scan(&xs[start..i], kind));
            start = i;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_monoids::{affine_items as items, Affine};
    use crate::{fold, Sum};

    #[test]
    fn every_output_is_the_fold_of_its_prefix() {
        let xs = items(1000);
        let inclusive = scan(&xs, Scan::Inclusive);
        let exclusive = scan(&xs, Scan::Exclusive);
        for i in 0..xs.len() {
            assert_eq!(inclusive[i], fold(&xs[..=i]));
            assert_eq!(exclusive[i], fold(&xs[..i]));
        }
        assert!(scan::<Affine>(&[], Scan::Inclusive).is_empty());
    }

    #[test]
    fn segments_restart_and_both_forms_agree() {
        let xs = items(60);
        let lengths = [0usize, 3, 1, 0, 0, 20, 1, 35, 0];
        let mut offsets = vec![0u64];
        for l in lengths {
            offsets.push(offsets.last().unwrap() + l as u64);
        }
        // Keys that change at every non-empty segment's start (and repeat an earlier key).
        let mut keys = Vec::new();
        for (s, &l) in lengths.iter().enumerate() {
            keys.extend(std::iter::repeat_n((s % 2) as u32 + 10 * (s as u32 % 3), l));
        }
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            let by_offsets = scan_segments(&xs, &offsets, kind).unwrap();
            let mut expected = Vec::new();
            for w in offsets.windows(2) {
                let seg = &xs[w[0] as usize..w[1] as usize];
                for i in 0..seg.len() {
                    expected.push(match kind {
                        Scan::Inclusive => fold(&seg[..=i]),
                        Scan::Exclusive => fold(&seg[..i]),
                    });
                }
            }
            assert_eq!(by_offsets, expected);
            assert_eq!(scan_by_key(&xs, &keys, kind).unwrap(), expected);
        }
    }

    #[test]
    fn keys_are_labels_and_only_their_count_is_checked() {
        let xs = [Sum(1u64), Sum(2), Sum(3), Sum(4), Sum(5)];
        // Unsorted keys; key 9 comes back after another key: a new segment.
        let out = scan_by_key(&xs, &[9u64, 9, 1, 9, 9], Scan::Exclusive).unwrap();
        assert_eq!(out, vec![Sum(0), Sum(1), Sum(0), Sum(0), Sum(4)]);
        assert_eq!(
            scan_by_key(&xs, &[1u32, 2], Scan::Inclusive),
            Err(LayoutError::KeysLengthMismatch { items: 5, keys: 2 })
        );
        assert!(matches!(
            scan_segments(&xs, &[0u32, 6], Scan::Inclusive),
            Err(LayoutError::LastOffsetNotLen { .. })
        ));
    }
}
