//! Every generated kernel compiles with NVRTC: every algorithm family x every test monoid and
//! built-in. Needs libnvrtc only (no GPU): CI runs it with REDUCE_REQUIRE_NVRTC=1.

use reduce_cuda::testing::compile_kernel;
use reduce_cuda::testing::{
    compile_seg_kernel, compile_seg_kernel_for, seg_dynamic_smem, seg_dynamic_smem_lifted,
    seg_kernel_source, seg_kernel_source_lifted, seg_kernel_variants_at, seg_kernel_variants_for,
    seg_kernel_variants_lifted, seg_kernel_variants_lifted_at,
};
use reduce_cuda::{kernel_source, Algorithm, Config, CudaMonoid, Max, Min, Product, Sum};
use reduce_cuda::{SegAlgorithm, SegConfig, SegIndex};
use reduce_tests::monoids::small::AffCount;
use reduce_tests::*;

fn compiles_everywhere<M: CudaMonoid>() {
    for algorithm in Algorithm::ALL {
        if let Err(e) = compile_kernel::<M>(Config::new(algorithm), CI_ARCH) {
            panic!("{algorithm} for {} does not compile:\n{e}", M::CUDA_NAME);
        }
    }
    // The portable grouping, at its defaults and with two runs per lane on small blocks.
    let run = reduce_cuda::reduce_core::portable::run_len::<M>() as u32;
    for config in [
        Config::default().portable(),
        Config::new(Algorithm::Shuffle)
            .portable()
            .block(64)
            .items_per_thread(2 * run)
            .tile_group(4),
    ] {
        if let Err(e) = compile_kernel::<M>(config, CI_ARCH) {
            panic!("{config:?} for {} does not compile:\n{e}", M::CUDA_NAME);
        }
    }
    for algorithm in SegAlgorithm::ALL {
        for offsets_form in [false, true] {
            if let Err(e) =
                compile_seg_kernel::<M>(SegConfig::new(algorithm), offsets_form, CI_ARCH)
            {
                panic!(
                    "{algorithm} (offsets form: {offsets_form}) for {} does not compile:\n{e}",
                    M::CUDA_NAME
                );
            }
        }
    }
    // SegShuffle's second variant for u32 offsets (the one the runtime runs where the first
    // spills).
    let config = SegConfig::new(SegAlgorithm::SegShuffle);
    let variants = seg_kernel_variants_for::<M, u32>(config, true).unwrap();
    assert_eq!(
        variants.len(),
        2,
        "SegShuffle with u32 offsets has two kernels"
    );
    if let Err(e) = reduce_cuda::testing::check_compiles(&variants[1], CI_ARCH) {
        panic!(
            "SegShuffle's second variant for {} does not compile:\n{e}",
            M::CUDA_NAME
        );
    }
    // The portable segmented kernel: both forms, u32 and u64 layouts, small blocks too.
    for offsets_form in [false, true] {
        for config in [
            SegConfig::default().portable(),
            SegConfig::new(SegAlgorithm::SegShuffle)
                .portable()
                .block(32),
        ] {
            let compiled = compile_seg_kernel_for::<M, u32>(config, offsets_form, CI_ARCH)
                .and_then(|()| compile_seg_kernel_for::<M, u64>(config, offsets_form, CI_ARCH));
            if let Err(e) = compiled {
                panic!(
                    "{config:?} (offsets form: {offsets_form}) for {} does not compile:\n{e}",
                    M::CUDA_NAME
                );
            }
        }
    }
    // SegBlocks' smaller blocks (the defaults of shorter mean lengths).
    for block in [32, 64, 128] {
        let config = SegConfig::new(SegAlgorithm::SegBlocks).block(block);
        if let Err(e) = compile_seg_kernel::<M>(config, true, CI_ARCH) {
            panic!(
                "SegBlocks on {block} threads for {} does not compile:\n{e}",
                M::CUDA_NAME
            );
        }
    }
    // u64 layouts (all but the paper's algorithms).
    for offsets_form in [false, true] {
        for algorithm in [
            SegAlgorithm::SegMerge,
            SegAlgorithm::SegPipeline,
            SegAlgorithm::SegHeads,
            SegAlgorithm::SegBlocks,
            SegAlgorithm::Auto,
        ] {
            if let Err(e) =
                compile_seg_kernel_for::<M, u64>(SegConfig::new(algorithm), offsets_form, CI_ARCH)
            {
                panic!(
                    "{algorithm} u64 (offsets form: {offsets_form}) for {} does not compile:\n{e}",
                    M::CUDA_NAME
                );
            }
        }
    }
}

macro_rules! compile_tests {
    ($($name:ident: $m:ty,)*) => {$(
        #[test]
        fn $name() {
            if require_nvrtc() {
                compiles_everywhere::<$m>();
            }
        }
    )*};
}

compile_tests! {
    affine: Affine,
    mat2: Mat2,
    keep_first: KeepFirst,
    keep_last: KeepLast,
    rolling_hash: RollingHash,
    perm4_one_byte: Perm4,
    affine8_two_bytes: Affine8,
    affine16_four_bytes: Affine16,
    tri_twelve_bytes: Tri,
    mat2w_thirty_two_bytes: Mat2w,
    mat3_seventy_two_bytes: Mat3,
    aligned64_over_aligned: reduce_tests::monoids::wide::Aligned64,
    sum_f32: Sum<f32>,
    sum_f64: Sum<f64>,
    sum_i64: Sum<i64>,
    sum_u8: Sum<u8>,
    product_i16: Product<i16>,
    min_f32: Min<f32>,
    max_f64: Max<f64>,
    min_u64: Min<u64>,
    sum_usize: Sum<usize>,
    max_isize: Max<isize>,
}

