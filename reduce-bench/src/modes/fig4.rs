//! `bench fig4 [--quick] [--out DIR]`: the paper's Fig. 4, min on f32, N = m * 2^20 for
//! m = 16..31 (`--quick`: 16, 24, 31), every algorithm: `fig4.csv`, `fig4.svg` and a table.

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::measure::{measure, Check, Row};
use crate::monoids::masks_f32;
use crate::output::svg_plot;
use reduce_cuda::{Algorithm, Config, Gpu, Min};
use std::fmt::Write as _;

/// The paper's Fig. 4: min on f32, N = m * 2^20 for m = 16..31, every algorithm.
pub fn fig4(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let configs: Vec<(String, Config)> = Algorithm::ALL
        .iter()
        .map(|&a| (a.name().to_string(), Config::new(a)))
        .collect();
    let mut rows = Vec::new();
    let ms: Vec<usize> = if args.quick {
        vec![16, 24, 31]
    } else {
        (16..=31).collect()
    };
    for (i, &m) in ms.iter().enumerate() {
        measure::<Min<f32>>(
            Check::Exact,
            &gpu,
            &kernels,
            "f32_min",
            m << 20,
            &masks_f32(),
            &configs,
            &mut rows,
        )?;
        eprint!("\rfig4: [{:<16}] m = {m}", "#".repeat(i + 1));
    }
    eprintln!();
    let mut csv = String::from("m,n,algorithm,median_ms,gbs,correct\n");
    for r in &rows {
        let _ = writeln!(
            csv,
            "{},{},{},{:.5},{:.1},{}",
            r.n >> 20,
            r.n,
            r.algorithm,
            r.ms,
            r.gbs(),
            r.correct.map_or("", |c| if c { "yes" } else { "NO" })
        );
    }
    std::fs::write(args.out.join("fig4.csv"), &csv).expect("writing fig4.csv");
    let series: Vec<(String, Vec<(f64, f64)>)> = configs
        .iter()
        .map(|(label, _)| {
            let pts = rows
                .iter()
                .filter(|r| &r.algorithm == label)
                .map(|r| ((r.n >> 20) as f64, r.gbs()))
                .collect();
            (label.clone(), pts)
        })
        .collect();
    let svg = svg_plot(
        &format!("Fig. 4 on {}: min f32, N = m * 2^20", gpu.info().name),
        "m",
        "GB/s",
        &series,
    );
    std::fs::write(args.out.join("fig4.svg"), svg).expect("writing fig4.svg");
    println!(
        "\n{:<17} {:>10} {:>10} {:>10}",
        "algorithm", "GB/s m=16", "GB/s m=24", "GB/s m=31"
    );
    for (label, _) in &configs {
        let at = |m: usize| {
            rows.iter()
                .find(|r| &r.algorithm == label && r.n == m << 20)
                .map_or(f64::NAN, Row::gbs)
        };
        println!(
            "{:<17} {:>10.1} {:>10.1} {:>10.1}",
            label,
            at(16),
            at(24),
            at(31)
        );
    }
    Ok(())
}
