//! Segmented reductions on the GPU, bit for bit against the CPU references, for every
//! algorithm x both forms x the standard non-commutative monoids, on the basic named layouts
//! (`reduce_tests::layouts::basic`).

use proptest::prelude::*;
use reduce_bench::monoids::LogSumExp;
// the references and the layout errors through reduce_cuda's re-exports, as its users name them
use reduce_cuda::{
    fold_by_owner, fold_segments, Backend, CudaMonoid, DeviceVec, Error, Gpu, LayoutError, Min,
    SegAlgorithm, SegConfig, Sum,
};
use reduce_tests::layouts::{basic, lengths_covering};
use reduce_tests::*;

/// Every algorithm this device runs (SegPipeline from sm_90 on: [`seg_pipeline_needs_sm_90`]),
/// and Auto.
fn configs(gpu: &Gpu) -> Vec<SegConfig> {
    SegAlgorithm::ALL
        .iter()
        .filter(|&&a| a.runs_on(gpu.info()))
        .map(|&a| SegConfig::new(a))
        .chain([SegConfig::new(SegAlgorithm::Auto)])
        .collect()
}

fn check_layout<M: CudaMonoid + Random>(
    gpu: &Gpu,
    name: &str,
    lengths: &[u32],
    configs: &[SegConfig],
) {
    let offsets = offsets_of(lengths);
    let owner = owners_of(lengths);
    let n = owner.len();
    let items = M::random_vec(n, 99 + n as u64);
    let expected = fold_segments(&items, &offsets).unwrap();
    assert_eq!(
        fold_by_owner(&items, &owner, lengths.len()).unwrap(),
        expected
    );
    let d_items = gpu.upload(&items).unwrap();
    let d_offsets = gpu.upload(&offsets).unwrap();
    let d_owner = gpu.upload(&owner).unwrap();
    for config in configs {
        let ctx = format!("{} / {name} / {config:?}", M::CUDA_NAME);
        let got = gpu
            .reduce_by_owner(&d_items, &d_owner, lengths.len(), *config)
            .unwrap_or_else(|e| panic!("{ctx} owner: {e}"));
        let got = gpu.download(&got).unwrap();
        assert_eq!(got.len(), expected.len(), "{ctx} owner");
        if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
            panic!(
                "{ctx} owner form: segment {i} of {}: got {:?}, expected {:?}",
                got.len(),
                got[i],
                expected[i]
            );
        }
        let got = gpu
            .reduce_segments(&d_items, &d_offsets, *config)
            .unwrap_or_else(|e| panic!("{ctx} offsets: {e}"));
        let got = gpu.download(&got).unwrap();
        if let Some(i) = (0..got.len()).find(|&i| got[i] != expected[i]) {
            panic!(
                "{ctx} offsets form: segment {i} of {}: got {:?}, expected {:?}",
                got.len(),
                got[i],
                expected[i]
            );
        }
    }
}

macro_rules! layout_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            for (layout, lengths) in basic() {
                check_layout::<$m>(&gpu, layout, &lengths, &configs(&gpu));
            }
        }
    )*};
}

layout_tests! {
    affine_every_layout: Affine,
    mat2_every_layout: Mat2,
    keep_first_every_layout: KeepFirst,
    keep_last_every_layout: KeepLast,
    perm4_every_layout: Perm4,
    tri_every_layout: Tri,
}

#[test]
fn large_items_and_builtins() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(5);
    let lengths: Vec<u32> = (0..3_000).map(|_| rng.range(0, 60) as u32).collect();
    check_layout::<Mat3>(&gpu, "random 0..60", &lengths, &configs(&gpu));
    check_layout::<RollingHash>(&gpu, "random 0..60", &lengths, &configs(&gpu));
    // f32 sum on small integers (exact in any grouping), f32 min with NaNs and signed zeros.
    let offsets = offsets_of(
        &(0..100_000)
            .map(|_| rng.range(0, 50) as u32)
            .collect::<Vec<_>>(),
    );
    let n = *offsets.last().unwrap() as usize;
    let sums: Vec<Sum<f32>> = (0..n).map(|_| Sum(rng.range(0, 7) as f32)).collect();
    let mins: Vec<Min<f32>> = (0..n)
        .map(|_| match rng.range(0, 500) {
            0 => Min(f32::NAN),
            1 => Min(-0.0),
            _ => Min(f32::from_bits(rng.next_u32() & 0xbf7f_ffff)),
        })
        .collect();
    let d_offsets = gpu.upload(&offsets).unwrap();
    let (d_sums, d_mins) = (gpu.upload(&sums).unwrap(), gpu.upload(&mins).unwrap());
    let want_sums: Vec<u32> = fold_segments(&sums, &offsets)
        .unwrap()
        .iter()
        .map(|s| s.0.to_bits())
        .collect();
    let want_mins: Vec<u32> = fold_segments(&mins, &offsets)
        .unwrap()
        .iter()
        .map(|s| s.0.to_bits())
        .collect();
    for config in configs(&gpu) {
        let got: Vec<u32> = gpu
            .download(&gpu.reduce_segments(&d_sums, &d_offsets, config).unwrap())
            .unwrap()
            .iter()
            .map(|s| s.0.to_bits())
            .collect();
        assert!(got == want_sums, "Sum<f32> {config:?}");
        let got: Vec<u32> = gpu
            .download(&gpu.reduce_segments(&d_mins, &d_offsets, config).unwrap())
            .unwrap()
            .iter()
            .map(|s| s.0.to_bits())
            .collect();
        assert!(got == want_mins, "Min<f32> {config:?}");
    }
}

