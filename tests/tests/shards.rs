//! The host side of reductions over several devices (`reduce_core::shard`): shard planning,
//! segment ownership and the rank-order join of carries, run around the sequential references
//! and compared with `fold`, `fold_segments` and `fold_by_owner` over the whole sequence, bit
//! for bit, with non-commutative monoids. Uneven and empty shards, segments that cross one or
//! every shard boundary, empty segments on boundaries. Runs everywhere (no device).

use proptest::prelude::*;
use reduce_core::shard::{
    fold_sharded, fold_sharded_by_owner, fold_sharded_by_owner_portable, fold_sharded_segments,
    fold_sharded_segments_portable, SegmentPlan, ShardError, Shards,
};
use reduce_core::Sum;
use reduce_core::{fold, fold_by_owner, fold_segments, LayoutError};
use reduce_tests::floats::{assert_same_bits, hard_f32, SameBits};
use reduce_tests::*;

/// Random segment lengths; empty segments and segments longer than a shard are common.
fn lengths() -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        proptest::collection::vec(0u32..4, 0..60),
        proptest::collection::vec(prop_oneof![Just(0u32), 1u32..20, 50u32..300], 0..20),
        (1u32..500).prop_map(|n| vec![n]),
        (1u32..300).prop_map(|n| vec![0, 0, n, 0, 0]),
    ]
}

/// Shard lengths over `n` items for 1..=8 ranks: random cut points, so shards are uneven and
/// often empty (at the start, in the middle, at the end).
fn shard_lens(n: usize) -> impl Strategy<Value = Vec<usize>> {
    (1usize..=8).prop_flat_map(move |ranks| {
        proptest::collection::vec(prop_oneof![0..=n, Just(0), Just(n), Just(n / 2)], ranks - 1)
            .prop_map(move |mut cuts| {
                cuts.sort_unstable();
                let mut lens = Vec::with_capacity(cuts.len() + 1);
                let mut previous = 0;
                for cut in cuts.into_iter().chain(std::iter::once(n)) {
                    lens.push(cut - previous);
                    previous = cut;
                }
                lens
            })
    })
}

/// A segment layout and shards over its items.
fn layout() -> impl Strategy<Value = (Vec<u32>, Vec<usize>)> {
    lengths().prop_flat_map(|lengths| {
        let n = lengths.iter().map(|&l| l as usize).sum();
        (Just(lengths), shard_lens(n))
    })
}

/// Segment lengths for the portable grouping over shards: besides [`lengths`], segments of many
/// runs (so that shards hold blocks of several levels and segments cross them), and runs of
/// empty segments.
fn portable_lengths() -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        lengths(),
        proptest::collection::vec(prop_oneof![0u32..3, 1u32..40, 100u32..2500], 1..12),
        (1u32..6000).prop_map(|n| vec![0, n, 0]),
    ]
}

/// A portable segment layout and shards over its items.
fn portable_layout() -> impl Strategy<Value = (Vec<u32>, Vec<usize>)> {
    portable_lengths().prop_flat_map(|lengths| {
        let n = lengths.iter().map(|&l| l as usize).sum();
        (Just(lengths), shard_lens(n))
    })
}

