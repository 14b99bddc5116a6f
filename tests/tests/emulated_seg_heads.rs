//! SegHeads' kernels (kernels/seg_heads.cu) without a GPU: the generated CUDA text runs on the
//! CPU under `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, warp collectives as real
//! rendezvous, AddressSanitizer on every access, fibers in three thread orders), the marks and
//! then the fold's blocks in a scrambled order, with the zeroed words kept from call to call as
//! a `Gpu`'s scratch keeps them, and must equal the sequential fold bit for bit on every layout
//! shape at sizes around the tile and the group of tiles — segments inside a tile, across tiles
//! and groups, starting on their boundaries, empty ones anywhere (flagged tiles) — with u32 and
//! u64 offsets, items at 16-byte boundaries and past them, lifted items and vector or
//! item-by-item loads; every call must leave its zeroed words zero. The fused check of a
//! validated call must flag every broken offsets rule and no valid layout, and a trusted
//! garbage layout must finish in bounds and leave the words zero. Owners take the runtime's way
//! in (`seg_validate_owner`, then `seg_owner_to_offsets`) on the same layouts, and a validated
//! call names the first bad owner.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold_segments, CudaMonoid, Lift, Monoid, SegIndex};
use reduce_cuda::testing::{seg_kernel_variants_at, seg_kernel_variants_lifted_at};
use reduce_cuda::{SegAlgorithm, SegConfig};
use reduce_tests::emu::{
    bytes_of, compiler, seg_heads_kernel, values_from, EmulatedHeads, HeadsCase, Order,
};
use reduce_tests::layouts::{broken_offsets, filling, garbage_offsets, offsets_u64, owners_of};
use reduce_tests::monoids::lang::{ArgMax, TopK};
use reduce_tests::{lifted_by, Affine, Mat2, Random, TestRng};
use std::fmt::Debug;

/// SegHeads with `block` threads and `items` per thread.
fn heads(block: u32, items: u32) -> SegConfig {
    SegConfig::new(SegAlgorithm::SegHeads)
        .block(block)
        .items_per_thread(items)
}

/// SegHeads' kernels for monoid `M`, offsets of type `I`, items `shift` bytes past a 16-byte
/// boundary.
fn kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    block: u32,
    items: u32,
    shift: u64,
) -> EmulatedHeads {
    let source = seg_kernel_variants_at::<M, I>(heads(block, items), true, shift)
        .unwrap()
        .remove(0);
    let tag = format!(
        "{}_b{block}_k{items}_at{shift}{}",
        M::CUDA_NAME,
        if I::WIDE { "_u64" } else { "" }
    );
    seg_heads_kernel(cxx, &source, &tag, std::mem::size_of::<M>(), I::WIDE)
}