#[test]
fn thirty_million_items_scenarios() {
    let Some(gpu) = gpu() else { return };
    let n = 30u32 << 20;
    let mut rng = TestRng::new(7);
    let random = lengths_covering(n, || rng.range(10, 50));
    let fast = [
        SegConfig::new(SegAlgorithm::SegShuffle),
        SegConfig::new(SegAlgorithm::Auto),
        SegConfig::new(SegAlgorithm::PersistentMatrixSeg),
    ];
    check_layout::<Affine>(&gpu, "30M one segment", &[n], &fast);
    check_layout::<Affine>(&gpu, "30M random 10..50", &random, &fast);
    check_layout::<Affine>(
        &gpu,
        "30M size 3",
        &[vec![3; (n / 3) as usize], vec![n % 3]].concat(),
        &fast,
    );
}

#[test]
fn researcher_parameters() {
    let Some(gpu) = gpu() else { return };
    let configs = [
        SegConfig::new(SegAlgorithm::Tb2Seg).block(64),
        SegConfig::new(SegAlgorithm::Tb4WarpSeg).block(128),
        SegConfig::new(SegAlgorithm::MatrixSeg)
            .block(64)
            .matrix_width(8),
        SegConfig::new(SegAlgorithm::PersistentMatrixSeg)
            .grid(3)
            .matrix_width(64),
        SegConfig::new(SegAlgorithm::DiffWarps16Seg)
            .producers(2)
            .grid(5),
        SegConfig::new(SegAlgorithm::DiffWarps16Seg).matrix_width(32),
        SegConfig::new(SegAlgorithm::SegShuffle)
            .block(64)
            .items_per_thread(3),
        SegConfig::new(SegAlgorithm::SegShuffle).grid(1),
        SegConfig::new(SegAlgorithm::SegShuffle).block(1024).grid(7),
        SegConfig::new(SegAlgorithm::SegShuffle).trusted(),
    ];
    let mut rng = TestRng::new(11);
    let lengths: Vec<u32> = (0..20_000)
        .map(|_| {
            if rng.range(0, 3) == 0 {
                0
            } else {
                rng.range(1, 70) as u32
            }
        })
        .collect();
    check_layout::<Affine>(&gpu, "mixed", &lengths, &configs);
    check_layout::<Mat2>(&gpu, "one segment", &[123_457], &configs);
}

/// Every bad layout returns its typed error naming the first bad index, for every algorithm.
#[test]
fn bad_layouts_are_typed_errors() {
    let Some(gpu) = gpu() else { return };
    let items = gpu.upload(&Affine::random_vec(10, 1)).unwrap();
    let owner = |v: &[u32]| gpu.upload(v).unwrap();
    for config in configs(&gpu) {
        let err = |r: reduce_cuda::Result<reduce_cuda::DeviceVec<Affine>>| match r {
            Err(Error::Layout(e)) => e,
            other => panic!("{config:?}: expected a layout error, got {other:?}"),
        };
        assert_eq!(
            err(gpu.reduce_by_owner(&items, &owner(&[0, 0, 1, 1, 2, 1, 2, 3, 3, 3]), 4, config)),
            LayoutError::OwnerNotSorted {
                index: 5,
                value: 1,
                previous: 2
            }
        );
        assert_eq!(
            err(gpu.reduce_by_owner(&items, &owner(&[0, 0, 1, 1, 2, 2, 2, 3, 9, 9]), 4, config)),
            LayoutError::OwnerOutOfRange {
                index: 8,
                value: 9,
                num_segments: 4
            }
        );
        assert_eq!(
            err(gpu.reduce_by_owner(&items, &owner(&[0; 9]), 1, config)),
            LayoutError::OwnerLengthMismatch {
                items: 10,
                owners: 9
            }
        );
        assert_eq!(
            err(gpu.reduce_by_owner(&items, &owner(&[0; 10]), 0, config)),
            LayoutError::OwnerOutOfRange {
                index: 0,
                value: 0,
                num_segments: 0
            }
        );
        assert_eq!(
            err(gpu.reduce_segments(&items, &owner(&[0, 4, 3, 10]), config)),
            LayoutError::OffsetsDecreasing {
                index: 2,
                value: 3,
                previous: 4
            }
        );
        assert_eq!(
            err(gpu.reduce_segments(&items, &owner(&[1, 4, 10]), config)),
            LayoutError::FirstOffsetNotZero { value: 1 }
        );
        assert_eq!(
            err(gpu.reduce_segments(&items, &owner(&[0, 4, 9]), config)),
            LayoutError::LastOffsetNotLen {
                index: 2,
                value: 9,
                items: 10
            }
        );
        assert_eq!(
            err(gpu.reduce_segments(&items, &owner(&[]), config)),
            LayoutError::OffsetsEmpty
        );
        // Zero segments and no items is fine; so is the trusted opt-out on a valid layout.
        let none = gpu.upload::<Affine>(&[]).unwrap();
        assert_eq!(
            gpu.reduce_segments(&none, &owner(&[0]), config)
                .unwrap()
                .len(),
            0
        );
        assert_eq!(
            gpu.reduce_by_owner(&none, &owner(&[]), 3, config)
                .map(|v| gpu.download(&v).unwrap())
                .unwrap(),
            vec![Affine { a: 1, b: 0 }; 3]
        );
    }
}

