//! The portable segmented kernel's logic (kernels/seg_portable.cu, `SegConfig::portable`)
//! without a GPU: the generated CUDA text runs on the CPU under `tests/emu/cuda_emu.hpp` (every
//! CUDA thread a fiber, barriers and warp collectives as real rendezvous, AddressSanitizer on
//! every access, the fibers of a block in three orders), block by block, the last block joining
//! the nodes — and every segment must have `reduce_core::portable::fold_segments`' bits: f32
//! sums of mixed magnitudes and signs (whose bits depend on the grouping) with zeros of both
//! signs, an exactly associative non-commutative 8-byte monoid (the sequential fold), and lifted
//! items at an odd offset; every layout shape around the tile size, both forms, u32 and u64
//! layouts, grids of 1 to 7 blocks and 1 to 8 tiles per node — the knobs that must change
//! nothing, validated (the layout check on) and trusted; the owners' check reports the first bad
//! owner, and bad owners' identity fills stay within the launch's budget; the offsets' check
//! flags bad layouts, those whose bad entries the marks' reads never reach included.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{portable, CudaMonoid, Lift, SegIndex};
use reduce_cuda::testing::{
    seg_dynamic_smem_at, seg_kernel_variants_at, seg_kernel_variants_lifted_at,
};
use reduce_cuda::{SegAlgorithm, SegConfig, Sum};
use reduce_tests::emu::{
    bytes_of, compiler, seg_portable_kernel, values_from, EmulatedSegPortable, Order,
    SegPortableCase,
};
use reduce_tests::layouts::{every_shape_in_tiles, offsets_of, owners_of};
use reduce_tests::monoids::lang::ArgMax;
use reduce_tests::{Affine, Random, TestRng};
use std::fmt::Debug;

/// Floats of magnitudes from 2^-10 to 2^14, both signs, and some zeros of both signs.
fn wide_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    (0..n)
        .map(|i| match i % 53 {
            7 => -0.0,
            8 => 0.0,
            _ => {
                let e = rng.range(117, 141) as u32;
                f32::from_bits((rng.next_u64() as u32 & 0x807f_ffff) | (e << 23))
            }
        })
        .collect()
}

/// The layouts for tiles of `tile` items: every shape, one segment of all but a few items (many
/// nodes: the last block's levels), and thousands of empty segments at a tile boundary.
fn layouts(tile: u64) -> Vec<(String, Vec<u64>)> {
    let mut out = every_shape_in_tiles(tile, 5);
    out.push(("long, then short".into(), vec![40 * tile + 3, 1, 2, 0, 5]));
    // More empty segments at a tile's end than one batch of the marks reads.
    let empties = vec![0; 9 * tile as usize];
    out.push((
        "empties at a tile boundary".into(),
        [vec![tile], empties, vec![tile + 5]].concat(),
    ));
    out
}

/// Runs the layouts through the emulated kernel (`source`, a tile of `tile` items; index type
/// `I`; the offsets form or owners) on grids of 1, 3 and 7 blocks with 1, 2 and 8 tiles per
/// node, fibers in every order, and checks every segment against `expected` with `same`. The
/// owner form runs validated; the offsets form validated on grids of 1, 3 and 7 blocks, trusted
/// on the grid of 2. No valid layout may be reported bad.
#[allow(clippy::too_many_arguments)]
fn check<X: reduce_cuda::DeviceCopy, M: CudaMonoid + Debug, I: SegIndex>(
    cxx: &str,
    source: &reduce_cuda::KernelSource,
    tag: &str,
    smem: usize,
    tile: u64,
    offsets_form: bool,
    items: impl Fn(usize, u64) -> Vec<X>,
    expected: impl Fn(&[X], &[u64]) -> Vec<M>,
    same: impl Fn(&M, &M) -> bool,
) {
    let m_size = std::mem::size_of::<M>();
    let kernel = seg_portable_kernel(cxx, source, tag, m_size, I::WIDE, smem, tile);
    let mut cases = Vec::new();
    let mut wanted = Vec::new();
    for (k, (name, lengths)) in layouts(tile).into_iter().enumerate() {
        let n: u64 = lengths.iter().sum();
        let xs = items(n as usize, k as u64);
        let offsets = offsets_of(&lengths);
        let want = expected(&xs, &offsets);
        let index = if offsets_form {
            offsets.clone()
        } else {
            owners_of(&lengths)
        };
        for (grid, group) in [(1u64, 1u64), (3, 2), (7, 8), (2, 1)] {
            cases.push(SegPortableCase {
                n,
                items: bytes_of(&xs),
                index: index.clone(),
                segments: lengths.len() as u64,
                grid,
                group,
                check: !offsets_form || grid != 2,
            });
            wanted.push((format!("{name}, grid {grid}, group {group}"), want.clone()));
        }
    }
    for order in Order::ALL {
        for ((status, got), (what, want)) in kernel.run(&cases, order).into_iter().zip(&wanted) {
            assert_eq!(
                status,
                u64::MAX,
                "{tag} {what}: a valid layout reported bad"
            );
            let got: Vec<M> = values_from(&got);
            if let Some(s) = (0..want.len()).find(|&s| !same(&got[s], &want[s])) {
                panic!(
                    "{tag} {what}, fibers {order:?}: segment {s}: {:?} != {:?}",
                    got[s], want[s]
                );
            }
        }
    }
}

