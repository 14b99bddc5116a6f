//! The CPU backend against the sequential references, with non-commutative monoids and
//! random layouts (empty segments included). Runs everywhere.

use proptest::prelude::*;
use reduce_core::{fold, fold_by_owner, fold_segments, Cpu, LayoutError};
use reduce_tests::*;

/// Sizes that cross the backend's parallel chunking, plus tiny ones.
fn sizes() -> impl Strategy<Value = usize> {
    prop_oneof![0usize..40, 16_000usize..70_000, Just(1 << 17)]
}

/// Random segment lengths summing to whatever they sum to; empty segments are common.
fn lengths() -> impl Strategy<Value = Vec<u32>> {
    prop_oneof![
        proptest::collection::vec(0u32..5, 0..200),
        proptest::collection::vec(prop_oneof![Just(0u32), 10u32..50, 1000u32..30_000], 0..40),
        Just(vec![100_000]),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Arbitrary (mostly invalid) layouts: the host-side validation and the CPU backend never
    /// panic, agree with each other, and every accepted layout gives the reference result.
    #[test]
    fn arbitrary_layouts_never_panic(
        owner in proptest::collection::vec(prop_oneof![0u32..8, Just(u32::MAX), any::<u32>()], 0..40),
        offsets in proptest::collection::vec(prop_oneof![0u32..50, Just(u32::MAX), any::<u32>()], 0..12),
        num_segments in prop_oneof![0usize..10, Just(usize::MAX)],
        items_len in 0usize..50,
        seed: u64,
    ) {
        let items = Affine::random_vec(items_len, seed);
        let by_owner = fold_by_owner(&items, &owner, num_segments);
        prop_assert_eq!(&by_owner, &Cpu::new().reduce_by_owner(&items, &owner, num_segments));
        let by_offsets = fold_segments(&items, &offsets);
        prop_assert_eq!(&by_offsets, &Cpu::new().reduce_segments(&items, &offsets));
        if let Ok(values) = by_offsets {
            prop_assert_eq!(values.len() + 1, offsets.len());
        }
        if let Ok(values) = by_owner {
            prop_assert_eq!(values.len(), num_segments);
        }
    }

    #[test]
    fn plain_matches_fold(n in sizes(), seed: u64) {
        let items = Mat2::random_vec(n, seed);
        prop_assert_eq!(Cpu::new().reduce(&items), fold(&items));
        let items = KeepLast::random_vec(n, seed);
        prop_assert_eq!(Cpu::new().reduce(&items), fold(&items));
    }

    #[test]
    fn segmented_matches_fold(lengths in lengths(), seed: u64) {
        let offsets = offsets_of(&lengths);
        let n = *offsets.last().unwrap() as usize;
        let items = Affine::random_vec(n, seed);
        let expected: Vec<Affine> = offsets.windows(2).map(|w| fold(&items[w[0] as usize..w[1] as usize])).collect();
        prop_assert_eq!(&fold_segments(&items, &offsets).unwrap(), &expected);
        prop_assert_eq!(&Cpu::new().reduce_segments(&items, &offsets).unwrap(), &expected);
        let owner = owners_of(&lengths);
        prop_assert_eq!(&fold_by_owner(&items, &owner, lengths.len()).unwrap(), &expected);
        prop_assert_eq!(&Cpu::new().reduce_by_owner(&items, &owner, lengths.len()).unwrap(), &expected);
    }

    /// The portable segmented calls: the reference's bits for f32 sums (whose bits depend on
    /// the grouping) in both forms, and the sequential fold for an exact monoid; bad layouts are
    /// the same errors as the default calls'.
    #[test]
    fn portable_segments_match_the_reference(lengths in lengths(), seed: u64) {
        let offsets = offsets_of(&lengths);
        let n = *offsets.last().unwrap() as usize;
        let mut rng = TestRng::new(seed);
        let sums: Vec<reduce_core::Sum<f32>> = (0..n)
            .map(|_| reduce_core::Sum(f32::from_bits((rng.next_u32() & 0x807f_ffff) | (rng.range(117, 141) as u32) << 23)))
            .collect();
        let want = reduce_core::portable::fold_segments(&sums, &offsets).unwrap();
        let bits = |v: &[reduce_core::Sum<f32>]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<_>>();
        let cpu = Cpu::new();
        prop_assert_eq!(bits(&cpu.reduce_segments_portable(&sums, &offsets).unwrap()), bits(&want));
        let owner = owners_of(&lengths);
        prop_assert_eq!(bits(&cpu.reduce_by_owner_portable(&sums, &owner, lengths.len()).unwrap()), bits(&want));
        let items = Affine::random_vec(n, seed);
        prop_assert_eq!(cpu.reduce_segments_portable(&items, &offsets).unwrap(), fold_segments(&items, &offsets).unwrap());
        let mut bad = offsets.clone();
        if let Some(last) = bad.last_mut() {
            *last += 1;
        }
        prop_assert_eq!(
            cpu.reduce_segments_portable(&items, &bad).unwrap_err(),
            cpu.reduce_segments(&items, &bad).unwrap_err()
        );
    }

    /// The scans, plain, by CSR offsets and by keys (labels that come back), both kinds: the
    /// parallel CPU backend's, the sequential references' and each output's own definition —
    /// the fold of its segment's items up to it (inclusive) or before it (exclusive) — agree.
    #[test]
    fn scans_match_their_definition(lengths in lengths(), labels in 1u64..4, seed: u64) {
        use reduce_core::{scan, scan_by_key, scan_segments, Scan};
        let offsets = offsets_of(&lengths);
        let n = *offsets.last().unwrap() as usize;
        let items = Mat2::random_vec(n, seed);
        // keys: each segment's label, so that neighbouring segments may share one (and merge)
        let keys: Vec<u64> = lengths
            .iter()
            .enumerate()
            .flat_map(|(s, &l)| std::iter::repeat_n(s as u64 % labels, l as usize))
            .collect();
        let cpu = Cpu::new();
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            // output i from the start of its run (`start(i)`: the first item of its segment)
            let defined = |start: &dyn Fn(usize) -> usize| -> Vec<Mat2> {
                (0..n)
                    .map(|i| {
                        let end = if kind == Scan::Inclusive { i + 1 } else { i };
                        fold(&items[start(i)..end])
                    })
                    .collect()
            };
            let plain = scan(&items, kind);
            prop_assert_eq!(&plain, &cpu.scan(&items, kind));
            if n <= 2000 {
                prop_assert_eq!(&plain, &defined(&|_| 0));
            }
            let by_offsets = scan_segments(&items, &offsets, kind).unwrap();
            prop_assert_eq!(&by_offsets, &cpu.scan_segments(&items, &offsets, kind).unwrap());
            let by_keys = scan_by_key(&items, &keys, kind).unwrap();
            prop_assert_eq!(&by_keys, &cpu.scan_by_key(&items, &keys, kind).unwrap());
            if n <= 2000 {
                let segment_start = |i: usize| {
                    offsets.partition_point(|&o| o as usize <= i).saturating_sub(1)
                };
                let from_offsets = |i: usize| offsets[segment_start(i)] as usize;
                prop_assert_eq!(&by_offsets, &defined(&from_offsets));
                let from_keys = |i: usize| (0..=i).rev().take_while(|&j| keys[j] == keys[i]).last().unwrap_or(i);
                prop_assert_eq!(&by_keys, &defined(&from_keys));
            }
        }
    }
}

