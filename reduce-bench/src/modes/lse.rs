//! `bench lse [--quick] [--out DIR]`: log-sum-exp of f32 logits, a reduction that calls `exp`
//! (`reduce_core::math`, the same bits as the CPU) once per item: over all items and per row of
//! a (rows, 32000) matrix (along its last axis, and as CSR segments), against the read roof on
//! the input bytes (`lse.csv`, `lse.txt`).

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::monoids::{masks_f32, LogSumExp};
use crate::output::report;
use crate::timing::{median_ms, REPS};
use reduce_cuda::{Algorithm, AxisAlgorithm, Gpu, SegAlgorithm, SegConfig};
use std::fmt::Write as _;

/// Log-sum-exp over 2^24 .. 2^28 items, and per row of 32000 logits (a vocabulary), against the
/// read roof measured on the same buffer in the same command.
pub fn lse(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let sizes: &[u32] = if args.quick { &[28] } else { &[24, 26, 28] };
    let mut csv = String::from("n,variant,median_ms,gbs_input,ratio_to_roof\n");
    let mut lines = vec![format!("device {}", gpu.info().name)];
    const VOCAB: usize = 32_000;
    for &log2 in sizes {
        let rows = (1usize << log2) / VOCAB;
        let n = rows * VOCAB;
        // Logits in [1, 2) (`masks_f32`): each item's e^(x - max) takes the same steps as for
        // any logit within 2^9 of the maximum.
        let xs = kernels.fill_random::<f32>(n, 5 + log2 as u64, &masks_f32())?;
        let roof = kernels.read_roof_ms(&xs, REPS)?;
        let bytes = (n * 4) as f64;
        let mut out = gpu.identities::<LogSumExp>(1)?;
        let all = median_ms(&gpu, REPS, || {
            gpu.reduce_lifted_into::<LogSumExp, f32>(xs.items(), &mut out, Algorithm::Auto)
        })?;
        let mut per_row = gpu.identities::<LogSumExp>(rows)?;
        let along = median_ms(&gpu, REPS, || {
            gpu.reduce_axes_lifted_into::<LogSumExp, f32>(
                xs.items(),
                &[rows, VOCAB],
                &[1],
                &mut per_row,
                AxisAlgorithm::Auto,
            )
        })?;
        let offsets: Vec<u32> = (0..=rows).map(|r| (r * VOCAB) as u32).collect();
        let offsets = gpu.upload(&offsets)?;
        let config = SegConfig::new(SegAlgorithm::Auto).trusted();
        let rowwise = median_ms(&gpu, REPS, || {
            gpu.reduce_segments_lifted_into::<LogSumExp, f32, _>(
                xs.items(),
                &offsets,
                &mut per_row,
                config,
            )
        })?;
        // The per-row bytes moved: items, one 8-byte value per row, and the rows + 1 offsets.
        let axis_bytes = bytes + (rows * 8) as f64;
        let row_bytes = bytes + (rows * 8 + (rows + 1) * 4) as f64;
        for (label, ms, moved) in [
            ("all items Auto", all, bytes),
            ("per row of 32000 along axis 1", along, axis_bytes),
            ("per row of 32000 Auto trusted", rowwise, row_bytes),
        ] {
            let gbs = moved / (ms as f64 * 1e6);
            let ratio = (moved / bytes) * roof as f64 / ms as f64;
            lines.push(format!(
                "n = {n} ({rows} rows): {label:<32} {ms:>8.4} ms {gbs:>8.1} GB/s  x roof {ratio:.3}"
            ));
            let _ = writeln!(csv, "{n},{label},{ms},{gbs},{ratio}");
        }
        eprintln!("lse: n = 2^{log2} done");
    }
    std::fs::write(args.out.join("lse.csv"), csv).expect("writing lse.csv");
    report(&args.out, "lse.txt", &lines);
    Ok(())
}
