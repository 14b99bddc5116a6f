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

/// A fingerprint that differs from this rank's is [`ClusterError::Mismatch`]: the peer's bytes
/// would be read as another type. `fingerprints` in rank order.
pub(super) fn check_monoid(fingerprints: impl IntoIterator<Item = u64>, mine: u64) -> Result<()> {
    match fingerprints.into_iter().position(|f| f != mine) {
        None => Ok(()),
        Some(rank) => Err(ClusterError::Mismatch {
            what: "the monoid",
            reason: format!(
                "rank {rank} reduces another monoid (its name, size or code differs): every \
                 rank must make the same call"
            ),
        }),
    }
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

/// Each rank's `sent` edges (in rank order) against those this rank's offsets give (`mine`):
/// a difference is [`ClusterError::Mismatch`], since the partials joined across the shards
/// would cover other items than this rank's offsets say.
pub(super) fn check_edges(sent: &[[u64; 2]], mine: &[[u64; 2]]) -> Result<()> {
    match (sent.iter().zip(mine)).position(|(s, m)| s != m) {
        None if sent.len() == mine.len() => Ok(()),
        rank => Err(ClusterError::Mismatch {
            what: "the offsets",
            reason: format!(
                "rank {}'s first or last segment covers other items: the ranks were given \
                 different offsets",
                rank.unwrap_or(sent.len().min(mine.len()))
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reduce_core::Sum;

    #[test]
    fn monoids_of_one_size_have_other_fingerprints() {
        let f32_sum = monoid_fingerprint::<Sum<f32>>();
        assert_eq!(f32_sum, monoid_fingerprint::<Sum<f32>>());
        assert_ne!(f32_sum, monoid_fingerprint::<Sum<u32>>());
        assert_ne!(f32_sum, monoid_fingerprint::<Sum<f64>>());
        assert!(check_monoid([f32_sum, f32_sum], f32_sum).is_ok());
        let other = monoid_fingerprint::<Sum<i32>>();
        let e = check_monoid([f32_sum, other, f32_sum], f32_sum).unwrap_err();
        assert!(e.to_string().contains("rank 1"), "{e}");
    }

    /// Two ranks of 5 items each: offsets that differ inside rank 1's shard move where its
    /// first partial ends, which rank 0 joins into segment 1: a mismatch, not a value of other
    /// items.
    #[test]
    fn offsets_that_move_a_joined_partial_are_a_mismatch() {
        let shards = [0..5, 5..10];
        let touches = [
            Some(Touch { first: 0, last: 1 }),
            Some(Touch { first: 1, last: 2 }),
        ];
        let view = |offsets: &[u32]| -> Vec<[u64; 2]> {
            (shards.iter().zip(touches))
                .map(|(s, t)| edges(offsets, s.clone(), t))
                .collect()
        };
        let (mine, theirs) = (view(&[0, 2, 8, 10]), view(&[0, 2, 7, 10]));
        assert_eq!(mine, [[2, 2], [8, 8]]);
        assert!(check_edges(&mine, &mine).is_ok());
        let e = check_edges(&[mine[0], theirs[1]], &mine).unwrap_err();
        assert!(e.to_string().contains("rank 1"), "{e}");
        assert!(check_edges(&mine[..1], &mine).is_err());
        // A shard that touches no segment sends zeros.
        assert_eq!(edges(&[0u64, 10], 10..10, None), [0, 0]);
        // One segment over both shards: each partial is its whole shard.
        let whole = [Some(Touch { first: 0, last: 0 }); 2];
        let one = [0u64, 10];
        assert_eq!(edges(&one, 0..5, whole[0]), [5, 0]);
        assert_eq!(edges(&one, 5..10, whole[1]), [10, 5]);
    }
}