/// Segments long enough that the portable call folds each in parallel (parts at aligned
/// boundaries of runs, joined by `portable::parts`), starting and ending inside runs: the
/// reference's bits for f32 sums, and the sequential fold for an exact monoid.
#[test]
fn long_portable_segments_in_parallel_are_the_reference() {
    let lengths: [u32; 6] = [3, (3 << 20) + 5, 0, 1 << 20, (1 << 21) + 13, 7];
    let offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap() as usize;
    let mut rng = TestRng::new(5);
    let sums: Vec<reduce_core::Sum<f32>> = (0..n)
        .map(|_| {
            let exponent = rng.range(100, 150) as u32;
            reduce_core::Sum(f32::from_bits(
                (rng.next_u32() & 0x807f_ffff) | exponent << 23,
            ))
        })
        .collect();
    let want = reduce_core::portable::fold_segments(&sums, &offsets).unwrap();
    let bits = |v: &[reduce_core::Sum<f32>]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<_>>();
    let cpu = Cpu::new();
    let items = Affine::random_vec(n, 6);
    let owner = owners_of(&lengths);
    // Two threads: a segment is folded in parallel from 2 x 4 x 2^14 items, which these are,
    // whatever the machine's cores.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    pool.install(|| {
        assert_eq!(
            bits(&cpu.reduce_segments_portable(&sums, &offsets).unwrap()),
            bits(&want)
        );
        let by_owner = cpu.try_reduce_by_owner_portable(&sums, &owner, lengths.len());
        assert_eq!(bits(&by_owner.unwrap()), bits(&want));
        assert_eq!(
            cpu.reduce_segments_portable(&items, &offsets).unwrap(),
            fold_segments(&items, &offsets).unwrap()
        );
    });
}

