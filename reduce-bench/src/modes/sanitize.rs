//! `bench sanitize`: a small, complete workload for compute-sanitizer (memcheck, racecheck,
//! synccheck, initcheck): every plain algorithm at odd sizes around block and grid boundaries,
//! the portable mode, every segmented algorithm (and the portable mode) in both forms on a mixed
//! layout with empty segments, small tiles
//! and grids of SegMerge and SegShuffle, lifted ArgMax, the scans (plain, CSR offsets, keys;
//! small and default tiles), and reductions along axes (rows of whole vector runs and the
//! strips' ends, short rows, few columns, columns, a middle axis; items at offsets); every
//! result is checked against the CPU reference (exit code 1 on a mismatch). `--quick`: the
//! segmented part only (after a change to a segmented kernel).

use crate::cli::Args;
use crate::driver::driver;
use crate::layouts;
use crate::monoids::{Affine, ArgMax, Heis, Mat2};
use crate::seg_common::{runs_here, DeviceLayout, FORMS};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{
    fold, fold_axes, fold_segments, scan, scan_by_key, scan_segments, Algorithm, AxisAlgorithm,
    Config, DeviceVec, Gpu, Lift, Scan, ScanAlgorithm, ScanConfig, SegAlgorithm, SegConfig, Sum,
};

/// Runs the workload (`--quick`: its segmented part); prints the number of mismatches and
/// exits with 1 if there is one.
pub fn sanitize(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut state = 1u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut failures = segmented(&gpu, &mut next)?;
    if !args.quick {
        failures += plain(&gpu, &mut next)?;
        failures += lifted(&gpu, &mut next)?;
        failures += scans(&gpu, &mut next)?;
        failures += axes(&gpu, &mut next)?;
    }
    println!("sanitize workload: {failures} mismatches");
    if failures > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// The plain part: every algorithm and `Auto` on affine maps of odd sizes. Returns the number
/// of mismatches.
fn plain(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let mut failures = 0;
    // Odd small sizes; one past the data blocks of Tb2 (512), Tb4Warp/Matrix (1024),
    // SegShuffle's tile (4096), Shuffle's block tile (512 x 8 affine items); one past Shuffle's
    // grid of block tiles (2 blocks per SM); one large size.
    let sms = gpu.info().multiprocessors as usize;
    for n in [
        1usize,
        33,
        513,
        1025,
        4097,
        4096 + 1,
        8193,
        70_001,
        512 * 8 * 2 * sms + 1,
        1 << 22,
    ] {
        let items: Vec<Affine> = (0..n)
            .map(|_| Affine {
                a: next() | 1,
                b: next(),
            })
            .collect();
        let xs = gpu.upload(&items)?;
        for alg in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            if gpu.reduce(&xs, alg)? != fold(&items) {
                eprintln!("MISMATCH plain {alg} n={n}");
                failures += 1;
            }
        }
        // The portable mode: its default, and small blocks, nodes and grids (its last block's
        // tree over many nodes).
        let portable = Config::default().portable();
        for config in [portable, portable.block(32).tile_group(1).grid(5)] {
            if gpu.reduce(&xs, config)? != fold(&items) {
                eprintln!("MISMATCH plain {config:?} n={n}");
                failures += 1;
            }
        }
    }
    Ok(failures)
}