/// Owners that a bad layout may hold, where each tile's or warp's owners ask for an identity fill
/// of nearly every segment (sorted inside each tile, jumping between 0 and the last id from tile
/// to tile; random): such fills are bounded by the launch's budget, so a validated call reports
/// the error, and a trusted one returns, in about the time of a good layout, not in minutes
/// (without the budget: tiles x segments identities written, about 10^14 bytes here). A trusted
/// call's output comes from memory the pool last held with other bytes: the segments a bad layout
/// leaves unwritten hold zero bytes, never those (which need not be valid values of a monoid).
#[test]
fn bad_owners_cost_what_good_ones_do() {
    let Some(gpu) = gpu() else { return };
    const POISON: u32 = 0xabab_abab;
    let (n, segments) = (1usize << 24, 1usize << 24);
    let items = gpu.upload(&vec![Sum(1u32); n]).unwrap();
    let mut rng = TestRng::new(3);
    let jumping: Vec<u32> = (0..n)
        .map(|i| {
            if (i >> 12) % 2 == 0 {
                segments as u32 - 1
            } else {
                0
            }
        })
        .collect();
    let random: Vec<u32> = (0..n)
        .map(|_| rng.range(0, segments as u64 - 1) as u32)
        .collect();
    let good = owners_of(&vec![1u32; segments]);
    let configs = [
        SegConfig::new(SegAlgorithm::SegShuffle),
        SegConfig::new(SegAlgorithm::SegShuffle).trusted(),
        SegConfig::default().portable(),
        SegConfig::default().portable().trusted(),
    ];
    // The kernels compiled first, outside the timed calls.
    let few = gpu.upload(&[Sum(1u32); 3]).unwrap();
    let few_owners = gpu.upload(&[0u32, 1, 1]).unwrap();
    for config in configs {
        gpu.reduce_by_owner(&few, &few_owners, 2, config).unwrap();
    }
    for (name, owner) in [("jumping", &jumping), ("random", &random), ("good", &good)] {
        let owner = gpu.upload(owner).unwrap();
        for config in configs {
            // Freed into the pool, whose next buffer of this size is the output.
            drop(gpu.upload(&vec![Sum(POISON); segments]).unwrap());
            let start = std::time::Instant::now();
            let got = gpu.reduce_by_owner(&items, &owner, segments, config);
            let got = got.and_then(|out| gpu.download(&out));
            let took = start.elapsed();
            match (name, config.trusted) {
                ("good", _) => assert_eq!(got.unwrap(), vec![Sum(1u32); segments]),
                (_, false) => assert!(
                    matches!(got, Err(Error::Layout(LayoutError::OwnerNotSorted { .. }))),
                    "{name} {config:?}: {got:?}"
                ),
                (_, true) => {
                    let got = got.unwrap();
                    assert_eq!(got.len(), segments, "{name} {config:?}");
                    assert!(
                        got.iter().all(|v| v.0 != POISON),
                        "{name} {config:?}: an unwritten segment kept the pool's earlier bytes"
                    );
                }
            }
            assert!(
                took < std::time::Duration::from_secs(10),
                "{name} owners, {config:?}: {took:?}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// Layouts drawn by proptest: every algorithm, both forms, bit for bit.
    #[test]
    fn drawn_layouts(lengths in proptest::collection::vec(prop_oneof![Just(0u32), 1u32..5, 5u32..100, 1000u32..20_000], 0..300)) {
        if let Some(gpu) = gpu() {
            check_layout::<Mat2>(&gpu, "drawn", &lengths, &configs(&gpu));
        }
    }
}

/// `Auto` takes SegHeads at a mean length of about 450 (reduce-cuda's
/// `tuning::SEG_HEADS_BANDS`) for u32 and u64 offsets of f32 and f64
/// sums, and for log-sum-exp lifted from f32 items (8-byte values) by u32 offsets, at 2^26
/// items; at 2^24 for all but u32 offsets of f32 sums (SegShuffle's there): its bits are the
/// algorithm's it chose, the same for both offset widths, and every f32 segment is the sum
/// within float rounding.
#[test]
fn auto_takes_seg_heads_on_long_float_layouts() {
    let Some(gpu) = gpu() else { return };
    for log2 in [24, 26] {
        check_auto_on_long_float_layouts(&gpu, 1 << log2);
    }
}

/// `Auto` leaves SegBlocks to items lifted into wider values: f32 sums at a mean length of
/// about 6000 and 2^25 items (where SegBlocks is fastest on even lengths, and slower on heavy
/// tails: reduce-cuda's `tuning::SEG_BLOCKS_BANDS`), by u32 and u64 offsets, trusted or
/// validated, get SegShuffle's bits by u32 offsets and SegHeads' by u64 ones (whose band,
/// `tuning::SEG_HEADS_BANDS`, runs to 8192 there), not SegBlocks'; every segment is the sum
/// within float rounding.
#[test]
fn auto_keeps_plain_floats_off_seg_blocks() {
    let Some(gpu) = gpu() else { return };
    let long = LongFloats::new(&gpu, 1 << 25, 2000..=10_000, 11);
    let auto = SegConfig::new(SegAlgorithm::Auto);
    for (wide, width, chosen) in [
        (false, "u32", SegAlgorithm::SegShuffle),
        (true, "u64", SegAlgorithm::SegHeads),
    ] {
        let want = long.bits(SegConfig::new(chosen), wide);
        let blocks = long.bits(SegConfig::new(SegAlgorithm::SegBlocks), wide);
        assert!(
            want != blocks,
            "{width}: {chosen:?}'s bits equal SegBlocks' here: the test cannot tell them apart"
        );
        for (config, checked) in [(auto.trusted(), "trusted"), (auto, "validated")] {
            let got = long.bits(config, wide);
            assert!(
                got == want,
                "Auto {checked}, {width}: not {chosen:?}'s bits"
            );
            long.check_sums(&got);
        }
    }
}

/// `Auto` takes SegBlocks for log-sum-exp lifted from f32 items (4 bytes into 8) by u32
/// offsets at 30·2^20 items (`tuning::SEG_BLOCKS_BANDS`), at a mean length of about 6000 and
/// on one and on three segments (its bands have no upper end), trusted or validated: its bits
/// are SegBlocks', and every segment's log-sum-exp is within float rounding of the f64 one. On
/// the first layout SegShuffle's and SegHeads' bits differ from SegBlocks', so that the bits
/// tell which ran; on one long segment SegShuffle folds in SegBlocks' grouping (an H100 gave the
/// same bits on random logits), and there the bits only show that `Auto` ran one of the two.
#[test]
fn auto_takes_seg_blocks_on_long_lifted_layouts() {
    let Some(gpu) = gpu() else { return };
    let n: u32 = 30 << 20;
    let mut rng = TestRng::new(12);
    // Random logits over a wide range: each chunk's maximum differs, so every grouping rounds
    // its own way (periodic logits in [-1, 1] gave SegShuffle SegBlocks' bits on one segment).
    let logits: Vec<f32> = (0..n)
        .map(|_| (rng.next_u32() >> 8) as f32 / (1u32 << 24) as f32 * 32.0 - 16.0)
        .collect();
    let xs = gpu.upload(&logits).unwrap();
    let layouts = [
        offsets_of(&lengths_covering(n, || rng.range(2000, 10_000))),
        vec![0, n],
        vec![0, n / 3, n / 3 * 2, n],
    ];
    for (layout, offsets) in layouts.into_iter().enumerate() {
        let d_offsets = gpu.upload(&offsets).unwrap();
        let segments = offsets.len() - 1;
        let bits = |config: SegConfig| -> Vec<(u32, u32)> {
            let out = gpu.reduce_segments_lifted::<LogSumExp, f32>(&xs, &d_offsets, config);
            let out = gpu.download(&out.unwrap()).unwrap();
            out.iter().map(|v| (v.m.to_bits(), v.s.to_bits())).collect()
        };
        let blocks = bits(SegConfig::new(SegAlgorithm::SegBlocks));
        // What Auto would run otherwise: SegShuffle at the lifted items' 16 a thread, or SegHeads.
        let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).items_per_thread(16);
        for other in [shuffle, SegConfig::new(SegAlgorithm::SegHeads)] {
            assert!(
                layout > 0 || bits(other) != blocks,
                "{segments} segments: {other:?}'s bits equal SegBlocks' here: the test cannot \
                 tell them apart"
            );
        }
        let auto = SegConfig::new(SegAlgorithm::Auto);
        for (config, checked) in [(auto.trusted(), "trusted"), (auto, "validated")] {
            assert!(
                bits(config) == blocks,
                "{segments} segments: Auto {checked}"
            );
        }
        for (s, w) in offsets.windows(2).enumerate() {
            let part = &logits[w[0] as usize..w[1] as usize];
            let want = part.iter().map(|&x| (x as f64).exp()).sum::<f64>().ln();
            let (m, e) = (f32::from_bits(blocks[s].0), f32::from_bits(blocks[s].1));
            let got = LogSumExp { m, s: e }.value() as f64;
            assert!(
                (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                "segment {s} of {segments}: {got} against {want}"
            );
        }
    }
}

/// A heavy-tailed layout over 2^22 affine maps: segments of 1-64 items and, one in 5000, of
/// 2^15-2^20, so that a few long segments hold most items while the mean length stays short.
/// SegBlocks' default there is one-warp blocks, whose chunks cut each long segment into up to
/// 33 pieces, joined in order. Every segment equals the sequential fold.
#[test]
fn seg_blocks_heavy_tail_is_the_fold() {
    let lengths = heavy_tail(1 << 22, 23);
    let Some(gpu) = gpu() else { return };
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    check_layout::<Affine>(&gpu, "heavy tail", &lengths, &[blocks, blocks.trusted()]);
}

/// The lengths of [`seg_blocks_heavy_tail_is_the_fold`]'s layout over `n` items.
fn heavy_tail(n: u32, seed: u64) -> Vec<u32> {
    let mut rng = TestRng::new(seed);
    lengths_covering(n, || match rng.range(0, 4999) {
        0 => rng.range(1 << 15, 1 << 20),
        _ => rng.range(1, 64),
    })
}

/// [`heavy_tail`]'s layout is what the GPU test needs: most items in long segments, a mean
/// length short enough for one-warp blocks of 8-byte values.
#[test]
fn heavy_tail_is_heavy() {
    let lengths = heavy_tail(1 << 22, 23);
    let long: u32 = lengths.iter().filter(|&&l| l >= 1 << 15).sum();
    let mean = (1usize << 22) / lengths.len();
    assert!(
        long > 1 << 21 && mean < 512,
        "mean {mean}, {long} items in long segments"
    );
}

/// f32 items over segments of random lengths in `lengths`, `n` items in all, on the GPU with
/// u32 and u64 offsets.
struct LongFloats<'g> {
    gpu: &'g Gpu,
    offsets: Vec<u32>,
    items: Vec<Sum<f32>>,
    xs: DeviceVec<Sum<f32>>,
    d_offsets: DeviceVec<u32>,
    d_wide: DeviceVec<u64>,
}

impl<'g> LongFloats<'g> {
    fn new(gpu: &'g Gpu, n: u32, lengths: std::ops::RangeInclusive<u64>, seed: u64) -> Self {
        let mut rng = TestRng::new(seed);
        let offsets = offsets_of(&lengths_covering(n, || {
            rng.range(*lengths.start(), *lengths.end())
        }));
        let items: Vec<Sum<f32>> = (0..n)
            .map(|i| Sum(((i % 1000) as f32 / 7.0).sin()))
            .collect();
        let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
        LongFloats {
            gpu,
            xs: gpu.upload(&items).unwrap(),
            d_offsets: gpu.upload(&offsets).unwrap(),
            d_wide: gpu.upload(&wide).unwrap(),
            offsets,
            items,
        }
    }

    /// The bits of every segment's sum by `config`, with u64 offsets when `wide`.
    fn bits(&self, config: SegConfig, wide: bool) -> Vec<u32> {
        let out = if wide {
            self.gpu.reduce_segments(&self.xs, &self.d_wide, config)
        } else {
            self.gpu.reduce_segments(&self.xs, &self.d_offsets, config)
        };
        let out = self.gpu.download(&out.unwrap()).unwrap();
        out.iter().map(|s| s.0.to_bits()).collect()
    }

    /// Every segment of `bits` is its items' sum within float rounding.
    fn check_sums(&self, bits: &[u32]) {
        for (s, w) in self.offsets.windows(2).enumerate() {
            let want: f64 = self.items[w[0] as usize..w[1] as usize]
                .iter()
                .map(|x| x.0 as f64)
                .sum();
            let got = f32::from_bits(bits[s]) as f64;
            assert!(
                (got - want).abs() <= 1e-3 * (1.0 + want.abs()),
                "segment {s}: {got} against {want}"
            );
        }
    }
}

fn check_auto_on_long_float_layouts(gpu: &Gpu, n: u32) {
    let long = LongFloats::new(gpu, n, 1..=900, 9);
    let (d_offsets, d_wide) = (&long.d_offsets, &long.d_wide);
    let run = |algorithm: SegAlgorithm, wide: bool| long.bits(SegConfig::new(algorithm), wide);
    let heads = run(SegAlgorithm::SegHeads, false);
    let shuffle = run(SegAlgorithm::SegShuffle, false);
    assert!(
        shuffle != heads,
        "n = {n}: SegShuffle's bits equal SegHeads' here: the test cannot tell them apart"
    );
    assert!(
        run(SegAlgorithm::SegHeads, true) == heads,
        "n = {n}: u64 offsets: other bits"
    );
    let narrow = if n >= 1 << 25 { &heads } else { &shuffle };
    assert!(
        run(SegAlgorithm::Auto, false) == *narrow,
        "n = {n}: Auto did not run {} (u32 offsets)",
        if n >= 1 << 25 {
            "SegHeads"
        } else {
            "SegShuffle"
        }
    );
    assert!(
        run(SegAlgorithm::Auto, true) == heads,
        "n = {n}: Auto did not run SegHeads (u64 offsets)"
    );
    // 8-byte values: f64 items with full mantissas (f32 values summed in f64 would be exact in
    // any order).
    let items64: Vec<Sum<f64>> = (0..n)
        .map(|i| Sum(((i % 1000) as f64 / 7.0).sin() * (1.0 + (i % 7) as f64 / 3.0)))
        .collect();
    let xs64 = gpu.upload(&items64).unwrap();
    let run64 = |algorithm: SegAlgorithm| {
        let out = gpu.reduce_segments(&xs64, d_offsets, SegConfig::new(algorithm));
        let out = gpu.download(&out.unwrap()).unwrap();
        out.iter().map(|s| s.0.to_bits()).collect::<Vec<u64>>()
    };
    let heads64 = run64(SegAlgorithm::SegHeads);
    assert!(
        run64(SegAlgorithm::SegShuffle) != heads64,
        "n = {n}: f64: SegShuffle's bits equal SegHeads' here"
    );
    assert!(
        run64(SegAlgorithm::Auto) == heads64,
        "n = {n}: Auto did not run SegHeads for f64"
    );
    let auto64_wide = gpu.reduce_segments(&xs64, d_wide, SegConfig::default());
    let auto64_wide = gpu.download(&auto64_wide.unwrap()).unwrap();
    assert!(
        auto64_wide
            .iter()
            .map(|s| s.0.to_bits())
            .collect::<Vec<_>>()
            == heads64,
        "n = {n}: Auto did not run SegHeads for f64 by u64 offsets"
    );
    // 8-byte values lifted from 4-byte items: log-sum-exp of f32 logits.
    let logits: Vec<f32> = (0..n)
        .map(|i| 1.0 + ((i % 997) as f32 / 5.0).sin())
        .collect();
    let d_logits = gpu.upload(&logits).unwrap();
    let run_lse = |config: SegConfig| {
        let out = gpu.reduce_segments_lifted::<LogSumExp, f32>(&d_logits, d_offsets, config);
        let out = gpu.download(&out.unwrap()).unwrap();
        out.iter()
            .map(|v| (v.m.to_bits(), v.s.to_bits()))
            .collect::<Vec<_>>()
    };
    // SegShuffle as `Auto` sizes it for items narrower than the monoid (16 f32 a thread).
    let shuffle_lse = run_lse(SegConfig::new(SegAlgorithm::SegShuffle).items_per_thread(16));
    let heads_lse = run_lse(SegConfig::new(SegAlgorithm::SegHeads));
    assert!(
        heads_lse != shuffle_lse,
        "n = {n}: log-sum-exp: SegShuffle's bits equal SegHeads' here"
    );
    assert!(
        run_lse(SegConfig::default()) == heads_lse,
        "n = {n}: Auto did not run SegHeads for lifted log-sum-exp"
    );
    long.check_sums(&run(SegAlgorithm::Auto, false));
}

/// Float segmented sums (arbitrary floats) give the same bits on every run, per algorithm.
#[test]
fn float_segment_sums_are_deterministic() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(8);
    let lengths: Vec<u32> = (0..20_000).map(|_| rng.range(0, 60) as u32).collect();
    let offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap() as usize;
    let items: Vec<Sum<f32>> = (0..n)
        .map(|_| Sum((rng.next_u32() as f32 / 1e5).sin()))
        .collect();
    let (xs, d_offsets) = (gpu.upload(&items).unwrap(), gpu.upload(&offsets).unwrap());
    for config in configs(&gpu) {
        let bits = |v: Vec<Sum<f32>>| v.iter().map(|s| s.0.to_bits()).collect::<Vec<u32>>();
        let first = bits(
            gpu.download(&gpu.reduce_segments(&xs, &d_offsets, config).unwrap())
                .unwrap(),
        );
        for run in 1..100 {
            let again = bits(
                gpu.download(&gpu.reduce_segments(&xs, &d_offsets, config).unwrap())
                    .unwrap(),
            );
            assert!(again == first, "{config:?} run {run} differs");
        }
    }
}

/// A segment count past u32 is a typed error before any work.
#[test]
fn segment_counts_past_u32_are_rejected() {
    let Some(gpu) = gpu() else { return };
    let items = gpu.upload(&Affine::random_vec(4, 1)).unwrap();
    let owner = gpu.upload(&[0u32, 0, 1, 1]).unwrap();
    match gpu.reduce_by_owner(&items, &owner, 1usize << 33, SegAlgorithm::Auto) {
        Err(Error::Layout(LayoutError::TooLarge { what, .. })) => assert_eq!(what, "segment count"),
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // u64 owners take such a count, SegShuffle's 32-bit ids do not: its plan refuses the call
    // before the output (2^36 values, 512 GiB) is allocated, as the CPU backend refuses it.
    let wide = [0u64, 0, 1, 1];
    let config = SegConfig::new(SegAlgorithm::SegShuffle);
    let on_gpu = gpu.reduce_by_owner(&items, &gpu.upload(&wide).unwrap(), 1 << 36, config);
    let host = Affine::random_vec(4, 1);
    let on_cpu = Backend::cpu().reduce_by_owner(&host, &wide, 1 << 36, config);
    for got in [on_gpu.map(|_| ()), on_cpu.map(|_| ())] {
        match got {
            Err(Error::Layout(LayoutError::TooLarge { what, .. })) => {
                assert_eq!(what, "segment count")
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }
}

/// Whether the kernels' spills are the ones measured (NVRTC 13.0 for sm_90), so that which
/// variant a plan loads is known; elsewhere the tests below check only the values.
fn spills_as_measured(gpu: &Gpu) -> bool {
    let version = reduce_cuda::testing::nvrtc_version();
    let measured = matches!(version, Ok((13, 0))) && gpu.info().compute_capability == (9, 0);
    if !measured {
        eprintln!(
            "spills measured with NVRTC 13.0 on sm_90, this is {version:?} on {:?}: not checked",
            gpu.info().compute_capability
        );
    }
    measured
}

/// SegShuffle with u32 offsets has two kernels (`seg_kernel_variants_for`): a tile's first
/// offsets loaded ahead of its marks, preferred, and one without, for a monoid that the first
/// makes spill under the register cap. One-word sums, Affine and Mat2 keep the first (one module
/// loaded each); Mat2w (32 bytes: 104 bytes of spill with the load ahead, 72 without, NVRTC 13.0
/// for sm_90) loads the first, sees its local memory and takes the second (two). u64 offsets
/// and owners have one kernel. The other tests of this file run both kernels against the CPU
/// fold.
#[test]
fn seg_shuffle_takes_the_variant_that_does_not_spill() {
    let Some(gpu) = gpu() else { return };
    if !spills_as_measured(&gpu) {
        return;
    }
    let config = SegConfig::new(SegAlgorithm::SegShuffle);
    let before = gpu.loaded_kernels();
    // The counts follow from ptxas's register allocation (NVRTC 13.0, sm_90, where they were
    // measured); another compiler or architecture may spill differently.
    gpu.prepare_segmented::<Sum<f32>, u32>(config, true)
        .unwrap();
    assert_eq!(
        gpu.loaded_kernels() - before,
        1,
        "Sum<f32> keeps the load ahead (no local memory with NVRTC 13.0 on sm_90)"
    );
    gpu.prepare_segmented::<Affine, u32>(config, true).unwrap();
    assert_eq!(
        gpu.loaded_kernels() - before,
        2,
        "Affine keeps the load ahead (no local memory with NVRTC 13.0 on sm_90)"
    );
    gpu.prepare_segmented::<Mat2, u32>(config, true).unwrap();
    assert_eq!(
        gpu.loaded_kernels() - before,
        3,
        "Mat2 keeps the load ahead (no local memory with NVRTC 13.0 on sm_90)"
    );
    gpu.prepare_segmented::<Mat2w, u32>(config, true).unwrap();
    assert_eq!(
        gpu.loaded_kernels() - before,
        5,
        "Mat2w falls back (104 bytes of spill with the load ahead, NVRTC 13.0 on sm_90)"
    );
    gpu.prepare_segmented::<Affine, u64>(config, true).unwrap();
    gpu.prepare_segmented::<Affine, u32>(config, false).unwrap();
    assert_eq!(gpu.loaded_kernels() - before, 7, "one kernel each");
    // Asked again: the choice is remembered, nothing more is loaded.
    gpu.prepare_segmented::<Mat2w, u32>(config, true).unwrap();
    assert_eq!(gpu.loaded_kernels() - before, 7);
}

/// SegBlocks takes its fallback kernel where the budgeted one spills: ArgMax lifted from f32
/// items one item past a 16-byte boundary, in blocks of 64 threads, takes local memory under
/// the register budget (NVRTC 13.0, sm_90; pinned by `nvrtc_kernels`'
/// `seg_blocks_budget_keeps_out_of_local_memory`), so the call loads both kernels (the plan
/// then runs the second, `plan::unless_it_spills`); at an aligned address it loads one. Either
/// way every segment is the sequential fold's (on other compilers and GPUs, only that).
#[test]
fn seg_blocks_takes_the_variant_that_does_not_spill() {
    use reduce_cuda::Lift;
    use reduce_tests::monoids::lang::ArgMax;
    let Some(gpu) = gpu() else { return };
    let config = SegConfig::new(SegAlgorithm::SegBlocks).block(64).trusted();
    let mut rng = TestRng::new(29);
    let n = 1usize << 20;
    // Few distinct values: ties, which ArgMax breaks by the index.
    let items: Vec<f32> = (0..n).map(|_| rng.range(0, 5000) as f32).collect();
    let offsets = offsets_of(&lengths_covering(n as u32, || rng.range(0, 8000)));
    let values: Vec<ArgMax> = (0..n).map(|i| ArgMax::lift(items[i], i as u64)).collect();
    let want = fold_segments(&values, &offsets).unwrap();
    let d_offsets = gpu.upload(&offsets).unwrap();
    let counts = spills_as_measured(&gpu);
    for (skip, loads) in [(0, 1), (1, 2)] {
        let (_keep, view) = placed(&gpu, &items, skip);
        let before = gpu.loaded_kernels();
        let got = gpu
            .reduce_segments_lifted::<ArgMax, f32>(&view, &d_offsets, config)
            .unwrap();
        if counts {
            assert_eq!(
                gpu.loaded_kernels() - before,
                loads,
                "items {skip} past a 16-byte boundary: the kernels loaded"
            );
        }
        assert!(
            gpu.download(&got).unwrap() == want,
            "items {skip} past a 16-byte boundary: not the sequential fold"
        );
    }
}

/// `prepare_segmented` under `Auto` loads, by CSR offsets of 4-byte values (a SegHeads band
/// holds them), SegShuffle's kernel and SegHeads': preparing either afterwards loads nothing
/// more. By owners it loads SegShuffle's owner-form kernel, and SegHeads (which runs `Auto`'s
/// plan there) nothing more.
#[test]
fn prepare_loads_seg_heads_where_a_band_holds_the_shape() {
    let Some(gpu) = gpu() else { return };
    // The kernels loaded after preparing `algorithm` (`Auto` when None) in a form.
    let loaded = |algorithm: Option<SegAlgorithm>, offsets_form: bool| {
        let config = algorithm.map_or(SegConfig::default(), SegConfig::new);
        gpu.prepare_segmented::<Sum<u32>, u32>(config, offsets_form)
            .unwrap();
        gpu.loaded_kernels()
    };
    let before = gpu.loaded_kernels();
    let prepared = loaded(None, true);
    assert!(prepared > before, "nothing loaded");
    let owners = loaded(None, false);
    assert!(owners > prepared, "the owner form's kernel was not loaded");
    // Each again, as `Auto` or as the algorithm it plans: nothing more.
    for (algorithm, offsets_form) in [
        (None, true),
        (Some(SegAlgorithm::SegHeads), true),
        (Some(SegAlgorithm::SegShuffle), true),
        (None, false),
        (Some(SegAlgorithm::SegHeads), false),
    ] {
        assert_eq!(
            loaded(algorithm, offsets_form),
            owners,
            "{algorithm:?} (offsets form {offsets_form}) loaded more"
        );
    }
}

/// SegPipeline runs from sm_90 on (bulk copies and mbarriers); below, every call is
/// `Error::InvalidConfig` naming sm_90, which the other tests' sweeps accept there.
#[test]
fn seg_pipeline_needs_sm_90() {
    let Some(gpu) = gpu() else { return };
    let lengths = [3u32, 0, 5, 1];
    let offsets = offsets_of(&lengths);
    let items = Affine::random_vec(9, 3);
    let (xs, d_offsets) = (gpu.upload(&items).unwrap(), gpu.upload(&offsets).unwrap());
    let got = gpu.reduce_segments(&xs, &d_offsets, SegAlgorithm::SegPipeline);
    if gpu.info().compute_capability.0 >= 9 {
        let got = gpu.download(&got.unwrap()).unwrap();
        assert_eq!(got, fold_segments(&items, &offsets).unwrap());
    } else {
        match got {
            Err(Error::InvalidConfig { reason, .. }) => {
                assert!(reason.contains("sm_90"), "{reason}")
            }
            other => panic!("expected SegPipeline's refusal below sm_90, got {other:?}"),
        }
    }
}
