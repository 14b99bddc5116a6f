//! The scans' kernel logic (kernels/scan.cu) without a GPU: the generated CUDA text runs on the
//! CPU under `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, barriers and warp collectives
//! as real rendezvous, AddressSanitizer on every access, the fibers of a block in three orders),
//! one block per tile in order — so each tile's look-back finds the tiles before it finished,
//! through the group values, the groups' look-back and its ring; LookAhead's persistent blocks
//! in turn, the first taking every tile, its look-back warps waiting for its own threads'
//! aggregates and its stages refilled behind its writes — and must equal the sequential
//! scan bit for bit: plain, by CSR offsets and by keys (u32 and u64), both kinds (the exclusive
//! ones in place, reading the items from the outputs' buffer), sizes around
//! tiles and groups of 32 tiles, several tile shapes, 1-, 8-, 16- and 72-byte monoids (entries
//! of one and two 16-byte parts, and states and values apart). A read that a
//! missing barrier (of the block or of a warp) leaves unordered shows under one of the orders —
//! but for the waits between blocks: every earlier tile has finished, so a look-back never waits
//! (the GPU tests and racecheck cover those paths), and stops at the nearest group but where a
//! test has groups publish only their aggregates (the walk through the look-back's ring and
//! past it, folded in order). Trusted
//! garbage offsets finish and stay in bounds, in LookAhead and LookBack. LookAhead with one of
//! its pipeline's waits taken out fails in every order (the bulk copies land only when waited
//! for).
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{portable, scan, scan_by_key, scan_segments, CudaMonoid, Scan, SegIndex, Sum};
use reduce_cuda::{ScanAlgorithm, ScanConfig};
use reduce_tests::emu::{
    bytes_of, compiler, scan_kernel, scan_kernel_edited, scan_kernel_with, values_from,
    EmulatedScan, Order, ScanCase,
};
use reduce_tests::layouts::{every_shape_in_tiles, offsets_of};
use reduce_tests::monoids::small::{AffCount, Nib8, Tri8};
use reduce_tests::monoids::wide::Record1024;
use reduce_tests::{Affine, Mat2, Mat3, Random, TestRng};
use std::fmt::Debug;

/// Tiles of 32 threads of one item (a group of 32 tiles is 1024 items), 64 threads of three
/// items, and the default; ReduceThenScan at the smallest tile and the default.
fn configs() -> [ScanConfig; 5] {
    let small = |algorithm| ScanConfig::new(algorithm).block(32).items_per_thread(1);
    [
        small(ScanAlgorithm::LookBack),
        ScanConfig::new(ScanAlgorithm::LookBack)
            .block(64)
            .items_per_thread(3),
        ScanConfig::default(),
        small(ScanAlgorithm::ReduceThenScan),
        ScanConfig::new(ScanAlgorithm::ReduceThenScan),
    ]
}

/// LookAhead at the smallest tile (items one by one), at 64 threads of four items (runs of two
/// and four vectors of 8- and 16-byte values: the swizzle's fallback of two rotation classes and
/// its form for four) and the default (runs of eight vectors of 8- and 16-byte values: eight
/// classes; of 2, 6 and 18 of 1-, 3- and 72-byte ones: two).
fn ahead_configs() -> [ScanConfig; 3] {
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead);
    [
        ahead.block(32).items_per_thread(1),
        ahead.block(64).items_per_thread(4),
        ahead,
    ]
}

/// Plain scans of `M` at sizes around tiles and groups, both kinds, fibers in every order.
fn check_plain<M: CudaMonoid + Random + PartialEq + Debug>(cxx: &str) {
    for config in configs().into_iter().chain(ahead_configs()) {
        let kernel = scan_kernel::<M, u32>(cxx, config, None);
        let t = kernel.tile as usize;
        let mut sizes = vec![1, t - 1, t, t + 1, 32 * t - 1, 32 * t + 1, 70 * t + 5];
        if t == 32 {
            // more groups than ReduceThenScan's chain takes at a time (32 for 32 threads)
            sizes.push(33 * 32 * t + 3);
        }
        let what = format!("{} plain {config:?}", M::CUDA_NAME);
        check_sizes::<M>(&kernel, &sizes, 0, &what);
    }
}