/// The segmented part of the sanitizer workload: every algorithm in both forms on a mixed
/// layout; SegMerge and SegShuffle with small tiles and grids on path lengths around tile and
/// block boundaries, u32 and u64 layouts, validated and trusted; and a bad layout through the
/// fused check. Returns the number of mismatches.
fn segmented(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let mut failures = 0;
    let mut check = |what: String, ok: bool| {
        if !ok {
            eprintln!("MISMATCH segmented {what}");
            failures += 1;
        }
    };
    let mut random_items = |n: usize| -> Vec<Affine> {
        (0..n)
            .map(|_| Affine {
                a: next() | 1,
                b: next(),
            })
            .collect()
    };
    let lengths: Vec<u64> = (0..700u64)
        .map(|i| if i % 5 == 0 { 0 } else { i * 7919 % 40 })
        .chain([5000, 0, 3])
        .collect();
    let mixed: Vec<u64> = std::iter::once(0)
        .chain(lengths.iter().scan(0, |acc, l| {
            *acc += l;
            Some(*acc)
        }))
        .collect();
    let items = random_items(*mixed.last().unwrap() as usize);
    let xs = gpu.upload(&items)?;
    let expected = fold_segments(&items, &mixed).expect("valid layout");
    let layout = DeviceLayout::new(gpu, &mixed)?;
    for alg in SegAlgorithm::ALL
        .into_iter()
        .filter(|&a| runs_here(gpu, &a.into()))
    {
        for form in FORMS {
            let mut out = gpu.zeroed::<Affine>(layout.segments)?;
            layout.run(gpu, &xs, &mut out, form, alg.into())?;
            check(format!("{alg} {form}"), gpu.download(&out)? == expected);
        }
    }
    // SegHeads on tiles of 32 items: tiles with empty segments, and groups of tiles for its join.
    let heads = SegConfig::new(SegAlgorithm::SegHeads)
        .block(32)
        .items_per_thread(1);
    for config in [heads, heads.trusted()] {
        let mut out = gpu.zeroed::<Affine>(layout.segments)?;
        layout.run(gpu, &xs, &mut out, "offsets", config)?;
        check(format!("{config:?}"), gpu.download(&out)? == expected);
    }
    // SegBlocks' joins across blocks: segments of several chunks (32 Ki affine items a chunk),
    // starting on a chunk's boundary and off it, validated and trusted, at its default block and
    // at one warp.
    let long = [0u64, 100_000, 100_003, 170_003, 170_003, 196_608, 240_000];
    let long_items = random_items(240_000);
    let long_xs = gpu.upload(&long_items)?;
    let long_expected = fold_segments(&long_items, &long).expect("valid layout");
    let long_layout = DeviceLayout::new(gpu, &long)?;
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    for config in [blocks, blocks.trusted(), blocks.block(32)] {
        let mut out = gpu.zeroed::<Affine>(long_layout.segments)?;
        long_layout.run(gpu, &long_xs, &mut out, "offsets", config)?;
        check(
            format!("{config:?} joins"),
            gpu.download(&out)? == long_expected,
        );
    }
    // The portable mode (an exact monoid: the sequential fold): its default, and one-warp
    // tiles on a few blocks (many nodes for its last block), validated and trusted.
    let portable = SegConfig::default().portable();
    for config in [portable, portable.block(32).grid(5).trusted()] {
        for form in FORMS {
            let mut out = gpu.zeroed::<Affine>(layout.segments)?;
            layout.run(gpu, &xs, &mut out, form, config)?;
            check(
                format!("{config:?} {form}"),
                gpu.download(&out)? == expected,
            );
        }
    }
    // SegMerge: tiles of 64 x 4 = 256 path steps, 1..5 blocks, path lengths k * 256 + {-1, 0, 1};
    // SegShuffle and SegPipeline: tiles of 64 x 4 = 256 items on the same layouts.
    let small = SegConfig::new(SegAlgorithm::SegMerge)
        .block(64)
        .items_per_thread(4)
        .stages(3);
    let small_shuffle = SegConfig::new(SegAlgorithm::SegShuffle)
        .block(64)
        .items_per_thread(4);
    // SegPipeline: the same tiles through one or two stages (every stage reused many times).
    let small_pipeline = SegConfig::new(SegAlgorithm::SegPipeline)
        .block(64)
        .items_per_thread(4);
    // Which of SegShuffle's two u32 offsets kernels these tiles run (the sums, Mat2 and Affine
    // with 20 items per thread at the loop's end): u32 sums, Affine and Mat2 with 4 items the one
    // with a tile's first offsets loaded ahead (one module each); Affine with 20 the one without
    // (it spills with the load ahead, not without: it loads the first, sees its local memory,
    // loads the second; tests/tests/nvrtc_kernels.rs holds the same case). Register allocation
    // of NVRTC 13.0 for sm_90.
    let affine_20 = small_shuffle.items_per_thread(20);
    let before = gpu.loaded_kernels();
    gpu.prepare_segmented::<Sum<u32>, u32>(small_shuffle, true)?;
    gpu.prepare_segmented::<Affine, u32>(small_shuffle, true)?;
    gpu.prepare_segmented::<Mat2, u32>(small_shuffle, true)?;
    let ahead = gpu.loaded_kernels() - before;
    check(
        format!("u32 sums, Affine and Mat2 load {ahead} modules, not 3"),
        ahead == 3,
    );
    gpu.prepare_segmented::<Affine, u32>(affine_20, true)?;
    let fallback = gpu.loaded_kernels() - before - ahead;
    check(
        format!("Affine with 20 items per thread loads {fallback} modules, not 2"),
        fallback == 2,
    );
    for path in [255u64, 256, 257, 4 * 256 + 1, 9 * 256 - 1] {
        for segments in [1u64, path / 2, path - 1] {
            let n = path - segments;
            // Even segments, every third one merged into its neighbour (left empty).
            let mut offsets: Vec<u64> = (0..=segments).map(|s| n * s / segments).collect();
            for s in (3..segments as usize).step_by(3) {
                offsets[s] = offsets[s - 1];
            }
            let items = random_items(n as usize);
            let expected = fold_segments(&items, &offsets).expect("valid layout");
            let xs = gpu.upload(&items)?;
            let layout = DeviceLayout::new(gpu, &offsets)?;
            let wide_offsets = gpu.upload(&offsets)?;
            let wide_owner: Vec<u64> = layouts::owners(&offsets)
                .iter()
                .map(|&o| o as u64)
                .collect();
            let wide_owner = gpu.upload(&wide_owner)?;
            let configs = [
                small.grid(1),
                small.grid(3),
                small.grid(3).trusted(),
                small_shuffle.grid(3),
                small_shuffle.grid(2).trusted(),
                small_pipeline.stages(1).grid(3),
                small_pipeline.stages(2).grid(2).trusted(),
            ];
            for config in configs.into_iter().filter(|c| runs_here(gpu, c)) {
                let what = format!("path {path} segments {segments} {config:?}");
                for form in FORMS {
                    let mut out = gpu.zeroed::<Affine>(layout.segments)?;
                    layout.run(gpu, &xs, &mut out, form, config)?;
                    check(format!("{what} {form}"), gpu.download(&out)? == expected);
                }
                let wide = gpu.reduce_segments(&xs, &wide_offsets, config)?;
                check(
                    format!("{what} u64 offsets"),
                    gpu.download(&wide)? == expected,
                );
                let wide = gpu.reduce_by_owner(&xs, &wide_owner, layout.segments, config)?;
                check(
                    format!("{what} u64 owner"),
                    gpu.download(&wide)? == expected,
                );
            }
            // SegShuffle's two u32 offsets kernels: a tile's first offsets loaded ahead of its
            // marks (one-word sums and Mat2; Affine above takes it too), and without, where the
            // first spills (Affine with 20 items per thread, tiles of 1280, NVRTC 13.0 on sm_90).
            let narrow = gpu.upload(&offsets.iter().map(|&o| o as u32).collect::<Vec<u32>>())?;
            let sums: Vec<Sum<u32>> = items.iter().map(|x| Sum(x.b)).collect();
            let mats: Vec<Mat2> = items
                .iter()
                .map(|x| Mat2 {
                    m: [x.a, x.b, x.b ^ 7, x.a.wrapping_add(3)],
                })
                .collect();
            let (expected_sums, expected_mats) = (
                fold_segments(&sums, &offsets).expect("valid layout"),
                fold_segments(&mats, &offsets).expect("valid layout"),
            );
            let (sums, mats) = (gpu.upload(&sums)?, gpu.upload(&mats)?);
            for (config, fallback) in [
                (small_shuffle.grid(3), affine_20.grid(3)),
                (small_shuffle.grid(2).trusted(), affine_20.grid(2).trusted()),
            ] {
                let what = format!("path {path} segments {segments} {config:?}");
                let out = gpu.reduce_segments(&sums, &narrow, config)?;
                check(
                    format!("{what} u32 sums"),
                    gpu.download(&out)? == expected_sums,
                );
                let out = gpu.reduce_segments(&mats, &narrow, config)?;
                check(format!("{what} Mat2"), gpu.download(&out)? == expected_mats);
                let out = gpu.reduce_segments(&xs, &narrow, fallback)?;
                check(
                    format!("{what} Affine, 20 items per thread"),
                    gpu.download(&out)? == expected,
                );
            }
        }
    }
    // A bad layout goes through the fused check and comes back as the exact error; SegShuffle's
    // validated CSR calls check few offsets early (the grid's last block, before its tiles),
    // more in the marks (block 64: more than 1024 offsets).
    let bad = gpu.upload(&[0u32, 5, 3, 10])?;
    let ten = gpu.upload(&random_items(10))?;
    check(
        "bad offsets through SegMerge".into(),
        gpu.reduce_segments(&ten, &bad, SegAlgorithm::SegMerge)
            .is_err(),
    );
    check(
        "bad offsets through SegShuffle's early check".into(),
        gpu.reduce_segments(&ten, &bad, SegAlgorithm::SegShuffle)
            .is_err(),
    );
    let mut many: Vec<u32> = (0..=2000u32).map(|s| s * 3 / 2).collect();
    many[1000] = many[998];
    let (many, items) = (gpu.upload(&many)?, gpu.upload(&random_items(3000))?);
    check(
        "bad offsets through SegShuffle's fused check".into(),
        gpu.reduce_segments(&items, &many, small_shuffle.grid(3))
            .is_err(),
    );
    // The other fused checks of CSR offsets: the portable kernel's (a batch that meets the
    // descending pair stops its block's marks), SegHeads' and SegBlocks'; a layout that crosses
    // the portable tile's end twice in one batch (entries 40 and 70 at or past item 512, the end
    // of a tile of 64 threads x 8 affine items, 41..69 back below it); and a pair no portable
    // block's reads reach (tiles of 512 items, 2 a block, 3 blocks: block 1's tiles read no entry
    // and block 2's search lands past the pair, so only the reach check sees it). Each must be
    // the layout's typed error.
    let layout_error =
        |r: reduce_cuda::Result<DeviceVec<Affine>>| matches!(r, Err(reduce_cuda::Error::Layout(_)));
    let portable = SegConfig::default().portable().block(64);
    for config in [
        portable.grid(3),
        portable.grid(1),
        heads,
        SegConfig::new(SegAlgorithm::SegBlocks).block(32),
    ] {
        check(
            format!("bad offsets through {config:?}"),
            layout_error(gpu.reduce_segments(&items, &many, config)),
        );
    }
    let twice: Vec<u32> = (0..40u32)
        .map(|s| 10 * s)
        .chain([600])
        .chain((41..70).map(|s| 400 + s))
        .chain((0..230).map(|k| 700 + 10 * k))
        .chain([3000])
        .collect();
    let twice = gpu.upload(&twice)?;
    check(
        "offsets that cross a portable tile's end twice in a batch".into(),
        layout_error(gpu.reduce_segments(&items, &twice, portable.grid(1))),
    );
    let hidden: Vec<u32> = (0..=50u32)
        .map(|s| 10 * s)
        .chain((51..=300).map(|_| 5000))
        .chain((0..=1024).map(|m| 2048 + 4 * m))
        .collect();
    let (hidden, items) = (gpu.upload(&hidden)?, gpu.upload(&random_items(6144))?);
    check(
        "a bad pair only the portable reach check sees".into(),
        layout_error(gpu.reduce_segments(&items, &hidden, portable.grid(3))),
    );
    Ok(failures)
}

