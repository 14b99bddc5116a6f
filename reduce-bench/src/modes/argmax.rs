//! `bench argmax [--quick] [--out DIR] [--cub FILE] [--torch FILE]`: a lifted reduction of f32
//! items straight into (max, first index) (`argmax.csv`, `argmax.txt`).

use crate::anchors::read_cub;
use crate::cli::Args;
use crate::kernels::{BenchKernels, Filled};
use crate::monoids::{masks_f32, ArgMax};
use crate::output::report;
use crate::timing::{median_ms, REPS};
use reduce_cuda::{Algorithm, Config, Gpu, Lift, Monoid};
use std::fmt::Write as _;

/// `bench argmax [--quick] [--out DIR] [--cub FILE] [--torch FILE]`: a lifted reduction
/// (transform-reduce) of f32 items straight into (max, first index), against CUB's
/// `DeviceReduce::ArgMax` (`anchors/argmax_anchor.cu`) and `torch.argmax`
/// (`anchors/argmax_torch.py`) from the same device command, and against the read roof on the
/// input bytes. Also reduces materialised (value, index) items, which reads twice the bytes.
pub fn argmax(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let cub = read_cub(&args.cub);
    let torch = read_cub(&args.torch);
    println!(
        "device {} ({} SMs, L2 {} MB)",
        gpu.info().name,
        gpu.info().multiprocessors,
        gpu.info().l2_bytes >> 20
    );
    let sizes: &[u32] = if args.quick {
        &[24, 28]
    } else {
        &[20, 24, 26, 28]
    };
    let mut csv = String::from(
        "n,variant,median_ms,gbs_input,ratio_to_roof,ratio_to_cub,ratio_to_torch,correct\n",
    );
    let mut lines = Vec::new();
    for &log2 in sizes {
        let n = 1usize << log2;
        let bytes = n * 4;
        let rotation = (4 * gpu.info().l2_bytes).div_ceil(bytes).clamp(1, 16);
        let buffers: Vec<Filled<f32>> = (0..rotation)
            .map(|i| kernels.fill_random::<f32>(n, 11 + i as u64 * 7919 + n as u64, &masks_f32()))
            .collect::<Result<_, _>>()?;
        let roof = kernels.read_roof_rotated_ms(&buffers, REPS)?;
        let host = gpu.download(buffers[0].items())?;
        // The first maximum, on the CPU.
        let want = host
            .iter()
            .enumerate()
            .fold(ArgMax::identity(), |acc, (i, &x)| {
                ArgMax::combine(acc, ArgMax::lift(x, i as u64))
            });
        let mut out = gpu.identities::<ArgMax>(1)?;
        let mut rows: Vec<(String, f32, f64, bool)> = Vec::new();
        for (label, config) in [
            ("lifted Auto", Config::new(Algorithm::Auto)),
            (
                "lifted Shuffle (order-keeping)",
                Config::new(Algorithm::Shuffle),
            ),
        ] {
            let mut i = 0usize;
            let ms = median_ms(&gpu, REPS, || {
                i += 1;
                gpu.reduce_lifted_into::<ArgMax, f32>(
                    buffers[i % rotation].items(),
                    &mut out,
                    config,
                )
            })?;
            let got: ArgMax = gpu.reduce_lifted(buffers[0].items(), config)?;
            rows.push((label.to_string(), ms, bytes as f64, got == want));
        }
        // Materialised (value, index) items: what a reduction without lifts has to read.
        if n * 8 < gpu.memory_info()?.0 / 3 {
            let items: Vec<ArgMax> = host
                .iter()
                .enumerate()
                .map(|(i, &x)| ArgMax::lift(x, i as u64))
                .collect();
            let dev = gpu.upload(&items)?;
            drop(items);
            let ms = median_ms(&gpu, REPS, || {
                gpu.reduce_into(&dev, &mut out, Algorithm::Auto)
            })?;
            let got = gpu.reduce(&dev, Algorithm::Auto)?;
            // It reads 8 bytes an item (its GB/s counts them; ×roof stays the time of reading
            // the f32 input over its own).
            rows.push((
                "materialised Auto".to_string(),
                ms,
                (n * 8) as f64,
                got == want,
            ));
        }
        let cub_ms = cub.get(&("cub_argmax_f32".to_string(), n)).map(|c| c.0);
        let torch_ms = torch.get(&("torch_argmax_f32".to_string(), n)).map(|c| c.0);
        lines.push(format!(
            "argmax n=2^{log2}: read roof {:.1} GB/s; CUB ArgMax {}; torch.argmax {}; first max at {}",
            bytes as f64 / (roof as f64 * 1e6),
            cub_ms.map_or("-".into(), |ms| format!("{:.1} GB/s", bytes as f64 / (ms * 1e6))),
            torch_ms.map_or("-".into(), |ms| format!("{:.1} GB/s", bytes as f64 / (ms * 1e6))),
            want.i
        ));
        for (label, ms, input_bytes, correct) in rows {
            let gbs = input_bytes / (ms as f64 * 1e6);
            let roof_ratio = roof as f64 / ms as f64;
            let vs = |other: Option<f64>| {
                other.map_or("-".to_string(), |o| format!("{:.2}", o / ms as f64))
            };
            lines.push(format!(
                "  {label:<32} {ms:>9.4} ms {gbs:>8.1} GB/s of input  x roof {roof_ratio:.3}  x CUB {}  x torch {}  correct {}",
                vs(cub_ms),
                vs(torch_ms),
                if correct { "yes" } else { "NO" }
            ));
            let _ = writeln!(
                csv,
                "{n},{label},{ms},{gbs},{roof_ratio},{},{},{correct}",
                cub_ms.map_or(String::new(), |c| (c / ms as f64).to_string()),
                torch_ms.map_or(String::new(), |t| (t / ms as f64).to_string())
            );
        }
        eprintln!("argmax: n = 2^{log2} done");
    }
    std::fs::write(args.out.join("argmax.csv"), csv).expect("writing argmax.csv");
    report(&args.out, "argmax.txt", &lines);
    Ok(())
}
