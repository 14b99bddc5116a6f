//! Items past the 72 bytes the README says were tested: a const-generic keep-last record
//! (`reduce_tests::monoids::wide::Record`) of 128, 256 and 512 bytes, through NVRTC and on the
//! GPU, plain and segmented, bit for bit against the sequential fold; their scans' kernels compile
//! (a 512-byte value once passed the 48 KiB of static shared memory).
//!
//! With default parameters SegShuffle's owner form once did not compile from 224-byte items (its
//! static shared memory passed 48 KiB), so `Auto` in the owner form failed, and plain `Shuffle`
//! and `Auto` refused 512-byte items. Both now shrink their defaults to fit, and `Auto` takes
//! SegMerge where SegShuffle cannot fit at all, and past SegMerge's static arrays too (1024-byte
//! values) SegHeads by offsets and Tb2Seg by u32 owners; the paper's algorithms may refuse large
//! items with an `InvalidConfig` that names shared memory (`reduce_tests::sweep::refused`). The
//! scans take 1024-byte values too (their warps' values once sized for 32 warps, whatever the
//! block) and 2048-byte ones (their look-back then keeps nothing in shared memory), and
//! segmented `Auto` 2048-byte ones (SegHeads' block scan sized by its warps), by owners too (they
//! become CSR offsets first) where no owner-form kernel holds the values.
//!
//! GPU tests skip without a device, and fail under `REDUCE_REQUIRE_GPU=1`.

use reduce_cuda::{SegAlgorithm, SegConfig};
use reduce_tests::monoids::wide::{Record1024, Record128, Record256, Record512};
use reduce_tests::sweep::{check_layouts, check_layouts_with, check_plain, every_kernel_compiles};
use reduce_tests::{gpu, require_nvrtc};

#[test]
fn nvrtc_record128() {
    if require_nvrtc() {
        every_kernel_compiles::<Record128>();
    }
}

#[test]
fn nvrtc_record256() {
    if require_nvrtc() {
        every_kernel_compiles::<Record256>();
    }
}

#[test]
fn nvrtc_record512() {
    if require_nvrtc() {
        every_kernel_compiles::<Record512>();
    }
}

/// Plain sizes for items past the 72 bytes the README says were tested.
const LARGE_ITEM_SIZES: [usize; 8] = [0, 1, 2, 31, 33, 257, 4097, 65_537];

/// 128-byte items, every plain algorithm with default parameters (DiffWarps refuses them: it
/// needs 270336 bytes of shared memory).
#[test]
fn plain_record128_128_bytes() {
    if let Some(gpu) = gpu() {
        check_plain::<Record128>(&gpu, &LARGE_ITEM_SIZES, 8);
    }
}

/// 256-byte items (Tb4Warp, Matrix, PersistentMatrix and DiffWarps refuse them).
#[test]
fn plain_record256_256_bytes() {
    if let Some(gpu) = gpu() {
        check_plain::<Record256>(&gpu, &LARGE_ITEM_SIZES, 9);
    }
}

/// 512-byte items (Tb2 refuses them too; Shuffle shrinks its tile group).
#[test]
fn plain_record512_512_bytes() {
    if let Some(gpu) = gpu() {
        check_plain::<Record512>(&gpu, &LARGE_ITEM_SIZES, 10);
    }
}

/// 2048-byte items: `Auto` and `Shuffle` shrink to one warp a block, and so does the portable
/// mode, which also gives the sequential fold (an exact monoid).
#[test]
fn plain_record2048_2048_bytes() {
    use reduce_tests::monoids::wide::Record2048;
    use reduce_tests::Random;
    if let Some(gpu) = gpu() {
        check_plain::<Record2048>(&gpu, &LARGE_ITEM_SIZES, 12);
        for n in LARGE_ITEM_SIZES {
            let items = Record2048::random_vec(n, 13 ^ n as u64);
            let xs = gpu.upload(&items).unwrap();
            let got = gpu.reduce(&xs, reduce_cuda::Config::default().portable());
            assert!(
                got.unwrap() == reduce_core::fold(&items),
                "portable, n = {n}"
            );
        }
    }
}

