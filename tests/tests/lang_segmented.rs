//! The derive's language in segmented reductions. A monoid (or lift) that indexes out of bounds
//! is an error value from every segmented algorithm, both forms, and the record is cleared for
//! the next call. Lifted items (segmented transform-reduce: `f32` rows into `ArgMax`, `TopK`,
//! points into `BBox`) give the fold of the lifted items per segment, with the item's global
//! index, bit for bit, over every distribution, both forms, u32 and u64 layouts, aligned or not.
//! A fault in a segment after thousands of empty ones is found too, for every algorithm.
//! Needs a GPU (`REDUCE_REQUIRE_GPU=1` makes its absence a failure).

use reduce_bench::layouts::{distribution, owners, DISTRIBUTIONS};
use reduce_core::{fold, fold_by_owner, fold_segments, DeviceCopy, Lift};
use reduce_cuda::{Algorithm, DeviceVec, Error, Gpu, SegAlgorithm, SegConfig};
use reduce_tests::configs::{every_seg_config, merge, seg_configs};
use reduce_tests::layouts::{convert, offsets_of, owners_of};
use reduce_tests::monoids::lang::*;
use reduce_tests::monoids::small::Auto7;
use reduce_tests::sweep::same;
use reduce_tests::{gpu, Random, TestRng};
use std::fmt::Debug;

fn expect_fault<T: Debug>(what: &str, result: Result<T, Error>, want: (&str, u64, u64)) {
    match result {
        Err(Error::DeviceFault { monoid, index, len }) => {
            assert_eq!((monoid, index, len), want, "{what}")
        }
        other => panic!("{what}: expected a device fault, got {other:?}"),
    }
}

#[test]
fn a_fault_in_combine_is_an_error_value_from_every_segmented_algorithm() {
    let Some(gpu) = gpu() else { return };
    let n = 50_000u64;
    let mut items = Automaton::random_vec(n as usize, 11);
    let offsets = distribution("random_10_50", n, 3).unwrap();
    let owner = owners(&offsets);
    let segments = offsets.len() - 1;
    let good_offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
    let good_owner = gpu.upload(&owner).unwrap();
    let want = fold_segments(&items, &offsets).unwrap();
    let good = gpu.upload(&items).unwrap();
    // Every entry out of bounds, and not the last item of its segment: a later item of the
    // segment looks it up whatever the grouping.
    let bad_at = (31_337..).find(|&i| !offsets.contains(&(i + 1))).unwrap() as usize;
    items[bad_at].t = [200; 8];
    let bad = gpu.upload(&items).unwrap();
    for config in every_seg_config(&gpu) {
        let what = format!("{config:?}");
        expect_fault(
            &format!("{what} offsets"),
            gpu.reduce_segments(&bad, &good_offsets, config),
            ("Automaton", 200, 8),
        );
        // The record is cleared: the next good reduction succeeds.
        let got = gpu.reduce_segments(&good, &good_offsets, config).unwrap();
        assert_eq!(gpu.download(&got).unwrap(), want, "{what} offsets");
        let mut out = gpu.zeroed::<Automaton>(segments).unwrap();
        expect_fault(
            &format!("{what} owner"),
            gpu.reduce_by_owner_into(&bad, &good_owner, segments, &mut out, config),
            ("Automaton", 200, 8),
        );
        gpu.reduce_by_owner_into(&good, &good_owner, segments, &mut out, config)
            .unwrap();
        assert_eq!(gpu.download(&out).unwrap(), want, "{what} owner");
    }
}

