//! Segmented reductions on every segment-length distribution of the benchmark, SegMerge's tile
//! and block boundaries, u64 layouts, the `_into` calls, the fused layout check on large
//! layouts, bad layouts when trusted, and more than 2^32 items — bit for bit against the CPU
//! references with non-commutative monoids.

use proptest::prelude::*;
use reduce_bench::layouts::{distribution, mean_length, owners, DISTRIBUTIONS};
use reduce_core::layout::{check_offsets as cpu_check_offsets, check_owner as cpu_check_owner};
use reduce_core::{fold_segments, Cpu, LayoutError, SegIndex};
use reduce_cuda::{CudaMonoid, DeviceVec, Error, Gpu, SegAlgorithm, SegConfig};
use reduce_tests::configs::{merge, seg_declined, takes_u64};
use reduce_tests::*;

/// The fast paths, validated and trusted, plus SegMerge at non-default parameters (smaller
/// for large items, so that they fit in shared memory).
fn fast_configs<M>() -> Vec<SegConfig> {
    let small = std::mem::size_of::<M>() <= 16;
    vec![
        merge(),
        merge().trusted(),
        SegConfig::new(SegAlgorithm::Auto),
        SegConfig::new(SegAlgorithm::SegShuffle),
        SegConfig::new(SegAlgorithm::SegShuffle).trusted(),
        if small {
            merge().block(128).items_per_thread(16).stages(3)
        } else {
            merge().block(64).items_per_thread(2).stages(3)
        },
        if small {
            merge().block(512).items_per_thread(2).stages(6).trusted()
        } else {
            merge().block(32).items_per_thread(1).stages(8).trusted()
        },
    ]
}

/// Reduces `items` over `offsets` in both forms with index type `I` and every config, into
/// reused outputs, and compares with `expected` bit for bit.
fn check_with<M: CudaMonoid + Random, I: SegIndex>(
    gpu: &Gpu,
    what: &str,
    xs: &DeviceVec<M>,
    offsets: &[u64],
    expected: &[M],
    configs: &[SegConfig],
) {
    let segments = offsets.len() - 1;
    let d_offsets = gpu.upload(&convert::<I>(offsets)).unwrap();
    let owner: Vec<u64> = owners(offsets).into_iter().map(u64::from).collect();
    let d_owner = gpu.upload(&convert::<I>(&owner)).unwrap();
    let mut out = gpu.zeroed::<M>(segments).unwrap();
    for config in configs {
        if I::WIDE && !takes_u64(config) {
            continue;
        }
        let ctx = format!("{} / {what} / {config:?} / wide {}", M::CUDA_NAME, I::WIDE);
        for form in ["owner", "offsets"] {
            let done = if form == "owner" {
                gpu.reduce_by_owner_into(xs, &d_owner, segments, &mut out, *config)
            } else {
                gpu.reduce_segments_into(xs, &d_offsets, &mut out, *config)
            };
            match done {
                Ok(()) => {}
                // Tiles sized on an H100 that a smaller device declines.
                Err(e) if seg_declined(gpu, config, size_of::<M>(), &e) => continue,
                Err(e) => panic!("{ctx} {form}: {e}"),
            }
            let got = gpu.download(&out).unwrap();
            if let Some(i) = (0..segments).find(|&i| got[i] != expected[i]) {
                panic!(
                    "{ctx} {form}: segment {i} of {segments}: got {:?}, expected {:?}",
                    got[i], expected[i]
                );
            }
        }
    }
}

fn check_offsets<M: CudaMonoid + Random>(
    gpu: &Gpu,
    what: &str,
    offsets: &[u64],
    configs: &[SegConfig],
) {
    let n = *offsets.last().unwrap() as usize;
    let items = M::random_vec(n, 31 + n as u64);
    let expected = Cpu::new().reduce_segments(&items, offsets).unwrap();
    let xs = gpu.upload(&items).unwrap();
    check_with::<M, u32>(gpu, what, &xs, offsets, &expected, configs);
    check_with::<M, u64>(gpu, what, &xs, offsets, &expected, configs);
}

