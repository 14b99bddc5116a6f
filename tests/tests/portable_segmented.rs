//! The portable mode of the segmented reductions (`SegConfig::portable`) on the GPU: every
//! segment's bits are those of the CPU reference `reduce_core::portable::fold_segments` — f32
//! and f64 sums of mixed magnitudes with cancellation, zeros of both signs, subnormals,
//! infinities and NaN, and a float monoid of two fields lifted from f32 (log-sum-exp) — on every
//! layout shape (`reduce_tests::layouts::every_shape`: empty segments, runs of size 1, tile
//! lengths, huge segments, mixtures) and large ones, in both forms (offsets and owners), u32 and
//! u64 layouts, with the knobs forced (grids of 1, 7, 132 and 1000 blocks; blocks of 32 to 1024
//! threads), items at odd offsets, validated and trusted; the CPU backend gives the same bits;
//! bad layouts are the same typed errors as elsewhere; and what the mode refuses is a typed
//! error. Each layout prints a hash of its bits (`portable-seg-hash`), to compare devices.
//!
//! GPU tests skip without a device and fail under `REDUCE_REQUIRE_GPU=1`; the CPU backend and
//! the refusals run everywhere.

use reduce_bench::monoids::LogSumExp;
use reduce_core::{portable, LayoutError, Lift};
use reduce_cuda::{Backend, CudaMonoid, Error, Gpu, SegAlgorithm, SegConfig, Sum};
use reduce_tests::floats::{assert_same_bits, hard_f32, SameBits};
use reduce_tests::layouts::{
    convert, every_shape, lengths_covering, mixture, offsets_of, owners_of,
};
use reduce_tests::{bits_hash, gpu, placed, TestRng};

/// The knobs that must not change a bit. The largest block is 1024 threads where the device
/// holds its 128 KiB of f32 runs (sm_80, sm_90), else 512 (sm_86, sm_89: 99 KiB a block).
fn configs(gpu: &Gpu) -> Vec<SegConfig> {
    let portable = SegConfig::default().portable();
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).portable();
    let largest = if gpu.info().max_shared_per_block >= 140 * 1024 {
        1024
    } else {
        512
    };
    vec![
        portable,
        portable.grid(1),
        portable.grid(7),
        portable.grid(132),
        portable.grid(1000),
        shuffle.block(32),
        shuffle.block(64).grid(3),
        shuffle.block(largest).trusted(),
        portable.trusted(),
    ]
}

/// The layouts: every shape of the segmented tests, and large ones (2^22 + 3 items: many tiles,
/// the last block's tree over several levels) of short, medium and tile-crossing segments.
fn layouts() -> Vec<(String, Vec<u64>)> {
    let mut rng = TestRng::new(0x5e9);
    let mut out: Vec<(String, Vec<u64>)> = every_shape()
        .into_iter()
        .filter(|(_, lengths)| !lengths.is_empty())
        .collect();
    let n = (1u64 << 22) + 3;
    for (name, mean) in [("mean 2", 2u64), ("mean 40", 40), ("mean 5000", 5000)] {
        let lengths = lengths_covering(n as u32, || rng.range(0, 2 * mean));
        let lengths = lengths.into_iter().map(u64::from).collect();
        out.push((format!("{name}, N = 2^22 + 3"), lengths));
    }
    out.push(("mixture, N ~ 2^22".into(), mixture(&mut rng, 1 << 22)));
    out.push(("one segment, N = 2^22 + 3".into(), vec![n]));
    out
}

/// Both forms and both index widths of `lengths` on the GPU, every configuration, against the
/// reference.
fn check_layout<M: CudaMonoid + SameBits>(gpu: &Gpu, name: &str, items: &[M], lengths: &[u64]) {
    let offsets = offsets_of(lengths);
    let want = portable::fold_segments(items, &offsets).unwrap();
    println!(
        "portable-seg-hash {} {name} S={} {:016x}",
        M::CUDA_NAME,
        lengths.len(),
        bits_hash(&want)
    );
    let xs = gpu.upload(items).unwrap();
    let owner = owners_of(lengths);
    for wide in [false, true] {
        let (offsets_dev, owner_dev) = if wide {
            (
                gpu.upload(&offsets).unwrap().into_any(),
                gpu.upload(&owner).unwrap().into_any(),
            )
        } else {
            (
                gpu.upload(&convert::<u32>(&offsets)).unwrap().into_any(),
                gpu.upload(&convert::<u32>(&owner)).unwrap().into_any(),
            )
        };
        for config in configs(gpu) {
            let what = format!("{} {name} u64 {wide} {config:?}", M::CUDA_NAME);
            let got = offsets_dev.reduce_segments(gpu, &xs, config);
            assert_same_bits(&got.unwrap_or_else(|e| panic!("{what}: {e}")), &want, &what);
            let got = owner_dev.reduce_by_owner(gpu, &xs, lengths.len(), config);
            assert_same_bits(
                &got.unwrap_or_else(|e| panic!("{what} owners: {e}")),
                &want,
                &what,
            );
        }
    }
}

