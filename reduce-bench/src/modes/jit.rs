//! `bench jit [--out DIR]`: JIT latency (`jit.txt`).

use crate::cli::Args;
use crate::monoids::Affine;
use crate::output::report;
use reduce_cuda::{Algorithm, Config, Gpu, KernelOrigin};
use std::time::Instant;

/// JIT latency: a kernel never compiled before (cold NVRTC), the same kernel from the disk
/// cache in a fresh Gpu (what a second process sees), and the in-process cache.
pub fn jit(args: &Args) -> reduce_cuda::Result<()> {
    let cache_dir = args.out.join("jit-cache");
    let _ = std::fs::remove_dir_all(&cache_dir);
    // SAFETY: set before any other thread exists.
    unsafe { std::env::set_var(reduce_cuda::testing::CACHE_DIR_ENV, &cache_dir) };
    let mut lines = Vec::new();
    let config = Config::new(Algorithm::Shuffle);
    for round in 0..3 {
        let gpu = Gpu::new(0)?; // a fresh in-process cache, like a new process
        let first = gpu.prepare::<Affine>(config)?;
        let second = gpu.prepare::<Affine>(config)?;
        lines.push(format!(
            "round {round}: first use {:?} {:.3} ms; second use {:?} {:.4} ms",
            first.origin,
            first.elapsed.as_secs_f64() * 1e3,
            second.origin,
            second.elapsed.as_secs_f64() * 1e3
        ));
        assert_eq!(
            first.origin,
            if round == 0 {
                KernelOrigin::Compiled
            } else {
                KernelOrigin::Disk
            }
        );
        assert_eq!(second.origin, KernelOrigin::Memory);
    }
    // In-process hit inside a reduction call path, averaged over many calls.
    let gpu = Gpu::new(0)?;
    gpu.prepare::<Affine>(config)?;
    let t = Instant::now();
    let calls = 10_000;
    for _ in 0..calls {
        gpu.prepare::<Affine>(config)?;
    }
    lines.push(format!(
        "in-process lookup: {:.2} us per call (mean of {calls})",
        t.elapsed().as_secs_f64() * 1e6 / calls as f64
    ));
    report(&args.out, "jit.txt", &lines);
    Ok(())
}
