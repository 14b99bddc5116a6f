//! What ranks in separate processes check of each other before they read each other's bytes:
//! that they reduce the same monoid (a fingerprint of its name, size and CUDA code, alike in
//! every process of one program), and, for segmented reductions by CSR offsets, that each
//! rank's first and last partial cover the items the others' offsets say. Ranks of one process
//! get their inputs from one call and always agree; these checks are for `Cluster::join`.

use super::error::{ClusterError, Result};
use crate::jit::cache::fnv1a;
use crate::jit::{Own, Program};
use reduce_core::shard::Touch;
use reduce_core::CudaMonoid;
use std::ops::Range;

/// `M`'s fingerprint: the same in every process that runs the same monoid (its CUDA name, its
/// size and its CUDA code), another where any of them differs.
pub(super) fn monoid_fingerprint<M: CudaMonoid>() -> u64 {
    let own = Own::<M>::new();
    let size = (std::mem::size_of::<M>() as u64).to_le_bytes();
    let code = own.monoid_text();
    let parts: [&[u8]; 3] = [own.monoid_name().as_bytes(), &size, code.as_bytes()];
    fnv1a(0x9e37_79b9_7f4a_7c15, &parts)
}

/// Where the first segment a shard touches ends and where its last one starts, clipped to the
/// shard (global item indices), as the validated global CSR `offsets` say: the items of the
/// shard's first and last partial. `[0, 0]` for a shard that touches none.
pub(super) fn edges<O: Copy + Into<u64>>(
    offsets: &[O],
    shard: Range<usize>,
    touch: Option<Touch>,
) -> [u64; 2] {
    match touch {
        None => [0, 0],
        Some(t) => [
            offsets[t.first + 1].into().min(shard.end as u64),
            offsets[t.last].into().max(shard.start as u64),
        ],
    }
}

/// A fingerprint of a rank's view of the layout, which every rank must share: for CSR offsets
/// each shard's touched segments and [`edges`] (what the partials joined across shards cover),
/// for owners the segment count. Its `words`, hashed.
pub(super) fn layout_fingerprint(words: impl IntoIterator<Item = u64>) -> u64 {
    let bytes: Vec<u8> = words.into_iter().flat_map(u64::to_le_bytes).collect();
    fnv1a(0x51_7cc1_b727_220a, &[&bytes])
}

/// The words of a CSR layout's view for [`layout_fingerprint`]: each shard's touch (a presence
/// word, first and last segment) and edges, in rank order.
pub(super) fn offsets_view(touches: &[Option<Touch>], edges: &[[u64; 2]]) -> Vec<u64> {
    (touches.iter().zip(edges))
        .flat_map(|(t, e)| match t {
            Some(t) => [1, t.first as u64, t.last as u64, e[0], e[1]],
            None => [0; 5],
        })
        .collect()
}

/// A rank's status where it reduced another monoid in the default mode: its signed status read
/// with this rank's fingerprint ([`unsign`]).
pub(super) const STATUS_OTHER_MONOID: u64 = 3;

/// A rank's two statuses as it sends them with more than one process in the default mode — good
/// and failed, each XORed with the monoid's fingerprint — so that a rank of another monoid
/// (whose partial's bytes would be read as this one's) is [`unsign`]'s mismatch on every rank.
pub(super) fn signed_statuses<M: CudaMonoid>() -> [u64; 2] {
    let monoid = monoid_fingerprint::<M>();
    [monoid, monoid ^ 1]
}

/// The ranks' statuses as they were sent with more than one process in the default mode —
/// each XORed with its sender's monoid fingerprint ([`signed_statuses`]) — read with this
/// rank's fingerprint `monoid`: 0 (good) and 1 (failed) where the sender reduced the same
/// monoid, [`STATUS_OTHER_MONOID`] where it did not.
pub(super) fn unsign(
    words: impl IntoIterator<Item = u64>,
    monoid: u64,
) -> impl Iterator<Item = u64> {
    words.into_iter().map(move |w| match w ^ monoid {
        status @ (0 | 1) => status,
        _ => STATUS_OTHER_MONOID,
    })
}

