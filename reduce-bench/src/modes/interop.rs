//! `bench interop [--quick] [--out DIR]`: reductions of memory that already lives on the GPU
//! against the same reduction of a `DeviceVec` (`interop.csv`, `interop.txt`).

use crate::cli::Args;
use crate::driver::driver;
use crate::kernels::BenchKernels;
use crate::monoids::masks_f32;
use crate::output::report;
use crate::timing::{median_ms, REPS};
use reduce_cuda::cudarc::driver::CudaSlice;
use reduce_cuda::{Algorithm, DeviceVec, Gpu, Sum};

/// Reducing memory that already lives on the GPU costs what reducing a `DeviceVec` costs. The
/// same 2^28 random f32 (1 GiB, far past the L2) as a `DeviceVec`, as a cudarc `CudaSlice`
/// on the Gpu's stream and as one on another stream of the context (the joined path), each
/// reduced into a device output (no host synchronisation in the timed region); the variants
/// alternate within each of 3 rounds, median of REPS per variant and round; the verdict is the
/// median over rounds of borrowed / DeviceVec. A view one item in (not 16-byte aligned: item
/// loads) is measured for information.
pub fn interop(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let n: usize = if args.quick { 1 << 24 } else { 1 << 28 };
    let kernels = BenchKernels::new(&gpu)?;
    let filled = kernels.fill_random::<Sum<f32>>(n, 17, &masks_f32())?;
    let owned: DeviceVec<Sum<f32>> = gpu.copy(filled.items())?;
    drop(filled);
    // SAFETY (both): the copies below write every value before anything reads one.
    let mut same_stream: CudaSlice<f32> =
        unsafe { gpu.stream().alloc(n) }.map_err(driver("allocating a cudarc slice"))?;
    let other = gpu
        .context()
        .new_stream()
        .map_err(driver("creating a stream"))?;
    let mut other_stream: CudaSlice<f32> =
        unsafe { other.alloc(n) }.map_err(driver("allocating a cudarc slice"))?;
    gpu.copy_into(&owned, &mut same_stream)?;
    gpu.copy_into(&owned, &mut other_stream)?;
    let unaligned = same_stream.slice(1..);
    let mut out = gpu.zeroed::<Sum<f32>>(1)?;
    let bytes = (n * 4) as f64;
    let mut lines = vec![format!(
        "interop: f32 sum, n = 2^{} ({:.2} GB), reduce_into a device output, median of {REPS} per variant and round",
        n.trailing_zeros(),
        bytes / 1e9
    )];
    let mut csv = vec!["config,round,variant,ms,gbs".to_string()];
    for algorithm in [Algorithm::Auto, Algorithm::Shuffle] {
        // The values agree bit for bit (same data, same grouping); the unaligned view has one
        // item fewer.
        let want = gpu.reduce(&owned, algorithm)?;
        let same = gpu.reduce::<Sum<f32>>(&same_stream, algorithm)?;
        let joined = gpu.reduce::<Sum<f32>>(&other_stream, algorithm)?;
        let identical = [same, joined]
            .iter()
            .all(|v| v.0.to_bits() == want.0.to_bits());
        let mut ratios = Vec::new();
        for round in 0..3 {
            let time = |name: &str, ms: f32, csv: &mut Vec<String>| {
                csv.push(format!(
                    "{algorithm},{round},{name},{ms:.5},{:.1}",
                    bytes / (ms as f64 * 1e6)
                ));
                ms
            };
            let t_owned = median_ms(&gpu, REPS, || gpu.reduce_into(&owned, &mut out, algorithm))?;
            let t_owned = time("DeviceVec", t_owned, &mut csv);
            let t_same = median_ms(&gpu, REPS, || {
                gpu.reduce_into::<Sum<f32>>(&same_stream, &mut out, algorithm)
            })?;
            let t_same = time("CudaSlice same stream", t_same, &mut csv);
            let t_joined = median_ms(&gpu, REPS, || {
                gpu.reduce_into::<Sum<f32>>(&other_stream, &mut out, algorithm)
            })?;
            let t_joined = time("CudaSlice other stream", t_joined, &mut csv);
            let t_unaligned = median_ms(&gpu, REPS, || {
                gpu.reduce_into::<Sum<f32>>(&unaligned, &mut out, algorithm)
            })?;
            let t_unaligned = time("CudaView unaligned", t_unaligned, &mut csv);
            ratios.push((t_same / t_owned, t_joined / t_owned));
            lines.push(format!(
                "{algorithm} round {round}: DeviceVec {t_owned:.4} ms ({:.0} GB/s); CudaSlice same stream {t_same:.4} ms (x{:.3}); other stream {t_joined:.4} ms (x{:.3}); unaligned view {t_unaligned:.4} ms (x{:.3})",
                bytes / (t_owned as f64 * 1e6),
                t_same / t_owned,
                t_joined / t_owned,
                t_unaligned / t_owned,
            ));
        }
        let median = |mut v: Vec<f32>| {
            v.sort_by(f32::total_cmp);
            v[v.len() / 2]
        };
        let same = median(ratios.iter().map(|r| r.0).collect());
        let joined = median(ratios.iter().map(|r| r.1).collect());
        let within = |r: f32| if (r - 1.0).abs() <= 0.02 { "yes" } else { "NO" };
        lines.push(format!(
            "{algorithm}: borrowed / DeviceVec = {same:.4} (same stream), {joined:.4} (other stream); within 2%: {} / {}; values bit-identical: {}",
            within(same),
            within(joined),
            if identical { "yes" } else { "NO" }
        ));
    }
    std::fs::write(args.out.join("interop.csv"), csv.join("\n") + "\n")
        .unwrap_or_else(|e| panic!("writing interop.csv: {e}"));
    report(&args.out, "interop.txt", &lines);
    Ok(())
}