/// 2048-byte values (`Auto`: SegHeads, which turns owners into offsets first), trusted and
/// validated, u32 and u64 CSR offsets and owners, against the sequential fold of each segment;
/// a validated call names a bad owner. Layouts: one segment, empty ones at both ends and
/// inside, a segment an item, and 50 000 segments of which one in ten holds an item (long runs
/// of empty segments between owners).
#[test]
fn segmented_record2048_both_forms() {
    use reduce_core::{fold_segments, LayoutError};
    use reduce_tests::monoids::wide::Record2048;
    use reduce_tests::Random;
    if let Some(gpu) = gpu() {
        let n = 5000u32;
        let items = Record2048::random_vec(n as usize, 17);
        let xs = gpu.upload(&items).unwrap();
        let sparse: Vec<u32> = (0..=50_000u32).map(|s| s.div_ceil(10)).collect();
        for offsets in [
            vec![0, n],
            vec![0, 0, 1, 700, 700, 4095, n, n],
            (0..=n).collect(),
            sparse,
        ] {
            let segments = offsets.len() - 1;
            let want = fold_segments(&items, &offsets).unwrap();
            let owner: Vec<u32> = (0..segments as u32)
                .flat_map(|s| {
                    std::iter::repeat_n(s, (offsets[s as usize + 1] - offsets[s as usize]) as usize)
                })
                .collect();
            let widen = |v: &[u32]| v.iter().map(|&o| o as u64).collect::<Vec<u64>>();
            let (d_offsets, d_wide) = (
                gpu.upload(&offsets).unwrap(),
                gpu.upload(&widen(&offsets)).unwrap(),
            );
            let (d_owner, d_wide_owner) = (
                gpu.upload(&owner).unwrap(),
                gpu.upload(&widen(&owner)).unwrap(),
            );
            for config in [SegConfig::default(), SegConfig::default().trusted()] {
                let what = format!("{segments} segments, {config:?}");
                let got = gpu.reduce_segments(&xs, &d_offsets, config).unwrap();
                assert!(gpu.download(&got).unwrap() == want, "u32 offsets, {what}");
                let got = gpu.reduce_segments(&xs, &d_wide, config).unwrap();
                assert!(gpu.download(&got).unwrap() == want, "u64 offsets, {what}");
                let got = gpu
                    .reduce_by_owner(&xs, &d_owner, segments, config)
                    .unwrap();
                assert!(gpu.download(&got).unwrap() == want, "u32 owners, {what}");
                let got = gpu
                    .reduce_by_owner(&xs, &d_wide_owner, segments, config)
                    .unwrap();
                assert!(gpu.download(&got).unwrap() == want, "u64 owners, {what}");
            }
        }
        // One owner out of range, then one out of order: the validated call names each.
        let segments = (n / 10) as usize;
        let error_of = |owner: &[u32]| {
            let d_owner = gpu.upload(owner).unwrap();
            match gpu.reduce_by_owner(&xs, &d_owner, segments, SegConfig::default()) {
                Err(reduce_cuda::Error::Layout(e)) => e,
                other => panic!("not a layout error: {:?}", other.map(|_| ())),
            }
        };
        let mut owner: Vec<u32> = (0..n).map(|i| i / 10).collect();
        owner[4321] = n / 10;
        let e = error_of(&owner);
        assert!(
            matches!(e, LayoutError::OwnerOutOfRange { index: 4321, .. }),
            "{e:?}"
        );
        owner[4321] = 0;
        let e = error_of(&owner);
        assert!(
            matches!(e, LayoutError::OwnerNotSorted { index: 4321, .. }),
            "{e:?}"
        );
    }
}

/// Items past the 72 bytes the README says were tested, on a few layouts.
const LARGE_ITEM_LAYOUTS: [&str; 4] = [
    "S = 0, N = 0",
    "N = 1 among empties",
    "tile lengths, three of each, then a size 1",
    "S = 4097, lengths 0..6",
];

/// Every SegAlgorithm once, validated, default parameters (SegShuffle as `Auto`, which is
/// SegShuffle here): for the items whose kernels NVRTC takes long, and fails slowly, on.
fn default_configs() -> Vec<SegConfig> {
    SegAlgorithm::ALL
        .into_iter()
        .filter(|&a| a != SegAlgorithm::SegShuffle)
        .chain([SegAlgorithm::Auto])
        .map(SegConfig::new)
        .collect()
}

/// 128-byte items: every configuration of `reduce_tests::configs::seg_configs` works.
#[test]
fn segmented_record128_128_bytes() {
    if let Some(gpu) = gpu() {
        check_layouts::<Record128>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 3000);
    }
}

/// 256-byte items: every default configuration works, or (the paper's algorithms) refuses the
/// size with a clear error.
#[test]
fn segmented_record256_256_bytes() {
    if let Some(gpu) = gpu() {
        check_layouts_with::<Record256>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 4000, &default_configs());
    }
}

/// 512-byte items: as above.
#[test]
fn segmented_record512_512_bytes() {
    if let Some(gpu) = gpu() {
        check_layouts_with::<Record512>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 5000, &default_configs());
    }
}