/// Two shapes of the kernel: one warp per block (tiles of 32 runs), a trusted call's kernel,
/// and two warps, a validated call's (in the offsets form, with the offsets' check compiled in).
fn configs() -> [SegConfig; 2] {
    let portable = SegConfig::new(SegAlgorithm::SegShuffle).portable();
    [portable.block(32).trusted(), portable.block(64)]
}

/// The kernel of `config` for `M` items, index type `I`, at `items_at`, and its tile.
fn source<M: CudaMonoid, I: SegIndex>(
    config: SegConfig,
    offsets_form: bool,
    items_at: u64,
) -> (reduce_cuda::KernelSource, usize, u64) {
    let source = seg_kernel_variants_at::<M, I>(config, offsets_form, items_at)
        .unwrap()
        .remove(0);
    let smem = seg_dynamic_smem_at::<M, I>(config, offsets_form, items_at).unwrap();
    let tile = config.block.unwrap() as u64 * portable::run_len::<M>() as u64;
    (source, smem, tile)
}

fn f32_bits(a: &Sum<f32>, b: &Sum<f32>) -> bool {
    a.0.to_bits() == b.0.to_bits()
}

fn f32_sums<I: SegIndex>(cxx: &str, offsets_form: bool) {
    for (k, config) in configs().into_iter().enumerate() {
        let (src, smem, tile) = source::<Sum<f32>, I>(config, offsets_form, 0);
        let tag = format!("f32_{k}_{offsets_form}_{}", I::WIDE);
        let items = |n, seed| wide_f32(n, seed).into_iter().map(Sum).collect::<Vec<_>>();
        let expected =
            |xs: &[Sum<f32>], offsets: &[u64]| portable::fold_segments(xs, offsets).unwrap();
        check::<_, _, I>(
            cxx,
            &src,
            &tag,
            smem,
            tile,
            offsets_form,
            items,
            expected,
            f32_bits,
        );
    }
}

#[test]
fn f32_segments_have_the_reference_bits_by_offsets() {
    let Some(cxx) = compiler() else { return };
    f32_sums::<u32>(&cxx, true);
    f32_sums::<u64>(&cxx, true);
}

#[test]
fn f32_segments_have_the_reference_bits_by_owners() {
    let Some(cxx) = compiler() else { return };
    f32_sums::<u32>(&cxx, false);
    f32_sums::<u64>(&cxx, false);
}

/// An exactly associative, non-commutative monoid: every segment is the sequential fold (a
/// swapped operand anywhere in the tree shows).
#[test]
fn exact_monoids_get_the_sequential_fold() {
    let Some(cxx) = compiler() else { return };
    for offsets_form in [true, false] {
        let config = configs()[1];
        let (src, smem, tile) = source::<Affine, u32>(config, offsets_form, 0);
        let tag = format!("affine_{offsets_form}");
        let expected =
            |xs: &[Affine], offsets: &[u64]| reduce_core::fold_segments(xs, offsets).unwrap();
        check::<_, _, u32>(
            &cxx,
            &src,
            &tag,
            smem,
            tile,
            offsets_form,
            Affine::random_vec,
            expected,
            |a, b| a == b,
        );
    }
}