#[test]
fn f32_segments_equal_the_reference_in_every_layout_and_knob() {
    let Some(gpu) = gpu() else { return };
    for (k, (name, lengths)) in layouts().iter().enumerate() {
        let n = lengths.iter().sum::<u64>() as usize;
        let items: Vec<Sum<f32>> = hard_f32(n, k as u64, k % 3 == 0)
            .into_iter()
            .map(Sum)
            .collect();
        check_layout(&gpu, name, &items, lengths);
    }
}

#[test]
fn f64_segments_equal_the_reference() {
    let Some(gpu) = gpu() else { return };
    for (k, (name, lengths)) in layouts().iter().enumerate().step_by(3) {
        let n = lengths.iter().sum::<u64>() as usize;
        let items: Vec<Sum<f64>> = hard_f32(n, 100 + k as u64, true)
            .into_iter()
            .enumerate()
            .map(|(i, x)| Sum(x as f64 * (1.0 + i as f64 * 1e-9)))
            .collect();
        check_layout(&gpu, name, &items, lengths);
    }
}

/// Log-sum-exp lifted from f32: its runs follow the lifted values (8 bytes), and every segment
/// has the bits of the values lifted first.
#[test]
fn lifted_log_sum_exp_equals_the_reference() {
    let Some(gpu) = gpu() else { return };
    for (k, (name, lengths)) in layouts().iter().enumerate().step_by(4) {
        let n = lengths.iter().sum::<u64>() as usize;
        let raw: Vec<f32> = hard_f32(n, 200 + k as u64, false)
            .iter()
            .map(|x| x * 1e-3)
            .collect();
        let lifted: Vec<LogSumExp> = raw
            .iter()
            .enumerate()
            .map(|(i, &x)| <LogSumExp as Lift<f32>>::lift(x, i as u64))
            .collect();
        let offsets = offsets_of(lengths);
        let want = portable::fold_segments(&lifted, &offsets).unwrap();
        let xs = gpu.upload(&raw).unwrap();
        let offsets_dev = gpu.upload(&convert::<u32>(&offsets)).unwrap();
        let owner_dev = gpu.upload(&convert::<u64>(&owners_of(lengths))).unwrap();
        for config in [configs(&gpu)[0], configs(&gpu)[2], configs(&gpu)[5]] {
            let what = format!("lse {name} {config:?}");
            let got: Vec<LogSumExp> = gpu
                .download(
                    &gpu.reduce_segments_lifted(&xs, &offsets_dev, config)
                        .unwrap(),
                )
                .unwrap();
            assert_same_bits(&got, &want, &what);
            let got: Vec<LogSumExp> = gpu
                .download(
                    &gpu.reduce_by_owner_lifted(&xs, &owner_dev, lengths.len(), config)
                        .unwrap(),
                )
                .unwrap();
            assert_same_bits(&got, &want, &format!("{what} owners"));
        }
    }
}

/// Items 1 to 5 values past a 16-byte boundary (vector loads shifted into place) give the same
/// bits.
#[test]
fn items_at_any_offset_give_the_same_bits() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(77);
    let lengths = mixture(&mut rng, 300_000);
    let n = lengths.iter().sum::<u64>() as usize;
    let items: Vec<Sum<f32>> = hard_f32(n, 5, true).into_iter().map(Sum).collect();
    let offsets = offsets_of(&lengths);
    let want = portable::fold_segments(&items, &offsets).unwrap();
    let offsets_dev = gpu.upload(&convert::<u32>(&offsets)).unwrap();
    let owner_dev = gpu.upload(&convert::<u32>(&owners_of(&lengths))).unwrap();
    for skip in 0..6 {
        let (_buffer, view) = placed(&gpu, &items, skip);
        for config in [configs(&gpu)[0], configs(&gpu)[6]] {
            let got = gpu
                .download(&gpu.reduce_segments(&view, &offsets_dev, config).unwrap())
                .unwrap();
            assert_same_bits(&got, &want, &format!("skip {skip} {config:?}"));
            let got = gpu
                .download(
                    &gpu.reduce_by_owner(&view, &owner_dev, lengths.len(), config)
                        .unwrap(),
                )
                .unwrap();
            assert_same_bits(&got, &want, &format!("owners skip {skip} {config:?}"));
        }
    }
}