/// The lifted part of the sanitizer workload: plain and segmented ArgMax lifted from f32, items
/// aligned and not (plain loads), u32 and u64 layouts with empty segments, small SegMerge
/// tiles over several blocks. Returns the number of mismatches.
fn lifted(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let n = 20_011;
    let xs: Vec<f32> = (0..n + 1).map(|_| (next() % 1000) as f32).collect();
    let all = gpu
        .stream()
        .clone_htod(&xs)
        .map_err(driver("uploading the sanitizer items"))?;
    let mut offsets = vec![0u64];
    while *offsets.last().unwrap() < n as u64 {
        let step = [0, 1, 2, 7, 300][next() as usize % 5];
        offsets.push((offsets.last().unwrap() + step).min(n as u64));
    }
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let mut failures = 0;
    for skip in [0, 1] {
        let items = all.slice(skip..skip + n);
        let host: Vec<ArgMax> = xs[skip..skip + n]
            .iter()
            .enumerate()
            .map(|(i, &x)| ArgMax::lift(x, i as u64))
            .collect();
        let want = Cpu::new().reduce_segments(&host, &offsets).expect("valid");
        let plain: ArgMax = gpu.reduce_lifted(&items, Algorithm::Auto)?;
        failures += usize::from(plain != fold(&host));
        let offsets32 = gpu.upload(&layouts::to_u32(&offsets))?;
        let offsets64 = gpu.upload(&offsets)?;
        for config in [
            merge,
            merge.trusted(),
            merge.block(64).items_per_thread(2).stages(3),
        ] {
            let a = gpu.reduce_segments_lifted::<ArgMax, f32>(&items, &offsets32, config)?;
            let b = gpu.reduce_segments_lifted::<ArgMax, f32>(&items, &offsets64, config)?;
            failures += usize::from(gpu.download(&a)? != want);
            failures += usize::from(gpu.download(&b)? != want);
        }
    }
    Ok(failures)
}