/// Lifted items 4 bytes past a 16-byte boundary: runs follow the lifted values (8-byte ArgMax
/// from 4-byte f32), each item lifted with its global index.
#[test]
fn lifted_items_at_an_odd_offset_group_as_their_lifted_values() {
    let Some(cxx) = compiler() else { return };
    for offsets_form in [true, false] {
        let config = configs()[0];
        let src = seg_kernel_variants_lifted_at::<ArgMax, f32, u32>(config, offsets_form, 4)
            .unwrap()
            .remove(0);
        let smem = reduce_cuda::testing::seg_dynamic_smem_lifted_at::<ArgMax, f32, u32>(
            config,
            offsets_form,
            4,
        )
        .unwrap();
        let tile = 32 * portable::run_len::<ArgMax>() as u64;
        let expected = |xs: &[f32], offsets: &[u64]| {
            let lifted: Vec<ArgMax> = xs
                .iter()
                .enumerate()
                .map(|(i, &x)| <ArgMax as Lift<f32>>::lift(x, i as u64))
                .collect();
            portable::fold_segments(&lifted, offsets).unwrap()
        };
        let tag = format!("argmax_{offsets_form}");
        check::<_, _, u32>(
            &cxx,
            &src,
            &tag,
            smem,
            tile,
            offsets_form,
            wide_f32,
            expected,
            |a, b| a == b,
        );
    }
}

/// Runs `cases` in every fiber order: each case's status must be `want`'s.
fn assert_statuses(kernel: &EmulatedSegPortable, cases: &[SegPortableCase], want: &[u64]) {
    for order in Order::ALL {
        let got: Vec<u64> = kernel
            .run(cases, order)
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        assert_eq!(got, want, "fibers {order:?}");
    }
}

/// The owners' check on the launch's reads: the first owner below the one before it, or past
/// the segments, is reported as its index (what the runtime turns into a typed error).
#[test]
fn the_owner_check_reports_the_first_bad_owner() {
    let Some(cxx) = compiler() else { return };
    let config = configs()[1];
    let (src, smem, tile) = source::<Sum<f32>, u32>(config, false, 0);
    let kernel = seg_portable_kernel(&cxx, &src, "owner_check", 4, false, smem, tile);
    let n = 5 * tile as usize + 7;
    let items = bytes_of(&wide_f32(n, 1).into_iter().map(Sum).collect::<Vec<_>>());
    let good: Vec<u64> = (0..n as u64).map(|i| i / 100).collect();
    let segments = good[n - 1] + 1;
    let mut unsorted = good.clone();
    unsorted[3 * tile as usize + 1] = 0;
    unsorted[4 * tile as usize] = 0;
    let mut past = good.clone();
    past[2 * tile as usize + 5] = segments;
    let case = |index: Vec<u64>, grid| SegPortableCase {
        n: n as u64,
        items: items.clone(),
        index,
        segments,
        grid,
        group: 2,
        check: true,
    };
    let cases = [case(unsorted, 3), case(past, 7), case(good, 2)];
    let want = [3 * tile + 1, 2 * tile + 5, u64::MAX];
    assert_statuses(&kernel, &cases, &want);
}

/// Bad owners whose warps ask for long identity fills past the free allowance (16 ids per item
/// slot of the warp): one block of one warp a tile, owners 0, 58t, 32t and then the last of 64t
/// segments by tile. The second tile's fill (58t ids) takes the launch's budget, the fourth's
/// (32t - 1 more) would pass it and is not made, so the ids only it would write keep the
/// output's poison; the check reports the first owner below the one before it.
#[test]
fn bad_owners_stay_within_the_fill_budget() {
    let Some(cxx) = compiler() else { return };
    let config = configs()[0];
    let (src, smem, t) = source::<Sum<f32>, u32>(config, false, 0);
    assert_eq!(config.block, Some(32), "one warp a tile");
    let kernel = seg_portable_kernel(&cxx, &src, "fill_budget", 4, false, smem, t);
    let segments = 64 * t;
    let owner_of_tile = [0, 58 * t, 32 * t, segments - 1];
    let n = 4 * t;
    let case = SegPortableCase {
        n,
        items: bytes_of(
            &wide_f32(n as usize, 3)
                .into_iter()
                .map(Sum)
                .collect::<Vec<_>>(),
        ),
        index: (0..n).map(|i| owner_of_tile[(i / t) as usize]).collect(),
        segments,
        grid: 1,
        group: 1,
        check: true,
    };
    for order in Order::ALL {
        let (status, out) = kernel.run(std::slice::from_ref(&case), order).remove(0);
        assert_eq!(status, 2 * t, "fibers {order:?}: the first bad owner");
        let unwritten = (58 * t + 1..segments - 1)
            .filter(|&s| out[4 * s as usize..4 * s as usize + 4] == [0xa5; 4])
            .count() as u64;
        assert_eq!(
            unwritten,
            segments - 2 - 58 * t,
            "fibers {order:?}: a fill past the budget was made"
        );
    }
}

