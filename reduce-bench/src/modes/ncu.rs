//! `bench ncu`: a short run for a profiler (`gpu-run.sh ncu`: `ncu -k regex:reduce_shuffle -c 2`,
//! then `-k regex:read_roof -c 1`; `gpu-run.sh scanncu`: `-k regex:scan_ahead -s 1 -c 1`): the
//! roof kernel (three warm-up runs and one timed), Shuffle twice, and the inclusive scan
//! (`Auto`) twice, on 2^28 f32; then, for
//! `gpu-run.sh scanncu` with `SCANNCU_SKIPS="3 5 7"`, the inclusive scan of 2^26 f32 twice each
//! plain, by CSR offsets and by keys of segments of 3 items (`Auto`, trusted: the same bytes of
//! items, three segmented forms of one kernel); then, for `gpu-run.sh plainportncu`
//! (`-k regex:"reduce_(shuffle|portable)" --launch-skip 2`), Shuffle and the portable reduction
//! twice each on 2^26 f32 and on 2^26 f64: the same ordered lanes, the two groupings.

use crate::kernels::BenchKernels;
use crate::layouts::{distribution, owners, to_u32};
use crate::monoids::{masks_f32, masks_f64};
use reduce_cuda::{
    Algorithm, Config, CudaMonoid, DeviceSlice, Gpu, Scan, ScanAlgorithm, ScanConfig, Sum,
};

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
    drop(scanned);
    drop(xs);
    let f32s = kernels.fill_random::<Sum<f32>>(1 << 26, 2, &masks_f32())?;
    segmented_scans(&gpu, f32s.items())?;
    shuffle_and_portable(&gpu, f32s.items())?;
    drop(f32s);
    let f64s = kernels.fill_random::<Sum<f64>>(1 << 26, 3, &masks_f64())?;
    shuffle_and_portable(&gpu, f64s.items())?;
    gpu.synchronize()
}

/// The inclusive scan of `xs`, twice each: plain, by CSR offsets and by keys of segments of 3
/// items (`Auto`, trusted).
fn segmented_scans(gpu: &Gpu, xs: &DeviceSlice<Sum<f32>>) -> reduce_cuda::Result<()> {
    let offsets = distribution("size_3", xs.len() as u64, 7).expect("a known distribution");
    let d_offsets = gpu.upload(&to_u32(&offsets))?;
    let d_keys = gpu.upload(&owners(&offsets))?;
    let mut out = gpu.identities::<Sum<f32>>(xs.len())?;
    let config = ScanConfig::default().trusted();
    for _ in 0..2 {
        gpu.scan_into(xs, Scan::Inclusive, &mut out, config)?;
    }
    for _ in 0..2 {
        gpu.scan_segments_into(xs, &d_offsets, Scan::Inclusive, &mut out, config)?;
    }
    for _ in 0..2 {
        gpu.scan_by_key_into(xs, &d_keys, Scan::Inclusive, &mut out, config)?;
    }
    Ok(())
}

/// Shuffle (ordered, the default grouping), then the portable grouping, twice each.
fn shuffle_and_portable<M: CudaMonoid>(gpu: &Gpu, xs: &DeviceSlice<M>) -> reduce_cuda::Result<()> {
    let mut out = gpu.identities::<M>(1)?;
    for config in [
        Config::new(Algorithm::Shuffle),
        Config::default().portable(),
    ] {
        for _ in 0..2 {
            gpu.reduce_into(xs, &mut out, config)?;
        }
    }
    Ok(())
}
