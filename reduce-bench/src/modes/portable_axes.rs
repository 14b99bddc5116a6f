//! `bench portable`'s section along axes (`AxisConfig::portable`): f32 sums over the shapes of
//! `bench axes` (rows and columns of (R, C) matrices, middle axes of batches) at 2^26 items,
//! portable against the default mode (`Auto`) in the same command, with the read roof scaled
//! to the bytes moved; each portable output checked against the CPU's
//! (`Cpu::reduce_axes_portable`) and against itself over the timed runs, and hashed (`bits`).
//! `bench portable-axes [--out DIR]` runs this section alone (`portable-axes.csv`,
//! `portable-axes.txt`).

use super::axes::{cases, results_of};
use super::section::{compared, verdict};
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::monoids::masks_f32;
use crate::output::hash_of;
use crate::timing::{median_ms, REPS};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{AxisConfig, Gpu, Result, Sum};
use std::fmt::Write as _;

pub fn portable_axes(args: &Args) -> Result<()> {
    super::section::section(args, "portable-axes", along_axes)
}

/// The section's lines into `lines`; returns its CSV.
pub(super) fn along_axes(
    gpu: &Gpu,
    kernels: &BenchKernels,
    lines: &mut Vec<String>,
) -> Result<String> {
    let n = 1usize << 26;
    let xs = kernels.fill_random::<Sum<f32>>(n, 26, &masks_f32())?;
    let roof = kernels.read_roof_ms(&xs, REPS)? as f64;
    let host = gpu.download(xs.items())?;
    let mut csv = String::from(
        "case,shape,axes,default_ms,portable_ms,portable_cost,default_x_roof,portable_x_roof,\
         cpu_bits,repeat_bits,bits\n",
    );
    lines.push(format!(
        "along axes, f32 sums of 2^26 items (read roof {roof:.4} ms): case: default / portable \
         ms, cost, ×roof default / portable, cpu bits, repeat, bits"
    ));
    for (label, shape, axes) in cases(n) {
        let results = results_of(&shape, &axes);
        let mut out = gpu.identities::<Sum<f32>>(results)?;
        let mut time = |config: AxisConfig| {
            median_ms(gpu, REPS, || {
                gpu.reduce_axes_into(xs.items(), &shape, &axes, &mut out, config)
            })
        };
        let default_ms = time(AxisConfig::default())?;
        let portable = AxisConfig::default().portable();
        let portable_ms = time(portable)?;
        gpu.reduce_axes_into(xs.items(), &shape, &axes, &mut out, portable)?;
        let first = gpu.download(&out)?;
        gpu.reduce_axes_into(xs.items(), &shape, &axes, &mut out, portable)?;
        let again = gpu.download(&out)?;
        let want = Cpu::new()
            .reduce_axes_portable(&host, &shape, &axes)
            .expect("a valid shape");
        let bits = |v: &[Sum<f32>]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<_>>();
        // ×roof: the roof's time scaled to the bytes moved (items read, results written).
        let moved = (n + results) as f64 * 4.0;
        let x_roof = |ms: f32| roof * (moved / (n as f64 * 4.0)) / ms as f64;
        let (cells, line) = compared(
            (default_ms, portable_ms),
            ("×roof", x_roof),
            verdict(bits(&first) == bits(&want)),
            bits(&first) == bits(&again),
            &hash_of(&first),
        );
        lines.push(format!("{label:<40}: {line}"));
        let join = |v: &[usize], sep: &str| {
            v.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(sep)
        };
        let _ = writeln!(
            csv,
            "{label},{},{},{cells}",
            join(&shape, "x"),
            join(&axes, " "),
        );
        eprintln!("portable: axes {label} done");
    }
    Ok(csv)
}