/// The offsets' check on the marks' own reads (the validated offsets form): a descending pair, one
/// across a batch's end, entries back and forth across a tile's end, an entry past the items,
/// wrong ends, and a bad pair that no block's reads reach — block 1's tiles read no entry (the
/// one after block 0's first tile lies past them), and block 2's search lands past the pair, so
/// only the check that each block's reads reach the next block's first entry sees it — each set
/// the status (0: the runtime then runs the exact check for the error); the valid layouts do not,
/// on the same grids.
#[test]
fn the_offsets_check_flags_bad_layouts() {
    let Some(cxx) = compiler() else { return };
    let config = configs()[1];
    offsets_check_flags_bad_layouts(&cxx, config, "offsets_check");
    // One warp a block: warp 0 makes both searches.
    offsets_check_flags_bad_layouts(&cxx, config.block(32), "offsets_check_32");
}

fn offsets_check_flags_bad_layouts(cxx: &str, config: SegConfig, tag: &str) {
    let (src, smem, tile) = source::<Sum<f32>, u32>(config, true, 0);
    let kernel = seg_portable_kernel(cxx, &src, tag, 4, false, smem, tile);
    let n = 6 * tile;
    // A batch of marks: 4 rounds of a block's threads, an entry each.
    let batch = 4 * config.block.unwrap() as usize;
    let items = bytes_of(
        &wide_f32(n as usize, 2)
            .into_iter()
            .map(Sum)
            .collect::<Vec<_>>(),
    );
    let good: Vec<u64> = (0..n / 10).map(|s| 10 * s).chain([n]).collect();
    let mut descends = good.clone();
    descends.swap(2 * tile as usize / 10, 2 * tile as usize / 10 + 1);
    // A descent across the end of block 0's first batch (entries 0 .. batch - 1, and the pair of
    // the last with the entry after it, which its last lane reads): entries 2 items apart fill
    // tile 0, so the next batch starts at `batch` and reads no pair with the one before.
    let mut across: Vec<u64> = (0..n / 2).map(|s| 2 * s).chain([n]).collect();
    across.swap(batch - 1, batch);
    let mut past_n = good.clone();
    past_n[4 * tile as usize / 10] = n + 100;
    let mut first = good.clone();
    first[0] = 3;
    let mut last_short = good.clone();
    *last_short.last_mut().unwrap() = n - 1;
    let mut last_long = good.clone();
    *last_long.last_mut().unwrap() = n + 5;
    // Ascending in tile 0 (entries 0..=50), then 250 entries in tile 4 or 5, then ascending from
    // block 1's first item (2 tiles a block) to n: the pair (300, 301) descends, past block 0's
    // first batch.
    assert!(batch <= 300);
    let step = 4 * tile / 1024;
    let hidden: Vec<u64> = (0..=50u64)
        .map(|s| 10 * s)
        .chain((51..=300).map(|_| 4 * tile + 904))
        .chain((0..=1024).map(|m| 2 * tile + step * m))
        .collect();
    assert_eq!(*hidden.last().unwrap(), n);
    // Across tile 0's end twice in its first batch (entries 40 and 70 past it, 41..69 back below
    // it): two threads find the next tile's first entry.
    let twice: Vec<u64> = (0..40u64)
        .map(|s| 10 * s)
        .chain([tile + 88])
        .chain((41..70).map(|s| tile / 2 + s))
        .chain((tile / 10 + 20..n / 10).map(|s| 10 * s))
        .chain([n])
        .collect();
    let case = |index: Vec<u64>| SegPortableCase {
        n,
        items: items.clone(),
        segments: index.len() as u64 - 1,
        index,
        grid: 3,
        group: 1,
        check: true,
    };
    let bad = [
        descends, across, past_n, first, last_short, last_long, hidden, twice,
    ];
    let mut cases: Vec<_> = bad.into_iter().map(case).collect();
    cases.push(case(good.clone()));
    let mut want = vec![0; cases.len() - 1];
    want.push(u64::MAX);
    for grid in [1, 7] {
        cases.push(SegPortableCase {
            grid,
            ..case(good.clone())
        });
        want.push(u64::MAX);
    }
    assert_statuses(&kernel, &cases, &want);
}
