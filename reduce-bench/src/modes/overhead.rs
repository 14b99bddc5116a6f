//! `bench overhead [--out DIR]`: how much of a call's measured time is the host's. Each call
//! three ways: `alone` (CUDA events around one call, as every other mode times a call: median
//! of 20), `queued` (events around 20 calls queued back to back, per call: the device's own
//! time, each call's host work hidden behind the kernels queued before it) and `host` (the host
//! clock around the call's host work and launches alone, waited for before the next).
//! `alone - queued` is what the host adds to a call that is waited for. The read roof's own
//! kernel (one raw launch) is the floor. Plain (f32 sum, `Auto`, `Shuffle`, portable), scans
//! (f32, inclusive) and segmented reductions (f32 sums over segments of mean length 16 and
//! 1024, trusted: SegShuffle, SegHeads and `Auto` by u32 offsets, SegShuffle by owners) at 2^24
//! and 2^26 items, every call `_into` a buffer (none waits for its kernels itself). Writes
//! `overhead.csv`.

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::mean_length;
use crate::monoids::masks_f32;
use crate::output::report;
use crate::seg_common::DeviceLayout;
use crate::timing::{enqueue_us, median_ms, queued_ms, REPS};
use reduce_cuda::{
    Algorithm, Config, Gpu, Result, Scan, ScanAlgorithm, SegAlgorithm, SegConfig, Sum,
};

/// Calls per queued batch.
const QUEUED: usize = 20;

/// One call measured three ways: `(alone ms, queued ms, host µs)`.
fn three_ways(gpu: &Gpu, mut call: impl FnMut() -> Result<()>) -> Result<(f32, f32, f64)> {
    Ok((
        median_ms(gpu, REPS, &mut call)?,
        queued_ms(gpu, QUEUED, &mut call)?,
        enqueue_us(gpu, REPS, &mut call)?,
    ))
}

/// Every call at 2^24 and 2^26 items: `overhead.csv`.
pub fn overhead(args: &Args) -> Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let mut lines = vec!["n,call,alone_us,queued_us,host_us,alone_minus_queued_us".to_string()];
    let mut row = |n: u64, call: &str, (alone, queued, host): (f32, f32, f64)| {
        let (alone, queued) = (alone as f64 * 1e3, queued as f64 * 1e3);
        let line = format!(
            "{n},{call},{alone:.2},{queued:.2},{host:.2},{:.2}",
            alone - queued
        );
        lines.push(line);
    };
    for log2 in [24, 26] {
        let n = 1u64 << log2;
        let sums = kernels.fill_random::<Sum<f32>>(n as usize, 31, &masks_f32())?;
        let xs = sums.items();
        row(
            n,
            "read roof kernel",
            three_ways(&gpu, kernels.read_roof_launch(&sums, n as usize * 4)?)?,
        );
        let mut one = gpu.identities::<Sum<f32>>(1)?;
        for (name, config) in [
            ("reduce_into Auto", Config::new(Algorithm::Auto)),
            ("reduce_into Shuffle", Config::new(Algorithm::Shuffle)),
            ("reduce_into portable", Config::default().portable()),
        ] {
            let times = three_ways(&gpu, || gpu.reduce_into(xs, &mut one, config))?;
            row(n, name, times);
        }
        let mut scanned = gpu.identities::<Sum<f32>>(n as usize)?;
        let times = three_ways(&gpu, || {
            gpu.scan_into(xs, Scan::Inclusive, &mut scanned, ScanAlgorithm::Auto)
        })?;
        row(n, "scan_into Auto", times);
        for mean in [16, 1024] {
            let layout = DeviceLayout::new(&gpu, &mean_length(mean, n, 7))?;
            let mut out = gpu.identities::<Sum<f32>>(layout.segments)?;
            for algorithm in [
                SegAlgorithm::SegShuffle,
                SegAlgorithm::SegHeads,
                SegAlgorithm::Auto,
            ] {
                let config = SegConfig::new(algorithm).trusted();
                let times = three_ways(&gpu, || layout.run(&gpu, xs, &mut out, "offsets", config))?;
                row(
                    n,
                    &format!("reduce_segments_into {} mean {mean}", algorithm.name()),
                    times,
                );
            }
            let config = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
            let times = three_ways(&gpu, || layout.run(&gpu, xs, &mut out, "owner", config))?;
            row(
                n,
                &format!("reduce_by_owner_into SegShuffle mean {mean}"),
                times,
            );
        }
    }
    report(&args.out, "overhead.csv", &lines);
    Ok(())
}
