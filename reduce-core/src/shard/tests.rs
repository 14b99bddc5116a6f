//! Tests of the sharded plan (the property tests against the references are in
//! `tests/tests/shards.rs`).

use super::*;
use crate::Sum;

#[test]
fn even_shards_put_the_remainder_first() {
    assert_eq!(Shards::even(10, 4).unwrap().lens(), vec![3, 3, 2, 2]);
    assert_eq!(Shards::even(2, 4).unwrap().lens(), vec![1, 1, 0, 0]);
    assert_eq!(Shards::even(0, 3).unwrap().lens(), vec![0, 0, 0]);
    assert_eq!(Shards::even(5, 0), Err(ShardError::NoRanks));
    assert_eq!(Shards::even(7, 7).unwrap().lens(), vec![1; 7]);
    assert_eq!(Shards::even(usize::MAX, 2).unwrap().items(), usize::MAX);
    // A rank count the host has no room for is an error, not an abort.
    for ranks in [usize::MAX, 1 << 60] {
        assert_eq!(
            Shards::even(10, ranks),
            Err(ShardError::TooManyRanks { ranks })
        );
    }
    assert_eq!(Shards::from_lens(&[]), Err(ShardError::NoRanks));
    assert_eq!(
        Shards::from_lens(&[usize::MAX, 1]),
        Err(ShardError::TooManyItems)
    );
}

#[test]
fn a_segment_over_every_shard_with_an_empty_shard_in_the_middle() {
    let shards = Shards::from_lens(&[2, 0, 3, 1]).unwrap();
    // segment 0 = [0, 0) empty, 1 = all six items, 2 and 3 empty at the end.
    let offsets = [0u64, 0, 6, 6, 6];
    let plan = SegmentPlan::from_offsets(&shards, &offsets).unwrap();
    assert_eq!(plan.touch(0), Some(Touch { first: 1, last: 1 }));
    assert_eq!(plan.touch(1), None);
    assert_eq!(plan.owned(0), 0..2);
    assert_eq!(plan.owned(1), 2..2);
    assert_eq!(plan.owned(2), 2..2);
    assert_eq!(plan.owned(3), 2..4);
    assert_eq!(plan.owner_of(1), Some(0));
    assert_eq!(plan.owner_of(3), Some(3));
    assert_eq!(plan.owner_of(4), None);
    let items: Vec<Sum<u32>> = (1..=6).map(Sum).collect();
    let owned = fold_sharded_segments(&shards, &items, &offsets).unwrap();
    assert_eq!(
        owned,
        vec![vec![Sum(0), Sum(21)], vec![], vec![], vec![Sum(0), Sum(0)]]
    );
}

#[test]
fn empty_segments_on_a_boundary_belong_to_the_later_shard() {
    let shards = Shards::from_lens(&[2, 2]).unwrap();
    let plan = SegmentPlan::from_offsets(&shards, &[0u32, 2, 2, 2, 4]).unwrap();
    assert_eq!(plan.owned(0), 0..1);
    assert_eq!(plan.owned(1), 1..4);
    assert_eq!(
        plan.assembly(1),
        Assembly {
            leading: 2,
            local: 0..1,
            trailing: 0
        }
    );
}

#[test]
fn no_items_rank_zero_owns_everything() {
    let shards = Shards::even(0, 3).unwrap();
    let plan = SegmentPlan::from_offsets(&shards, &[0u64, 0, 0]).unwrap();
    assert_eq!(plan.owned(0), 0..2);
    assert_eq!(plan.owned(2), 2..2);
    let owned = fold_sharded_segments::<Sum<u32>, u64>(&shards, &[], &[0, 0, 0]).unwrap();
    assert_eq!(owned, vec![vec![Sum(0), Sum(0)], vec![], vec![]]);
}

