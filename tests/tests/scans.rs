//! Scans on the GPU against `reduce_core::{scan, scan_segments, scan_by_key}`, bit for bit, with
//! non-commutative monoids of 1, 8, 16 and 36 bytes: sizes around tiles and blocks, several
//! tile shapes, both kinds, in place and into longer outputs, lifted items (the global index),
//! every segment layout shape in both index widths, keys that come back, the bad-input errors,
//! the backends, and 2^32 + 3 one-byte items; `LookBack`, `ReduceThenScan` and `LookAhead` alike
//! (LookAhead also in place and on views off a 16-byte boundary, where it runs as LookBack).
//! Scans and SegHeads taking turns on the scratch words both keep zero between calls; an index
//! out of bounds in the monoid's code is a device fault in every scan. The bits of float scans:
//! `scan_bits.rs` (their grouping) and `portable_scans.rs` (the portable mode).
//! NVRTC compiles the family's kernels (CI too).

use reduce_core::{
    portable, scan, scan_by_key, scan_segments, LayoutError, Monoid, Scan, SegIndex, Sum,
};
use reduce_cuda::testing::{compile_scan_kernels, compile_scan_kernels_lifted};
use reduce_cuda::{
    Backend, DeviceVec, Error, Gpu, ScanAlgorithm, ScanConfig, SegAlgorithm, SegConfig,
};
use reduce_tests::monoids::lang::{lifted, ArgMax, Automaton};
use reduce_tests::monoids::small::{Aff16n, AffCount, Grid16, Nib8, Tri8};
use reduce_tests::*;

const KINDS: [Scan; 2] = [Scan::Inclusive, Scan::Exclusive];

/// Tile shapes: the default, the smallest (32 threads, one item each), and a large odd one;
/// ReduceThenScan and LookAhead at the default and the smallest, LookAhead also at 64 threads of
/// five items (runs that are not whole vectors).
fn configs() -> [ScanConfig; 8] {
    let small = |algorithm| ScanConfig::new(algorithm).block(32).items_per_thread(1);
    [
        ScanConfig::default(),
        small(ScanAlgorithm::LookBack),
        ScanConfig::new(ScanAlgorithm::LookBack)
            .block(1024)
            .items_per_thread(3),
        ScanConfig::new(ScanAlgorithm::ReduceThenScan),
        small(ScanAlgorithm::ReduceThenScan),
        ScanConfig::new(ScanAlgorithm::LookAhead),
        small(ScanAlgorithm::LookAhead),
        ScanConfig::new(ScanAlgorithm::LookAhead)
            .block(64)
            .items_per_thread(5),
    ]
}

/// Sizes on both sides of tile boundaries of every config above.
const SIZES: &[usize] = &[
    0,
    1,
    2,
    31,
    32,
    33,
    1023,
    1024,
    1025,
    2047,
    2048,
    2049,
    3072,
    4095,
    4097,
    12_289,
    100_003,
    (1 << 20) + 7,
];

#[test]
fn the_family_compiles() {
    if !require_nvrtc() {
        return;
    }
    // A few hundred NVRTC compilations: the configurations side by side, a thread per core.
    let configs = configs();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        for chunk in configs.chunks(configs.len().div_ceil(threads)) {
            scope.spawn(move || {
                for &config in chunk {
                    compile_scan_kernels::<Affine>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<Mat2>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<Mat3>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<Nib8>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<Tri8>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<AffCount>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<Grid16>(config, CI_ARCH).unwrap();
                    compile_scan_kernels::<Sum<f32>>(config, CI_ARCH).unwrap();
                    compile_scan_kernels_lifted::<ArgMax, f32>(config, CI_ARCH).unwrap();
                }
            });
        }
    });
    // Before sm_80 a warp's marks are ORed by shuffles (no redux.sync).
    for arch in ["sm_75", "sm_80"] {
        compile_scan_kernels::<Sum<f32>>(ScanConfig::default(), arch)
            .unwrap_or_else(|e| panic!("{arch}: {e}"));
    }
    // A monoid whose code can fault (an index into its table), in both modes.
    compile_scan_kernels::<Automaton>(ScanConfig::default(), CI_ARCH).unwrap();
    let portable = ScanConfig::default().portable();
    compile_scan_kernels::<Automaton>(portable, CI_ARCH).unwrap();
    compile_scan_kernels::<Sum<f64>>(portable, CI_ARCH).unwrap();
    compile_scan_kernels::<Mat3>(portable, CI_ARCH).unwrap();
    compile_scan_kernels_lifted::<ArgMax, f32>(portable, CI_ARCH).unwrap();
}