#[test]
fn empty_segments_get_the_identity() {
    let items = Affine::random_vec(3, 1);
    let out = Cpu::new()
        .reduce_segments(&items, &[0u32, 0, 3, 3])
        .unwrap();
    assert_eq!(
        out,
        vec![Affine { a: 1, b: 0 }, fold(&items), Affine { a: 1, b: 0 }]
    );
    let out = Cpu::new()
        .reduce_by_owner(&items, &[1u32, 1, 1], 4)
        .unwrap();
    assert_eq!(out[0], Affine { a: 1, b: 0 });
    assert_eq!(out[1], fold(&items));
    assert_eq!(
        Cpu::new()
            .reduce_segments::<Affine, u32>(&[], &[0])
            .unwrap(),
        vec![]
    );
}

#[test]
fn bad_layouts_are_typed_errors() {
    let items = Affine::random_vec(4, 1);
    let cpu = Cpu::new();
    assert_eq!(
        cpu.reduce_segments::<_, u32>(&items, &[]),
        Err(LayoutError::OffsetsEmpty)
    );
    assert_eq!(
        cpu.reduce_segments(&items, &[1u32, 4]),
        Err(LayoutError::FirstOffsetNotZero { value: 1 })
    );
    assert_eq!(
        cpu.reduce_segments(&items, &[0u32, 3]),
        Err(LayoutError::LastOffsetNotLen {
            index: 1,
            value: 3,
            items: 4
        })
    );
    assert_eq!(
        cpu.reduce_segments(&items, &[0u32, 3, 1, 4]),
        Err(LayoutError::OffsetsDecreasing {
            index: 2,
            value: 1,
            previous: 3
        })
    );
    assert_eq!(
        cpu.reduce_by_owner(&items, &[0u32, 0, 1], 2),
        Err(LayoutError::OwnerLengthMismatch {
            items: 4,
            owners: 3
        })
    );
    assert_eq!(
        cpu.reduce_by_owner(&items, &[0u32, 1, 0, 1], 2),
        Err(LayoutError::OwnerNotSorted {
            index: 2,
            value: 0,
            previous: 1
        })
    );
    assert_eq!(
        cpu.reduce_by_owner(&items, &[0u32, 1, 1, 2], 2),
        Err(LayoutError::OwnerOutOfRange {
            index: 3,
            value: 2,
            num_segments: 2
        })
    );
}

/// The reference itself is order-sensitive: a test that would pass with a reordering kernel
/// would be worthless, so check that swapping two items changes every test monoid's fold.
#[test]
fn test_monoids_detect_a_swap() {
    fn swap_changes<M: Random>(seed: u64) {
        let items = M::random_vec(64, seed);
        let mut swapped = items.clone();
        let mut changed = false;
        for i in 0..63 {
            swapped.swap(i, i + 1);
            changed |= fold(&swapped) != fold(&items);
            swapped.swap(i, i + 1);
        }
        assert!(
            changed,
            "{}: no adjacent swap changes the fold",
            std::any::type_name::<M>()
        );
    }
    swap_changes::<Affine>(1);
    swap_changes::<Mat2>(1);
    swap_changes::<RollingHash>(1);
    swap_changes::<Perm4>(1);
    swap_changes::<Affine8>(1);
    swap_changes::<Affine16>(1);
    swap_changes::<Tri>(1);
    swap_changes::<Mat2w>(1);
    swap_changes::<Mat3>(1);
    // KeepFirst/KeepLast: a swap changes the result when it moves the first/last set item.
    let mut items = vec![
        KeepFirst {
            set: false,
            value: 0
        };
        10
    ];
    items[3] = KeepFirst {
        set: true,
        value: 1,
    };
    items[4] = KeepFirst {
        set: true,
        value: 2,
    };
    let mut swapped = items.clone();
    swapped.swap(3, 4);
    assert_ne!(fold(&items), fold(&swapped));
}