/// The scans of items past 72 bytes compile (their shared memory fits with default tiles).
#[test]
fn nvrtc_scans_of_large_items() {
    if require_nvrtc() {
        let config = reduce_cuda::ScanConfig::default();
        let arch = reduce_tests::CI_ARCH;
        reduce_cuda::testing::compile_scan_kernels::<Record128>(config, arch).unwrap();
        reduce_cuda::testing::compile_scan_kernels::<Record256>(config, arch).unwrap();
        reduce_cuda::testing::compile_scan_kernels::<Record512>(config, arch).unwrap();
    }
}

/// A compile of 1024-byte values that succeeds or is refused with an `InvalidConfig` that names
/// shared memory (NVRTC's "too much shared data" no longer reaches the caller as a compile
/// error).
fn compiles_or_refuses_clearly(what: String, got: reduce_cuda::Result<()>) {
    match got {
        Ok(()) => {}
        Err(reduce_cuda::Error::InvalidConfig { reason, .. })
            if reason.contains("shared memory") => {}
        Err(e) => panic!("{what}: {e}"),
    }
}

/// 1024-byte values: past the static shared memory of SegShuffle and SegMerge (about 650 bytes).
/// `Auto` takes SegHeads by offsets and Tb2Seg by owners, which compile; every other reduction
/// kernel compiles or is refused clearly ([`compiles_or_refuses_clearly`]).
#[test]
fn nvrtc_record1024_auto_or_a_clear_refusal() {
    use reduce_cuda::testing::{compile_kernel, compile_seg_kernel, compile_seg_kernel_for};
    use reduce_cuda::{Algorithm, Config};
    if !require_nvrtc() {
        return;
    }
    let arch = reduce_tests::CI_ARCH;
    compile_kernel::<Record1024>(Config::default(), arch).unwrap();
    for offsets_form in [false, true] {
        compile_seg_kernel::<Record1024>(SegConfig::default(), offsets_form, arch).unwrap();
    }
    compile_seg_kernel_for::<Record1024, u64>(SegConfig::default(), true, arch).unwrap();
    let clear = compiles_or_refuses_clearly;
    for algorithm in Algorithm::ALL {
        clear(
            format!("plain {algorithm}"),
            compile_kernel::<Record1024>(Config::new(algorithm), arch),
        );
    }
    for algorithm in SegAlgorithm::ALL {
        for offsets_form in [false, true] {
            let got =
                compile_seg_kernel::<Record1024>(SegConfig::new(algorithm), offsets_form, arch);
            clear(format!("{algorithm} (offsets form: {offsets_form})"), got);
        }
    }
}

/// Every scan of 1024-byte values compiles (plain, by offsets and by keys, u32 and u64; every
/// algorithm at its default block, and the portable mode); at 1024 threads, refused clearly.
#[test]
fn nvrtc_record1024_scans() {
    use reduce_cuda::testing::compile_scan_kernels;
    use reduce_cuda::{ScanAlgorithm, ScanConfig};
    if !require_nvrtc() {
        return;
    }
    let arch = reduce_tests::CI_ARCH;
    let algorithms = ScanAlgorithm::ALL.into_iter().chain([ScanAlgorithm::Auto]);
    for config in algorithms
        .map(ScanConfig::new)
        .chain([ScanConfig::default().portable()])
    {
        let got = compile_scan_kernels::<Record1024>(config, arch);
        got.unwrap_or_else(|e| panic!("scan {config:?}: {e}"));
    }
    // A block of 32 warps holds their 32 values besides the look-back's: past 48 KiB, refused
    // (clearly).
    let wide_block = ScanConfig::new(ScanAlgorithm::LookBack).block(1024);
    compiles_or_refuses_clearly(
        "scan at 1024 threads".into(),
        compile_scan_kernels::<Record1024>(wide_block, arch),
    );
}

/// 2 KiB values: plain `Auto`, `Shuffle` and the portable mode compile (their defaults shrink,
/// Shuffle's to 128 threads and a group of one block tile, and the block's values take a slot a
/// warp; the emulator folds 2 and 4 KiB values
/// through them: `emulated_plain`, `emulated_portable`).
#[test]
fn nvrtc_values_of_2_kib() {
    use reduce_cuda::testing::compile_kernel;
    use reduce_cuda::{Algorithm, Config};
    use reduce_tests::monoids::wide::Record2048;
    if !require_nvrtc() {
        return;
    }
    let arch = reduce_tests::CI_ARCH;
    for config in [
        Config::default(),
        Config::new(Algorithm::Shuffle),
        Config::default().portable(),
    ] {
        let got = compile_kernel::<Record2048>(config, arch);
        got.unwrap_or_else(|e| panic!("{config:?}: {e}"));
    }
}