/// Plain scans by `kernel` of random `M` items at each of `sizes` (the k-th seeded `seed + k`),
/// both kinds, fibers in every order, against the sequential scan; `what` names the kernel.
fn check_sizes<M: CudaMonoid + Random + PartialEq + Debug>(
    kernel: &EmulatedScan,
    sizes: &[usize],
    seed: u64,
    what: &str,
) {
    let mut cases = Vec::new();
    let mut expected = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let items = M::random_vec(n, seed + k as u64);
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            expected.push((n, kind, scan(&items, kind)));
            cases.push(ScanCase {
                n: n as u64,
                exclusive: kind == Scan::Exclusive,
                items: bytes_of(&items),
                index: Vec::new(),
                in_place: kind == Scan::Exclusive,
            });
        }
    }
    for order in Order::ALL {
        for ((n, kind, want), got) in expected.iter().zip(kernel.run(&cases, order)) {
            let got: Vec<M> = values_from(&got);
            assert!(got == *want, "{what}: n = {n} {kind:?} fibers {order:?}");
        }
    }
}

/// Segmented scans of `M` by offsets and by keys (`I` entries) on every layout shape scaled to
/// the tile, both kinds, fibers in every order; LookAhead's too: by key at the smallest tile
/// (many tiles and groups), both forms at 64 threads of five items (a thread's heads across two
/// words of its warp's bitmap; by offsets, scan_marks' runs of eight offsets across words), and
/// by key at 32 threads of its default run and of 16 items (runs swizzled in place); its default
/// tile runs in the GPU tests and, by offsets, in the portable test here (CI's time).
fn check_segmented<M: CudaMonoid + Random + PartialEq + Debug, I: SegIndex>(cxx: &str) {
    let mut rng = TestRng::new(77);
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead);
    let ahead = [
        (ahead.block(32).items_per_thread(1), false),
        (ahead.block(64).items_per_thread(5), false),
        (ahead.block(64).items_per_thread(5), true),
        // by key, the runs of an odd number of vectors it takes by default (8-byte values:
        // 14 a thread, seven vectors read in order)
        (ahead.block(32), false),
        // by key, runs swizzled in place: 8-byte values 8 vectors a thread (eight rotation
        // classes), 12-byte values 12 (four)
        (ahead.block(32).items_per_thread(16), false),
    ];
    let every = configs().into_iter().flat_map(|c| [(c, true), (c, false)]);
    for (config, offsets_form) in every.chain(ahead) {
        let kernel = scan_kernel::<M, I>(cxx, config, Some(offsets_form));
        let (mut cases, mut expected) = (Vec::new(), Vec::new());
        // and one layout over 40 tiles: the groups' look-back
        let long: Vec<u64> = (0..40 * kernel.tile / 8)
            .map(|_| rng.range(0, 16))
            .collect();
        let shapes = every_shape_in_tiles(kernel.tile, 5);
        for (name, lengths) in shapes.into_iter().chain([("40 tiles".to_string(), long)]) {
            let offsets: Vec<u64> = offsets_of(&lengths);
            let n = *offsets.last().unwrap();
            let items = M::random_vec(n as usize, rng.next_u64());
            // keys: three labels, so that neighbouring segments may merge and keys come back
            let keys: Vec<u64> = lengths
                .iter()
                .flat_map(|&l| std::iter::repeat_n(rng.range(0, 3), l as usize))
                .collect();
            let typed = |v: &[u64]| v.iter().map(|&x| I::from_u64(x)).collect::<Vec<I>>();
            for kind in [Scan::Inclusive, Scan::Exclusive] {
                let want = match offsets_form {
                    true => scan_segments(&items, &typed(&offsets), kind).unwrap(),
                    false => scan_by_key(&items, &typed(&keys), kind).unwrap(),
                };
                expected.push((name.clone(), kind, want));
                cases.push(ScanCase {
                    n,
                    exclusive: kind == Scan::Exclusive,
                    items: bytes_of(&items),
                    index: if offsets_form {
                        offsets.clone()
                    } else {
                        keys.clone()
                    },
                    in_place: kind == Scan::Exclusive,
                });
            }
        }
        for order in Order::ALL {
            for ((name, kind, want), got) in expected.iter().zip(kernel.run(&cases, order)) {
                let got: Vec<M> = values_from(&got);
                assert!(
                    got == *want,
                    "{} {} {name} {kind:?} {config:?} fibers {order:?}",
                    M::CUDA_NAME,
                    if offsets_form { "offsets" } else { "keys" }
                );
            }
        }
    }
}