/// Every test monoid obeys the laws (checked with reduce_core::laws, as users should).
#[test]
fn test_monoids_are_lawful() {
    fn lawful<M: Random + Clone + 'static>() {
        let values = any::<u64>().prop_map(|seed| M::random(&mut reduce_tests::TestRng::new(seed)));
        reduce_core::laws::assert_monoid(values);
    }
    lawful::<Affine>();
    lawful::<Mat2>();
    lawful::<KeepFirst>();
    lawful::<KeepLast>();
    lawful::<RollingHash>();
    lawful::<Perm4>();
    lawful::<Affine8>();
    lawful::<Affine16>();
    lawful::<Tri>();
    lawful::<Mat2w>();
    lawful::<Mat3>();
}

/// `Backend::cpu()` has every call of `Backend`, and refuses what a GPU would refuse with the
/// same errors.
mod backend {
    use super::*;
    use reduce_core::Scan;
    use reduce_cuda::{Algorithm, Backend, Config, Error, ScanConfig, SegAlgorithm, SegConfig};
    use reduce_tests::monoids::lang::{lifted, ArgMax};

    #[test]
    fn the_cpu_can_be_chosen() {
        let cpu = Backend::cpu();
        assert!(matches!(cpu, Backend::Cpu { reason: None }));
        assert!(cpu.describe().starts_with("CPU ("), "{}", cpu.describe());
        assert!(!cpu.describe().contains("no GPU"));
        // The threads named are those of the pool the calls run on, not the machine's.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let described = pool.install(|| cpu.describe());
        assert!(
            described.starts_with("CPU (3 rayon threads)"),
            "{described}"
        );
    }

    /// Lifted items across the parallel chunks: every item is lifted with its global index.
    #[test]
    fn lifted_items_fold_with_their_global_index() {
        let cpu = Backend::cpu();
        for n in [0usize, 1, 17, 16_384, 16_385, 100_003] {
            let mut rng = TestRng::new(n as u64);
            // Few distinct values: the first index of the maximum decides.
            let xs: Vec<f32> = (0..n).map(|_| (rng.next_u32() % 7) as f32).collect();
            let got: ArgMax = cpu.reduce_lifted(&xs, Algorithm::Auto).unwrap();
            assert_eq!(got, fold(&lifted::<ArgMax, f32>(&xs)), "n = {n}");
        }
    }

    #[test]
    fn u32_and_u64_layouts_give_the_reference() {
        let cpu = Backend::cpu();
        let items = Affine::random_vec(50_000, 9);
        let lengths: Vec<u32> = (0..2_000).map(|i| (i * 37 % 50) as u32).collect();
        let total: u32 = lengths.iter().sum();
        let items = &items[..total as usize];
        let offsets32 = offsets_of(&lengths);
        let offsets64: Vec<u64> = offsets32.iter().map(|&o| o as u64).collect();
        let expected = fold_segments(items, &offsets32).unwrap();
        assert_eq!(
            cpu.reduce_segments(items, &offsets32, SegAlgorithm::Auto)
                .unwrap(),
            expected
        );
        assert_eq!(
            cpu.reduce_segments(items, &offsets64, SegAlgorithm::Auto)
                .unwrap(),
            expected
        );
        let lengths64: Vec<u64> = lengths.iter().map(|&l| l as u64).collect();
        let owner64: Vec<u64> = owners_of(&lengths64);
        assert_eq!(
            cpu.reduce_by_owner(items, &owner64, lengths.len(), SegAlgorithm::Auto)
                .unwrap(),
            expected
        );
    }