/// 2 KiB values: segmented `Auto` (SegHeads, whose block scan keeps a value a warp and the
/// total, not 33) compiles by CSR offsets and by owners (the same kernels: the owners become
/// offsets first), u32 and u64.
#[test]
fn nvrtc_segmented_2_kib() {
    use reduce_cuda::testing::{compile_seg_kernel, compile_seg_kernel_for};
    use reduce_tests::monoids::wide::Record2048;
    if !require_nvrtc() {
        return;
    }
    let arch = reduce_tests::CI_ARCH;
    for offsets_form in [true, false] {
        compile_seg_kernel::<Record2048>(SegConfig::default(), offsets_form, arch).unwrap();
        compile_seg_kernel_for::<Record2048, u64>(SegConfig::default(), offsets_form, arch)
            .unwrap();
    }
}

/// 2 KiB values: every scan of `Auto` compiles (plain, by offsets and by keys, u32 and u64:
/// LookBack's kernel, whose look-back keeps nothing in shared memory past about 1 KiB; the
/// portable mode's, the same kernel on another tile, is left to the GPU test to keep CI short).
#[test]
fn nvrtc_scans_of_2_kib() {
    use reduce_cuda::testing::compile_scan_kernels;
    use reduce_cuda::ScanConfig;
    use reduce_tests::monoids::wide::Record2048;
    if !require_nvrtc() {
        return;
    }
    let arch = reduce_tests::CI_ARCH;
    compile_scan_kernels::<Record2048>(ScanConfig::default(), arch)
        .unwrap_or_else(|e| panic!("scans: {e}"));
}

/// Scans of 1024-byte values on the GPU (`Auto` and the portable mode; plain, by CSR offsets
/// and by keys, both kinds; 40 tiles and more, so the look-back crosses a group of 32 tiles),
/// equal to the sequential scans.
#[test]
fn scans_record1024_1024_bytes() {
    scans_of_large_values::<127>();
}

/// The same for 2048-byte values, whose look-back keeps nothing in shared memory (lane 0 reads
/// its group's aggregates, every entry before the group from global memory).
#[test]
fn scans_record2048_2048_bytes() {
    scans_of_large_values::<255>();
}

/// [`scans_record1024_1024_bytes`] for `Record<K>`.
fn scans_of_large_values<const K: usize>() {
    use reduce_core::{scan, scan_by_key, scan_segments, Scan};
    use reduce_cuda::{ScanAlgorithm, ScanConfig};
    use reduce_tests::monoids::wide::Record;
    use reduce_tests::Random;
    let Some(gpu) = gpu() else { return };
    let n = 40 * 256 + 3;
    let xs = Record::<K>::random_vec(n, 41);
    let offsets: Vec<u32> = vec![0, 1, 700, 700, 2500, 9000, n as u32 - 1, n as u32];
    let keys: Vec<u32> = (0..n).map(|i| (i / 300 % 3) as u32).collect();
    let (d_xs, d_offsets, d_keys) = (
        gpu.upload(&xs).unwrap(),
        gpu.upload(&offsets).unwrap(),
        gpu.upload(&keys).unwrap(),
    );
    let auto = ScanConfig::new(ScanAlgorithm::Auto);
    for config in [auto, auto.portable()] {
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            let what = format!(
                "{} bytes, {config:?} {kind:?}",
                std::mem::size_of::<Record<K>>()
            );
            let got = gpu
                .download(&gpu.scan(&d_xs, kind, config).unwrap())
                .unwrap();
            assert!(got == scan(&xs, kind), "{what}: plain");
            let got = gpu.scan_segments(&d_xs, &d_offsets, kind, config).unwrap();
            let want = scan_segments(&xs, &offsets, kind).unwrap();
            assert!(gpu.download(&got).unwrap() == want, "{what}: by offsets");
            let got = gpu.scan_by_key(&d_xs, &d_keys, kind, config).unwrap();
            let want = scan_by_key(&xs, &keys, kind).unwrap();
            assert!(gpu.download(&got).unwrap() == want, "{what}: by keys");
        }
    }
}

/// 1024-byte values on the GPU: `Auto` (SegHeads by offsets, Tb2Seg by owners) and those two
/// asked for, against the sequential fold.
#[test]
fn segmented_record1024_1024_bytes() {
    if let Some(gpu) = gpu() {
        let configs = [
            SegAlgorithm::Auto,
            SegAlgorithm::SegHeads,
            SegAlgorithm::Tb2Seg,
        ]
        .map(SegConfig::new);
        check_layouts_with::<Record1024>(&gpu, Some(&LARGE_ITEM_LAYOUTS), 6000, &configs);
    }
}