// The plain scans' monoids in two tests, so that two threads share their compiles.
#[test]
fn plain_scans_are_the_reference() {
    let Some(cxx) = compiler() else { return };
    check_plain::<Affine>(&cxx);
    check_plain::<Nib8>(&cxx);
    // 16 bytes: entries of two 16-byte parts
    check_plain::<Mat2>(&cxx);
}

#[test]
fn plain_scans_of_72_3_and_12_byte_values_are_the_reference() {
    let Some(cxx) = compiler() else { return };
    // 72 bytes: states and values apart
    check_plain::<Mat3>(&cxx);
    // 3 and 12 bytes: staged in chunks of three vectors (12 bytes: in dynamic shared memory)
    check_plain::<Tri8>(&cxx);
    check_plain::<AffCount>(&cxx);
}

/// An inclusive and an exclusive scan of the same `n` items over `index` (offsets or keys; none:
/// plain), the exclusive one in place where `in_place`.
fn both_kinds(n: usize, items: Vec<u8>, index: &[u64], in_place: bool) -> Vec<ScanCase> {
    [Scan::Inclusive, Scan::Exclusive]
        .iter()
        .map(|&kind| ScanCase {
            n: n as u64,
            exclusive: kind == Scan::Exclusive,
            items: items.clone(),
            index: index.to_vec(),
            in_place: in_place && kind == Scan::Exclusive,
        })
        .collect()
}

/// LookBack's look-back over groups that published only their aggregates: with a group's
/// inclusive value published only where g % 40 == 0 and a ring of one window of 32 groups
/// (`R_LB_INCLUSIVE_EVERY`, `R_LB_WINDOWS`), every group of the first 40 walks back to group 0
/// — through the ring, and past it for the groups after 33 — where one block a tile in order
/// would stop each look-back at the nearest group; plain and by key (runs of a few items to
/// several groups: starts stop some walks), Affine and Mat2 (entries of one and of two
/// 16-byte parts), against the sequential scans bit for bit.
#[test]
fn look_back_walks_past_groups_without_inclusive_values() {
    let Some(cxx) = compiler() else { return };
    check_long_look_backs::<Affine>(&cxx, true);
    check_long_look_backs::<Mat2>(&cxx, true);
}

/// The same walks where the look-back keeps nothing in shared memory (`R_LB_SHARED` 0, the
/// host's choice for values past about 1 KiB): lane 0 reads its group's aggregates itself, and
/// every entry before the group comes from global memory, folded in the same order.
#[test]
fn look_back_without_shared_values_walks_past_groups() {
    let Some(cxx) = compiler() else { return };
    check_long_look_backs::<Affine>(&cxx, false);
    check_long_look_backs::<Mat2>(&cxx, false);
}

