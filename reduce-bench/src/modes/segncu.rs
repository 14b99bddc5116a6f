//! `bench segncu`: a short run of the segmented kernels for a profiler.

use crate::kernels::BenchKernels;
use crate::layouts::distribution;
use crate::monoids::masks_f32;
use crate::seg_common::DeviceLayout;
use reduce_cuda::{Gpu, SegAlgorithm, SegConfig, Sum};

/// A short run for a profiler, f32 sum at 30 * 2^20, trusted: SegShuffle (offsets and owner
/// form: one segment, size 3) and SegMerge (default and a small-block variant: size-3 segments
/// in the offsets form, one segment and size 3 in the owner form); then SegShuffle validated
/// and trusted in the offsets form on one segment and 1000 equal segments; last, SegShuffle
/// trusted on random 10..50 in the offsets form (its slowest layout); SegPipeline trusted in the
/// offsets form on size 3, random 10..50 and one segment; then the portable kernel
/// (`SegConfig::portable`, trusted): one segment and size 3 in the offsets form, size 3 and 90%
/// empty segments in the owner form.
///
/// With `SEGNCU_TAILS=1`, the heavy tails instead ([`tails`]).
pub fn segncu() -> reduce_cuda::Result<()> {
    if std::env::var_os("SEGNCU_TAILS").is_some_and(|v| v == "1") {
        return tails();
    }
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let n = 30u64 << 20;
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 3, &masks_f32())?;
    let run = |config: SegConfig, cases: &[(&str, &str)]| -> reduce_cuda::Result<()> {
        for &(dist, form) in cases {
            let layout = DeviceLayout::new(&gpu, &distribution(dist, n, 7).unwrap())?;
            let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
            layout.run(&gpu, sums.items(), &mut out, form, config)?;
        }
        Ok(())
    };
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
    run(
        shuffle,
        &[
            ("one_segment", "offsets"),
            ("one_segment", "owner"),
            ("size_3", "offsets"),
            ("size_3", "owner"),
        ],
    )?;
    let merge = SegConfig::new(SegAlgorithm::SegMerge).trusted();
    for config in [merge, merge.block(128).items_per_thread(16).stages(3)] {
        run(
            config,
            &[
                ("size_3", "offsets"),
                ("one_segment", "owner"),
                ("size_3", "owner"),
            ],
        )?;
    }
    // Validated against trusted, offsets form, on layouts where the check's cost shows most
    // (SegShuffle launches 4, 5 and 6 of this command).
    let checked = SegConfig::new(SegAlgorithm::SegShuffle);
    run(checked, &[("one_segment", "offsets")])?;
    run(shuffle, &[("equal_1000", "offsets")])?;
    run(checked, &[("equal_1000", "offsets")])?;
    // SegShuffle launches 7 and 8.
    run(
        shuffle,
        &[("random_10_50", "offsets"), ("two_level", "offsets")],
    )?;
    // SegPipeline, trusted, offsets form (launches 9, 10 and 11 of the SegShuffle kernel).
    let pipeline = SegConfig::new(SegAlgorithm::SegPipeline).trusted();
    run(
        pipeline,
        &[
            ("size_3", "offsets"),
            ("random_10_50", "offsets"),
            ("one_segment", "offsets"),
        ],
    )?;
    // The portable kernel (reduce_seg_portable), trusted.
    run(
        SegConfig::default().portable().trusted(),
        &[
            ("one_segment", "offsets"),
            ("size_3", "offsets"),
            ("size_3", "owner"),
            ("empty_90", "owner"),
        ],
    )?;
    gpu.synchronize()
}

/// Heavy tails for a profiler (`layouts::HEAVY_TAILS`' mean lengths 3181 and 1318 at 2^26 f32
/// items, u32 offsets, trusted), one call each in turn: SegBlocks at its own block, at 32 and
/// at 256 threads, then SegShuffle and SegHeads (three launches).
fn tails() -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let n = 1u64 << 26;
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 3, &masks_f32())?;
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks).trusted();
    for dist in ["power_1.6", "power_1.68"] {
        let layout = DeviceLayout::new(&gpu, &distribution(dist, n, 7).unwrap())?;
        let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
        for config in [
            blocks,
            blocks.block(32),
            blocks.block(256),
            SegConfig::new(SegAlgorithm::SegShuffle).trusted(),
            SegConfig::new(SegAlgorithm::SegHeads).trusted(),
        ] {
            layout.run(&gpu, sums.items(), &mut out, "offsets", config)?;
        }
    }
    gpu.synchronize()
}