    #[test]
    fn the_cpu_refuses_what_a_gpu_refuses() {
        let cpu = Backend::cpu();
        let items = Affine::random_vec(100, 1);
        let bad = Config::new(Algorithm::Tb2).block(96);
        let e = cpu.reduce(&items, bad).unwrap_err();
        assert_eq!(
            e.to_string(),
            reduce_cuda::testing::kernel_source_with::<Affine>(bad)
                .unwrap_err()
                .to_string()
        );
        // Lifted items are read by Shuffle only.
        let e = cpu
            .reduce_lifted::<ArgMax, f32>(&[1.0, 2.0], Algorithm::Matrix)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidConfig { .. }), "{e:?}");
        // u64 layouts are taken by SegShuffle and SegMerge only.
        let e = cpu
            .reduce_segments(&items, &[0u64, 100], SegAlgorithm::Tb2Seg)
            .unwrap_err();
        assert!(e.to_string().contains("u64"), "{e}");
        let e = cpu
            .reduce_segments(&items, &[0u32, 50, 99], SegConfig::new(SegAlgorithm::Auto))
            .unwrap_err();
        assert!(
            matches!(e, Error::Layout(LayoutError::LastOffsetNotLen { .. })),
            "{e:?}"
        );
        // Counts past what the algorithm's kernels index: SegShuffle's u32 segment ids.
        let segments = u32::MAX as usize + 1;
        let e = cpu
            .reduce_by_owner::<Affine, u64>(&[], &[], segments, SegAlgorithm::SegShuffle)
            .unwrap_err();
        assert!(
            matches!(
                e,
                Error::Layout(LayoutError::TooLarge { what: "segment count", value, .. })
                    if value == segments
            ),
            "{e:?}"
        );
    }

    /// Every lifted call of `Backend` (segmented, by owner, along axes, the three scans) gives
    /// the call of the same items lifted first, with their global indices — in the default and
    /// the portable mode (log-sum-exp: float bits), and across the CPU's parallel chunks; a
    /// fault in the lift is the GPU's error; a configuration the GPU refuses for lifted items
    /// is refused.
    #[test]
    fn lifted_calls_are_the_calls_of_the_lifted_items() {
        use reduce_cuda::{AxisAlgorithm, AxisConfig};
        use reduce_tests::monoids::lang::{LogSumExp, Shift};
        let cpu = Backend::cpu();
        let n = 70_001; // past the CPU's chunks
        let mut rng = TestRng::new(77);
        let symbols: Vec<u32> = (0..n).map(|_| rng.next_u32() % 3).collect();
        let logits: Vec<f32> = (0..n)
            .map(|_| (rng.next_u32() % 1000) as f32 / 97.0)
            .collect();
        let lengths: Vec<u32> = (0..3_000).map(|i| (i * 53 % 47) as u32).collect();
        let total = lengths.iter().sum::<u32>() as usize;
        let offsets = offsets_of(&lengths);
        let owner: Vec<u64> = (0..total).map(|i| (i / 31) as u64).collect();
        let segments = total.div_ceil(31);
        let (symbols, logits) = (&symbols[..total], &logits[..total]);
        let (shape, axes) = ([total / 7, 7], [1usize]);
        let square = &symbols[..total / 7 * 7];

        fn both<M: PartialEq + std::fmt::Debug>(got: reduce_cuda::Result<Vec<M>>, want: Vec<M>) {
            assert_eq!(got.unwrap(), want);
        }
        let shifts: Vec<Shift> = lifted(symbols);
        let lse: Vec<LogSumExp> = lifted(logits);
        let maxima: Vec<ArgMax> = lifted(logits); // the lift that reads the index
        for portable in [false, true] {
            let seg = SegConfig::default();
            let seg = if portable { seg.portable() } else { seg };
            let scan = ScanConfig::default();
            let scan = if portable { scan.portable() } else { scan };
            let axis = AxisConfig::from(AxisAlgorithm::Auto);
            let axis = if portable { axis.portable() } else { axis };
            both(
                cpu.reduce_segments_lifted::<Shift, u32, u32>(symbols, &offsets, seg),
                cpu.reduce_segments(&shifts, &offsets, seg).unwrap(),
            );
            both(
                cpu.reduce_segments_lifted::<LogSumExp, f32, u32>(logits, &offsets, seg),
                cpu.reduce_segments(&lse, &offsets, seg).unwrap(),
            );
            both(
                cpu.reduce_segments_lifted::<ArgMax, f32, u32>(logits, &offsets, seg),
                cpu.reduce_segments(&maxima, &offsets, seg).unwrap(),
            );
            both(
                cpu.reduce_by_owner_lifted::<Shift, u32, u64>(symbols, &owner, segments, seg),
                cpu.reduce_by_owner(&shifts, &owner, segments, seg).unwrap(),
            );
            both(
                cpu.reduce_by_owner_lifted::<ArgMax, f32, u64>(logits, &owner, segments, seg),
                cpu.reduce_by_owner(&maxima, &owner, segments, seg).unwrap(),
            );
            both(
                cpu.reduce_axes_lifted::<ArgMax, f32>(&logits[..square.len()], &shape, &axes, axis),
                cpu.reduce_axes(&maxima[..square.len()], &shape, &axes, axis)
                    .unwrap(),
            );
            both(
                cpu.reduce_axes_lifted::<Shift, u32>(square, &shape, &axes, axis),
                cpu.reduce_axes(&shifts[..square.len()], &shape, &axes, axis)
                    .unwrap(),
            );
            for kind in [Scan::Inclusive, Scan::Exclusive] {
                both(
                    cpu.scan_lifted::<LogSumExp, f32>(logits, kind, scan),
                    cpu.scan(&lse, kind, scan).unwrap(),
                );
                both(
                    cpu.scan_segments_lifted::<Shift, u32, u32>(symbols, &offsets, kind, scan),
                    cpu.scan_segments(&shifts, &offsets, kind, scan).unwrap(),
                );
                both(
                    cpu.scan_by_key_lifted::<LogSumExp, f32, u64>(logits, &owner, kind, scan),
                    cpu.scan_by_key(&lse, &owner, kind, scan).unwrap(),
                );
                both(
                    cpu.scan_lifted::<ArgMax, f32>(logits, kind, scan),
                    cpu.scan(&maxima, kind, scan).unwrap(),
                );
            }
        }
        // The default mode of an exact monoid is the sequential reference.
        let want = reduce_core::fold_segments(&shifts, &offsets).unwrap();
        both(
            cpu.reduce_segments_lifted::<Shift, u32, u32>(symbols, &offsets, SegAlgorithm::Auto),
            want,
        );
        // A symbol past the lift's table (3 entries) faults in every lifted call.
        let mut bad = symbols.to_vec();
        bad[total - 5] = 7;
        let fault = |e: Error| match e {
            Error::DeviceFault { index, len, .. } => (index, len),
            other => panic!("expected a device fault, got {other:?}"),
        };
        let seg = SegConfig::default();
        let e = cpu.reduce_segments_lifted::<Shift, u32, u32>(&bad, &offsets, seg);
        assert_eq!(fault(e.unwrap_err()), (7, 3));
        let e = cpu.reduce_by_owner_lifted::<Shift, u32, u64>(&bad, &owner, segments, seg);
        assert_eq!(fault(e.unwrap_err()), (7, 3));
        let e = cpu.scan_lifted::<Shift, u32>(&bad, Scan::Inclusive, ScanConfig::default());
        assert_eq!(fault(e.unwrap_err()), (7, 3));
        // A bad layout or shape is its own error, found before any item is lifted (as the
        // GPU's calls check them on the host before launching).
        let layout = |e: reduce_cuda::Result<Vec<Shift>>| match e {
            Err(Error::Layout(e)) => e,
            other => panic!("expected a layout error, got {other:?}"),
        };
        let short = &offsets[..offsets.len() - 1];
        let e = layout(cpu.reduce_segments_lifted::<Shift, u32, u32>(&bad, short, seg));
        assert!(matches!(e, LayoutError::LastOffsetNotLen { .. }), "{e:?}");
        let e = cpu.reduce_by_owner_lifted::<Shift, u32, u64>(&bad, &owner[1..], segments, seg);
        assert!(matches!(layout(e), LayoutError::OwnerLengthMismatch { .. }));
        let inclusive = (Scan::Inclusive, ScanConfig::default());
        let e = cpu.scan_segments_lifted::<Shift, u32, u32>(&bad, short, inclusive.0, inclusive.1);
        assert!(matches!(layout(e), LayoutError::LastOffsetNotLen { .. }));
        let e =
            cpu.scan_by_key_lifted::<Shift, u32, u64>(&bad, &owner[1..], inclusive.0, inclusive.1);
        assert!(matches!(layout(e), LayoutError::KeysLengthMismatch { .. }));
        let axis = AxisConfig::from(AxisAlgorithm::Auto);
        let e = cpu.reduce_axes_lifted::<Shift, u32>(&bad, &[total + 1], &[0], axis);
        layout(e);
        // `Cpu::lift` gives the values every lifted call reduces.
        assert_eq!(Cpu::new().lift::<ArgMax, f32>(logits), maxima);
        // Lifted items are read by SegShuffle, SegMerge and SegHeads only, as on the GPU.
        let e = cpu
            .reduce_segments_lifted::<Shift, u32, u32>(symbols, &offsets, SegAlgorithm::Tb2Seg)
            .unwrap_err();
        assert!(matches!(e, Error::InvalidConfig { .. }), "{e:?}");
    }

    /// An index out of bounds in translated code is the GPU's error on `Backend`'s CPU, in
    /// every form (reductions and scans, in both modes of the scans): the same variant, monoid
    /// and length.
    #[test]
    fn an_index_fault_is_the_gpus_error() {
        let items = faulty_automata();
        let cpu = Backend::cpu();
        let fault = |e: Error| match e {
            Error::DeviceFault { monoid, index, len } => (monoid, index, len),
            other => panic!("expected a device fault, got {other:?}"),
        };
        let want = ("Automaton", 200, 8);
        assert_eq!(
            fault(cpu.reduce(&items, Algorithm::Auto).unwrap_err()),
            want
        );
        let offsets = [0u32, 10, 31_000, 40_000, 50_000];
        let e = cpu.reduce_segments(&items, &offsets, SegAlgorithm::Auto);
        assert_eq!(fault(e.unwrap_err()), want);
        let owner: Vec<u32> = (0..items.len() as u32).map(|i| i / 1000).collect();
        let e = cpu.reduce_by_owner(&items, &owner, 50, SegAlgorithm::Auto);
        assert_eq!(fault(e.unwrap_err()), want);
        // the scans, in both modes: plain, by offsets and by key
        for config in [ScanConfig::default(), ScanConfig::default().portable()] {
            for kind in [Scan::Inclusive, Scan::Exclusive] {
                let e = cpu.scan(&items, kind, config);
                assert_eq!(fault(e.unwrap_err()), want, "{kind:?} {config:?}");
                let e = cpu.scan_segments(&items, &offsets, kind, config);
                assert_eq!(fault(e.unwrap_err()), want, "{kind:?} {config:?}");
                let e = cpu.scan_by_key(&items, &owner, kind, config);
                assert_eq!(fault(e.unwrap_err()), want, "{kind:?} {config:?}");
            }
        }
        // a bad layout is still a layout error
        let e = cpu.reduce_segments(&items, &[0u32, 7], SegAlgorithm::Auto);
        assert!(matches!(e, Err(Error::Layout(_))), "{e:?}");
        // and good items still reduce
        let good = &items[..31_000];
        assert_eq!(cpu.reduce(good, Algorithm::Auto).unwrap(), fold(good));
    }

    /// An integer division by zero (or `i32::MIN / -1`) in translated code, where Rust panics,
    /// is the GPU's `DivisionFault` on `Backend`'s CPU, in reductions, segmented reductions
    /// and scans; good items still reduce.
    #[test]
    fn a_division_fault_is_the_gpus_error() {
        use reduce_tests::monoids::lang::{quotient_inputs, Quotients};
        let cpu = Backend::cpu();
        let mut xs = quotient_inputs(40_000, 3);
        let want = fold(&lifted::<Quotients, u64>(&xs));
        let got: Quotients = cpu.reduce_lifted(&xs, Algorithm::Auto).unwrap();
        assert_eq!(got, want);
        let division = |e: Error| match e {
            Error::DivisionFault { monoid, overflow } => (monoid, overflow),
            other => panic!("expected a division fault, got {other:?}"),
        };
        xs[12_345] = 77 << 32; // 77 / 0
        let e = cpu.reduce_lifted::<Quotients, u64>(&xs, Algorithm::Auto);
        assert_eq!(division(e.unwrap_err()), ("Quotients", false));
        let offsets = [0u32, 10_000, 40_000];
        let e =
            cpu.reduce_segments_lifted::<Quotients, u64, u32>(&xs, &offsets, SegConfig::default());
        assert_eq!(division(e.unwrap_err()), ("Quotients", false));
        let e = cpu.scan_lifted::<Quotients, u64>(&xs, Scan::Inclusive, ScanConfig::default());
        assert_eq!(division(e.unwrap_err()), ("Quotients", false));
        xs[12_345] = (0x8000_0000 << 32) | 0xffff_ffff; // i32::MIN / -1
        let e = cpu.reduce_lifted::<Quotients, u64>(&xs, Config::default().portable());
        assert_eq!(division(e.unwrap_err()), ("Quotients", true));
    }
}

