//! Items past the 72 bytes the README says were tested: a const-generic keep-last record
//! (`reduce_tests::monoids::wide::Record`) of 128, 256 and 512 bytes, through NVRTC and on the
//! GPU, plain and segmented, bit for bit against the sequential fold; their scans' kernels compile
//! (a 512-byte value once passed the 48 KiB of static shared memory).
//!
//! With default parameters SegShuffle's owner form once did not compile from 224-byte items (its
//! static shared memory passed 48 KiB), so `Auto` in the owner form failed, and plain `Shuffle`
//! and `Auto` refused 512-byte items. Both now shrink their defaults to fit, and `Auto` takes
//! SegMerge where SegShuffle cannot fit at all, and past SegMerge's static arrays too (1024-byte
//! values) SegHeads by offsets and Tb2Seg by owners; the paper's algorithms may refuse large items
//! with an `InvalidConfig` that names shared memory (`reduce_tests::sweep::refused`).
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

/// 1024-byte values: past the static shared memory of SegShuffle, SegMerge and the scans (about
/// 700 bytes). `Auto` takes SegHeads by offsets and Tb2Seg by owners, which compile; every other
/// kernel compiles or is refused with an `InvalidConfig` that names shared memory (NVRTC's
/// "too much shared data" no longer reaches the caller as a compile error).
#[test]
fn nvrtc_record1024_auto_or_a_clear_refusal() {
    use reduce_cuda::testing::{
        compile_kernel, compile_scan_kernels, compile_seg_kernel, compile_seg_kernel_for,
    };
    use reduce_cuda::{Algorithm, Config, Error, ScanAlgorithm, ScanConfig};
    if !require_nvrtc() {
        return;
    }
    let arch = reduce_tests::CI_ARCH;
    compile_kernel::<Record1024>(Config::default(), arch).unwrap();
    for offsets_form in [false, true] {
        compile_seg_kernel::<Record1024>(SegConfig::default(), offsets_form, arch).unwrap();
    }
    compile_seg_kernel_for::<Record1024, u64>(SegConfig::default(), true, arch).unwrap();
    let clear = |what: String, got: reduce_cuda::Result<()>| match got {
        Ok(()) => {}
        Err(Error::InvalidConfig { reason, .. }) if reason.contains("shared memory") => {}
        Err(e) => panic!("{what}: {e}"),
    };
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
    for algorithm in ScanAlgorithm::ALL.into_iter().chain([ScanAlgorithm::Auto]) {
        let got = compile_scan_kernels::<Record1024>(ScanConfig::new(algorithm), arch);
        clear(format!("scan {algorithm:?}"), got);
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
