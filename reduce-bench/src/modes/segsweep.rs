//! `bench segsweep [--out DIR] [--cub FILE] [--torch FILE] [--log2 K | --items N]`: throughput
//! against mean segment length (1 .. 2^20), both forms, ours and the peers: `segsweep.csv`,
//! `segsweep.svg`;
//! SegShuffle, SegHeads and `Auto` with u64 offsets too (their rows `... offsets u64`), and on
//! the 8-byte affine monoid with u32 offsets (rows `affine ...`, in the CSV and the printed
//! table, not in the figure); plain `Shuffle` on the same items, measured once, is each mean
//! length's rows `plain Shuffle (no segments)` and `affine plain Shuffle`.

use crate::anchors::read_refs;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::{key, mean_length, sweep_name, SWEEP_LOG2_MAX, SWEEP_N};
use crate::monoids::{masks_affine, masks_f32, Affine};
use crate::output::svg_plot;
use crate::seg_common::{forms_of, plain_shuffle_ms, runs_here, DeviceLayout, OFFSETS_U64};
use reduce_cuda::{Gpu, SegAlgorithm, SegConfig, Sum};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Throughput against mean segment length (1 .. 2^20), both forms, ours and the peers:
/// `segsweep.csv` and `segsweep.svg`.
pub fn segsweep(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs = read_refs(&args.cub)
        .into_iter()
        .chain(read_refs(&args.torch))
        .collect::<HashMap<_, _>>();
    // `--items N` or `--log2 K`: N or 2^K items instead (the CUB and PyTorch anchors hold 2^26
    // only).
    let n = args
        .items
        .or(args.log2.map(|k| 1u64 << k))
        .unwrap_or(SWEEP_N);
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 21, &masks_f32())?;
    let plain_ms = plain_shuffle_ms(&gpu, sums.items())?;
    let plain = (n * 4) as f64 / (plain_ms as f64 * 1e6);
    let affine = kernels.fill_random::<Affine>(n as usize, 22, &masks_affine())?;
    let plain_affine_ms = plain_shuffle_ms(&gpu, affine.items())?;
    let plain_affine = (n * 8) as f64 / (plain_affine_ms as f64 * 1e6);
    let ours = [
        ("SegMerge", SegConfig::new(SegAlgorithm::SegMerge).trusted()),
        (
            "SegShuffle",
            SegConfig::new(SegAlgorithm::SegShuffle).trusted(),
        ),
        (
            "SegPipeline",
            SegConfig::new(SegAlgorithm::SegPipeline).trusted(),
        ),
        ("SegHeads", SegConfig::new(SegAlgorithm::SegHeads).trusted()),
        ("Auto", SegConfig::new(SegAlgorithm::Auto).trusted()),
    ];
    let ours: Vec<_> = (ours.into_iter())
        .filter(|(_, config)| runs_here(&gpu, config))
        .collect();
    // The CSR algorithms `Auto` chooses between: measured with u64 offsets and on 8-byte values
    // too.
    let chosen = |label: &str| matches!(label, "SegShuffle" | "SegHeads" | "Auto");
    let forms = |label: &'static str, config: SegConfig| {
        forms_of(config).chain(chosen(label).then_some(OFFSETS_U64))
    };
    let peers = [
        (
            "CUB DeviceSegmentedReduce",
            "segmented_reduce_f32_sum",
            "offsets",
        ),
        ("CUB ReduceByKey", "reduce_by_key_f32_sum", "owner"),
        ("torch segment_reduce", "torch_segment_reduce", "offsets"),
        ("torch index_add_", "torch_index_add_owner", "owner"),
    ];
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for &(label, config) in &ours {
        for form in forms(label, config) {
            series.push((format!("{label} {form}"), Vec::new()));
        }
    }
    for (label, _, _) in peers {
        series.push((label.to_string(), Vec::new()));
    }
    series.push(("plain Shuffle (no segments)".into(), Vec::new()));
    // The affine rows: 8-byte values, u32 offsets.
    let affine_ours: Vec<_> = ours.iter().filter(|(label, _)| chosen(label)).collect();
    let mut affine_series: Vec<(String, Vec<(f64, f64)>)> = affine_ours
        .iter()
        .map(|(label, _)| (format!("affine {label} offsets"), Vec::new()))
        .collect();
    affine_series.push(("affine plain Shuffle".into(), Vec::new()));
    let mut csv = String::from("mean_length,segments,series,median_ms,gbs_moved\n");
    for k in 0..=SWEEP_LOG2_MAX {
        let mean = 1u64 << k;
        let offsets = mean_length(mean, n, 7);
        let layout = DeviceLayout::with_u64(&gpu, &offsets)?;
        let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
        let mut at = 0;
        for &(label, config) in &ours {
            for form in forms(label, config) {
                let ms = layout.time(&gpu, sums.items(), &mut out, form, config)?;
                let gbs = layout.bytes::<Sum<f32>>(n as usize, form) / (ms as f64 * 1e6);
                series[at].1.push((k as f64, gbs));
                let _ = writeln!(
                    csv,
                    "{mean},{},{label} {form},{ms:.5},{gbs:.1}",
                    layout.segments
                );
                at += 1;
            }
        }
        for (label, routine, form) in peers {
            if let Some(&ms) = refs.get(&format!("{routine} {}", key(&sweep_name(mean), n))) {
                let gbs = layout.bytes::<Sum<f32>>(n as usize, form) / (ms * 1e6);
                series[at].1.push((k as f64, gbs));
                let _ = writeln!(csv, "{mean},{},{label},{ms:.5},{gbs:.1}", layout.segments);
            }
            at += 1;
        }
        series[at].1.push((k as f64, plain));
        // The roofs the ratios are taken to, on every mean length's rows (measured once).
        let _ = writeln!(
            csv,
            "{mean},{},{},{plain_ms:.5},{plain:.1}",
            layout.segments, series[at].0
        );
        let mut out_affine = gpu.zeroed::<Affine>(layout.segments)?;
        for (i, &&(label, config)) in affine_ours.iter().enumerate() {
            let ms = layout.time(&gpu, affine.items(), &mut out_affine, "offsets", config)?;
            let gbs = layout.bytes::<Affine>(n as usize, "offsets") / (ms as f64 * 1e6);
            affine_series[i].1.push((k as f64, gbs));
            let _ = writeln!(
                csv,
                "{mean},{},affine {label} offsets,{ms:.5},{gbs:.1}",
                layout.segments
            );
        }
        affine_series[affine_ours.len()]
            .1
            .push((k as f64, plain_affine));
        let _ = writeln!(
            csv,
            "{mean},{},{},{plain_affine_ms:.5},{plain_affine:.1}",
            layout.segments,
            affine_series[affine_ours.len()].0
        );
        eprint!("\rsegsweep: mean 2^{k}   ");
    }
    eprintln!();
    std::fs::write(args.out.join("segsweep.csv"), &csv).expect("writing segsweep.csv");
    let svg = svg_plot(
        &format!(
            "Segmented f32 sum, N = {n}, on {}: throughput against mean segment length",
            gpu.info().name
        ),
        "log2 of the mean segment length",
        "GB/s moved",
        &series,
    );
    std::fs::write(args.out.join("segsweep.svg"), svg).expect("writing segsweep.svg");
    for (label, pts) in series.iter().chain(&affine_series) {
        let cells: Vec<String> = pts.iter().map(|p| format!("{:.0}", p.1)).collect();
        println!("{label:<28} {}", cells.join(" "));
    }
    Ok(())
}