#[test]
fn too_many_segments_are_refused_before_any_fold() {
    // Owners far apart under a count past MAX_OWNER_SEGMENTS: the global reference refuses the
    // count; the sharded ones did not, and sized a shard's fold by its owners (32 GiB here).
    let shards = Shards::from_lens(&[2]).unwrap();
    let items = [Sum(1u32); 2];
    let owner = [0, u32::MAX - 1];
    let refused = |r: Result<Vec<Vec<Sum<u32>>>, ShardError>| {
        matches!(
            r,
            Err(ShardError::TooManySegments {
                value: usize::MAX,
                ..
            })
        )
    };
    assert!(refused(fold_sharded_by_owner(
        &shards,
        &items,
        &owner,
        usize::MAX
    )));
    assert!(refused(fold_sharded_by_owner_portable(
        &shards,
        &items,
        &owner,
        usize::MAX
    )));
}

#[test]
fn an_unsorted_owner_at_index_zero_formats() {
    // An owner before the first item (inconsistent, but a caller may pass one) still gives a
    // message, not a panic.
    let e = crate::shard::check_shard_owner(&[0], 0, Some(5), 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        "owner is not sorted: owner[0] = 0 is smaller than the owner before it, 5"
    );
}

#[test]
fn bad_layouts_name_global_indices() {
    let shards = Shards::from_lens(&[2, 2]).unwrap();
    let items = [Sum(1u32); 4];
    assert_eq!(
        fold_sharded_by_owner(&shards, &items, &[0, 1, 0, 1], 2),
        Err(ShardError::OwnerNotSorted {
            index: 2,
            value: 0,
            previous: 1
        })
    );
    assert_eq!(
        fold_sharded_by_owner(&shards, &items, &[0, 0, 1, 0], 2),
        Err(ShardError::OwnerNotSorted {
            index: 3,
            value: 0,
            previous: 1
        })
    );
    assert_eq!(
        fold_sharded_by_owner(&shards, &items, &[0, 0, 1, 2], 2),
        Err(ShardError::OwnerOutOfRange {
            index: 3,
            value: 2,
            num_segments: 2
        })
    );
    assert_eq!(
        fold_sharded_segments(&shards, &items, &[0u32, 3, 2, 4]),
        Err(ShardError::OffsetsDecreasing {
            index: 2,
            value: 2,
            previous: 3
        })
    );
    assert_eq!(
        SegmentPlan::from_touches(&shards, vec![None, None], 1),
        Err(ShardError::TouchMismatch { rank: 0, items: 2 })
    );
    assert_eq!(
        SegmentPlan::from_touches(
            &shards,
            vec![
                Some(Touch { first: 1, last: 0 }),
                Some(Touch { first: 1, last: 1 })
            ],
            2
        ),
        Err(ShardError::ShardUnsorted {
            rank: 0,
            first: 1,
            last: 0
        })
    );
}

#[test]
fn local_offsets_are_rebased_and_clamped() {
    let shards = Shards::from_lens(&[3, 4]).unwrap();
    let offsets = [0u32, 2, 5, 7];
    let plan = SegmentPlan::from_offsets(&shards, &offsets).unwrap();
    assert_eq!(plan.local_offsets(&offsets, 0).unwrap(), vec![0, 2, 3]);
    assert_eq!(plan.local_offsets(&offsets, 1).unwrap(), vec![0, 2, 4]);
    assert!(matches!(
        plan.local_offsets(&offsets[..3], 1),
        Err(ShardError::LengthMismatch { .. })
    ));
}