/// `Backend` on the CPU gives the references, and the GPU's errors for a bad configuration and
/// bad layouts; on the GPU (where there is one), the same values.
#[test]
fn the_backends_are_the_reference() {
    let xs = Affine::random_vec(30_011, 4);
    let lengths: Vec<u32> = (0..1000).map(|k| (k * 7) % 61).collect();
    let mut offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap() as usize;
    let xs = &xs[..n];
    let keys: Vec<u64> = (0..n as u64).map(|i| (i / 13) % 4).collect();
    let mut backends = vec![Backend::cpu()];
    backends.extend(gpu().map(Backend::Gpu));
    for backend in &backends {
        for kind in KINDS {
            let scanned = backend.scan(xs, kind, ScanAlgorithm::Auto).unwrap();
            assert_eq!(scanned, scan(xs, kind), "{}", backend.describe());
            let segmented = backend.scan_segments(xs, &offsets, kind, ScanAlgorithm::Auto);
            assert_eq!(
                segmented.unwrap(),
                scan_segments(xs, &offsets, kind).unwrap()
            );
            let by_key = backend.scan_by_key(xs, &keys, kind, ScanAlgorithm::Auto);
            assert_eq!(by_key.unwrap(), scan_by_key(xs, &keys, kind).unwrap());
        }
        let e = backend.scan(xs, Scan::Inclusive, ScanConfig::default().block(33));
        assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
        let e = backend.scan_by_key(xs, &keys[1..], Scan::Inclusive, ScanAlgorithm::Auto);
        assert!(
            matches!(
                e,
                Err(Error::Layout(LayoutError::KeysLengthMismatch { .. }))
            ),
            "{e:?}"
        );
    }
    offsets[10] = offsets[9] - 1;
    for backend in &backends {
        let e = backend.scan_segments(xs, &offsets, Scan::Inclusive, ScanAlgorithm::Auto);
        assert!(
            matches!(
                e,
                Err(Error::Layout(LayoutError::OffsetsDecreasing {
                    index: 10,
                    ..
                }))
            ),
            "{}: {e:?}",
            backend.describe()
        );
    }
    // Lifted inputs (ArgMax reads each item's global index): the scans of the lifted items.
    let mut rng = TestRng::new(5);
    let logits: Vec<f32> = (0..n).map(|_| (rng.next_u32() % 50) as f32).collect();
    let maxima: Vec<ArgMax> = lifted(&logits);
    offsets[10] = offsets[9];
    for backend in &backends {
        for kind in KINDS {
            let what = backend.describe();
            let got = backend.scan_lifted::<ArgMax, f32>(&logits, kind, ScanAlgorithm::Auto);
            assert_eq!(got.unwrap(), scan(&maxima, kind), "{what}");
            let got = backend.scan_segments_lifted::<ArgMax, f32, u32>(
                &logits,
                &offsets,
                kind,
                ScanAlgorithm::Auto,
            );
            let want = scan_segments(&maxima, &offsets, kind).unwrap();
            assert_eq!(got.unwrap(), want, "{what}");
            let got = backend.scan_by_key_lifted::<ArgMax, f32, u64>(
                &logits,
                &keys,
                kind,
                ScanAlgorithm::Auto,
            );
            let want = scan_by_key(&maxima, &keys, kind).unwrap();
            assert_eq!(got.unwrap(), want, "{what}");
        }
    }
}