/// A run-time index out of bounds in the last segment, after thousands of empty ones, is
/// `Error::DeviceFault` for every algorithm in both forms (every entry of the bad table is out
/// of bounds and items follow it in its segment, so every grouping reads one), and the next
/// call on good data succeeds. Plain reductions of the same items fault too.
#[test]
fn a_fault_after_thousands_of_empty_segments_is_an_error_value() {
    let Some(gpu) = gpu() else { return };
    let lengths = [vec![0u64; 3000], vec![50_001], vec![0; 10]].concat();
    let offsets = offsets_of(&lengths);
    let owner = owners_of(&lengths);
    let good = Auto7::random_vec(50_001, 9);
    let mut bad = good.clone();
    bad[31_337].t = [200; 7];
    let expected = fold_segments(&good, &offsets).unwrap();
    let (d_good, d_bad) = (gpu.upload(&good).unwrap(), gpu.upload(&bad).unwrap());
    let d_offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
    let d_owner = gpu.upload(&convert::<u32>(&owner)).unwrap();
    for config in seg_configs(&gpu) {
        for offsets_form in [true, false] {
            let run = |xs: &DeviceVec<Auto7>| {
                if offsets_form {
                    gpu.reduce_segments(xs, &d_offsets, config)
                } else {
                    gpu.reduce_by_owner(xs, &d_owner, lengths.len(), config)
                }
            };
            let ctx = format!("{config:?} offsets form {offsets_form}");
            match run(&d_bad) {
                Err(Error::DeviceFault { monoid, index, len }) => {
                    assert_eq!((monoid, index, len), ("Auto7", 200, 7), "{ctx}")
                }
                other => panic!("{ctx}: expected a device fault, got {other:?}"),
            }
            let got = run(&d_good).unwrap_or_else(|e| panic!("{ctx} after the fault: {e}"));
            same(&ctx, &gpu.download(&got).unwrap(), &expected);
        }
    }
    for algorithm in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
        assert!(
            matches!(
                gpu.reduce(&d_bad, algorithm),
                Err(Error::DeviceFault {
                    index: 200,
                    len: 7,
                    ..
                })
            ),
            "{algorithm}"
        );
        assert_eq!(gpu.reduce(&d_good, algorithm).unwrap(), fold(&good));
    }
}

/// Floats away from zero and NaN, with repeats (ties pick the first index).
fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    (0..n)
        .map(|_| (rng.next_u32() % 5_000) as f32 * 0.5 - 1_000.25)
        .collect()
}

/// Auto; SegShuffle and SegMerge at their defaults (validated and trusted) and at small tiles
/// (many tiles and blocks even for small inputs; items per thread that are not whole vectors);
/// SegHeads at its defaults (`Auto`'s choice for lifted items in its bands).
fn lifted_configs() -> [SegConfig; 9] {
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let heads = SegConfig::new(SegAlgorithm::SegHeads);
    [
        SegConfig::new(SegAlgorithm::Auto),
        shuffle,
        shuffle.trusted(),
        shuffle.block(64).items_per_thread(3),
        merge(),
        merge().trusted(),
        merge().block(64).items_per_thread(2).stages(3),
        // CSR offsets (owners: what `Auto` runs), at its lifted default of 128 threads.
        heads,
        heads.trusted(),
    ]
}

/// Both forms, u32 and u64 layouts, every lifted configuration: bit for bit against the CPU.
fn check_lifted<M, X>(gpu: &Gpu, what: &str, items: &[X], offsets: &[u64])
where
    M: Lift<X> + PartialEq + Debug,
    X: DeviceCopy,
{
    let want = fold_segments(&lifted::<M, X>(items), offsets).unwrap();
    let segments = offsets.len() - 1;
    let xs = gpu.upload(items).unwrap();
    let owner32 = owners(offsets);
    assert_eq!(
        fold_by_owner(&lifted::<M, X>(items), &owner32, segments).unwrap(),
        want
    );
    let offsets32 = gpu.upload(&convert::<u32>(offsets)).unwrap();
    let offsets64 = gpu.upload(offsets).unwrap();
    let owner64: Vec<u64> = owner32.iter().map(|&o| o as u64).collect();
    let (owner32, owner64) = (gpu.upload(&owner32).unwrap(), gpu.upload(&owner64).unwrap());
    let name = M::CUDA_NAME;
    for config in lifted_configs() {
        let runs = [
            (
                "offsets u32",
                gpu.reduce_segments_lifted::<M, X>(&xs, &offsets32, config),
            ),
            (
                "offsets u64",
                gpu.reduce_segments_lifted::<M, X>(&xs, &offsets64, config),
            ),
            (
                "owner u32",
                gpu.reduce_by_owner_lifted::<M, X>(&xs, &owner32, segments, config),
            ),
            (
                "owner u64",
                gpu.reduce_by_owner_lifted::<M, X>(&xs, &owner64, segments, config),
            ),
        ];
        for (form, got) in runs {
            let got = got.unwrap_or_else(|e| panic!("{name} {what} {form} {config:?}: {e}"));
            assert_eq!(
                gpu.download(&got).unwrap(),
                want,
                "{name} {what} {form} {config:?}"
            );
        }
    }
}