/// Offsets of the right length that are not the plan's are an error where a rank reads them:
/// decreasing entries, or a shard whose first or last item falls in another segment.
#[test]
fn local_offsets_check_the_entries_they_read() {
    let shards = Shards::from_lens(&[3, 4]).unwrap();
    let plan = SegmentPlan::from_offsets(&shards, &[0u32, 2, 5, 7]).unwrap();
    // Rank 1 (items 3..7) reads entries 1..=3: segment 1 holds item 3, segment 2 item 6.
    assert_eq!(
        plan.local_offsets(&[0u32, 6, 5, 7], 1),
        Err(ShardError::OffsetsDecreasing {
            index: 2,
            value: 5,
            previous: 6
        })
    );
    for (offsets, why) in [
        ([0u32, 4, 5, 7], "item 3 lies in segment 0"),
        ([0u32, 2, 3, 7], "item 3 ends segment 1 already"),
        ([0u32, 2, 7, 7], "item 6 lies in segment 1"),
        ([0u32, 2, 5, 6], "segment 2 ends before item 6"),
    ] {
        assert_eq!(
            plan.local_offsets(&offsets, 1),
            Err(ShardError::OffsetsNotThePlans {
                rank: 1,
                first: 1,
                last: 2
            }),
            "{why}"
        );
    }
    // Entries rank 0 does not read may differ: its local offsets are the plan's.
    assert_eq!(
        plan.local_offsets(&[0u32, 2, 4, 9], 0).unwrap(),
        vec![0, 2, 3]
    );
}

#[test]
fn a_shard_is_cut_where_the_tree_splits() {
    use portable::{pieces, Piece, ShardCut};
    let raw = |items| Piece { items, node: None };
    let node = |items, level, index| Piece {
        items,
        node: Some((level, index)),
    };
    assert_eq!(
        pieces(5, 100, 16),
        [
            raw(5..16),
            node(16..32, 0, 1),
            node(32..64, 1, 1),
            node(64..96, 1, 2),
            raw(96..100)
        ]
    );
    assert_eq!(pieces(32, 64, 16), [node(32..64, 1, 1)]);
    assert_eq!(pieces(17, 30, 16), [raw(17..30)]);
    // Piece 0 ends inside segment 0, which piece 1 goes on with; piece 1 ends in segment 2,
    // and segment 3, empty, lies on its boundary with piece 2, which starts segment 4.
    let three = pieces(5, 100, 16)[..3].to_vec();
    let cut = ShardCut::new(three, vec![(0, 0), (0, 2), (4, 4)], 6);
    assert_eq!(cut.ranges, [0..1, 0..4, 4..6]);
}

/// The portable grouping over shards where its pieces meet, f32 sums (whose bits depend on the
/// grouping) against `portable::fold_segments`: a shard inside one run, a shard of only its
/// head and tail items, a segment that starts inside a block and goes on into the next shard,
/// empty segments on piece boundaries and inside raw pieces, and one segment over every shard.
#[test]
fn portable_segments_where_the_pieces_meet() {
    let xs = crate::portable::tests::floats_seeded(300, 5);
    let bits = |v: &[Sum<f32>]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<_>>();
    // Runs of 16: shard 1 = 5..20 is a head (5..16) and a tail (16..20); shard 2 = 20..23 lies
    // inside run 1; shard 3 = 23..223 holds blocks from run 2 on; shard 4 = 223..300.
    let shards = Shards::from_lens(&[5, 15, 3, 200, 77]).unwrap();
    let layouts: [&[u32]; 5] = [
        &[0, 300],                                   // one segment over every shard
        &[0, 3, 3, 18, 18, 18, 21, 40, 40, 300],     // empties in raw pieces and on a boundary
        &[0, 2, 37, 250, 300],                       // starts inside a block, crosses out
        &[0, 32, 32, 64, 96, 96, 97, 128, 256, 300], // on block boundaries
        &[0, 23, 300],                               // a shard boundary on a segment start
    ];
    for offsets in layouts {
        let want = crate::portable::fold_segments(&xs, offsets).unwrap();
        let got = fold_sharded_segments_portable(&shards, &xs, offsets).unwrap();
        assert_eq!(bits(&got.concat()), bits(&want), "offsets {offsets:?}");
        let owner: Vec<u32> = (0..offsets.len() - 1)
            .flat_map(|s| std::iter::repeat_n(s as u32, (offsets[s + 1] - offsets[s]) as usize))
            .collect();
        let by_owner =
            fold_sharded_by_owner_portable(&shards, &xs, &owner, offsets.len() - 1).unwrap();
        assert_eq!(
            bits(&by_owner.concat()),
            bits(&want),
            "owners of {offsets:?}"
        );
    }
}
