//! `bench ncu`: a short run for a profiler (`ncu -k regex:reduce_shuffle -c 2`, then
//! `-k regex:read_roof -c 1`, `-k regex:scan_tiles -c 2`): the roof kernel (three warm-up runs and
//! one timed), Shuffle twice, and the inclusive scan (LookBack) twice, on 2^28 f32.

use crate::kernels::BenchKernels;
use crate::monoids::masks_f32;
use reduce_cuda::{Algorithm, Gpu, Scan, ScanAlgorithm, Sum};

pub fn ncu() -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let xs = kernels.fill_random::<Sum<f32>>(1 << 28, 1, &masks_f32())?;
    let _ = kernels.read_roof_ms(&xs, 1)?;
    let mut out = gpu.identities::<Sum<f32>>(1)?;
    for _ in 0..2 {
        gpu.reduce_into(xs.items(), &mut out, Algorithm::Shuffle)?;
    }
    let mut scanned = gpu.identities::<Sum<f32>>(1 << 28)?;
    for _ in 0..2 {
        gpu.scan_into(
            xs.items(),
            Scan::Inclusive,
            &mut scanned,
            ScanAlgorithm::Auto,
        )?;
    }
    gpu.synchronize()
}
