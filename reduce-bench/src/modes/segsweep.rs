//! `bench segsweep [--out DIR] [--cub FILE] [--torch FILE] [--log2 K | --items N]
//! [--validated]`: throughput against mean segment length (1 .. 2^20), both forms, ours (trusted,
//! or with `--validated` checking their layouts) and the peers: `segsweep.csv`, `segsweep.svg`;
//! SegShuffle, SegHeads, SegBlocks and `Auto` with u64 offsets too (their rows `... offsets
//! u64`), on the 8-byte affine monoid with u32 and u64 offsets (rows `affine ... offsets` and
//! `affine ... offsets u64`), and on ArgMax lifted from the f32 items, 8-byte results (rows
//! `argmax ... offsets`, SegShuffle at `Auto`'s 16 items a thread); these in the CSV and the
//! printed table, not in the figure. Plain `Shuffle` on the same items, measured once, is each
//! mean length's rows `plain Shuffle (no segments)` (the f32 items, also the argmax rows' roof)
//! and `affine plain Shuffle`.

use crate::anchors::read_refs;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::{key, mean_length, sweep_name, SWEEP_LOG2_MAX, SWEEP_N};
use crate::monoids::{masks_affine, masks_f32, Affine, ArgMax};
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
    // Our rows trust their layouts, or with `--validated` check them (labels `... validated`).
    let tag = if args.validated { " validated" } else { "" };
    let ours = [
        SegAlgorithm::SegMerge,
        SegAlgorithm::SegShuffle,
        SegAlgorithm::SegPipeline,
        SegAlgorithm::SegHeads,
        SegAlgorithm::SegBlocks,
        SegAlgorithm::Auto,
    ]
    .map(|algorithm| {
        let config = SegConfig::new(algorithm);
        (
            algorithm.name(),
            if args.validated {
                config
            } else {
                config.trusted()
            },
        )
    });
    let ours: Vec<_> = (ours.into_iter())
        .filter(|(_, config)| runs_here(&gpu, config))
        .collect();
    // The CSR algorithms `Auto` chooses between: measured with u64 offsets and on 8-byte values
    // too.
    let chosen = |label: &str| matches!(label, "SegShuffle" | "SegHeads" | "SegBlocks" | "Auto");
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
            series.push((format!("{label}{tag} {form}"), Vec::new()));
        }
    }
    for (label, _, _) in peers {
        series.push((label.to_string(), Vec::new()));
    }
    series.push(("plain Shuffle (no segments)".into(), Vec::new()));
    // The rows of 8-byte values: the affine monoid with u32 and u64 offsets, and ArgMax lifted
    // from the f32 items (the same bits as `sums`) with u32 offsets.
    let argmax_items = kernels.fill_random::<f32>(n as usize, 21, &masks_f32())?;
    // (monoid, form, algorithm, config) of each row; ArgMax's SegShuffle sized as `Auto` sizes
    // it for items narrower than the monoid (16 f32 a thread; its own default is the monoid's 8).
    let eight_rows: Vec<(&str, &str, &str, SegConfig)> = [
        ("affine", "offsets"),
        ("affine", OFFSETS_U64),
        ("argmax", "offsets"),
    ]
    .into_iter()
    .flat_map(|(monoid, form)| {
        ours.iter()
            .filter(|(label, _)| chosen(label))
            .map(move |&(label, config)| {
                let config = if monoid == "argmax" && config.algorithm == SegAlgorithm::SegShuffle {
                    config.items_per_thread(16)
                } else {
                    config
                };
                (monoid, form, label, config)
            })
    })
    .collect();
    let mut affine_series: Vec<(String, Vec<(f64, f64)>)> = eight_rows
        .iter()
        .map(|(monoid, form, label, _)| (format!("{monoid} {label}{tag} {form}"), Vec::new()))
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
                    "{mean},{},{},{ms:.5},{gbs:.1}",
                    layout.segments, series[at].0
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
        let mut out_argmax = gpu.identities::<ArgMax>(layout.segments)?;
        for (i, &(monoid, form, _, config)) in eight_rows.iter().enumerate() {
            let (ms, bytes) = if monoid == "affine" {
                let ms = layout.time(&gpu, affine.items(), &mut out_affine, form, config)?;
                (ms, layout.bytes::<Affine>(n as usize, form))
            } else {
                let items = argmax_items.items();
                let ms = layout.time_lifted(&gpu, items, &mut out_argmax, form, config)?;
                (ms, layout.lifted_bytes::<f32, ArgMax>(n as usize, form))
            };
            let gbs = bytes / (ms as f64 * 1e6);
            affine_series[i].1.push((k as f64, gbs));
            let _ = writeln!(
                csv,
                "{mean},{},{},{ms:.5},{gbs:.1}",
                layout.segments, affine_series[i].0
            );
        }
        affine_series[eight_rows.len()]
            .1
            .push((k as f64, plain_affine));
        let _ = writeln!(
            csv,
            "{mean},{},{},{plain_affine_ms:.5},{plain_affine:.1}",
            layout.segments,
            affine_series[eight_rows.len()].0
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
        println!("{label:<40} {}", cells.join(" "));
    }
    Ok(())
}