fn check_plain<M: CudaMonoidTest>(gpu: &Gpu, sizes: &[usize]) {
    for &n in sizes {
        let xs = M::random_vec(n, n as u64);
        let dxs = gpu.upload(&xs).unwrap();
        for kind in KINDS {
            let want = scan(&xs, kind);
            for config in configs() {
                let got = gpu.scan(&dxs, kind, config).unwrap();
                assert_eq!(
                    gpu.download(&got).unwrap(),
                    want,
                    "{} n = {n} {kind:?} {config:?}",
                    M::CUDA_NAME
                );
            }
        }
    }
}

/// The test monoids' bounds.
trait CudaMonoidTest: reduce_core::CudaMonoid + Random + PartialEq + std::fmt::Debug {}
impl<M: reduce_core::CudaMonoid + Random + PartialEq + std::fmt::Debug> CudaMonoidTest for M {}

#[test]
fn plain_scans_are_the_reference() {
    let Some(gpu) = gpu() else { return };
    check_plain::<Affine>(&gpu, SIZES);
    check_plain::<Mat2>(&gpu, SIZES);
    check_plain::<Nib8>(&gpu, SIZES);
    check_plain::<Mat3>(&gpu, &[0, 1, 1025, 4097, 100_003]);
    // sizes no 16-byte vector holds whole (staged in chunks of three vectors): 3, 6 and 12 bytes
    // (one of them aligned to 2)
    let odd = &[1, 1025, 4097, 100_003, (1 << 20) + 7];
    check_plain::<Tri8>(&gpu, odd);
    check_plain::<Aff16n>(&gpu, odd);
    check_plain::<AffCount>(&gpu, odd);
    check_plain::<Grid16>(&gpu, odd);
    // in place, where the stage writes each output over its own item
    let xs = AffCount::random_vec(100_003, 5);
    for kind in KINDS {
        let mut dxs = gpu.upload(&xs).unwrap();
        gpu.scan_in_place(&mut dxs, kind, ScanAlgorithm::Auto)
            .unwrap();
        assert_eq!(
            gpu.download(&dxs).unwrap(),
            scan(&xs, kind),
            "12 bytes in place {kind:?}"
        );
    }
}

#[test]
fn in_place_into_and_lifted() {
    let Some(gpu) = gpu() else { return };
    let xs = Affine::random_vec(50_001, 7);
    for kind in KINDS {
        let want = scan(&xs, kind);
        let mut d = gpu.upload(&xs).unwrap();
        gpu.scan_in_place(&mut d, kind, ScanAlgorithm::Auto)
            .unwrap();
        assert_eq!(gpu.download(&d).unwrap(), want, "in place {kind:?}");
        // a longer output gets the outputs in its first values
        let dxs = gpu.upload(&xs).unwrap();
        let mut out = gpu.identities::<Affine>(60_000).unwrap();
        gpu.scan_into(&dxs, kind, &mut out, ScanAlgorithm::Auto)
            .unwrap();
        assert_eq!(&gpu.download(&out).unwrap()[..xs.len()], &want[..]);
    }
    // LookAhead in place, and on views 0 to 3 items (8 bytes each) past a 16-byte boundary
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead);
    for kind in KINDS {
        let want = scan(&xs, kind);
        let mut d = gpu.upload(&xs).unwrap();
        gpu.scan_in_place(&mut d, kind, ahead).unwrap();
        assert_eq!(
            gpu.download(&d).unwrap(),
            want,
            "LookAhead in place {kind:?}"
        );
        for skip in 0..4 {
            let (_keep, view) = placed(&gpu, &xs, skip);
            let got = gpu.scan(&view, kind, ahead).unwrap();
            assert_eq!(
                gpu.download(&got).unwrap(),
                want,
                "LookAhead {skip} items off {kind:?}"
            );
        }
    }
    let dxs = gpu.upload(&xs).unwrap();
    let mut short = gpu.identities::<Affine>(50_000).unwrap();
    let e = gpu.scan_into(&dxs, Scan::Inclusive, &mut short, ScanAlgorithm::Auto);
    assert!(matches!(e, Err(Error::LengthMismatch { .. })), "{e:?}");
    let e = gpu.scan(
        &dxs,
        Scan::Inclusive,
        ScanConfig::default().items_per_thread(0),
    );
    assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
    // lifted: ArgMax of f32 with the global index
    check_lifted(&gpu, 300_001, 3, &configs());
}