macro_rules! distribution_tests {
    ($($name:ident: $m:ty, $n:expr,)*) => {$(
        #[test]
        fn $name() {
            let Some(gpu) = gpu() else { return };
            for dist in DISTRIBUTIONS {
                let offsets = distribution(dist, $n, 3).unwrap();
                check_offsets::<$m>(&gpu, dist, &offsets, &fast_configs::<$m>());
            }
            for mean in [1, 2, 5, 100, 30_000] {
                let offsets = mean_length(mean, $n, 4);
                check_offsets::<$m>(&gpu, &format!("mean {mean}"), &offsets, &fast_configs::<$m>());
            }
        }
    )*};
}

distribution_tests! {
    affine_every_distribution: Affine, 3_000_017,
    perm4_every_distribution: Perm4, 1_000_003,
    tri_every_distribution: Tri, 700_001,
    keep_first_every_distribution: KeepFirst, 500_009,
    mat3_every_distribution: Mat3, 100_003,
}

/// SegShuffle's short path for tiles inside one segment: long segments over many small tiles
/// and several blocks, a segment start exactly at a tile start, empty segments before, between
/// and after them (trailing empties written by a short-path tile), one segment per block.
#[test]
fn seg_shuffle_tiles_inside_one_segment() {
    let Some(gpu) = gpu() else { return };
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let configs = [
        shuffle,
        shuffle.trusted(),
        shuffle.block(64).items_per_thread(4),
        shuffle.block(32).items_per_thread(1).grid(3),
        shuffle.block(64).items_per_thread(4).grid(7).trusted(),
    ];
    let n = 200_003u64;
    for offsets in [
        vec![0, n],
        vec![0, 0, 0, n],
        vec![0, n, n, n],
        vec![0, 0, 256, 256, 100_000, 100_001, n, n],
        vec![0, 4096, 8192, 8193, 150_000, n],
        (0..=8).map(|k| k * n / 8).collect(),
    ] {
        let what = format!("{:?}", &offsets[..offsets.len().min(8)]);
        check_offsets::<Affine>(&gpu, &what, &offsets, &configs);
        check_offsets::<KeepFirst>(&gpu, &what, &offsets, &configs);
    }
}

/// Many empty segments: they cost only their writes, and each gets the identity once.
#[test]
fn runs_of_empty_segments() {
    let Some(gpu) = gpu() else { return };
    let mut offsets = vec![0u64; 1_000_001]; // a million empty segments first
    offsets.extend([5, 5, 9]);
    offsets.extend(std::iter::repeat_n(9u64, 300_000));
    offsets.extend((10..50_000u64).step_by(7));
    offsets.extend(std::iter::repeat_n(50_000u64, 2_000_000)); // and after
    check_offsets::<Affine>(&gpu, "runs of empties", &offsets, &fast_configs::<Affine>());
    check_offsets::<Affine>(
        &gpu,
        "no items",
        &vec![0u64; 777_778],
        &fast_configs::<Affine>(),
    );
}