#[test]
fn non_default_parameters_compile() {
    if !require_nvrtc() {
        return;
    }
    let configs = [
        Config::new(Algorithm::Tb2).block(64),
        Config::new(Algorithm::Tb4Warp).block(128),
        Config::new(Algorithm::Matrix).block(128).matrix_width(16),
        Config::new(Algorithm::PersistentMatrix)
            .matrix_width(64)
            .grid(7),
        Config::new(Algorithm::DiffWarps)
            .producers(4)
            .matrix_width(16),
        Config::new(Algorithm::Shuffle)
            .block(512)
            .items_per_thread(5),
    ];
    for config in configs {
        compile_kernel::<Affine>(config, CI_ARCH).unwrap_or_else(|e| panic!("{config:?}: {e}"));
        compile_kernel::<reduce_cuda::Sum<u32>>(config, CI_ARCH)
            .unwrap_or_else(|e| panic!("{config:?}: {e}"));
    }
}

/// A long literal repeat is filled on the device (`r_fill`), not written out element by element.
#[derive(Clone, Copy, Debug, PartialEq, reduce_cuda::Monoid)]
#[repr(C)]
#[monoid(
    identity = Wide { v: [0; 100] },
    combine = |l, r| Wide { v: [l.v[99].wrapping_add(r.v[0]); 100] }
)]
struct Wide {
    v: [u32; 100],
}

#[test]
fn long_literal_repeats_compile() {
    if !require_nvrtc() {
        return;
    }
    assert!(Wide::cuda_source().contains("r_fill<unsigned int, 100>"));
    compile_kernel::<Wide>(Config::default(), CI_ARCH).unwrap_or_else(|e| panic!("{e}"));
}