/// Segmented scans in place, by CSR offsets (`u32`) and by key (`u64`), by each algorithm and
/// the portable mode, both kinds: the reference's values (the portable ones its bits); and bad
/// offsets in place are still the layout's error.
#[test]
fn segmented_scans_in_place() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(12);
    let lengths: Vec<u32> = (0..3000).map(|_| rng.range(0, 90) as u32).collect();
    let offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap() as usize;
    let keys: Vec<u64> = (0..n as u64).map(|i| (i / 37) % 3).collect();
    let xs = Affine::random_vec(n, 13);
    let (d_offsets, d_keys) = (gpu.upload(&offsets).unwrap(), gpu.upload(&keys).unwrap());
    let configs = ScanAlgorithm::ALL
        .map(ScanConfig::new)
        .into_iter()
        .chain([ScanConfig::default().portable()]);
    for config in configs {
        for kind in KINDS {
            let (by_offsets, by_key) = match config.portable {
                false => (
                    scan_segments(&xs, &offsets, kind),
                    scan_by_key(&xs, &keys, kind),
                ),
                true => (
                    portable::scan_segments(&xs, &offsets, kind),
                    portable::scan_by_key(&xs, &keys, kind),
                ),
            };
            let mut d = gpu.upload(&xs).unwrap();
            gpu.scan_segments_in_place(&mut d, &d_offsets, kind, config)
                .unwrap();
            let got = gpu.download(&d).unwrap();
            assert_eq!(got, by_offsets.unwrap(), "by offsets {kind:?} {config:?}");
            let mut d = gpu.upload(&xs).unwrap();
            gpu.scan_by_key_in_place(&mut d, &d_keys, kind, config)
                .unwrap();
            let got = gpu.download(&d).unwrap();
            assert_eq!(got, by_key.unwrap(), "by key {kind:?} {config:?}");
        }
    }
    let mut bad = offsets.clone();
    bad[9] = bad[10] + 1;
    let d_bad = gpu.upload(&bad).unwrap();
    let mut d = gpu.upload(&xs).unwrap();
    let e = gpu.scan_segments_in_place(&mut d, &d_bad, Scan::Inclusive, ScanAlgorithm::Auto);
    assert!(
        matches!(
            e,
            Err(Error::Layout(LayoutError::OffsetsDecreasing {
                index: 10,
                ..
            }))
        ),
        "{e:?}"
    );
}

/// An index out of bounds in the monoid's code is `Error::DeviceFault` in every scan (each
/// algorithm and the portable mode; plain, by offsets and by key), and the next good scan on the
/// same `Gpu` gives the reference.
#[test]
fn an_index_out_of_bounds_is_a_device_fault() {
    let Some(gpu) = gpu() else { return };
    // Every entry out of bounds: whatever the grouping, a later item looks it up.
    let mut items = Automaton::random_vec(50_000, 5);
    items[31_337].t = [200; 8];
    let xs = gpu.upload(&items).unwrap();
    let offsets = gpu.upload(&[0u32, 10, 31_000, 40_000, 50_000]).unwrap();
    let keys: Vec<u64> = (0..items.len() as u64).map(|i| i / 1000).collect();
    let keys = gpu.upload(&keys).unwrap();
    let good = &items[..31_000];
    let good_xs = gpu.upload(good).unwrap();
    let configs = ScanAlgorithm::ALL
        .map(ScanConfig::new)
        .into_iter()
        .chain([ScanConfig::default().portable()]);
    for config in configs {
        for kind in KINDS {
            let calls = [
                ("plain", gpu.scan(&xs, kind, config)),
                ("by offsets", gpu.scan_segments(&xs, &offsets, kind, config)),
                ("by key", gpu.scan_by_key(&xs, &keys, kind, config)),
            ];
            for (form, result) in calls {
                match result {
                    Err(Error::DeviceFault { monoid, index, len }) => {
                        assert_eq!((monoid, index, len), ("Automaton", 200, 8), "{form}");
                    }
                    other => {
                        panic!("{form} {kind:?} {config:?}: expected a device fault, got {other:?}")
                    }
                }
            }
            let got = gpu.scan(&good_xs, kind, config).unwrap();
            assert_eq!(gpu.download(&got).unwrap(), scan(good, kind), "{config:?}");
        }
    }
}