/// LookBack's long look-backs (see the tests above), its values in shared memory where `shared`.
fn check_long_look_backs<M: CudaMonoid + Random + PartialEq + Debug>(cxx: &str, shared: bool) {
    let config = ScanConfig::new(ScanAlgorithm::LookBack)
        .block(32)
        .items_per_thread(1);
    let tag = if shared { "long" } else { "long_global" };
    let kernel = |offsets| {
        scan_kernel_edited::<M, u32>(cxx, config, offsets, tag, |text| {
            let plan_shared = "#define R_LB_SHARED 1\n";
            assert!(text.contains(plan_shared), "the plan's R_LB_SHARED");
            if !shared {
                *text = text.replace(plan_shared, "#define R_LB_SHARED 0\n");
            }
            text.insert_str(
                0,
                "#define R_LB_INCLUSIVE_EVERY 40\n#define R_LB_WINDOWS 1\n",
            );
        })
    };
    let plain = kernel(None);
    let group = 32 * plain.tile as usize;
    let what = format!(
        "{} LookBack, long look-backs, shared {shared}",
        M::CUDA_NAME
    );
    check_sizes::<M>(&plain, &[39 * group + 5, 45 * group + 17], 90, &what);
    let by_key = kernel(Some(false));
    let mut rng = TestRng::new(91);
    let n = 45 * group + 3;
    let mut keys = Vec::with_capacity(n);
    while keys.len() < n {
        let run = if rng.range(0, 3) == 0 {
            rng.range(1, 8 * group as u64)
        } else {
            rng.range(1, 40)
        };
        let key = rng.range(0, 3) as u32;
        keys.extend(std::iter::repeat_n(key, (run as usize).min(n - keys.len())));
    }
    let items = M::random_vec(n, 92);
    let index: Vec<u64> = keys.iter().map(|&k| k as u64).collect();
    let cases = both_kinds(n, bytes_of(&items), &index, false);
    for order in Order::ALL {
        for (kind, got) in [Scan::Inclusive, Scan::Exclusive]
            .into_iter()
            .zip(by_key.run(&cases, order))
        {
            let got: Vec<M> = values_from(&got);
            let want = scan_by_key(&items, &keys, kind).unwrap();
            assert!(got == want, "{what}, by key {kind:?} fibers {order:?}");
        }
    }
}

/// LookAhead's look-back over many rows: each block takes at most 37 tiles
/// (`R_AHEAD_MAX_TILES`), so that the blocks, run one after another, each look back over the
/// entries of the blocks before (a block that takes every tile reads one row a tile), in chunks
/// of one or two rows (`R_AHEAD_ROWS`) and batches of one (`R_AHEAD_BATCH`); plain, and by key
/// with runs from one item to 40 tiles (groups with and without a segment start).
#[test]
fn look_ahead_over_other_blocks_rows() {
    let Some(cxx) = compiler() else { return };
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead);
    for (config, rows) in [
        (ahead.block(32).items_per_thread(1), 1),
        (ahead.block(32).items_per_thread(1), 2),
        (ahead.block(64).items_per_thread(4), 2),
    ] {
        let defines = [
            ("R_AHEAD_ROWS", rows),
            ("R_AHEAD_BATCH", 1),
            ("R_AHEAD_MAX_TILES", 37),
        ];
        let kernel = scan_kernel_with::<Affine, u32>(&cxx, config, None, &defines);
        let t = kernel.tile as usize;
        let sizes = [t + 1, 37 * t, 70 * t + 5, 33 * 32 * t + 3];
        check_sizes::<Affine>(&kernel, &sizes, 40, &format!("rows of {rows}: {config:?}"));
        let by_key = scan_kernel_with::<Affine, u32>(&cxx, config, Some(false), &defines);
        let mut rng = TestRng::new(rows as u64);
        let n = 33 * 32 * t + 3;
        let mut keys: Vec<u32> = Vec::with_capacity(n);
        while keys.len() < n {
            let run = match rng.range(0, 4) {
                0 => rng.range(1, 40 * t as u64),
                _ => rng.range(1, 3 * t as u64),
            } as usize;
            keys.extend(std::iter::repeat_n(
                rng.range(0, 3) as u32,
                run.min(n - keys.len()),
            ));
        }
        let items = Affine::random_vec(n, 41);
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            let case = ScanCase {
                n: n as u64,
                exclusive: kind == Scan::Exclusive,
                items: bytes_of(&items),
                index: keys.iter().map(|&k| k as u64).collect(),
                in_place: kind == Scan::Exclusive,
            };
            let got: Vec<Affine> = values_from(&by_key.run(&[case], Order::Increasing)[0]);
            let want = scan_by_key(&items, &keys, kind).unwrap();
            assert!(got == want, "by key, rows of {rows}: {kind:?} {config:?}");
        }
    }
}