/// A fingerprint (`fingerprints` in rank order) that differs from this rank's is
/// [`ClusterError::Mismatch`] of `what`: the monoid (its bytes would be read as another type),
/// the offsets or the segment count (partials of other items would be joined). Every rank
/// compares every fingerprint, so every rank whose fingerprint differs from another's fails,
/// and none goes on to a later exchange alone.
pub(super) fn check(
    fingerprints: impl IntoIterator<Item = u64>,
    mine: u64,
    what: &'static str,
) -> Result<()> {
    match fingerprints.into_iter().position(|f| f != mine) {
        None => Ok(()),
        Some(rank) => Err(ClusterError::Mismatch {
            what,
            reason: format!(
                "rank {rank}'s fingerprint of {what} differs from this rank's: every rank must \
                 make the same call"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduce_core::Sum;

    #[test]
    fn statuses_signed_by_another_monoid_read_as_a_mismatch() {
        let mine = monoid_fingerprint::<Sum<f32>>();
        let [good, failed] = signed_statuses::<Sum<f32>>();
        let [other_good, other_failed] = signed_statuses::<Sum<u32>>();
        let read: Vec<u64> = unsign([good, failed, other_good, other_failed], mine).collect();
        assert_eq!(read, [0, 1, STATUS_OTHER_MONOID, STATUS_OTHER_MONOID]);
        // A rank that never wrote its status (zeroed words) is no good status either.
        assert_eq!(unsign([0], mine).next(), Some(STATUS_OTHER_MONOID));
    }

    #[test]
    fn monoids_of_one_size_have_other_fingerprints() {
        let f32_sum = monoid_fingerprint::<Sum<f32>>();
        assert_eq!(f32_sum, monoid_fingerprint::<Sum<f32>>());
        assert_ne!(f32_sum, monoid_fingerprint::<Sum<u32>>());
        assert_ne!(f32_sum, monoid_fingerprint::<Sum<f64>>());
        assert!(check([f32_sum, f32_sum], f32_sum, "the monoid").is_ok());
        let other = monoid_fingerprint::<Sum<i32>>();
        let e = check([f32_sum, other, f32_sum], f32_sum, "the monoid").unwrap_err();
        assert!(e.to_string().contains("rank 1"), "{e}");
    }

    /// Two ranks of 5 items each: offsets that differ inside rank 1's shard move where its
    /// first partial ends, which rank 0 joins into segment 1: both ranks' fingerprints of the
    /// view differ, so both fail.
    #[test]
    fn offsets_that_move_a_joined_partial_are_a_mismatch() {
        let shards = [0..5, 5..10];
        let touches = [
            Some(Touch { first: 0, last: 1 }),
            Some(Touch { first: 1, last: 2 }),
        ];
        let view = |offsets: &[u32]| -> u64 {
            let edges: Vec<[u64; 2]> = (shards.iter().zip(touches))
                .map(|(s, t)| edges(offsets, s.clone(), t))
                .collect();
            assert_eq!(edges[0], [2, 2]);
            layout_fingerprint(offsets_view(&touches, &edges))
        };
        let (mine, theirs) = (view(&[0, 2, 8, 10]), view(&[0, 2, 7, 10]));
        assert_eq!(mine, view(&[0, 2, 8, 10]));
        assert!(check([mine, mine], mine, "the offsets").is_ok());
        for me in [mine, theirs] {
            let e = check([mine, theirs], me, "the offsets").unwrap_err();
            assert!(e.to_string().contains("fingerprint of the offsets"), "{e}");
        }
        // A shard that touches no segment sends zeros.
        assert_eq!(edges(&[0u64, 10], 10..10, None), [0, 0]);
        // One segment over both shards: each partial is its whole shard.
        let whole = Some(Touch { first: 0, last: 0 });
        assert_eq!(edges(&[0u64, 10], 0..5, whole), [5, 0]);
        assert_eq!(edges(&[0u64, 10], 5..10, whole), [10, 5]);
        // Owners: the segment count.
        let count = |s: u64| layout_fingerprint([s]);
        assert!(check([count(7), count(8)], count(7), "the segment count").is_err());
    }
}