/// Lifted scans (ArgMax of `n` random f32 with the global index, from `seed`) by each of
/// `configs`, both kinds, against the sequential scan of the lifted items.
fn check_lifted(gpu: &Gpu, n: usize, seed: u64, configs: &[ScanConfig]) {
    let mut rng = TestRng::new(seed);
    let fl: Vec<f32> = (0..n).map(|_| (rng.next_u32() % 5000) as f32).collect();
    let dfl = gpu.upload(&fl).unwrap();
    let items: Vec<ArgMax> = lifted(&fl);
    for kind in KINDS {
        let want = scan(&items, kind);
        for &config in configs {
            let got = gpu.scan_lifted::<ArgMax, f32>(&dfl, kind, config).unwrap();
            assert_eq!(
                gpu.download(&got).unwrap(),
                want,
                "lifted {kind:?} {config:?}"
            );
        }
    }
}

/// LookAhead's runs in every form of their swizzle (kernels/scan_ahead.cu's
/// `r_ahead_first_read`): 64 threads of 4, 8 and 12 items are runs of 2, 4 and 6 vectors of
/// 8-byte values (two rotation classes: one stage of selects, then the swizzle; four: GF(4); two)
/// and of 4, 8 and 12 vectors of 16-byte ones (GF(4), GF(8), GF(4)); plain (the outputs through
/// the stage), by CSR offsets of short segments, and lifted from f32 runs of 2, 4, 6 and 8
/// vectors (the outputs item by item from the swizzled runs); sizes around tiles and warps.
#[test]
fn look_ahead_swizzled_runs() {
    let Some(gpu) = gpu() else { return };
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead).block(64);
    fn check<M: CudaMonoidTest>(gpu: &Gpu, config: ScanConfig) {
        let mut rng = TestRng::new(9);
        for n in [1, 255, 256, 257, 2049, 100_003] {
            let xs = M::random_vec(n, n as u64);
            let lengths: Vec<u32> = (0..n).map(|_| rng.range(0, 9) as u32).collect();
            let mut offsets = offsets_of(&lengths);
            offsets.retain(|&o| o as usize <= n);
            offsets.push(n as u32);
            let (dxs, doff) = (gpu.upload(&xs).unwrap(), gpu.upload(&offsets).unwrap());
            for kind in KINDS {
                let got = gpu.scan(&dxs, kind, config).unwrap();
                let what = format!("{} n = {n} {kind:?} {config:?}", M::CUDA_NAME);
                assert_eq!(gpu.download(&got).unwrap(), scan(&xs, kind), "{what}");
                let got = gpu.scan_segments(&dxs, &doff, kind, config).unwrap();
                let want = scan_segments(&xs, &offsets, kind).unwrap();
                assert_eq!(gpu.download(&got).unwrap(), want, "offsets: {what}");
            }
        }
    }
    for items in [4, 8, 12] {
        check::<Affine>(&gpu, ahead.items_per_thread(items));
        check::<Mat2>(&gpu, ahead.items_per_thread(items));
    }
    let lifted_runs = [8, 16, 24, 32].map(|items| ahead.items_per_thread(items));
    check_lifted(&gpu, 100_003, 8, &lifted_runs);
}

/// Keys of segments with these lengths, drawn from 3 labels: neighbouring segments may share
/// one (then they are one run), and a label comes back later.
fn keys_of<I: SegIndex>(lengths: &[u64], rng: &mut TestRng) -> Vec<I> {
    lengths
        .iter()
        .flat_map(|&l| std::iter::repeat_n(I::from_u64(rng.range(0, 3)), l as usize))
        .collect()
}

