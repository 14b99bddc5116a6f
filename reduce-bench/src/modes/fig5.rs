//! `bench fig5 [--quick] [--out DIR]`: the paper's Fig. 5 sweep (`fig5.csv`, one
//! `fig5-<scenario>.svg` per scenario, the mean over m of each algorithm).

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::distribution;
use crate::monoids::masks_f32;
use crate::output::svg_plot;
use crate::seg_common::{runs_here, DeviceLayout};
use crate::timing::median_ms;
use reduce_cuda::{Gpu, Min, SegAlgorithm, SegConfig};
use std::fmt::Write as _;

/// The paper's Fig. 5: f32 min, owner form, N = m * 2^20 for m = 16..31, three scenarios.
pub fn fig5(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let ms_list: Vec<u64> = if args.quick {
        vec![16, 24, 31]
    } else {
        (16..=31).collect()
    };
    let configs: Vec<(String, SegConfig)> = SegAlgorithm::ALL
        .iter()
        .map(|&a| (a.name().to_string(), SegConfig::new(a).trusted()))
        .filter(|(_, config)| runs_here(&gpu, config))
        .collect();
    let mut csv = String::from("scenario,m,n,algorithm,median_ms,gbs_moved\n");
    let mut summary = Vec::new();
    let total = 3 * ms_list.len();
    let mut done = 0;
    for scenario in ["one_segment", "random_10_50", "size_3"] {
        let mut series: Vec<(String, Vec<(f64, f64)>)> = configs
            .iter()
            .map(|(l, _)| (l.clone(), Vec::new()))
            .collect();
        for &m in &ms_list {
            let n = m << 20;
            let items = kernels.fill_random::<Min<f32>>(n as usize, m, &masks_f32())?;
            let layout = DeviceLayout::new(&gpu, &distribution(scenario, n, m).unwrap())?;
            let mut out = gpu.zeroed::<Min<f32>>(layout.segments)?;
            for (i, (label, config)) in configs.iter().enumerate() {
                let ms = median_ms(&gpu, 10, || {
                    layout.run(&gpu, items.items(), &mut out, "owner", *config)
                })?;
                let gbs = layout.bytes::<Min<f32>>(n as usize, "owner") / (ms as f64 * 1e6);
                let _ = writeln!(csv, "{scenario},{m},{n},{label},{ms:.5},{gbs:.1}");
                series[i].1.push((m as f64, gbs));
            }
            done += 1;
            eprint!(
                "\rfig5: [{:<48}] {done}/{total} {scenario} m = {m}   ",
                "#".repeat(48 * done / total)
            );
        }
        for (label, pts) in &series {
            let mean = pts.iter().map(|p| p.1).sum::<f64>() / pts.len().max(1) as f64;
            summary.push(format!(
                "{scenario:<13} {label:<20} {mean:>8.1} GB/s (mean over m)"
            ));
        }
        let svg = svg_plot(
            &format!(
                "Fig. 5 ({scenario}) on {}: min f32, owner form",
                gpu.info().name
            ),
            "m (N = m * 2^20)",
            "GB/s moved",
            &series,
        );
        std::fs::write(args.out.join(format!("fig5-{scenario}.svg")), svg)
            .expect("writing fig5 plot");
    }
    eprintln!();
    std::fs::write(args.out.join("fig5.csv"), &csv).expect("writing fig5.csv");
    println!("{}", summary.join("\n"));
    Ok(())
}