/// Automata with one whose table points past its 8 states: every composition that reaches it
/// indexes out of bounds.
fn faulty_automata() -> Vec<reduce_tests::monoids::lang::Automaton> {
    let mut items = reduce_tests::monoids::lang::Automaton::random_vec(50_000, 5);
    items[31_337].t = [200; 8];
    items
}

/// An index out of bounds in translated code: the plain calls panic as Rust does, the
/// fallible ones (`try_*`) return the fault, in every form.
#[test]
fn fallible_cpu_calls_return_index_faults() {
    use reduce_core::{CpuError, IndexFault};
    let items = faulty_automata();
    let cpu = Cpu::new();
    let is_fault = |f: IndexFault| {
        assert!(f.monoid.ends_with("Automaton"), "{f}");
        assert_eq!((f.index, f.len), (200, 8));
    };
    is_fault(cpu.try_reduce(&items).unwrap_err());
    is_fault(cpu.try_reduce(&items[30_000..32_000]).unwrap_err()); // one sequential task
    let offsets = [0u32, 10, 31_000, 40_000, 50_000];
    match cpu.try_reduce_segments(&items, &offsets) {
        Err(CpuError::Fault(f)) => is_fault(f),
        other => panic!("{other:?}"),
    }
    let owner: Vec<u64> = (0..items.len() as u64).map(|i| i / 1000).collect();
    match cpu.try_reduce_by_owner(&items, &owner, 50) {
        Err(CpuError::Fault(f)) => is_fault(f),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        cpu.try_reduce_segments(&items, &[0u32, 7]),
        Err(CpuError::Layout(LayoutError::LastOffsetNotLen { .. }))
    ));
    // The scans too, plain, by offsets and by key (each from its chunk's carry).
    is_fault(
        cpu.try_scan(&items, reduce_core::Scan::Inclusive)
            .unwrap_err(),
    );
    match cpu.try_scan_segments(&items, &offsets, reduce_core::Scan::Exclusive) {
        Err(CpuError::Fault(f)) => is_fault(f),
        other => panic!("{other:?}"),
    }
    match cpu.try_scan_by_key(&items, &owner, reduce_core::Scan::Inclusive) {
        Err(CpuError::Fault(f)) => is_fault(f),
        other => panic!("{other:?}"),
    }
    let good = &items[..31_000];
    assert_eq!(
        cpu.try_scan(good, reduce_core::Scan::Inclusive),
        Ok(reduce_core::scan(good, reduce_core::Scan::Inclusive))
    );
    assert_eq!(cpu.try_reduce(good), Ok(fold(good)));
    assert_eq!(
        cpu.try_reduce_segments(good, &[0u32, 500, 31_000]),
        Ok(fold_segments(good, &[0u32, 500, 31_000]).unwrap())
    );

    // Rust's panic, with Rust's message, for the plain calls and `Monoid::combine`.
    let calls: [fn(); 3] = [
        || {
            Cpu::new().reduce(&faulty_automata());
        },
        || {
            fold(&faulty_automata());
        },
        || drop(Cpu::new().reduce_segments(&faulty_automata(), &[0u32, 50_000])),
    ];
    for call in calls {
        let panic = std::panic::catch_unwind(call).unwrap_err();
        let message = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or(panic.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        assert_eq!(
            message,
            "index out of bounds: the len is 8 but the index is 200"
        );
    }
}