/// The emulator catches LookAhead's pipeline when it does not wait: without the threads' wait
/// for a stage's bulk copy (they read the tile's number and items before they land), without the
/// producer's wait for a stage to be free (it refills a stage the threads may still read), or
/// with the threads releasing a stage before they read it, the kernel gives wrong outputs or
/// fails (the emulator's report), in every fiber order, where the kernel as it is gives the
/// scan.
#[test]
fn look_ahead_without_its_waits_fails() {
    let Some(cxx) = compiler() else { return };
    let full_wait = "r_mbar_wait(&s_full[s], (k / R_PIPE) & 1u);";
    let free_wait = "if (k >= R_PIPE) r_mbar_wait(&empty[k % R_PIPE], (k / R_PIPE - 1) & 1u);";
    let stage = "unsigned char* stage = r_stage_items_at(stages, kw);";
    let release = "r_stage_release(s_empty, kw);";
    let released_first = format!("{stage} {release}");
    let edits = [
        (
            "_no_full_wait",
            "the threads read a stage before its copy lands",
            vec![(full_wait, ";")],
        ),
        (
            "_refill_early",
            "the producer refills a stage before the threads release it",
            vec![(free_wait, ";")],
        ),
        (
            "_release_first",
            "the threads release a stage before they read it",
            vec![(release, ";"), (stage, released_first.as_str())],
        ),
    ];
    let config = ScanConfig::new(ScanAlgorithm::LookAhead)
        .block(64)
        .items_per_thread(4);
    let n = 9 * 256 + 5;
    let items = Affine::random_vec(n, 52);
    let want = scan(&items, Scan::Inclusive);
    let case = || ScanCase {
        n: n as u64,
        exclusive: false,
        items: bytes_of(&items),
        index: Vec::new(),
        in_place: false,
    };
    let right = |outputs: &[Vec<u8>]| values_from::<Affine>(&outputs[0]) == want;
    let kernel = scan_kernel::<Affine, u32>(&cxx, config, None);
    for order in Order::ALL {
        assert!(right(&kernel.run(&[case()], order)), "fibers {order:?}");
    }
    for (tag, what, replacements) in edits {
        let kernel = scan_kernel_edited::<Affine, u32>(&cxx, config, None, tag, |text| {
            for (from, to) in &replacements {
                assert_eq!(text.matches(from).count(), 1, "the kernel changed: {from}");
                *text = text.replace(from, to);
            }
        });
        for order in Order::ALL {
            let outcome = kernel.try_run(&[case()], order);
            if let Ok(outputs) = outcome {
                assert!(
                    !right(&outputs),
                    "{what}: every output right, fibers {order:?}"
                );
            }
        }
    }
}

/// 1024-byte values at the default tile (the warps' values sized by the block's warps, so that
/// they fit): plain scans past a group of 32 tiles, both kinds, fibers in every order.
#[test]
fn scans_of_1024_byte_values_are_the_reference() {
    let Some(cxx) = compiler() else { return };
    let kernel = scan_kernel::<Record1024, u32>(&cxx, ScanConfig::default(), None);
    let t = kernel.tile as usize;
    check_sizes::<Record1024>(&kernel, &[1, t + 1, 33 * t + 2], 5, "1024-byte plain");
}

#[test]
fn segmented_scans_are_the_reference_u32() {
    let Some(cxx) = compiler() else { return };
    check_segmented::<Affine, u32>(&cxx);
    check_segmented::<AffCount, u32>(&cxx);
}

#[test]
fn segmented_scans_are_the_reference_u64_and_one_byte_values() {
    let Some(cxx) = compiler() else { return };
    check_segmented::<Affine, u64>(&cxx);
    check_segmented::<Nib8, u32>(&cxx);
}