fn check_segmented<M: CudaMonoidTest, I: SegIndex>(gpu: &Gpu, layouts: &[(String, Vec<u64>)]) {
    let mut rng = TestRng::new(11);
    for (name, lengths) in layouts {
        let lengths: Vec<I> = convert(lengths);
        let offsets = offsets_of(&lengths);
        let n = offsets.last().map_or(0, |o| o.to_u64() as usize);
        let xs = M::random_vec(n, n as u64);
        let lengths64: Vec<u64> = lengths.iter().map(|l| l.to_u64()).collect();
        let keys: Vec<I> = keys_of(&lengths64, &mut rng);
        let (dxs, doff, dkeys) = (
            gpu.upload(&xs).unwrap(),
            gpu.upload(&offsets).unwrap(),
            gpu.upload(&keys).unwrap(),
        );
        for kind in KINDS {
            let want = scan_segments(&xs, &offsets, kind).unwrap();
            let want_keys = scan_by_key(&xs, &keys, kind).unwrap();
            for config in configs() {
                let got = gpu.scan_segments(&dxs, &doff, kind, config).unwrap();
                assert_eq!(
                    gpu.download(&got).unwrap(),
                    want,
                    "{name}: {kind:?} {config:?}"
                );
                let got = gpu.scan_by_key(&dxs, &dkeys, kind, config).unwrap();
                assert_eq!(
                    gpu.download(&got).unwrap(),
                    want_keys,
                    "{name}, keys: {kind:?} {config:?}"
                );
            }
        }
    }
}

#[test]
fn segmented_scans_are_the_reference_on_every_layout_shape() {
    let Some(gpu) = gpu() else { return };
    let shapes = layouts::every_shape();
    check_segmented::<Affine, u32>(&gpu, &shapes);
    check_segmented::<Affine, u64>(&gpu, &shapes);
    check_segmented::<Nib8, u32>(&gpu, &shapes[..12]);
    check_segmented::<Mat2, u64>(&gpu, &shapes[..12]);
    // 12 bytes: staged in chunks of three vectors, in dynamic shared memory
    check_segmented::<AffCount, u32>(&gpu, &shapes[..12]);
}

/// The scans' tile states and heads' bitmap lie in the scratch words that are zero between
/// calls, beside SegHeads' bits and SegBlocks' counts, and are zeroed behind each scan: calls of
/// the three families taking turns on one `Gpu` stay exact (a call that left a word set would
/// corrupt the next one).
#[test]
fn scans_and_seg_heads_take_turns_on_the_zeroed_words() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(0x5ca7);
    let lengths: Vec<u32> = (0..20_000).map(|_| rng.range(0, 40) as u32).collect();
    let offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap() as usize;
    let xs = Affine::random_vec(n, 0x5ca8);
    let (dxs, doff) = (gpu.upload(&xs).unwrap(), gpu.upload(&offsets).unwrap());
    let heads = SegConfig::new(SegAlgorithm::SegHeads).trusted();
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks).trusted();
    let ahead = ScanConfig::new(ScanAlgorithm::LookAhead);
    for round in 0..3 {
        for kind in KINDS {
            let got = gpu.scan_segments(&dxs, &doff, kind, ahead).unwrap();
            let want = scan_segments(&xs, &offsets, kind).unwrap();
            assert_eq!(
                gpu.download(&got).unwrap(),
                want,
                "round {round}: {kind:?} by offsets"
            );
            let want = reduce_core::fold_segments(&xs, &offsets).unwrap();
            for config in [heads, blocks] {
                let got = gpu.reduce_segments(&dxs, &doff, config).unwrap();
                let name = config.algorithm;
                assert_eq!(gpu.download(&got).unwrap(), want, "round {round}: {name}");
            }
            let got = gpu.scan(&dxs, kind, ahead).unwrap();
            assert_eq!(
                gpu.download(&got).unwrap(),
                scan(&xs, kind),
                "round {round}: {kind:?}"
            );
        }
    }
}