/// The scans: plain, by CSR offsets (with empty segments) and by keys, both kinds, in the
/// default tiles and in tiles of 32 threads of one item (many tiles, long look-backs), LookBack
/// and ReduceThenScan, at sizes around the tiles (by keys, `Auto`'s runs of seven vectors), the
/// exclusive segmented ones also in place; and plain scans of 12-byte items (LookAhead's runs of
/// nine vectors), into a buffer and in place.
/// Returns the number of mismatches.
fn scans(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let mut failures = 0;
    for n in [1usize, 33, 8193, 70_001] {
        let items: Vec<Affine> = (0..n)
            .map(|_| Affine {
                a: next() | 1,
                b: next(),
            })
            .collect();
        let mut offsets = vec![0u32];
        while (*offsets.last().unwrap() as usize) < n {
            let length = [0, 1, 7, 300][next() as usize % 4];
            offsets.push((offsets.last().unwrap() + length).min(n as u32));
        }
        let keys: Vec<u32> = (0..n as u32).map(|i| (i / 5) % 3).collect();
        let (xs, d_offsets, d_keys) = (
            gpu.upload(&items)?,
            gpu.upload(&offsets)?,
            gpu.upload(&keys)?,
        );
        let small = |algorithm| ScanConfig::new(algorithm).block(32).items_per_thread(1);
        for config in [
            ScanConfig::default(),
            small(ScanAlgorithm::LookBack),
            ScanConfig::new(ScanAlgorithm::ReduceThenScan),
            small(ScanAlgorithm::ReduceThenScan),
            ScanConfig::new(ScanAlgorithm::LookAhead),
            small(ScanAlgorithm::LookAhead),
        ] {
            for kind in [Scan::Inclusive, Scan::Exclusive] {
                let plain = gpu.download(&gpu.scan(&xs, kind, config)?)?;
                let by_offsets =
                    gpu.download(&gpu.scan_segments(&xs, &d_offsets, kind, config)?)?;
                let by_keys = gpu.download(&gpu.scan_by_key(&xs, &d_keys, kind, config)?)?;
                let want_offsets = scan_segments(&items, &offsets, kind).expect("valid offsets");
                let want_keys = scan_by_key(&items, &keys, kind).expect("one key per item");
                let mut wrong = vec![
                    plain != scan(&items, kind),
                    by_offsets != want_offsets,
                    by_keys != want_keys,
                ];
                if kind == Scan::Exclusive {
                    let mut d = gpu.upload(&items)?;
                    gpu.scan_segments_in_place(&mut d, &d_offsets, kind, config)?;
                    wrong.push(gpu.download(&d)? != want_offsets);
                    let mut d = gpu.upload(&items)?;
                    gpu.scan_by_key_in_place(&mut d, &d_keys, kind, config)?;
                    wrong.push(gpu.download(&d)? != want_keys);
                }
                let forms = [
                    "plain",
                    "offsets",
                    "keys",
                    "offsets in place",
                    "keys in place",
                ];
                for (what, wrong) in forms.iter().zip(wrong) {
                    if wrong {
                        eprintln!("scan {what} n = {n} {kind:?} {config:?}: MISMATCH");
                        failures += 1;
                    }
                }
            }
        }
        // 12-byte items, staged in chunks of three vectors: into a new buffer and in place
        let heis: Vec<Heis> = (0..n)
            .map(|_| Heis {
                a: next(),
                b: next(),
                c: next(),
            })
            .collect();
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            let want = scan(&heis, kind);
            let mut xs = gpu.upload(&heis)?;
            let into = gpu.download(&gpu.scan(&xs, kind, ScanAlgorithm::Auto)?)?;
            gpu.scan_in_place(&mut xs, kind, ScanAlgorithm::Auto)?;
            for (what, got) in [("into", into), ("in place", gpu.download(&xs)?)] {
                if got != want {
                    eprintln!("scan 12-byte {what} n = {n} {kind:?}: MISMATCH");
                    failures += 1;
                }
            }
        }
    }
    Ok(failures)
}

