//! The benchmark harness of reduce-cuda, run on the GPU machine (not timed tests): CUDA events,
//! warm-up, median of >= 20, random non-zero data rotated over several buffers that together
//! exceed the L2 several times. Two binaries: `bench` (one GPU, a mode per experiment) and
//! `bench_cluster` (several GPUs through NCCL, feature `nccl`).
//!
//! ```text
//! bench plain [--quick] [--out DIR] [--cub FILE]    every algorithm, N = 2^10..2^30, vs roof and CUB
//! bench fig4 [--quick] [--out DIR]                  the paper's Fig. 4: min f32, N = m * 2^20
//! bench seglayouts [--layouts DIR]                 writes the segmented layouts for the anchors
//! bench segmented [--quick] [--out DIR] [--cub F] [--torch F]  every segment-length distribution, both forms
//! bench segsweep [--out DIR] [--cub F] [--torch F]  throughput against mean segment length
//! bench segwide [--out DIR] [--torch F]             u64 layouts: SegShuffle, SegMerge, u32 alongside
//! bench fig5 [--quick] [--out DIR]                  the paper's Fig. 5 sweep (progress bar)
//! bench jit [--out DIR]                             NVRTC, disk-cache and in-process latency
//! bench variants | segvariants [--out DIR]          Shuffle's and SegShuffle's tuning spaces
//! bench sanitize | ncu | segncu                     workloads for compute-sanitizer and ncu
//! bench interop [--quick] [--out DIR]               borrowed cudarc slices against a DeviceVec
//! bench argmax [--quick] [--out DIR] [--cub F] [--torch F]  lifted f32 -> (max, index)
//! bench segargmax [--out DIR] [--cub F]             the same per segment, every distribution
//! bench lse [--quick] [--out DIR]                    log-sum-exp of f32 logits (exp per item), all and per row
//! bench large [--quick] [--out DIR]                  values of 128 to 2048 bytes: plain, by offsets, scans
//! bench overhead [--out DIR]                        each call alone, queued back to back, and its host work
//! bench axes [--log2 K] [--out DIR] [--cub F] [--torch F]  reductions along the axes of arrays
//! bench scan [--quick] [--out DIR] [--cub F] [--torch F]   scans, plain and segmented, vs the copy roof
//! bench portable [--quick] [--out DIR] [--cub F]    the portable mode against the default, every family
//! bench portable-plain | portable-seg | portable-axes | portable-scan [--quick] [--out DIR]  one of its sections
//! bench_cluster [--quick] [--out DIR] [--torch FILE] [--max-gpus N]
//! ```
//!
//! `--cub FILE` is the output of a CUB anchor in `anchors/` (and `--torch FILE` of a PyTorch
//! anchor) from the same device command: ratios are only meaningful within one run on one
//! device. `scripts/gpu-stage.sh` builds and stages the binaries and the anchors;
//! `scripts/gpu-run.sh` runs them on the GPU machine, phase by phase.
//!
//! The harness uses reduce-cuda's public API only, and cudarc (re-exported by reduce-cuda) for
//! what the library does not offer: CUDA events (module `timing`) and its own kernels, the read
//! roof and the random fill (module `kernels`).
//!
//! Its two public modules, [`layouts`] (the segment-length distributions) and [`monoids`] (the
//! monoids it reduces), are shared with the integration tests (reduce-tests), which reduce the
//! same layouts and monoids.

mod anchors;
mod cli;
#[cfg(feature = "nccl")]
mod cluster;
#[cfg(feature = "nccl")]
mod cluster_segmented;
#[cfg(feature = "nccl")]
mod cluster_timing;
mod driver;
mod kernels;
pub mod layouts;
mod measure;
mod modes;
pub mod monoids;
mod output;
mod seg_common;
mod timing;

/// The `bench` binary: runs the mode named on the command line (see the crate docs). Exits
/// with 2 on a bad command line and with 1 when the mode fails or finds a wrong result.
pub fn bench_main() {
    let args = cli::parse_args();
    std::fs::create_dir_all(&args.out).expect("creating the output folder");
    if let Err(e) = modes::run(&args) {
        eprintln!("bench failed: {e}");
        std::process::exit(1);
    }
}

/// The `bench_cluster` binary: weak scaling and combine latency over several GPUs in one
/// process (module `cluster`). Exits with 2 on a bad command line and with 1 on a failure or a
/// wrong result.
#[cfg(feature = "nccl")]
pub fn bench_cluster_main() {
    cluster::main()
}