/// The portable scans' kernels (`ScanConfig::portable`: the tile the monoid's size fixes) on
/// f32 sums of mixed magnitudes, whose bits follow the grouping: plain, by offsets and by keys,
/// both kinds, over 40 tiles (groups of 32 tiles and their chain), equal to
/// `reduce_core::portable`'s scans bit for bit — LookBack's one launch and ReduceThenScan's
/// three alike.
#[test]
fn portable_float_scans_have_the_reference_bits() {
    let Some(cxx) = compiler() else { return };
    for algorithm in ScanAlgorithm::ALL {
        portable_float_scans(&cxx, ScanConfig::new(algorithm).portable());
    }
}

fn portable_float_scans(cxx: &str, config: ScanConfig) {
    let mut rng = TestRng::new(5);
    let n = 40 * 256 * portable::scan_items(4) + 77;
    let items: Vec<Sum<f32>> = (0..n)
        .map(|_| {
            let m = (rng.next_u64() % 2_000_000) as f32 - 1_000_000.0;
            Sum(m * 2f32.powi((rng.next_u64() % 40) as i32 - 20))
        })
        .collect();
    let mut offsets = vec![0u64];
    while *offsets.last().unwrap() < n as u64 {
        let next = offsets.last().unwrap() + rng.range(0, 5000);
        offsets.push(next.min(n as u64));
    }
    let keys: Vec<u64> = (0..n as u64).map(|i| (i / 3001) % 3).collect();
    let bits = |v: &[Sum<f32>]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<u32>>();
    for (form, index) in [
        (None, vec![]),
        (Some(true), offsets.clone()),
        (Some(false), keys.clone()),
    ] {
        let kernel = scan_kernel::<Sum<f32>, u64>(cxx, config, form);
        let cases = both_kinds(n, bytes_of(&items), &index, true);
        for (kind, got) in [Scan::Inclusive, Scan::Exclusive]
            .into_iter()
            .zip(kernel.run(&cases, Order::Increasing))
        {
            let want = match form {
                None => portable::scan(&items, kind),
                Some(true) => portable::scan_segments(&items, &offsets, kind).unwrap(),
                Some(false) => portable::scan_by_key(&items, &keys, kind).unwrap(),
            };
            let got: Vec<Sum<f32>> = values_from(&got);
            assert!(bits(&got) == bits(&want), "{form:?} {kind:?} {config:?}");
        }
    }
}

/// Trusted garbage offsets (unsorted with some past n, all zero, all at `u32::MAX`, decreasing)
/// finish and stay in bounds (AddressSanitizer; the poison past scan_marks' bitmap) in
/// LookAhead's marks and scan and in LookBack's walk of a tile's offsets, in every fiber order;
/// their outputs are unspecified.
#[test]
fn garbage_offsets_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    let mut rng = TestRng::new(99);
    let shape = |algorithm| ScanConfig::new(algorithm).block(64).items_per_thread(5);
    for algorithm in [ScanAlgorithm::LookAhead, ScanAlgorithm::LookBack] {
        let kernel = scan_kernel::<Affine, u32>(&cxx, shape(algorithm), Some(true));
        let n = 40 * kernel.tile + 7;
        let items = bytes_of(&Affine::random_vec(n as usize, rng.next_u64()));
        let layouts: [Vec<u64>; 4] = [
            (0..n / 3).map(|_| rng.range(0, 2 * n)).collect(),
            vec![0; 200],
            vec![u32::MAX as u64; 200],
            (0..300).rev().map(|i| i * n / 300).collect(),
        ];
        let cases: Vec<ScanCase> = layouts
            .iter()
            .flat_map(|index| {
                [false, true].map(|exclusive| ScanCase {
                    n,
                    exclusive,
                    items: items.clone(),
                    index: index.clone(),
                    in_place: false,
                })
            })
            .collect();
        for order in Order::ALL {
            // `run` asserts that every case finished (no deadlock) and that the bitmap's poison
            // is intact
            assert_eq!(
                kernel.run(&cases, order).len(),
                cases.len(),
                "{algorithm:?}"
            );
        }
    }
}