/// Every layout of [`filling`] (at tile scale) at sizes around the tile (`block * items`) and
/// the group of `block` tiles, the marks on grids of 1, 2 and 5 blocks, validated and trusted
/// in turn, against the fold of the lifted items, with the fibers in every order; with
/// `with_owners`, each layout again as owners, taken the runtime's way.
fn check_layouts<X: reduce_cuda::DeviceCopy, M: Monoid + PartialEq + Debug>(
    kernel: &EmulatedHeads,
    block: u64,
    items: u64,
    random_items: impl Fn(usize, u64) -> Vec<X>,
    lift: impl Fn(X, u64) -> M,
    seed: u64,
    with_owners: bool,
) {
    let mut rng = TestRng::new(seed);
    let tile = block * items;
    let group = block * tile;
    let mut layouts: Vec<(String, Vec<u32>)> = Vec::new();
    for n in [
        1,
        2,
        31,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        group + 1,
        2 * group + 3 * tile + 5,
    ]
    .into_iter()
    // Many groups of tiles on the smallest tiles: the join's last block joins 19 groups.
    .chain((tile == 32).then_some(600 * tile + 3))
    {
        for (name, lengths) in filling(n, tile, &mut rng) {
            layouts.push((format!("{name}, n {n}"), lengths));
        }
    }
    // Runs of many more empty segments than a block has threads: inside a tile and at a tile's
    // first item (a flagged tile jumps past each), and after the last item (no tile's).
    let empties = |k: u64| vec![0u32; (k * block) as usize + 3];
    let t = tile as u32;
    layouts.push((
        "clustered empty segments".into(),
        [
            vec![3],
            empties(7),
            vec![t + 5],
            empties(4),
            vec![7],
            empties(9),
        ]
        .concat(),
    ));
    layouts.push((
        "empty segments at a tile's start".into(),
        [
            vec![t],
            empties(5),
            vec![4, 0, 1],
            empties(3),
            vec![2 * t - 1],
        ]
        .concat(),
    ));
    // Runs of empty segments around a flagged tile's round (a block's segments): one short of a
    // round to two rounds and one, each after 0 to 3 one-item segments (so that a round ends
    // at every place in them), for the probe that decides whether a run is searched past; the
    // last segments (one item each) end a flagged tile at several lanes.
    let r = block as usize;
    let mut around = Vec::new();
    for lead in 0..4 {
        for run in [r - 1, r, r + 1, 2 * r - 2, 2 * r - 1, 2 * r, 2 * r + 1] {
            around.extend(std::iter::repeat_n(1u32, lead));
            around.extend(std::iter::repeat_n(0u32, run));
            around.push(1);
        }
    }
    for tail in [30, 31, 33] {
        let mut lengths = around.clone();
        lengths.extend(std::iter::repeat_n(1u32, tail));
        layouts.push((format!("runs around a round, {tail} more"), lengths));
    }
    let (mut cases, mut expected, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (name, lengths) in layouts {
        let offsets = offsets_u64(&lengths);
        let owners: Vec<u64> = owners_of(&lengths).into_iter().map(u64::from).collect();
        let n = *offsets.last().unwrap();
        let items = random_items(n as usize, rng.next_u64());
        let lifted: Vec<M> = lifted_by(&items, &lift);
        let want = fold_segments(&lifted, &offsets).unwrap();
        let forms = [false, true].into_iter().take(1 + with_owners as usize);
        for (grid, by_owners) in forms.flat_map(|by_owners| [1, 2, 5].map(|g| (g, by_owners))) {
            let validate = (grid + by_owners as u64) % 2 == 1;
            cases.push(HeadsCase {
                n,
                items: bytes_of(&items),
                offsets: offsets.clone(),
                owners: by_owners.then(|| owners.clone()),
                grid,
                validate,
            });
            expected.push(want.clone());
            let check = if validate { "validated" } else { "trusted" };
            let form = if by_owners { "owners" } else { "offsets" };
            names.push(format!("{name}, {form}, grid {grid}, {check}"));
        }
    }
    for order in Order::ALL {
        for ((name, want), (status, bytes)) in
            names.iter().zip(&expected).zip(kernel.run(&cases, order))
        {
            let got: Vec<M> = values_from(&bytes);
            let first_bad = (0..want.len()).find(|&s| got.get(s) != want.get(s));
            assert_eq!(
                first_bad, None,
                "{name}, fibers {order:?}: segment {first_bad:?} differs from the fold"
            );
            if name.ends_with("validated") {
                assert_eq!(status, u64::MAX, "{name}: a valid layout reported bad");
            }
        }
    }
    eprintln!(
        "{} emulated calls equal to the fold, fibers in every order",
        cases.len()
    );
}

/// Affine maps (8-byte, exact, not commutative) with vector loads (4 items a thread: two
/// 16-byte vectors) and item by item (1 and 3 a thread), u32 and u64 offsets, items at 16-byte
/// boundaries and 4 or 8 bytes past them; blocks of one warp (groups of 32 tiles) and two;
/// owners turned into offsets, u32 and u64, on the first and third kernels.
#[test]
fn seg_heads_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    let k = kernel::<Affine, u32>(&cxx, 64, 4, 0);
    check_layouts(&k, 64, 4, Affine::random_vec, |x: Affine, _| x, 1, true);
    let k = kernel::<Affine, u32>(&cxx, 32, 4, 4);
    check_layouts(&k, 32, 4, Affine::random_vec, |x: Affine, _| x, 2, false);
    let k = kernel::<Affine, u64>(&cxx, 32, 3, 8);
    check_layouts(&k, 32, 3, Affine::random_vec, |x: Affine, _| x, 3, true);
    let k = kernel::<Mat2, u64>(&cxx, 32, 1, 0);
    check_layouts(&k, 32, 1, Mat2::random_vec, |x: Mat2, _| x, 4, false);
}