#[test]
fn segmented_lifted_and_bad_layouts() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(5);
    let fl: Vec<f32> = (0..100_000)
        .map(|_| (rng.next_u32() % 100) as f32)
        .collect();
    let items: Vec<ArgMax> = lifted(&fl);
    let lengths: Vec<u32> = (0..2000).map(|_| 50).collect();
    let offsets = offsets_of(&lengths);
    let keys: Vec<u64> = (0..100_000u64).map(|i| i / 37).collect();
    let (dfl, doff, dkeys) = (
        gpu.upload(&fl).unwrap(),
        gpu.upload(&offsets).unwrap(),
        gpu.upload(&keys).unwrap(),
    );
    for kind in KINDS {
        let got = gpu
            .scan_segments_lifted::<ArgMax, f32, _>(&dfl, &doff, kind, ScanAlgorithm::Auto)
            .unwrap();
        let want = scan_segments(&items, &offsets, kind).unwrap();
        assert_eq!(gpu.download(&got).unwrap(), want);
        let got = gpu
            .scan_by_key_lifted::<ArgMax, f32, _>(&dfl, &dkeys, kind, ScanAlgorithm::Auto)
            .unwrap();
        let want = scan_by_key(&items, &keys, kind).unwrap();
        assert_eq!(gpu.download(&got).unwrap(), want);
    }
    // the `_into` forms write what the allocating ones return, lifted or not
    let ditems = gpu.upload(&items).unwrap();
    // a value no scan here gives (the items are 0..99 at indices below 100_000)
    let poison = vec![
        ArgMax {
            v: -1.0,
            i: u32::MAX
        };
        items.len()
    ];
    // one `_into` call into a poisoned output, which must then hold `want`
    let into = |kind: Scan,
                want: &[ArgMax],
                call: &dyn Fn(&mut DeviceVec<ArgMax>) -> reduce_cuda::Result<()>| {
        let mut out = gpu.upload(&poison).unwrap();
        call(&mut out).unwrap();
        assert_eq!(gpu.download(&out).unwrap(), want, "{kind:?}");
    };
    for kind in KINDS {
        let auto = ScanAlgorithm::Auto;
        let by_offsets = scan_segments(&items, &offsets, kind).unwrap();
        into(kind, &by_offsets, &|out| {
            gpu.scan_segments_lifted_into::<ArgMax, f32, _>(&dfl, &doff, kind, out, auto)
        });
        into(kind, &by_offsets, &|out| {
            gpu.scan_segments_into(&ditems, &doff, kind, out, auto)
        });
        let by_key = scan_by_key(&items, &keys, kind).unwrap();
        into(kind, &by_key, &|out| {
            gpu.scan_by_key_lifted_into::<ArgMax, f32, _>(&dfl, &dkeys, kind, out, auto)
        });
        into(kind, &by_key, &|out| {
            gpu.scan_by_key_into(&ditems, &dkeys, kind, out, auto)
        });
        into(kind, &scan(&items, kind), &|out| {
            gpu.scan_lifted_into::<ArgMax, f32>(&dfl, kind, out, auto)
        });
    }
    // bad offsets are typed layout errors; trusted, they give some answer without a fault
    let xs = Affine::random_vec(100_000, 1);
    let dxs = gpu.upload(&xs).unwrap();
    let mut bad = offsets.clone();
    bad[700] = bad[699] - 1;
    let dbad = gpu.upload(&bad).unwrap();
    let e = gpu.scan_segments(&dxs, &dbad, Scan::Inclusive, ScanAlgorithm::Auto);
    assert!(
        matches!(
            e,
            Err(Error::Layout(LayoutError::OffsetsDecreasing {
                index: 700,
                ..
            }))
        ),
        "{e:?}"
    );
    let mut last = offsets.clone();
    *last.last_mut().unwrap() -= 1;
    let dlast = gpu.upload(&last).unwrap();
    let e = gpu.scan_segments(&dxs, &dlast, Scan::Inclusive, ScanAlgorithm::Auto);
    assert!(
        matches!(e, Err(Error::Layout(LayoutError::LastOffsetNotLen { .. }))),
        "{e:?}"
    );
    let trusted = ScanConfig::default().trusted();
    for garbage in [bad, vec![0u32; 2001], vec![u32::MAX; 2001]] {
        let d = gpu.upload(&garbage).unwrap();
        gpu.scan_segments(&dxs, &d, Scan::Exclusive, trusted)
            .unwrap();
    }
    let empty = gpu.upload::<u32>(&[]).unwrap();
    let e = gpu.scan_segments(&dxs, &empty, Scan::Inclusive, ScanAlgorithm::Auto);
    assert!(
        matches!(e, Err(Error::Layout(LayoutError::OffsetsEmpty))),
        "{e:?}"
    );
    let five = gpu.upload(&keys[..5]).unwrap();
    let e = gpu.scan_by_key(&dxs, &five, Scan::Inclusive, ScanAlgorithm::Auto);
    assert!(
        matches!(
            e,
            Err(Error::Layout(LayoutError::KeysLengthMismatch { .. }))
        ),
        "{e:?}"
    );
    // the context still works
    let got = gpu
        .scan(&dxs, Scan::Inclusive, ScanAlgorithm::Auto)
        .unwrap();
    assert_eq!(gpu.download(&got).unwrap(), scan(&xs, Scan::Inclusive));
}