/// Reductions along axes on the CPU: the reference's values for every axis set of shapes that
/// cross the parallel chunking (many short results, few long ones), a non-commutative monoid.
#[test]
fn axes_in_parallel_are_the_reference() {
    use reduce_core::fold_axes;
    let shapes: &[&[usize]] = &[
        &[],
        &[100_000],
        &[3, 70_000],
        &[70_000, 3],
        &[17, 64, 65],
        &[2, 3, 4, 5],
        &[0, 5],
        &[5, 0],
        &[1, 1, 1],
        &[2, 50_000, 1],
    ];
    let cpu = Cpu::new();
    for (k, shape) in shapes.iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs = Affine::random_vec(n, k as u64);
        for mask in 0..1usize << shape.len() {
            let axes: Vec<usize> = (0..shape.len()).filter(|a| mask >> a & 1 == 1).collect();
            let want = fold_axes(&xs, shape, &axes).unwrap();
            assert_eq!(
                cpu.reduce_axes(&xs, shape, &axes).unwrap(),
                want,
                "{shape:?} {axes:?}"
            );
            assert_eq!(cpu.try_reduce_axes(&xs, shape, &axes).unwrap(), want);
        }
    }
    assert!(matches!(
        cpu.reduce_axes(&Affine::random_vec(6, 1), &[2, 4], &[0]),
        Err(LayoutError::ShapeMismatch { .. })
    ));
    match cpu.try_reduce_axes(&faulty_automata(), &[50, 1000], &[1]) {
        Err(reduce_core::CpuError::Fault(f)) => assert_eq!((f.index, f.len), (200, 8)),
        other => panic!("{other:?}"),
    }
}