/// Lifted items: f32 12 bytes past a boundary into 8-byte (value, first index) pairs, 16 a
/// thread; and 32 a thread (a thread's bits fill a word); f32 into 32-byte top-8 lists, 11 a
/// thread (item-by-item loads, 44 bytes not being whole vectors; the defaults give them 12, a
/// tile's values within SegHeads' budget).
#[test]
fn seg_heads_lifted_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    let random = |n: usize, seed: u64| -> Vec<f32> {
        let mut rng = TestRng::new(seed);
        (0..n).map(|_| rng.range(0, 40) as f32 - 20.0).collect()
    };
    for (items, seed) in [(16, 5), (32, 6)] {
        let source = seg_kernel_variants_lifted_at::<ArgMax, f32, u32>(heads(32, items), true, 12)
            .unwrap()
            .remove(0);
        let k = seg_heads_kernel(&cxx, &source, &format!("argmax_k{items}_at12"), 8, false);
        check_layouts(
            &k,
            32,
            items as u64,
            random,
            <ArgMax as Lift<f32>>::lift,
            seed,
            false,
        );
    }
    let source = seg_kernel_variants_lifted_at::<TopK<8>, f32, u32>(heads(32, 11), true, 0)
        .unwrap()
        .remove(0);
    let k = seg_heads_kernel(&cxx, &source, "top8_k11", 32, false);
    check_layouts(&k, 32, 11, random, <TopK<8> as Lift<f32>>::lift, 7, false);
}

/// A validated call flags every broken offsets rule (the first offset not 0, offsets that
/// decrease, the last not n; u64 entries past the u32 range, last or in the middle) and names
/// the first bad owner (out of range, or below the one before), and a trusted garbage layout
/// (offsets or owners) finishes without an access out of bounds, leaving the zeroed words zero.
#[test]
fn seg_heads_checks_and_garbage() {
    let Some(cxx) = compiler() else { return };
    for wide_index in [false, true] {
        let k = if wide_index {
            kernel::<Affine, u64>(&cxx, 32, 4, 0)
        } else {
            kernel::<Affine, u32>(&cxx, 32, 4, 0)
        };
        let mut rng = TestRng::new(7 + wide_index as u64);
        let (mut bad, mut bad_owners, mut garbage) = (Vec::new(), Vec::new(), Vec::new());
        for n in [1u64, 100, 1024, 5000] {
            let items = bytes_of(&Affine::random_vec(n as usize, rng.next_u64()));
            let good = offsets_u64(&filling(n, 128, &mut rng)[4].1);
            let broken = broken_offsets(&good, n, wide_index);
            for offsets in broken {
                bad.push(HeadsCase {
                    n,
                    items: items.clone(),
                    offsets,
                    owners: None,
                    grid: rng.range(1, 3),
                    validate: true,
                });
            }
            for _ in 0..6 {
                let offsets = garbage_offsets(&mut rng, n, wide_index);
                garbage.push(HeadsCase {
                    n,
                    items: items.clone(),
                    offsets,
                    owners: None,
                    grid: rng.range(1, 4),
                    validate: false,
                });
            }
            // Owners: one out of range, then one below its predecessor, at a random item (the
            // check names exactly that index); garbage owners, trusted, below twice the count.
            let segments = good.len() as u64 - 1;
            let sorted: Vec<u64> = (0..n).map(|i| i * segments / n).collect();
            let at = rng.range(0, n - 1) as usize;
            let mut out_of_range = sorted.clone();
            out_of_range[at] = segments + rng.range(0, 3);
            let mut unsorted = sorted.clone();
            unsorted[at] = if at > 0 && sorted[at - 1] > 0 {
                sorted[at - 1] - 1
            } else {
                segments // item 0 (or all of segment 0 before it): out of range instead
            };
            for owners in [out_of_range, unsorted] {
                bad_owners.push((
                    at as u64,
                    HeadsCase {
                        n,
                        items: items.clone(),
                        offsets: good.clone(),
                        owners: Some(owners),
                        grid: rng.range(1, 3),
                        validate: true,
                    },
                ));
            }
            let owners = (0..n).map(|_| rng.range(0, 2 * segments)).collect();
            garbage.push(HeadsCase {
                n,
                items: items.clone(),
                offsets: good.clone(),
                owners: Some(owners),
                grid: rng.range(1, 4),
                validate: false,
            });
        }
        let (bad_at, bad_owners): (Vec<u64>, Vec<HeadsCase>) = bad_owners.into_iter().unzip();
        for order in Order::ALL {
            for (i, (status, _)) in k.run(&bad, order).into_iter().enumerate() {
                assert_ne!(
                    status,
                    u64::MAX,
                    "broken layout {i} (u64: {wide_index}) passed the check"
                );
            }
            let statuses = k
                .run(&bad_owners, order)
                .into_iter()
                .map(|(status, _)| status);
            assert!(
                statuses.eq(bad_at.iter().copied()),
                "bad owners (u64: {wide_index})"
            );
            assert_eq!(k.run(&garbage, order).len(), garbage.len());
        }
    }
}