/// A bad layout is the typed error the other algorithms give; a trusted call over garbage
/// returns (unspecified values) without a fault, and the next call is right.
#[test]
fn bad_layouts_are_typed_errors_and_trusted_garbage_is_safe() {
    let Some(gpu) = gpu() else { return };
    let items: Vec<Sum<f32>> = hard_f32(100_000, 1, false).into_iter().map(Sum).collect();
    let xs = gpu.upload(&items).unwrap();
    let portable = SegConfig::default().portable();
    // Validated offsets are checked on the kernel's reads, then by the exact check for the
    // error: wrong ends, a descent, one swapped pair among 10 000 segments, an entry past the
    // items, and garbage.
    let tens: Vec<u32> = (0..=10_000).map(|s| 10 * s).collect();
    let mut swapped = tens.clone();
    swapped.swap(5_000, 5_001);
    let mut past = tens.clone();
    past[7_777] = 100_001;
    let mut rng = TestRng::new(4);
    let garbage: Vec<u32> = (0..1001).map(|_| rng.range(0, 200_000) as u32).collect();
    let bad_offsets = [
        vec![1, 50, 100_000],
        vec![0, 70_000, 60_000, 100_000],
        vec![0, 50, 99_999],
        swapped,
        past,
        garbage,
    ];
    for offsets in &bad_offsets {
        let dev = gpu.upload(offsets).unwrap();
        let want = gpu.reduce_segments(&xs, &dev, SegAlgorithm::SegShuffle);
        let got = gpu.reduce_segments(&xs, &dev, portable);
        match (got, want) {
            (Err(Error::Layout(g)), Err(Error::Layout(w))) => assert_eq!(g, w, "{offsets:?}"),
            (got, want) => panic!("{offsets:?}: {got:?} against {want:?}"),
        }
    }
    // A bad pair that no block's reads reach: tiles of 1024 items (64 threads), 2 a block, 3
    // blocks. Block 1's tiles read no entry (the entry after block 0's first tile lies in tile
    // 4), and block 2's search lands past the pair (300, 301); only the check that block 1's
    // reads reach block 2's first entry sees it (tests/tests/emulated_seg_portable.rs traces
    // the same layout).
    let hidden: Vec<u32> = (0..=50u32)
        .map(|s| 10 * s)
        .chain((51..=300).map(|_| 5000))
        .chain((0..=1024).map(|m| 2048 + 4 * m))
        .collect();
    let few = gpu.upload(&items[..6144]).unwrap();
    let dev = gpu.upload(&hidden).unwrap();
    let want = gpu.reduce_segments(&few, &dev, SegAlgorithm::SegShuffle);
    let got = gpu.reduce_segments(&few, &dev, portable.block(64).grid(3));
    match (got, want) {
        (Err(Error::Layout(g)), Err(Error::Layout(w))) => assert_eq!(g, w, "hidden pair"),
        (got, want) => panic!("hidden pair: {got:?} against {want:?}"),
    }
    let mut unsorted = owners_of(&[50_000u32, 50_000]);
    unsorted[70_000] = 0;
    let mut out_of_range = owners_of(&[50_000u32, 50_000]);
    out_of_range[99_999] = 7;
    for (owner, err) in [
        (unsorted, "OwnerNotSorted"),
        (out_of_range, "OwnerOutOfRange"),
    ] {
        let dev = gpu.upload(&owner).unwrap();
        match gpu.reduce_by_owner(&xs, &dev, 2, portable) {
            Err(Error::Layout(
                e @ (LayoutError::OwnerNotSorted { .. } | LayoutError::OwnerOutOfRange { .. }),
            )) => {
                assert!(format!("{e:?}").starts_with(err), "{e:?}")
            }
            other => panic!("{err}: {other:?}"),
        }
    }
    // Garbage, trusted: descending offsets, owners out of range.
    let mut rng = TestRng::new(3);
    let garbage: Vec<u32> = (0..1001).map(|_| rng.range(0, 200_000) as u32).collect();
    let dev = gpu.upload(&garbage).unwrap();
    gpu.reduce_segments(&xs, &dev, portable.trusted()).unwrap();
    let owners: Vec<u32> = (0..100_000).map(|_| rng.range(0, 5000) as u32).collect();
    let dev = gpu.upload(&owners).unwrap();
    gpu.reduce_by_owner(&xs, &dev, 1000, portable.trusted())
        .unwrap();
    let lengths = [30_000u64, 0, 70_000];
    let want = portable::fold_segments(&items, &offsets_of(&lengths)).unwrap();
    let dev = gpu.upload(&convert::<u32>(&offsets_of(&lengths))).unwrap();
    let got = gpu
        .download(&gpu.reduce_segments(&xs, &dev, portable).unwrap())
        .unwrap();
    assert_same_bits(&got, &want, "after garbage");
}