#[test]
fn lifted_segments_on_every_distribution() {
    let Some(gpu) = gpu() else { return };
    for (k, name) in DISTRIBUTIONS.iter().enumerate() {
        for n in [1u64, 1000, 300_007] {
            let offsets = distribution(name, n, 5 + k as u64).unwrap();
            let xs = floats(n as usize, 17 + n + k as u64);
            let what = format!("{name} n={n}");
            check_lifted::<ArgMax, f32>(&gpu, &what, &xs, &offsets);
            check_lifted::<TopK<8>, f32>(&gpu, &what, &xs, &offsets);
            let points: Vec<geom::Point> = xs
                .iter()
                .zip(xs.iter().rev())
                .map(|(&x, &y)| geom::Point { x, y })
                .collect();
            check_lifted::<BBox, geom::Point>(&gpu, &what, &points, &offsets);
        }
    }
    // No items: every segment is the identity.
    check_lifted::<ArgMax, f32>(&gpu, "empty", &[], &[0, 0, 0]);
}

#[test]
fn lifted_segments_use_the_global_index_and_read_unaligned_items() {
    let Some(gpu) = gpu() else { return };
    let n = 1_000_003usize;
    let xs = floats(n + 1, 23);
    let offsets = distribution("power_2", n as u64, 29).unwrap();
    // Items starting one f32 into an allocation: not 16-byte aligned, plain loads.
    let stream = gpu.stream();
    let all = stream.clone_htod(&xs).unwrap();
    let view = all.slice(1..);
    let want = fold_segments(&lifted::<ArgMax, f32>(&xs[1..]), &offsets).unwrap();
    let dev_offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
    for config in lifted_configs() {
        let got = gpu
            .reduce_segments_lifted::<ArgMax, f32>(&view, &dev_offsets, config)
            .unwrap();
        assert_eq!(gpu.download(&got).unwrap(), want, "{config:?}");
    }
    // The index is the item's global one, not its place in the segment.
    let last = want.last().unwrap();
    assert!(last.i as usize >= offsets[offsets.len() - 2] as usize);
}

#[test]
fn lifted_segments_are_read_by_all_but_the_paper_algorithms() {
    let Some(gpu) = gpu() else { return };
    let xs = gpu.upload(&floats(1000, 31)).unwrap();
    let offsets = gpu.upload(&[0u32, 10, 500, 1000]).unwrap();
    for algorithm in SegAlgorithm::ALL
        .into_iter()
        .filter(|&a| a.runs_on(gpu.info()))
    {
        let result = gpu.reduce_segments_lifted::<ArgMax, f32>(&xs, &offsets, algorithm);
        match algorithm {
            a if !a.is_paper() => assert!(result.is_ok(), "{a:?}: {result:?}"),
            _ => assert!(
                matches!(result, Err(Error::InvalidConfig { .. })),
                "{algorithm:?}: {result:?}"
            ),
        }
    }
    // A bad layout is the same typed error as without a lift.
    let bad = gpu.upload(&[0u32, 10, 5, 1000]).unwrap();
    let e = gpu
        .reduce_segments_lifted::<ArgMax, f32>(&xs, &bad, SegAlgorithm::Auto)
        .unwrap_err();
    assert!(matches!(e, Error::Layout(_)), "{e:?}");
}

#[test]
fn a_lift_out_of_bounds_is_an_error_value_from_segmented_calls() {
    let Some(gpu) = gpu() else { return };
    const { assert!(<Shift as Lift<u32>>::LIFT_CAN_FAULT) };
    let n = 200_000u64;
    let mut symbols: Vec<u32> = (0..n as u32).map(|i| (i * 7 + i / 5) % 3).collect();
    let offsets = distribution("uniform_1_8", n, 37).unwrap();
    let want = fold_segments(&lifted::<Shift, u32>(&symbols), &offsets).unwrap();
    let dev_offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
    let good = gpu.upload(&symbols).unwrap();
    symbols[123_456] = 9;
    let bad = gpu.upload(&symbols).unwrap();
    for config in lifted_configs() {
        expect_fault(
            &format!("{config:?}"),
            gpu.reduce_segments_lifted::<Shift, u32>(&bad, &dev_offsets, config),
            ("Shift", 9, 3),
        );
        let got = gpu
            .reduce_segments_lifted::<Shift, u32>(&good, &dev_offsets, config)
            .unwrap();
        assert_eq!(gpu.download(&got).unwrap(), want, "{config:?}");
    }
}