/// The same error from the global check and from the sharded one.
fn same_owner_error(global: &LayoutError, sharded: &ShardError) -> bool {
    match (global, sharded) {
        (
            LayoutError::OwnerNotSorted {
                index,
                value,
                previous,
            },
            ShardError::OwnerNotSorted {
                index: i,
                value: v,
                previous: p,
            },
        ) => index == i && *value == *v && *previous == *p,
        (
            LayoutError::OwnerOutOfRange {
                index,
                value,
                num_segments,
            },
            ShardError::OwnerOutOfRange {
                index: i,
                value: v,
                num_segments: s,
            },
        ) => index == i && *value == *v && num_segments == s,
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn plain_over_shards_is_the_fold(seed: u64, lens in (0usize..300).prop_flat_map(shard_lens)) {
        let n = lens.iter().sum::<usize>();
        let shards = Shards::from_lens(&lens).unwrap();
        let items = Mat2::random_vec(n, seed);
        prop_assert_eq!(fold_sharded(&shards, &items).unwrap(), fold(&items));
        let items = KeepFirst::random_vec(n, seed);
        prop_assert_eq!(fold_sharded(&shards, &items).unwrap(), fold(&items));
    }

    /// Both forms, three non-commutative monoids: the owned values of all ranks, in rank
    /// order, are the sequential segmented fold; both forms plan the same ownership.
    #[test]
    fn segments_over_shards_are_the_fold((lengths, lens) in layout(), seed: u64) {
        let shards = Shards::from_lens(&lens).unwrap();
        let offsets = offsets_of(&lengths);
        let owner = owners_of(&lengths);
        let n = shards.items();
        let segments = lengths.len();

        fn check<M: Random>(shards: &Shards, offsets: &[u32], owner: &[u32], segments: usize, seed: u64) -> Result<(), TestCaseError> {
            let items = M::random_vec(shards.items(), seed);
            let expected = fold_segments(&items, offsets).unwrap();
            let by_offsets = fold_sharded_segments(shards, &items, offsets).unwrap();
            prop_assert_eq!(&by_offsets.concat(), &expected);
            let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
            prop_assert_eq!(&fold_sharded_segments(shards, &items, &wide).unwrap(), &by_offsets);
            let by_owner = fold_sharded_by_owner(shards, &items, owner, segments).unwrap();
            prop_assert_eq!(&by_owner, &by_offsets);
            prop_assert_eq!(&fold_by_owner(&items, owner, segments).unwrap(), &expected);
            Ok(())
        }
        check::<Affine>(&shards, &offsets, &owner, segments, seed)?;
        check::<KeepLast>(&shards, &offsets, &owner, segments, seed)?;
        check::<Mat2>(&shards, &offsets, &owner, segments, seed)?;

        // Ownership: contiguous ranges in rank order covering every segment; a segment is
        // owned by the last non-empty shard starting at or before its first offset.
        let plan = SegmentPlan::from_offsets(&shards, &offsets).unwrap();
        let mut next = 0;
        for rank in 0..shards.ranks() {
            let owned = plan.owned(rank);
            prop_assert_eq!(owned.start, next);
            next = owned.end;
            for s in owned {
                prop_assert_eq!(plan.owner_of(s), Some(rank));
                let start = offsets[s] as usize;
                let expected_owner = (0..shards.ranks())
                    .rfind(|&r| !shards.range(r).is_empty() && shards.range(r).start <= start)
                    .unwrap_or(0);
                prop_assert_eq!(rank, expected_owner);
            }
            let assembly = plan.assembly(rank);
            prop_assert_eq!(assembly.len(), plan.owned(rank).len());
            if let Some(t) = plan.touch(rank) {
                prop_assert!(assembly.local.end <= t.segments().len());
                prop_assert_eq!(
                    plan.local_offsets(&offsets, rank).unwrap().last().copied(),
                    Some(shards.range(rank).len() as u32)
                );
            }
        }
        prop_assert_eq!(next, segments);
        prop_assert_eq!(n, *offsets.last().unwrap() as usize);
    }

    /// The portable grouping over shards, both forms: the owned values of all ranks, in rank
    /// order, have `portable::fold_segments`' bits — f32 and f64 sums whose bits depend on the
    /// grouping, whatever the shard boundaries (inside runs, inside segments, empty shards) —
    /// and an exactly associative monoid gets the sequential fold.
    #[test]
    fn portable_segments_over_shards_have_the_portable_bits(
        (lengths, lens) in portable_layout(),
        seed: u64,
    ) {
        let shards = Shards::from_lens(&lens).unwrap();
        let offsets = offsets_of(&lengths);
        let owner = owners_of(&lengths);
        let segments = lengths.len();
        let n = shards.items();

        fn check<M: reduce_core::Monoid + SameBits>(
            shards: &Shards,
            items: &[M],
            offsets: &[u32],
            owner: &[u32],
            segments: usize,
        ) {
            let want = reduce_core::portable::fold_segments(items, offsets).unwrap();
            let by_offsets = fold_sharded_segments_portable(shards, items, offsets).unwrap();
            assert_same_bits(&by_offsets.concat(), &want, "offsets form");
            let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
            let wide = fold_sharded_segments_portable(shards, items, &wide).unwrap();
            assert_same_bits(&wide.concat(), &want, "u64 offsets");
            let by_owner = fold_sharded_by_owner_portable(shards, items, owner, segments).unwrap();
            assert_same_bits(&by_owner.concat(), &want, "owner form");
        }
        let f32s: Vec<Sum<f32>> = hard_f32(n, seed, true).into_iter().map(Sum).collect();
        check(&shards, &f32s, &offsets, &owner, segments);
        let f64s: Vec<Sum<f64>> = f32s.iter().map(|x| Sum(x.0 as f64 * 1e-3 + 1.0)).collect();
        check(&shards, &f64s, &offsets, &owner, segments);
        let affine = Affine::random_vec(n, seed);
        let want = fold_segments(&affine, &offsets).unwrap();
        let by_offsets = fold_sharded_segments_portable(&shards, &affine, &offsets).unwrap();
        prop_assert_eq!(&by_offsets.concat(), &want);
        let by_owner = fold_sharded_by_owner_portable(&shards, &affine, &owner, segments).unwrap();
        prop_assert_eq!(&by_owner.concat(), &want);
    }

    /// Arbitrary (mostly invalid) owners over arbitrary shards: never a panic, and the sharded
    /// check finds the same first bad global index as the global one.
    #[test]
    fn bad_owners_name_the_same_index(
        owner in proptest::collection::vec(prop_oneof![0u32..6, Just(u32::MAX), any::<u32>()], 0..40),
        num_segments in prop_oneof![0usize..8, Just(usize::MAX)],
        lens in (0usize..40).prop_flat_map(shard_lens),
        seed: u64,
    ) {
        let shards = Shards::from_lens(&lens).unwrap();
        let items = Affine::random_vec(shards.items(), seed);
        let global = fold_by_owner(&items, &owner, num_segments);
        let sharded = fold_sharded_by_owner(&shards, &items, &owner, num_segments);
        // The portable plan checks the owners the same way, and never panics.
        let portable = fold_sharded_by_owner_portable(&shards, &items, &owner, num_segments);
        prop_assert_eq!(portable.as_ref().err(), sharded.as_ref().err());
        match (global, sharded) {
            (Ok(expected), Ok(owned)) => prop_assert_eq!(owned.concat(), expected),
            // Both find a bad owner: the same one.
            (Err(g @ (LayoutError::OwnerNotSorted { .. } | LayoutError::OwnerOutOfRange { .. })),
             Err(s @ (ShardError::OwnerNotSorted { .. } | ShardError::OwnerOutOfRange { .. }))) => {
                prop_assert!(same_owner_error(&g, &s), "global {g:?} vs sharded {s:?}")
            }
            // Length and size limits are checked in another order.
            (Err(_), Err(_)) => {}
            (g, s) => prop_assert!(false, "global {g:?} vs sharded {s:?}"),
        }
    }

    /// Arbitrary (mostly invalid) offsets: never a panic; accepted exactly when the global
    /// reference accepts them, with the same values.
    #[test]
    fn bad_offsets_are_rejected_like_the_reference(
        offsets in proptest::collection::vec(prop_oneof![0u32..30, Just(u32::MAX)], 0..10),
        lens in (0usize..30).prop_flat_map(shard_lens),
        seed: u64,
    ) {
        let shards = Shards::from_lens(&lens).unwrap();
        let items = KeepFirst::random_vec(shards.items(), seed);
        match (fold_segments(&items, &offsets), fold_sharded_segments(&shards, &items, &offsets)) {
            (Ok(expected), Ok(owned)) => prop_assert_eq!(owned.concat(), expected),
            (Err(_), Err(_)) => {}
            (g, s) => prop_assert!(false, "global {g:?} vs sharded {s:?}"),
        }
    }
}

/// A segment spanning every shard of four, with empty shards in the middle and at both ends:
/// its value is joined across all of them, in rank order, and rank 1 (the first non-empty
/// shard) owns it.
#[test]
fn one_segment_across_every_shard() {
    let shards = Shards::from_lens(&[0, 5, 0, 7, 0, 3, 0]).unwrap();
    let items = Mat2::random_vec(15, 7);
    let owned = fold_sharded_segments(&shards, &items, &[0u64, 15]).unwrap();
    assert_eq!(owned[1], vec![fold(&items)]);
    assert!(owned
        .iter()
        .enumerate()
        .all(|(r, o)| r == 1 || o.is_empty()));
    let owned = fold_sharded_by_owner(&shards, &items, &[0; 15], 1).unwrap();
    assert_eq!(owned[1], vec![fold(&items)]);
}