/// An architecture NVRTC does not know is a compile error that names it: the options and
/// NVRTC's own log come with the code.
#[test]
fn an_unknown_architecture_is_named_in_the_error() {
    if !require_nvrtc() {
        return;
    }
    match compile_kernel::<Sum<u32>>(Config::default(), "sm_999") {
        Err(reduce_cuda::Error::Compile(failure)) => {
            assert!(
                failure.options.iter().any(|o| o.contains("sm_999")),
                "{failure:?}"
            );
            assert!(
                failure.log.contains("NVRTC_ERROR_INVALID_OPTION"),
                "{failure:?}"
            );
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
    // A NUL byte in an option: an error, not a panic in cudarc's C strings.
    let e = compile_kernel::<Sum<u32>>(Config::default(), "sm_90\0");
    assert!(matches!(e, Err(reduce_cuda::Error::Compile(_))), "{e:?}");
}

/// Whether the register and frame counts the tests below pin hold here: NVRTC is there and is
/// 13.0, the version they were measured with (the CI pins it).
fn counts_hold() -> bool {
    if !require_nvrtc() {
        return false;
    }
    let version = reduce_cuda::testing::nvrtc_version().expect("NVRTC version");
    if version != (13, 0) {
        eprintln!("register counts measured with NVRTC 13.0, this is {version:?}: not checked");
        return false;
    }
    true
}

/// The local memory (frame) of `kernel` in each of `sources`, compiled for CI_ARCH.
fn frame_sizes(
    sources: impl IntoIterator<Item = reduce_cuda::KernelSource>,
    kernel: &str,
) -> Vec<u32> {
    sources
        .into_iter()
        .map(|source| {
            let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
            cubin::frame_size(&cubin, kernel).expect("the kernel's frame size")
        })
        .collect()
}

/// SegShuffle's u32-offsets kernel that loads a tile's first offsets ahead of its marks (the
/// first of `seg_kernel_variants_for`) keeps out of local memory for one-word sums and 8- and
/// 16-byte monoids under NVRTC 13.0 for sm_90, where the runtime would otherwise run the kernel
/// without the load ahead (3-9% slower on short CSR segments: decision record 0007 in
/// docs/decisions/). Register allocation is the compiler's: a change of the kernel that makes it
/// spill fails here, in CI, with no GPU. Mat2 (16 bytes) spilled 24 bytes with the load ahead
/// until the kernel took its head bits and the ballot warp scan (decision record 0011). Lifted
/// ArgMax from f32 under `Auto` (16 items of 8 bytes a thread) spilled under the register cap
/// of 4 blocks per SM; it is capped for 3 now (decision record 0053). Affine with 20 items per
/// thread spills with the load ahead (40 bytes) and not without: the case the fallback is for,
/// and the proof that the frame is read. The counts hold for NVRTC 13.0 (the CI pins it).
#[test]
fn seg_shuffle_load_ahead_kernel_keeps_out_of_local_memory() {
    if !counts_hold() {
        return;
    }
    fn frames<M: CudaMonoid>() -> Vec<u32> {
        frames_with::<M>(SegConfig::new(SegAlgorithm::SegShuffle))
    }
    fn frames_with<M: CudaMonoid>(config: SegConfig) -> Vec<u32> {
        frames_of(seg_kernel_variants_for::<M, u32>(config, true).unwrap())
    }
    fn frames_of(sources: Vec<reduce_cuda::KernelSource>) -> Vec<u32> {
        frame_sizes(sources, "reduce_seg_shuffle")
    }
    assert_eq!(
        frames::<Sum<f32>>(),
        [0, 0],
        "Sum<f32>: with, without the load ahead"
    );
    assert_eq!(frames::<reduce_cuda::Sum<u32>>(), [0, 0], "Sum<u32>");
    assert_eq!(
        frames::<Affine>(),
        [0, 0],
        "Affine (44 bytes of spill in an earlier kernel)"
    );
    assert_eq!(frames::<Max<f32>>(), [0, 0], "Max<f32>");
    assert_eq!(frames::<Sum<f64>>(), [0, 0], "Sum<f64>");
    assert_eq!(
        frames::<Mat2>(),
        [0, 0],
        "Mat2 (24 bytes of spill before the head bits and the ballot warp scan)"
    );
    let auto = SegConfig::new(SegAlgorithm::Auto);
    assert_eq!(
        frames_of(
            seg_kernel_variants_lifted::<monoids::lang::ArgMax, f32, u32>(auto, true).unwrap()
        ),
        [0, 0],
        "lifted ArgMax from f32, Auto (16 items)"
    );
    let twenty =
        frames_with::<Affine>(SegConfig::new(SegAlgorithm::SegShuffle).items_per_thread(20));
    assert!(
        twenty[0] > 0 && twenty[1] == 0,
        "Affine, 20 items per thread: {twenty:?}"
    );
    // The owner form (one kernel, no load ahead) keeps out of local memory too, with its
    // budgeted fills of empty segments.
    fn owner_frames<M: CudaMonoid>() -> Vec<u32> {
        let config = SegConfig::new(SegAlgorithm::SegShuffle);
        frames_of(seg_kernel_variants_for::<M, u32>(config, false).unwrap())
    }
    assert_eq!(owner_frames::<Sum<f32>>(), [0], "owner form, Sum<f32>");
    assert_eq!(owner_frames::<Sum<f64>>(), [0], "owner form, Sum<f64>");
    assert_eq!(owner_frames::<Affine>(), [0], "owner form, Affine");
    assert_eq!(owner_frames::<Mat2>(), [0], "owner form, Mat2");
}

/// The portable segmented kernel (`SegConfig::portable`, u32 layouts; trusted by offsets,
/// validated by offsets — its kernel built with the offsets' check — and the owner form) keeps
/// out of local memory under its register cap (80 registers: 3 blocks of 256 per SM) for
/// one-word sums and the 8-byte affine monoid, trusted; f64 sums by offsets spill 16 bytes
/// trusted (8 before the marks' one-round first batch, decision 0067). With the check, f32 and
/// f64 sums and the affine monoid spill 8 bytes: the block's last tile, the tile loop's bound,
/// stored once and read back at the loop's tests (SASS: no local access in the fold or the
/// marks; decision 0090). These are today's counts under NVRTC 13.0 for
/// sm_90, so that a change of the kernel that makes it spill fails here, with no GPU (a spill in
/// the fold's unrolled items costs every item: decisions 0047 and 0067 in docs/decisions/).
#[test]
fn portable_segmented_kernel_keeps_out_of_local_memory() {
    if !counts_hold() {
        return;
    }
    fn frames<M: CudaMonoid>() -> Vec<u32> {
        let portable = SegConfig::default().portable();
        let sources = [
            (portable.trusted(), true),
            (portable, true),
            (portable, false),
        ]
        .into_iter()
        .flat_map(|(config, offsets_form)| {
            seg_kernel_variants_for::<M, u32>(config, offsets_form).unwrap()
        });
        frame_sizes(sources, "reduce_seg_portable")
    }
    assert_eq!(
        frames::<Sum<f32>>(),
        [0, 8, 0],
        "Sum<f32>: offsets trusted, validated, owner form"
    );
    assert_eq!(frames::<Sum<u32>>(), [0, 0, 0], "Sum<u32>");
    assert_eq!(frames::<Affine>(), [0, 8, 0], "Affine");
    assert_eq!(frames::<Sum<f64>>(), [16, 8, 0], "Sum<f64>");
}

/// The blocks per SM LookBack's scan kernel reaches at its default tile (256 threads) on an H100 or an
/// H200 (228 KiB of shared memory per SM, 1 KiB of it reserved per block, 2048 threads, 64 K
/// registers), by the runtime's rule (`catalogue/caps.rs`, used by `ScanPlan::module`): the uncapped
/// kernel, or `scan_tiles` capped for the most blocks its shared memory allows, or one fewer,
/// where that compiles without local memory. Tiles resident per SM are what hides the look-back's
/// wait (docs/decisions/0063-scan-register-caps.md); these are today's counts, so that a change
/// that loses a block per SM fails here. The counts hold for NVRTC 13.0 (the CI pins it).
#[test]
fn scan_kernels_keep_their_blocks_per_sm() {
    if !counts_hold() {
        return;
    }
    const SHARED_PER_SM: usize = 228 * 1024;
    const RESERVED: usize = 1024;
    // (registers, frame bytes, static shared bytes) of scan_tiles capped for `cap` (0: none).
    fn facts<M: CudaMonoid>(form: Option<bool>, cap: u32) -> (u32, u32, usize) {
        let config = reduce_cuda::ScanConfig::new(reduce_cuda::ScanAlgorithm::LookBack);
        let (source, shape) =
            reduce_cuda::testing::scan_kernel_source_capped::<M, u32>(config, form, cap).unwrap();
        assert_eq!(shape.0, 256, "the default tile's threads");
        let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
        let read = "the CUBIN's facts of scan_tiles";
        (
            cubin::registers(&cubin, "scan_tiles").expect(read),
            cubin::frame_size(&cubin, "scan_tiles").expect(read),
            cubin::shared_bytes(&cubin, "scan_tiles").expect(read),
        )
    }
    fn blocks<M: CudaMonoid>(form: Option<bool>) -> u32 {
        let config = reduce_cuda::ScanConfig::new(reduce_cuda::ScanAlgorithm::LookBack);
        let may_cap = reduce_cuda::testing::scan_may_cap::<M, u32>(config, form).unwrap();
        // 256 registers a warp at a time: a thread's count rounds up to 8.
        let by_registers = |r: u32| 65536 / (r.div_ceil(8) * 8 * 256);
        let (registers, frame, shared) = facts::<M>(form, 0);
        assert_eq!(frame, 0, "the uncapped kernel keeps out of local memory");
        let dynamic = reduce_cuda::testing::scan_dynamic_smem::<M, u32>(config, form).unwrap();
        let room = ((SHARED_PER_SM / (shared + dynamic + RESERVED)) as u32).min(8);
        let have = by_registers(registers).min(room);
        if !may_cap {
            return have;
        }
        for cap in (have + 1..=room).rev().take(2) {
            let (registers, frame, _) = facts::<M>(form, cap);
            if frame == 0 {
                assert!(
                    by_registers(registers) >= cap,
                    "{registers} registers under a cap of {cap}"
                );
                return cap;
            }
        }
        have
    }
    // (form, blocks per SM for f32 sums, affine maps, 2x2 matrices and 12-byte affine counts):
    // plain, by CSR offsets, by keys. Never capped: f32 scans by keys (a thread's 32 u32 keys, 128
    // bytes: the runtime's `scan_may_cap`). The 2x2 kernels by offsets and by keys spill under a
    // cap of 5. The 12-byte tiles stage 48 KiB in dynamic shared memory: 4 blocks.
    for (form, name, wanted) in [
        (None, "plain", [6, 5, 5, 4]),
        (Some(true), "by offsets", [6, 5, 4, 4]),
        (Some(false), "by keys", [4, 5, 4, 4]),
    ] {
        let got = [
            blocks::<Sum<f32>>(form),
            blocks::<Affine>(form),
            blocks::<Mat2>(form),
            blocks::<AffCount>(form),
        ];
        let monoids = ["f32 sum", "affine", "2x2", "12-byte"];
        for ((monoid, got), wanted) in monoids.iter().zip(got).zip(wanted) {
            assert!(
                got >= wanted,
                "{monoid} scan {name}: {got} blocks per SM, fewer than {wanted}"
            );
        }
    }
}

/// SegHeads' fold takes 39 registers uncapped for f32 sums (6 blocks of 256 threads an SM); the
/// runtime caps it (`R_MIN_BLOCKS`, catalogue/caps.rs) for the 8 blocks the threads allow, 4-5%
/// less GPU time on an H200 (decision record 0081). Under that cap the fold must keep out of local
/// memory for f32 and f64 sums and the affine monoid (else the runtime runs it uncapped), and 2x2
/// matrices spill (8 bytes) under caps of 8 and 7 blocks, the case the fallback is for. ArgMax
/// lifted from f32 at its default of 128 threads: 48 registers uncapped (10 blocks an SM, the
/// 40 warps of 256 threads capped for 5 blocks), no local memory; the caps its shared memory
/// allows (11 and 12 blocks) spill, so the runtime runs it uncapped (decision record 0085). The
/// counts hold for NVRTC 13.0.
#[test]
fn seg_heads_fold_fits_every_thread_slot() {
    if !counts_hold() {
        return;
    }
    fn facts<M: CudaMonoid>(cap: u32) -> (u32, u32) {
        let config = SegConfig::new(SegAlgorithm::SegHeads);
        let mut source =
            reduce_cuda::testing::seg_kernel_source_for::<M, u32>(config, true).unwrap();
        let uncapped = "#define R_MIN_BLOCKS 0\n";
        assert!(source.text.contains(uncapped), "the uncapped fold's define");
        source.text = source
            .text
            .replace(uncapped, &format!("#define R_MIN_BLOCKS {cap}\n"));
        let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
        let read = "the CUBIN's facts of reduce_seg_heads_fold";
        (
            cubin::registers(&cubin, "reduce_seg_heads_fold").expect(read),
            cubin::frame_size(&cubin, "reduce_seg_heads_fold").expect(read),
        )
    }
    let (registers, frame) = facts::<Sum<f32>>(0);
    assert!(
        frame == 0 && registers > 32,
        "uncapped f32: {registers} registers, frame {frame}"
    );
    for (monoid, (registers, frame)) in [
        ("f32 sum", facts::<Sum<f32>>(8)),
        ("f64 sum", facts::<Sum<f64>>(8)),
        ("affine", facts::<Affine>(8)),
    ] {
        assert!(
            frame == 0 && registers <= 32,
            "{monoid} capped for 8 blocks: {registers} registers, frame {frame}"
        );
    }
    for cap in [8, 7] {
        assert!(
            facts::<Mat2>(cap).1 > 0,
            "2x2 matrices spill under a cap of {cap}"
        );
    }
    let lifted = |cap: u32| {
        let config = SegConfig::new(SegAlgorithm::SegHeads);
        let mut source =
            reduce_cuda::testing::seg_kernel_variants_lifted_at::<monoids::lang::ArgMax, f32, u32>(
                config, true, 0,
            )
            .unwrap()
            .remove(0);
        assert!(
            source.text.contains("#define R_BLOCK 128\n"),
            "the lifted default block"
        );
        assert!(
            source.text.contains("#define R_MIN_BLOCKS 0\n"),
            "the uncapped fold's define"
        );
        source.text = source.text.replace(
            "#define R_MIN_BLOCKS 0\n",
            &format!("#define R_MIN_BLOCKS {cap}\n"),
        );
        let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
        let read = "the CUBIN's facts of the lifted fold";
        (
            cubin::registers(&cubin, "reduce_seg_heads_fold").expect(read),
            cubin::frame_size(&cubin, "reduce_seg_heads_fold").expect(read),
        )
    };
    assert_eq!(lifted(0), (48, 0), "lifted ArgMax, uncapped");
    assert!(
        lifted(11).1 > 0,
        "lifted ArgMax spills capped for 11 blocks"
    );
}

/// SegBlocks' kernel at its four default blocks, with its registers budgeted for values of up
/// to 8 bytes (`tuning::seg_blocks_min_blocks`: 64 at one warp, whose 32 resident blocks hold
/// 1024 threads, 40 at 64 and 128 threads, 48 at 256), keeps out of
/// local memory for aligned items, so that the budget is what runs: f32 and f64 sums, the
/// affine monoid, ArgMax and log-sum-exp lifted from f32, by u32 and u64 offsets. Left alone,
/// ptxas took 32-34 registers for the affine monoid and issued a lane's loads a few at a time;
/// the budget's count is above that (the test fails without the budget). With items 4 bytes
/// (f64: 8) past a 16-byte boundary (a vector more a lane) lifted ArgMax spills 8 bytes at 64
/// and 128 threads: the runtime runs the second variant, left to ptxas, which does not spill.
/// Larger values are left to ptxas, one variant (12-byte affine counts: no local memory there,
/// 32 bytes of it under a 40-register budget). The counts hold for NVRTC 13.0.
#[test]
fn seg_blocks_budget_keeps_out_of_local_memory() {
    if !counts_hold() {
        return;
    }
    // Per variant: (registers, frame).
    fn facts(sources: Vec<reduce_cuda::KernelSource>) -> Vec<(u32, u32)> {
        let read = "the CUBIN's facts of reduce_seg_blocks";
        sources
            .iter()
            .map(|source| {
                let cubin = reduce_cuda::testing::compile_cubin(source, CI_ARCH).unwrap();
                (
                    cubin::registers(&cubin, "reduce_seg_blocks").expect(read),
                    cubin::frame_size(&cubin, "reduce_seg_blocks").expect(read),
                )
            })
            .collect()
    }
    fn own<M: CudaMonoid, I: SegIndex>(config: SegConfig, at: u64) -> Vec<(u32, u32)> {
        facts(seg_kernel_variants_at::<M, I>(config, true, at).unwrap())
    }
    fn lifted<M: reduce_cuda::Lift<f32>>(config: SegConfig, at: u64) -> Vec<(u32, u32)> {
        facts(seg_kernel_variants_lifted_at::<M, f32, u32>(config, true, at).unwrap())
    }
    for block in [32, 64, 128, 256] {
        // 32 resident blocks at most: 1024 threads, 64 registers, at one warp a block.
        let budget = match block {
            32 => 64,
            256 => 48,
            _ => 40,
        };
        let config = SegConfig::new(SegAlgorithm::SegBlocks).block(block);
        for at in [0, 4] {
            for (monoid, variants) in [
                ("f32 sum", own::<Sum<f32>, u32>(config, at)),
                ("f32 sum, u64", own::<Sum<f32>, u64>(config, at)),
                ("f64 sum", own::<Sum<f64>, u32>(config, 2 * at)),
                ("affine", own::<Affine, u32>(config, at)),
                ("affine, u64", own::<Affine, u64>(config, at)),
                ("lifted ArgMax", lifted::<monoids::lang::ArgMax>(config, at)),
                (
                    "lifted log-sum-exp",
                    lifted::<monoids::lang::LogSumExp>(config, at),
                ),
            ] {
                let what = format!("{monoid}, {block} threads, items at {at}: {variants:?}");
                let [(registers, frame), (_, fallback_frame)] = variants[..] else {
                    panic!("{what}: not a budgeted kernel and its fallback");
                };
                assert!(registers > 34 && registers <= budget, "{what}");
                let spills = frame > 0;
                let known = monoid == "lifted ArgMax" && at == 4 && (64..256).contains(&block);
                assert_eq!(spills, known, "{what}: the budgeted kernel's local memory");
                if spills {
                    assert_eq!(fallback_frame, 0, "{what}: the fallback's local memory");
                }
            }
        }
        let variants = own::<AffCount, u32>(config, 0);
        assert!(
            matches!(variants[..], [(_, 0)]),
            "12-byte affine counts, {block} threads: {variants:?}"
        );
    }
}

/// LookAhead's kernel (`Auto`'s scans, one block of 320, 352 or 384 threads per SM) at the
/// default tile keeps out of local memory for 4-, 8-, 12- and 16-byte values, by key (each
/// thread holding its next tile's keys) for f32 sums with u32 and u64 keys, the affine monoid
/// with u64 keys and 2x2 matrices with u32 keys, and by offsets (a word of the heads' bitmap a
/// lane) for f32 sums, the affine monoid and 2x2 matrices.
#[test]
fn look_ahead_keeps_out_of_local_memory() {
    if !counts_hold() {
        return;
    }
    fn frame(source: reduce_cuda::KernelSource) -> u32 {
        let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
        cubin::frame_size(&cubin, "scan_ahead").expect("the CUBIN's facts of scan_ahead")
    }
    fn own<M: CudaMonoid, I: SegIndex>(form: Option<bool>) -> u32 {
        let config = reduce_cuda::ScanConfig::default();
        frame(
            reduce_cuda::testing::scan_kernel_source::<M, I>(config, form)
                .unwrap()
                .0,
        )
    }
    let frames = [
        own::<Sum<f32>, u32>(None),
        own::<Affine, u32>(None),
        own::<AffCount, u32>(None),
        own::<Mat2, u32>(None),
    ];
    assert_eq!(frames, [0, 0, 0, 0], "f32, affine, 12-byte, 2x2");
    let by_key = [
        own::<Sum<f32>, u32>(Some(false)),
        own::<Sum<f32>, u64>(Some(false)),
        own::<Affine, u64>(Some(false)),
        own::<Mat2, u32>(Some(false)),
    ];
    assert_eq!(
        by_key,
        [0, 0, 0, 0],
        "by key: f32 u32, f32 u64, affine u64, 2x2 u32"
    );
    let by_offsets = [
        own::<Sum<f32>, u32>(Some(true)),
        own::<Affine, u64>(Some(true)),
        own::<Mat2, u32>(Some(true)),
    ];
    assert_eq!(
        by_offsets,
        [0, 0, 0],
        "by offsets: f32 u32, affine u64, 2x2 u32"
    );
}

/// SegShuffle's shapes that change its shared-memory layout: odd items per thread (no padding
/// of the scan values), and a tile of 2^16 items (32-bit end positions in the offsets form).
#[test]
fn seg_shuffle_parameters_compile() {
    if !require_nvrtc() {
        return;
    }
    let base = SegConfig::new(SegAlgorithm::SegShuffle);
    let configs = [
        base.block(32).items_per_thread(1),
        base.block(96).items_per_thread(3),
        base.block(1024).items_per_thread(64),
    ];
    for offsets_form in [false, true] {
        for config in configs {
            compile_seg_kernel::<Affine>(config, offsets_form, CI_ARCH)
                .unwrap_or_else(|e| panic!("{config:?}: {e}"));
            compile_seg_kernel::<reduce_cuda::Sum<u32>>(config, offsets_form, CI_ARCH)
                .unwrap_or_else(|e| panic!("{config:?}: {e}"));
            // u64 layouts (two 16-byte loads per quad of offsets, or per pair of owners).
            compile_seg_kernel_for::<Affine, u64>(config, offsets_form, CI_ARCH)
                .unwrap_or_else(|e| panic!("{config:?} u64: {e}"));
        }
    }
}

/// The portable segmented kernel before sm_80 (no `redux.sync` there: the warp stage's bounds by
/// shuffles) and after, both forms.
#[test]
fn portable_segmented_compiles_for_every_architecture() {
    if !require_nvrtc() {
        return;
    }
    for arch in ["sm_75", "sm_80", "sm_90"] {
        for offsets_form in [false, true] {
            compile_seg_kernel_for::<Sum<f32>, u32>(
                SegConfig::default().portable(),
                offsets_form,
                arch,
            )
            .unwrap_or_else(|e| panic!("{arch} (offsets form: {offsets_form}): {e}"));
        }
    }
}

/// SegMerge's knobs at their limits, and for Ampere (its mbarrier wait differs from Hopper's).
#[test]
fn seg_merge_parameters_compile() {
    if !require_nvrtc() {
        return;
    }
    let base = SegConfig::new(SegAlgorithm::SegMerge);
    let configs = [
        base.block(32).items_per_thread(1).stages(3),
        base.block(1024).items_per_thread(4).stages(8),
        base.block(64).items_per_thread(64).stages(3),
    ];
    for offsets_form in [false, true] {
        for config in configs {
            compile_seg_kernel::<Affine>(config, offsets_form, CI_ARCH)
                .unwrap_or_else(|e| panic!("{config:?}: {e}"));
        }
        for arch in ["sm_80", "sm_89", "sm_90"] {
            compile_seg_kernel_for::<Mat2, u64>(base, offsets_form, arch)
                .unwrap_or_else(|e| panic!("{arch}: {e}"));
        }
    }
    let e = compile_seg_kernel::<Affine>(base.stages(2), true, CI_ARCH).unwrap_err();
    assert!(e.to_string().contains("stages 2"), "{e}");
    let e = compile_seg_kernel::<Affine>(base.items_per_thread(3), true, CI_ARCH).unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
    let e = compile_seg_kernel_for::<Affine, u64>(
        SegConfig::new(SegAlgorithm::MatrixSeg),
        true,
        CI_ARCH,
    )
    .unwrap_err();
    assert!(e.to_string().contains("u64"), "{e}");
}

#[test]
fn kernel_source_is_readable_and_complete() {
    let text = kernel_source::<Affine>(Algorithm::Matrix);
    assert!(
        text.contains("struct Affine"),
        "the monoid's struct is in the text"
    );
    assert!(text.contains("m_combine"), "the combine is in the text");
    assert!(
        text.contains("ORDER INVARIANT"),
        "the kernel states its order invariant"
    );
    assert!(
        text.contains("reduce_matrix"),
        "the entry point is in the text"
    );
    assert!(
        text.contains("#define R_W 32"),
        "parameters are spelled out"
    );
}

#[test]
fn an_invalid_configuration_is_an_error_not_a_kernel() {
    let e = compile_kernel::<Affine>(Config::new(Algorithm::Tb2).block(96), CI_ARCH).unwrap_err();
    assert!(e.to_string().contains("power of two"), "{e}");
}

/// Lifted items (f32 -> ArgMax, the first index of the maximum): both SegShuffle kernels for u32
/// offsets (with and without a tile's first offsets loaded ahead of its marks) compile; u64
/// offsets have one.
#[test]
fn seg_shuffle_lifted_variants_compile() {
    if !require_nvrtc() {
        return;
    }
    let config = SegConfig::new(SegAlgorithm::SegShuffle);
    let variants =
        seg_kernel_variants_lifted::<monoids::lang::ArgMax, f32, u32>(config, true).unwrap();
    assert_eq!(variants.len(), 2);
    assert!(variants[0].text.contains("#define R_MARKS_AHEAD 1"));
    assert!(variants[1].text.contains("#define R_MARKS_AHEAD 0"));
    for source in &variants {
        if let Err(e) = reduce_cuda::testing::check_compiles(source, CI_ARCH) {
            panic!("lifted SegShuffle kernel does not compile:\n{e}");
        }
    }
    let wide = seg_kernel_variants_lifted::<monoids::lang::ArgMax, f32, u64>(config, true).unwrap();
    assert_eq!(wide.len(), 1);
}

/// A kernel text with a NUL byte (only a hand-written `CudaMonoid` can make one: the derive
/// refuses it) is a compile error naming it, not a panic.
#[test]
fn a_nul_byte_in_the_text_is_a_compile_error() {
    if !require_nvrtc() {
        return;
    }
    let source = reduce_cuda::KernelSource {
        family: "nul".into(),
        text: "extern \"C\" __global__ void k() { char z = '\0'; }".into(),
        sections: Vec::new(),
    };
    match reduce_cuda::testing::check_compiles(&source, CI_ARCH) {
        Err(reduce_cuda::Error::Compile(failure)) => {
            assert!(failure.log.contains("NUL byte"), "{}", failure.log)
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

/// Segmented `Auto` by CSR offsets keeps SegShuffle's block within the 99 KiB of shared memory
/// every device from sm_80 on allows — the kernel's static shared memory as NVRTC compiles it
/// plus the dynamic part the launch asks for — for the values that passed it before: f32
/// lifted into 112-byte values and u64 into 432-byte ones (16 and 8 items a thread asked for
/// 500 KiB and 1 MiB, and the launch failed on an H100), and 256- and 512-byte records.
#[test]
fn auto_seg_shuffle_blocks_fit_every_device() {
    if !require_nvrtc() {
        return;
    }
    const ANY_DEVICE: usize = 99 * 1024;
    let auto = SegConfig::default();
    let check = |what: &str, source: reduce_cuda::KernelSource, dynamic: usize| {
        let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
        let shared =
            cubin::shared_bytes(&cubin, "reduce_seg_shuffle").expect("a SegShuffle kernel");
        assert!(
            shared + dynamic <= ANY_DEVICE,
            "{what}: {} bytes",
            shared + dynamic
        );
    };
    use monoids::lang::{MathFns, Methods};
    use monoids::wide::{Record256, Record512};
    check(
        "f32 -> MathFns",
        seg_kernel_source_lifted::<MathFns, f32, u32>(auto, true).unwrap(),
        seg_dynamic_smem_lifted::<MathFns, f32, u32>(auto, true).unwrap(),
    );
    check(
        "u64 -> Methods",
        seg_kernel_source_lifted::<Methods, u64, u32>(auto, true).unwrap(),
        seg_dynamic_smem_lifted::<Methods, u64, u32>(auto, true).unwrap(),
    );
    check(
        "Record256",
        seg_kernel_source::<Record256>(auto, true).unwrap(),
        seg_dynamic_smem::<Record256>(auto, true).unwrap(),
    );
    check(
        "Record512",
        seg_kernel_source::<Record512>(auto, true).unwrap(),
        seg_dynamic_smem::<Record512>(auto, true).unwrap(),
    );
}

/// SegMerge's and SegHeads' defaults, which a caller who names the algorithm gets, keep a block
/// within the 99 KiB every device from sm_80 on allows (NVRTC's static shared memory plus the
/// launch's dynamic part) for values of up to 256 bytes in SegMerge and 512 in SegHeads. Before,
/// both budgeted their dynamic part alone: SegMerge took 202 KiB for 512-byte records (past an
/// A100's 163 KiB) and about 100 KiB for 256-byte ones; SegHeads 150 KiB for 512-byte records.
/// SegMerge's static arrays leave no room for values past about 420 bytes: there the device's
/// own limit decides, with `Error::InvalidConfig` at launch where it is smaller.
#[test]
fn seg_merge_and_seg_heads_defaults_fit_every_device() {
    if !require_nvrtc() {
        return;
    }
    const ANY_DEVICE: usize = 99 * 1024;
    fn check<M: CudaMonoid>(algorithm: SegAlgorithm, entry: &str, offsets_form: bool) {
        let config = SegConfig::new(algorithm);
        let source = seg_kernel_source::<M>(config, offsets_form).unwrap();
        let dynamic = seg_dynamic_smem::<M>(config, offsets_form).unwrap();
        let cubin = reduce_cuda::testing::compile_cubin(&source, CI_ARCH).unwrap();
        let shared = cubin::shared_bytes(&cubin, entry).expect("the kernel");
        assert!(
            shared + dynamic <= ANY_DEVICE,
            "{algorithm} {} (offsets form {offsets_form}): {shared} static + {dynamic} dynamic",
            M::CUDA_NAME
        );
    }
    use monoids::wide::{Record128, Record256, Record512};
    for offsets_form in [true, false] {
        check::<Record128>(SegAlgorithm::SegMerge, "reduce_seg_merge", offsets_form);
        check::<Record256>(SegAlgorithm::SegMerge, "reduce_seg_merge", offsets_form);
    }
    check::<Record256>(SegAlgorithm::SegHeads, "reduce_seg_heads_fold", true);
    check::<Record512>(SegAlgorithm::SegHeads, "reduce_seg_heads_fold", true);
}

/// A helper struct whose array length is a constant of its own module, `N` = 2.
mod geom {
    use reduce_cuda::{device_fn, DeviceCopy};
    pub const N: usize = 2;
    #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
    #[repr(C)]
    pub struct Pair {
        pub v: [u32; N],
    }
    #[device_fn]
    pub fn zero() -> Pair {
        Pair { v: [0; N] }
    }
}

/// Loops over `Pair::v` to a bound named `N`: this module's own `N` (4), which is not the
/// array's length, and `geom::N` (2), which is.
mod loops {
    pub mod other_n {
        use super::super::geom::{zero, Pair};
        use reduce_cuda::Monoid;
        const N: usize = 4;
        #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
        #[repr(C)]
        #[monoid(
            identity = OtherN { p: zero(), t: 0 },
            combine = |l, r| {
                let mut t = l.t.wrapping_add(r.t);
                for k in 0..N {
                    t = t.wrapping_add(r.p.v[k]);
                }
                OtherN { p: l.p, t }
            }
        )]
        pub struct OtherN {
            pub p: Pair,
            pub t: u32,
        }
        /// Copies of `Pair::v` (whose length is `geom::N`) made where `N` is 4.
        #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
        #[repr(C)]
        #[monoid(
            identity = Copies { p: zero(), t: 0 },
            combine = |l, r| {
                let mut t = l.t.wrapping_add(r.t);
                for x in r.p.v {
                    t = t.wrapping_add(x);
                }
                let rows = [l.p.v, r.p.v];
                for row in rows {
                    for x in row {
                        t = t.wrapping_add(x);
                    }
                }
                let grid = [[1u32; N]; 2];
                t = t.wrapping_add(grid[1][(t & 3) as usize]);
                let w = match t & 1 {
                    0 => l.p.v,
                    _ => {
                        let mut b = r.p.v;
                        b[0] = b[1];
                        b
                    }
                };
                t = t.wrapping_add(w[(t & 1) as usize]);
                let v = l.p.v;
                Copies { p: Pair { v }, t: t.wrapping_add(v[(t & 1) as usize]) }
            }
        )]
        pub struct Copies {
            pub p: Pair,
            pub t: u32,
        }
    }
    pub mod same_n {
        use super::super::geom::{zero, Pair, N};
        use reduce_cuda::Monoid;
        #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
        #[repr(C)]
        #[monoid(
            identity = SameN { p: zero(), t: 0 },
            combine = |l, r| {
                let mut t = l.t.wrapping_add(r.t);
                for k in 0..N {
                    t = t.wrapping_add(r.p.v[k]);
                }
                SameN { p: l.p, t: t.wrapping_add(r.p.v[(l.t & 3) as usize]) }
            }
        )]
        pub struct SameN {
            pub p: Pair,
            pub t: u32,
        }
    }
}