/// SegMerge with small tiles over many blocks: path lengths at and around tile and block
/// boundaries, every few segments empty.
#[test]
fn merge_tile_and_block_boundaries() {
    let Some(gpu) = gpu() else { return };
    let mut configs = Vec::new();
    for (block, steps) in [(32u32, 1u32), (64, 2), (128, 4), (256, 8)] {
        for grid in [1u32, 2, 3, 8] {
            for stages in [3u32, 5] {
                configs.push(
                    merge()
                        .block(block)
                        .items_per_thread(steps)
                        .grid(grid)
                        .stages(stages),
                );
            }
        }
    }
    for tile in [32u64, 128, 512, 2048] {
        for path in [
            tile - 1,
            tile,
            tile + 1,
            5 * tile - 1,
            5 * tile + 1,
            17 * tile,
        ] {
            for segments in [1, path / 3, path / 2, path - 1, path] {
                let n = path - segments;
                let mut offsets: Vec<u64> = (0..=segments).map(|s| n * s / segments).collect();
                for s in (3..segments as usize).step_by(4) {
                    offsets[s] = offsets[s - 1];
                }
                check_offsets::<Affine>(
                    &gpu,
                    &format!("path {path}, {segments} segments"),
                    &offsets,
                    &configs,
                );
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Drawn layouts under drawn SegMerge parameters.
    #[test]
    fn drawn_layouts_and_parameters(
        lengths in proptest::collection::vec(prop_oneof![Just(0u64), 1u64..4, 4u64..200, 2000u64..30_000], 0..400),
        block in prop_oneof![Just(32u32), Just(64), Just(128), Just(256), Just(512)],
        steps in prop_oneof![Just(1u32), Just(2), Just(4), Just(8), Just(16)],
        stages in 3u32..9,
        grid in prop_oneof![Just(None), (1u32..40).prop_map(Some)],
    ) {
        // Rings of u64 keys and 8-byte items, and two stages, within 200 KB.
        let tile = (block * steps) as usize;
        prop_assume!(stages as usize * tile * 16 + 2 * tile * 8 <= 200 * 1024);
        if let Some(gpu) = gpu() {
            let mut config = merge().block(block).items_per_thread(steps).stages(stages);
            if let Some(g) = grid {
                config = config.grid(g);
            }
            let mut offsets = vec![0u64];
            for l in &lengths {
                offsets.push(offsets.last().unwrap() + l);
            }
            check_offsets::<Affine>(&gpu, "drawn", &offsets, &[config, config.trusted()]);
        }
    }
}

/// The `_into` calls check their output buffer.
#[test]
fn into_checks_the_output() {
    let Some(gpu) = gpu() else { return };
    let xs = gpu.upload(&Affine::random_vec(100, 1)).unwrap();
    let offsets = gpu.upload(&[0u64, 40, 40, 100]).unwrap();
    let mut short = gpu.zeroed::<Affine>(2).unwrap();
    match gpu.reduce_segments_into(&xs, &offsets, &mut short, SegAlgorithm::Auto) {
        Err(Error::LengthMismatch {
            left: 2, right: 3, ..
        }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    let owner = gpu.upload(&vec![1u32; 100]).unwrap();
    match gpu.reduce_by_owner_into(&xs, &owner, 4, &mut short, SegAlgorithm::Auto) {
        Err(Error::LengthMismatch {
            left: 2, right: 4, ..
        }) => {}
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
}

fn layout_error<T: std::fmt::Debug>(what: &str, r: reduce_cuda::Result<T>) -> LayoutError {
    match r {
        Err(Error::Layout(e)) => e,
        other => panic!("{what}: expected a layout error, got {other:?}"),
    }
}

/// The fused checks of SegMerge and SegShuffle find bad layouts anywhere in a large layout
/// (inside walks, at tile and block boundaries) and the call returns the exact first bad index,
/// u32 and u64.
#[test]
fn fused_check_finds_every_bad_index() {
    let Some(gpu) = gpu() else { return };
    let n = 2_000_000u64;
    let offsets = distribution("random_10_50", n, 9).unwrap();
    let segments = offsets.len() - 1;
    let owner: Vec<u64> = owners(&offsets).into_iter().map(u64::from).collect();
    let xs = gpu.upload(&Affine::random_vec(n as usize, 2)).unwrap();
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let configs = [
        merge(),
        merge().block(64).items_per_thread(4).grid(5),
        shuffle,
        shuffle.block(64).items_per_thread(4).grid(5),
    ];
    let mut positions: Vec<usize> = vec![2, 3, segments / 2, segments - 1];
    positions.extend((2..40).map(|k| k * segments / 40));
    for config in configs {
        for &k in &positions {
            // Offsets: offsets[k] below offsets[k - 1].
            let mut bad = offsets.clone();
            bad[k] = bad[k - 1] - 1;
            let want = cpu_check_offsets(&bad, n as usize).unwrap_err();
            let d32 = gpu.upload(&convert::<u32>(&bad)).unwrap();
            let d64 = gpu.upload(&bad).unwrap();
            assert_eq!(
                layout_error("u32", gpu.reduce_segments(&xs, &d32, config)),
                want
            );
            assert_eq!(
                layout_error("u64", gpu.reduce_segments(&xs, &d64, config)),
                want
            );
            // Owners: the first item of segment k goes back two segments (or past the last).
            let i = offsets[k] as usize;
            let mut bad = owner.clone();
            bad[i] = if bad[i] >= 2 {
                bad[i] - 2
            } else {
                segments as u64
            };
            let want = cpu_check_owner(&bad, n as usize, segments).unwrap_err();
            let d64 = gpu.upload(&bad).unwrap();
            let d32 = gpu.upload(&convert::<u32>(&bad)).unwrap();
            assert_eq!(
                layout_error(
                    "owner u64",
                    gpu.reduce_by_owner(&xs, &d64, segments, config)
                ),
                want
            );
            assert_eq!(
                layout_error(
                    "owner u32",
                    gpu.reduce_by_owner(&xs, &d32, segments, config)
                ),
                want
            );
        }
        let mut bad = offsets.clone();
        bad[0] = 3;
        let d = gpu.upload(&bad).unwrap();
        assert_eq!(
            layout_error("first", gpu.reduce_segments(&xs, &d, config)),
            LayoutError::FirstOffsetNotZero { value: 3 }
        );
        let mut bad = offsets.clone();
        *bad.last_mut().unwrap() = n - 1;
        let d = gpu.upload(&bad).unwrap();
        assert_eq!(
            layout_error("last", gpu.reduce_segments(&xs, &d, config)),
            LayoutError::LastOffsetNotLen {
                index: segments,
                value: n - 1,
                items: n as usize
            }
        );
        let mut bad = owner.clone();
        *bad.last_mut().unwrap() = segments as u64 + 5;
        let d = gpu.upload(&bad).unwrap();
        assert_eq!(
            layout_error("owner past", gpu.reduce_by_owner(&xs, &d, segments, config)),
            LayoutError::OwnerOutOfRange {
                index: n as usize - 1,
                value: segments as u64 + 5,
                num_segments: segments
            }
        );
    }
}

/// SegBlocks' fused check (mean segment lengths from 500: here about 2000) finds a bad entry
/// anywhere — the first, the last, decreasing ones through the layout and on chunk boundaries,
/// u64 entries past the u32 range — and the call returns the CPU check's first error, u32 and
/// u64, at its default block and at 64 threads with a lane run of one item; a layout whose
/// segments all overlap (0, n, 0, n, …) errs as well; a good validated call after them gives
/// the fold bit for bit (the status word was reset each time).
#[test]
fn seg_blocks_fused_check_finds_every_bad_index() {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(31);
    let mut lengths = Vec::new();
    let mut n = 0u64;
    while n < 3_000_000 {
        let l = rng.range(1, 4000);
        lengths.push(l);
        n += l;
    }
    let offsets = offsets_of(&lengths);
    let segments = offsets.len() - 1;
    let items = Affine::random_vec(n as usize, 4);
    let xs = gpu.upload(&items).unwrap();
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    let configs = [
        blocks,
        blocks.block(64).items_per_thread(1),
        blocks.block(32),
    ];
    // A chunk is 256 KiB of items: 32768 affine maps.
    let mut positions: Vec<usize> = vec![2, 3, segments / 2, segments - 1];
    positions.extend((1..30).map(|k| k * segments / 30));
    positions.extend((1..n / 32768).map(|c| offsets.partition_point(|&o| o < c * 32768)));
    let mut layouts = Vec::new();
    for &k in positions.iter().filter(|&&k| k >= 2 && k <= segments) {
        let mut bad = offsets.clone();
        bad[k] = bad[k - 1] - 1;
        layouts.push(bad);
        let mut past = offsets.clone();
        past[k] = (1 << 32) + 5;
        layouts.push(past);
    }
    let mut first = offsets.clone();
    first[0] = 3;
    let mut last = offsets.clone();
    last[segments] = n - 1;
    let overlapping: Vec<u64> = (0..=segments)
        .map(|s| if s % 2 == 1 || s == segments { n } else { 0 })
        .collect();
    layouts.extend([first, last, overlapping]);
    for config in configs {
        for bad in &layouts {
            let want = cpu_check_offsets(bad, n as usize).unwrap_err();
            let d64 = gpu.upload(bad).unwrap();
            let ctx = format!("{config:?} u64");
            assert_eq!(
                layout_error(&ctx, gpu.reduce_segments(&xs, &d64, config)),
                want
            );
            if bad.iter().all(|&o| o <= u32::MAX as u64) {
                let d32 = gpu.upload(&convert::<u32>(bad)).unwrap();
                let ctx = format!("{config:?} u32");
                assert_eq!(
                    layout_error(&ctx, gpu.reduce_segments(&xs, &d32, config)),
                    want
                );
            }
        }
        let d = gpu.upload(&offsets).unwrap();
        let got = gpu
            .download(&gpu.reduce_segments(&xs, &d, config).unwrap())
            .unwrap();
        assert_eq!(
            got,
            fold_segments(&items, &offsets).unwrap(),
            "{config:?} after bad layouts"
        );
    }
}

/// Validated SegShuffle CSR calls over at most 16 offsets per thread of a block check them all
/// in the grid's last block before its tiles, and return as soon as its key lands, without
/// waiting for the launch's end; more offsets take the check fused into the marks. On both sides
/// of that limit (4096 offsets at 256 threads, 8192 at 512), u32 and u64: good layouts give the
/// CPU fold bit for bit, and bad ones the CPU check's first error (at the first, a middle, the
/// last but one and the last entry).
#[test]
fn early_check_on_both_sides_of_its_limit() {
    let Some(gpu) = gpu() else { return };
    let n = 200_003u64;
    let items = Affine::random_vec(n as usize, 5);
    let xs = gpu.upload(&items).unwrap();
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    for segments in [1u64, 1000, 4094, 4095, 4096, 8191, 8192, 20_000] {
        let offsets: Vec<u64> = (0..=segments).map(|s| n * s / segments).collect();
        let expected = Cpu::new().reduce_segments(&items, &offsets).unwrap();
        let configs = [shuffle, shuffle.block(512)];
        check_with::<Affine, u32>(&gpu, "good", &xs, &offsets, &expected, &configs);
        check_with::<Affine, u64>(&gpu, "good", &xs, &offsets, &expected, &configs);
        let mut bads = Vec::new();
        let mut first = offsets.clone();
        first[0] = 1;
        bads.push(first);
        for k in [segments / 2, segments - 1].into_iter().filter(|&k| k >= 2) {
            let mut bad = offsets.clone();
            bad[k as usize] = bad[k as usize - 1] - 1;
            bads.push(bad);
        }
        let mut last = offsets.clone();
        *last.last_mut().unwrap() = n + 1;
        bads.push(last);
        for bad in bads {
            let want = cpu_check_offsets(&bad, n as usize).unwrap_err();
            let d32 = gpu.upload(&convert::<u32>(&bad)).unwrap();
            let d64 = gpu.upload(&bad).unwrap();
            for config in configs {
                let what = format!("{segments} segments, {config:?}");
                assert_eq!(
                    layout_error(&what, gpu.reduce_segments(&xs, &d32, config)),
                    want
                );
                assert_eq!(
                    layout_error(&what, gpu.reduce_segments(&xs, &d64, config)),
                    want
                );
            }
        }
    }
}

/// u64 entries past the u32 range (which SegShuffle reads narrowed to 32 bits) are bad entries
/// like any other: each call returns the CPU check's first error, in every place, both forms.
#[test]
fn u64_entries_past_u32_are_layout_errors() {
    let Some(gpu) = gpu() else { return };
    let n = 1_000_000u64;
    let offsets = distribution("uniform_1_8", n, 12).unwrap();
    let segments = offsets.len() - 1;
    let owner: Vec<u64> = owners(&offsets).into_iter().map(u64::from).collect();
    let xs = gpu.upload(&Affine::random_vec(n as usize, 3)).unwrap();
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    let configs = [
        SegConfig::new(SegAlgorithm::Auto),
        shuffle,
        shuffle.block(64).items_per_thread(4).grid(7),
        merge(),
        blocks,
    ];
    let far = [1u64 << 32, (1 << 32) + 5, u64::MAX, (1 << 33) + n];
    let mut places = vec![1, 2, segments / 3, segments - 1, segments];
    places.extend((1..20).map(|k| k * segments / 20));
    for config in configs {
        for (k, &at) in places.iter().enumerate() {
            let value = far[k % far.len()];
            // One offset far past n; then a run of them up to the end (all ascending).
            let mut bad = offsets.clone();
            bad[at] = value;
            let want = cpu_check_offsets(&bad, n as usize).unwrap_err();
            let d = gpu.upload(&bad).unwrap();
            let ctx = format!("{config:?} offsets[{at}] = {value}");
            assert_eq!(
                layout_error(&ctx, gpu.reduce_segments(&xs, &d, config)),
                want
            );
            let mut run = offsets.clone();
            run[at..].iter_mut().for_each(|o| *o += value >> 1);
            let want = cpu_check_offsets(&run, n as usize).unwrap_err();
            let d = gpu.upload(&run).unwrap();
            assert_eq!(
                layout_error(&ctx, gpu.reduce_segments(&xs, &d, config)),
                want
            );
            // One owner far past the segments, and every owner from there on.
            let i = (offsets[at.min(segments - 1)] as usize).min(n as usize - 1);
            let mut bad = owner.clone();
            bad[i] = value;
            let want = cpu_check_owner(&bad, n as usize, segments).unwrap_err();
            let d = gpu.upload(&bad).unwrap();
            let ctx = format!("{config:?} owner[{i}] = {value}");
            let got = gpu.reduce_by_owner(&xs, &d, segments, config);
            assert_eq!(layout_error(&ctx, got), want);
            bad[i..].iter_mut().for_each(|o| *o = value);
            let want = cpu_check_owner(&bad, n as usize, segments).unwrap_err();
            let d = gpu.upload(&bad).unwrap();
            let got = gpu.reduce_by_owner(&xs, &d, segments, config);
            assert_eq!(layout_error(&ctx, got), want);
        }
    }
    // The same layouts, trusted: any result, no fault; the device is still fine after them.
    let mut garbage = offsets.clone();
    garbage[segments / 2..]
        .iter_mut()
        .for_each(|o| *o |= 1 << 40);
    let d = gpu.upload(&garbage).unwrap();
    let wild: Vec<u64> = owner.iter().map(|&o| o.rotate_left(37)).collect();
    let d_wild = gpu.upload(&wild).unwrap();
    for config in [shuffle.trusted(), merge().trusted(), blocks.trusted()] {
        gpu.reduce_segments(&xs, &d, config).unwrap();
        gpu.reduce_by_owner(&xs, &d_wild, segments, config).unwrap();
    }
    check_offsets::<Affine>(&gpu, "after u64 garbage", &offsets, &[shuffle]);
}

/// A bad layout with `trusted()` gives an unspecified result but never a fault, a hang or an
/// error on the next call: garbage offsets and owners of every kind.
#[test]
fn trusted_bad_layouts_are_memory_safe() {
    let Some(gpu) = gpu() else { return };
    let n = 300_000usize;
    let xs = gpu.upload(&Affine::random_vec(n, 5)).unwrap();
    let mut rng = TestRng::new(77);
    for round in 0..12 {
        let segments = [1usize, 10, 1000, 100_000, 400_000][round % 5];
        let garbage: Vec<u32> = (0..=segments)
            .map(|_| match rng.range(0, 3) {
                0 => rng.next_u32(),
                1 => rng.range(0, n as u64 + 10) as u32,
                _ => u32::MAX,
            })
            .collect();
        let d = gpu.upload(&garbage).unwrap();
        for config in [
            merge().trusted(),
            merge().block(64).items_per_thread(4).grid(9).trusted(),
        ] {
            gpu.reduce_segments(&xs, &d, config).unwrap();
            let owner: Vec<u32> = (0..n)
                .map(|_| rng.range(0, segments as u64 + 3) as u32)
                .collect();
            let d_owner = gpu.upload(&owner).unwrap();
            gpu.reduce_by_owner(&xs, &d_owner, segments, config)
                .unwrap();
        }
    }
    // The device is still fine.
    let offsets = distribution("size_3", n as u64, 1).unwrap();
    check_offsets::<Affine>(&gpu, "after garbage", &offsets, &[merge()]);
}

/// Past the u32 index range: 2^32 + 2^20 + 5 one-byte items (an S4 permutation each), u64
/// offsets with segments across 2^32, and u32 owners. Needs ~22 GB of device memory.
#[test]
fn more_than_u32_max_items() {
    let Some(gpu) = gpu() else { return };
    let n = (1u64 << 32) + (1 << 20) + 5;
    if (gpu.info().total_memory as u64) < 6 * n {
        eprintln!("skipped: the device has less than {} bytes", 6 * n);
        return;
    }
    // A random block of 2^26 + 1 items, repeated (its period does not divide 2^32).
    let block = Perm4::random_vec((1 << 26) + 1, 42);
    let items: Vec<Perm4> = (0..n as usize).map(|i| block[i % block.len()]).collect();
    let xs = gpu.upload(&items).unwrap();
    let boundary = 1u64 << 32;
    let mut offsets = vec![
        0u64,
        1000,
        boundary - 5,
        boundary - 5,
        boundary + 7,
        boundary + 8,
    ];
    offsets.extend((1..1000u64).map(|k| boundary + 8 + k * 1000));
    offsets.extend([n - 3, n]);
    let expected = Cpu::new().reduce_segments(&items, &offsets).unwrap();
    let d_offsets = gpu.upload(&offsets).unwrap();
    for config in [
        merge(),
        merge().trusted(),
        SegConfig::new(SegAlgorithm::Auto),
    ] {
        let got = gpu
            .download(&gpu.reduce_segments(&xs, &d_offsets, config).unwrap())
            .unwrap();
        assert!(got == expected, "{config:?} offsets");
    }
    let owner: Vec<u32> = owners(&offsets);
    let d_owner = gpu.upload(&owner).unwrap();
    drop(owner);
    let got = gpu
        .download(
            &gpu.reduce_by_owner(&xs, &d_owner, offsets.len() - 1, merge())
                .unwrap(),
        )
        .unwrap();
    assert!(got == expected, "owner form");
    // The u32-indexed algorithms say why they cannot.
    match gpu.reduce_by_owner(&xs, &d_owner, offsets.len() - 1, SegAlgorithm::SegShuffle) {
        Err(Error::Layout(LayoutError::TooLarge {
            what: "item count", ..
        })) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
}