/// Along axes: rows over several tiles whose strips end one row short of whole vector runs,
/// short rows, few columns, columns, a middle axis and one long row; the affine monoid in order
/// (`Strips`, `Auto`), ArgMax lifted from f32 items 0 to 2 items past a 16-byte boundary.
/// Returns the number of mismatches.
fn axes(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let shapes: [(&[usize], &[usize]); 6] = [
        (&[3, 70_655], &[1]),
        (&[1000, 3], &[1]),
        (&[700, 4], &[0]),
        (&[33, 300], &[0]),
        (&[5, 17, 31], &[1]),
        (&[70_001], &[0]),
    ];
    let mut failures = 0;
    for (shape, axes) in shapes {
        let n: usize = shape.iter().product();
        let items: Vec<Affine> = (0..n)
            .map(|_| Affine {
                a: next() | 1,
                b: next(),
            })
            .collect();
        let want = fold_axes(&items, shape, axes).expect("valid shape");
        let xs = gpu.upload(&items)?;
        for alg in [AxisAlgorithm::Strips, AxisAlgorithm::Auto] {
            let got = gpu.reduce_axes(&xs, shape, axes, alg)?;
            if gpu.download(&got)? != want {
                eprintln!("MISMATCH axes {alg:?} {shape:?} along {axes:?}");
                failures += 1;
            }
        }
        let logits: Vec<f32> = (0..n + 2).map(|_| (next() % 1000) as f32).collect();
        let all = gpu
            .stream()
            .clone_htod(&logits)
            .map_err(driver("uploading the sanitizer items"))?;
        for skip in 0..3 {
            let host: Vec<ArgMax> = (logits[skip..skip + n].iter().enumerate())
                .map(|(i, &x)| ArgMax::lift(x, i as u64))
                .collect();
            let want = fold_axes(&host, shape, axes).expect("valid shape");
            let items = all.slice(skip..skip + n);
            let got =
                gpu.reduce_axes_lifted::<ArgMax, f32>(&items, shape, axes, AxisAlgorithm::Auto)?;
            if gpu.download(&got)? != want {
                eprintln!("MISMATCH axes lifted ArgMax {shape:?} along {axes:?}, {skip} past");
                failures += 1;
            }
        }
    }
    Ok(failures)
}