/// The backends: the CPU gives the reference bits (in parallel over segments), and so does the
/// GPU, in both forms.
#[test]
fn the_backends_give_the_reference_bits() {
    let mut backends = vec![Backend::cpu()];
    if let Some(gpu) = gpu() {
        backends.push(Backend::Gpu(gpu));
    }
    let mut rng = TestRng::new(21);
    for lengths in [
        vec![0u64, 5, 0],
        mixture(&mut rng, 200_000),
        vec![3_000_017],
    ] {
        let n = lengths.iter().sum::<u64>() as usize;
        let items: Vec<Sum<f32>> = hard_f32(n, 8, true).into_iter().map(Sum).collect();
        let offsets: Vec<u64> = offsets_of(&lengths);
        let want = portable::fold_segments(&items, &offsets).unwrap();
        let owner: Vec<u32> = convert(&owners_of(&lengths));
        for backend in &backends {
            let what = backend.describe();
            let config = SegConfig::default().portable();
            let got = backend.reduce_segments(&items, &offsets, config).unwrap();
            assert_same_bits(&got, &want, &what);
            let got = backend
                .reduce_by_owner(&items, &owner, lengths.len(), config)
                .unwrap();
            assert_same_bits(&got, &want, &format!("{what} owners"));
        }
        // Lifted from f32 logits: the bits of the items lifted first.
        let logits: Vec<f32> = (0..n).map(|i| (i % 997) as f32 / 31.0).collect();
        let lse: Vec<LogSumExp> = logits
            .iter()
            .map(|&x| <LogSumExp as Lift<f32>>::lift(x, 0))
            .collect();
        let want = portable::fold_segments(&lse, &offsets).unwrap();
        for backend in &backends {
            let what = format!("{} lifted", backend.describe());
            let config = SegConfig::default().portable();
            let got =
                backend.reduce_segments_lifted::<LogSumExp, f32, u64>(&logits, &offsets, config);
            assert_same_bits(&got.unwrap(), &want, &what);
            let got = backend.reduce_by_owner_lifted::<LogSumExp, f32, u32>(
                &logits,
                &owner,
                lengths.len(),
                config,
            );
            assert_same_bits(&got.unwrap(), &want, &what);
        }
    }
}

/// What the mode refuses, on every backend: the other algorithms, and knobs that are not
/// aligned nodes of the tree or do not apply.
#[test]
fn refused_configurations_are_typed_errors() {
    let items = vec![Sum(1.0f32); 100];
    let offsets = [0u32, 40, 100];
    let backend = Backend::cpu();
    let refused = [
        SegConfig::new(SegAlgorithm::SegMerge).portable(),
        SegConfig::new(SegAlgorithm::SegPipeline).portable(),
        SegConfig::new(SegAlgorithm::MatrixSeg).portable(),
        SegConfig::default().portable().block(96),
        SegConfig::default().portable().items_per_thread(16),
        SegConfig::default().portable().stages(2),
    ];
    for config in refused {
        match backend.reduce_segments(&items, &offsets, config) {
            Err(Error::InvalidConfig { reason, .. }) => {
                assert!(!reason.is_empty(), "{config:?}")
            }
            other => panic!("{config:?}: {other:?}"),
        }
    }
    assert_eq!(
        backend
            .reduce_segments(&items, &offsets, SegConfig::default().portable())
            .unwrap(),
        vec![Sum(40.0), Sum(60.0)]
    );
}

/// Uploaded layouts of either width, for one loop over both.
enum AnyLayout {
    U32(reduce_cuda::DeviceVec<u32>),
    U64(reduce_cuda::DeviceVec<u64>),
}

trait IntoAny {
    fn into_any(self) -> AnyLayout;
}
impl IntoAny for reduce_cuda::DeviceVec<u32> {
    fn into_any(self) -> AnyLayout {
        AnyLayout::U32(self)
    }
}
impl IntoAny for reduce_cuda::DeviceVec<u64> {
    fn into_any(self) -> AnyLayout {
        AnyLayout::U64(self)
    }
}

impl AnyLayout {
    fn reduce_segments<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        xs: &reduce_cuda::DeviceVec<M>,
        config: SegConfig,
    ) -> reduce_cuda::Result<Vec<M>> {
        let out = match self {
            AnyLayout::U32(o) => gpu.reduce_segments(xs, o, config)?,
            AnyLayout::U64(o) => gpu.reduce_segments(xs, o, config)?,
        };
        gpu.download(&out)
    }

    fn reduce_by_owner<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        xs: &reduce_cuda::DeviceVec<M>,
        segments: usize,
        config: SegConfig,
    ) -> reduce_cuda::Result<Vec<M>> {
        let out = match self {
            AnyLayout::U32(o) => gpu.reduce_by_owner(xs, o, segments, config)?,
            AnyLayout::U64(o) => gpu.reduce_by_owner(xs, o, segments, config)?,
        };
        gpu.download(&out)
    }
}