/// Past the u32 index range: the inclusive scan, in place, of 2^32 + 3 one-byte items (a
/// non-commutative S4 permutation each), and the exclusive scan by u64 CSR offsets with
/// segments on both sides of 2^31 and 2^32, every output checked against the running fold.
/// Needs about 4.3 GB of device memory and 8.6 GB of host memory.
#[test]
fn more_than_u32_max_items() {
    let Some(gpu) = gpu() else { return };
    let n = (1usize << 32) + 3;
    if gpu.info().total_memory < 2 * n {
        eprintln!("skipped: the device has less than {} bytes", 2 * n);
        return;
    }
    // A block of 2^26 + 1 items, repeated: the period does not divide 2^32, so an index
    // truncated to 32 bits would read other values.
    let block = Perm4::random_vec((1 << 26) + 1, 43);
    let items: Vec<Perm4> = (0..n).map(|i| block[i % block.len()]).collect();
    let mut xs = gpu.upload(&items).unwrap();
    drop(items);
    gpu.scan_in_place(&mut xs, Scan::Inclusive, ScanAlgorithm::Auto)
        .unwrap();
    let got = gpu.download(&xs).unwrap();
    let mut acc = Perm4::identity();
    for (i, y) in got.iter().enumerate() {
        acc = Perm4::combine(acc, block[i % block.len()]);
        assert!(*y == acc, "output {i} of 2^32 + 3");
    }
    drop(got);
    // Exclusive, by u64 CSR offsets whose segments start and end on both sides of 2^31 and
    // 2^32, in place.
    let offsets: [u64; 7] = [
        0,
        5,
        (1 << 31) + 7,
        (1 << 32) - 1,
        1 << 32,
        (1 << 32) + 2,
        n as u64,
    ];
    let items: Vec<Perm4> = (0..n).map(|i| block[i % block.len()]).collect();
    gpu.upload_into(&mut xs, &items).unwrap();
    drop(items);
    let d_offsets = gpu.upload(&offsets).unwrap();
    gpu.scan_segments_in_place(&mut xs, &d_offsets, Scan::Exclusive, ScanAlgorithm::Auto)
        .unwrap();
    let got = gpu.download(&xs).unwrap();
    let (mut acc, mut next) = (Perm4::identity(), 1);
    for (i, y) in got.iter().enumerate() {
        if offsets[next] == i as u64 {
            (acc, next) = (Perm4::identity(), next + 1);
        }
        assert!(*y == acc, "exclusive output {i} by offsets {offsets:?}");
        acc = Perm4::combine(acc, block[i % block.len()]);
    }
}