/// An index into an array whose length a constant names is bounded by the array's own length
/// (its `r_array`'s, from where its type was written), never by a constant of the same name at
/// the monoid's site: a loop to another `N` than the array's fails to compile (it would read
/// past the array on the device, where the CPU faults), the array's own `N` compiles unchecked,
/// a run-time index is checked against the array's length, and copies of the array keep its
/// type (they were declared with the site's `N`, which NVRTC refused).
#[test]
fn a_constant_named_like_an_array_s_length_is_not_taken_for_it() {
    use loops::other_n::{Copies, OtherN};
    use loops::same_n::SameN;
    let other = OtherN::cuda_source();
    assert_contains(&other, "r.p.v.within<4>(v_k)");
    let same = SameN::cuda_source();
    assert_contains(&same, "r.p.v.within<2>(v_k)");
    assert_contains(&same, "r.p.v.at(");
    if !require_nvrtc() {
        return;
    }
    let e = compile_kernel::<OtherN>(Config::default(), CI_ARCH).unwrap_err();
    assert!(e.to_string().contains("the two constants differ"), "{e}");
    compile_kernel::<SameN>(Config::default(), CI_ARCH).unwrap();
    // Copies of the array (a `let`, a `for` over it, an array of them, a `match` of them) take
    // its own type and length; an array of arrays this site writes takes this site's `N`.
    let copies = Copies::cuda_source();
    assert_contains(&copies, ".size(); ++");
    assert_contains(&copies, "const auto v_rows = r_make(l.p.v, r.p.v);");
    assert_contains(&copies, "const auto v_w = [&]() {");
    assert_contains(
        &copies,
        "r_make(r_fill<unsigned int, 4>(1u), r_fill<unsigned int, 4>(1u))",
    );
    assert!(!copies.contains("r_array<unsigned int, 4>"), "{copies}");
    compile_kernel::<Copies>(Config::default(), CI_ARCH).unwrap();
}
