//! `bench segmented [--quick] [--out DIR] [--cub FILE] [--torch FILE] [--log2 K | --items N]`:
//! every segment-length
//! distribution, both forms, against plain Shuffle, CUB and PyTorch (`segmented.csv`, a table
//! and the worst distribution of each group).

use crate::anchors::read_refs;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::{distribution, key, mean_length, DISTRIBUTIONS, HEAVY_TAILS, SIZES};
use crate::monoids::{masks_affine, masks_f32, Affine};
use crate::seg_common::{forms_of, plain_shuffle_ms, runs_here, DeviceLayout, FORMS};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{Gpu, SegAlgorithm, SegConfig, Sum};
use std::collections::HashMap;
use std::fmt::Write as _;

/// One measured point.
struct SegRow {
    n: u64,
    layout: String,
    monoid: &'static str,
    form: &'static str,
    label: &'static str,
    ms: f32,
    bytes: f64,
    plain_gbs: f64,
    correct: Option<bool>,
}

impl SegRow {
    fn gbs(&self) -> f64 {
        self.bytes / (self.ms as f64 * 1e6)
    }
    fn of_plain(&self) -> f64 {
        self.gbs() / self.plain_gbs
    }
    fn cub_key(&self) -> String {
        let routine = if self.form == "owner" {
            "reduce_by_key"
        } else {
            "segmented_reduce"
        };
        format!("{routine}_{} {}", self.monoid, key(&self.layout, self.n))
    }
    fn torch_key(&self) -> Option<String> {
        let routine = if self.form == "owner" {
            "torch_index_add_owner"
        } else {
            "torch_segment_reduce"
        };
        (self.monoid == "f32_sum").then(|| format!("{routine} {}", key(&self.layout, self.n)))
    }
}

/// The configurations measured, by label.
fn bench_configs() -> [(&'static str, SegConfig); 12] {
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let pipeline = SegConfig::new(SegAlgorithm::SegPipeline);
    let heads = SegConfig::new(SegAlgorithm::SegHeads);
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    [
        ("Auto trusted", SegConfig::new(SegAlgorithm::Auto).trusted()),
        ("Auto validated", SegConfig::new(SegAlgorithm::Auto)),
        ("SegMerge trusted", merge.trusted()),
        ("SegMerge validated", merge),
        ("SegShuffle trusted", shuffle.trusted()),
        ("SegShuffle validated", shuffle),
        ("SegPipeline trusted", pipeline.trusted()),
        ("SegPipeline validated", pipeline),
        ("SegHeads trusted", heads.trusted()),
        ("SegHeads validated", heads),
        ("SegBlocks trusted", blocks.trusted()),
        ("SegBlocks validated", blocks),
    ]
}

/// Every distribution at both sizes, f32 sum and affine, both forms, trusted and validated;
/// against plain Shuffle on the same items, CUB and PyTorch from the same device command.
/// `--quick`: N = 30 * 2^20, `Auto`, SegShuffle, SegPipeline, SegHeads and SegBlocks only, and
/// also the mean lengths 1024, 4096 and 16384 of `bench segsweep` and the heavy tails of
/// `layouts::HEAVY_TAILS` (for A/B runs of kernel variants). `--log2 K` or `--items N`: N = 2^K
/// or N items only.
pub fn segmented(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs = read_refs(&args.cub)
        .into_iter()
        .chain(read_refs(&args.torch))
        .collect::<HashMap<_, _>>();
    let cpu = Cpu::new();
    let mut rows = Vec::new();
    let n = args.items.or(args.log2.map(|k| 1u64 << k));
    let sizes: &[u64] = match (n.as_ref(), args.quick) {
        (Some(n), _) => std::slice::from_ref(n),
        (None, true) => &[30 << 20],
        (None, false) => &SIZES,
    };
    let configs: Vec<_> = bench_configs()
        .into_iter()
        .filter(|(_, config)| runs_here(&gpu, config))
        .filter(|(label, _)| {
            !args.quick
                || label.starts_with("Auto")
                || label.starts_with("SegShuffle")
                || label.starts_with("SegPipeline")
                || label.starts_with("SegHeads")
                || label.starts_with("SegBlocks")
        })
        .collect();
    for &n in sizes {
        let sums = kernels.fill_random::<Sum<f32>>(n as usize, 12, &masks_f32())?;
        let affine = kernels.fill_random::<Affine>(n as usize, 13, &masks_affine())?;
        let plain_f32 = (n * 4) as f64 / (plain_shuffle_ms(&gpu, sums.items())? as f64 * 1e6);
        let plain_affine = (n * 8) as f64 / (plain_shuffle_ms(&gpu, affine.items())? as f64 * 1e6);
        println!(
            "n = {n}: plain Shuffle f32 sum {plain_f32:.0} GB/s, affine {plain_affine:.0} GB/s"
        );
        let host_affine = gpu.download(affine.items())?;
        // --quick: also three of `bench segsweep`'s long mean lengths (few starts a tile), and
        // the heavy tails (layouts::HEAVY_TAILS).
        let long: &[&str] = if args.quick {
            &["mean_1024", "mean_4096", "mean_16384"]
        } else {
            &[]
        };
        let heavy: &[&str] = if args.quick { &HEAVY_TAILS } else { &[] };
        for &dist in DISTRIBUTIONS.iter().chain(long).chain(heavy) {
            let offsets = match dist.strip_prefix("mean_") {
                Some(mean) => mean_length(mean.parse().expect("a mean length"), n, 7),
                None => distribution(dist, n, 7).unwrap(),
            };
            let layout = DeviceLayout::new(&gpu, &offsets)?;
            let expected = cpu
                .reduce_segments(&host_affine, &offsets)
                .expect("valid layout");
            let mut out_f32 = gpu.zeroed::<Sum<f32>>(layout.segments)?;
            let mut out_affine = gpu.zeroed::<Affine>(layout.segments)?;
            for form in FORMS {
                for &(label, config) in &configs {
                    if !forms_of(config).any(|f| f == form) {
                        continue;
                    }
                    let ms = layout.time(&gpu, sums.items(), &mut out_f32, form, config)?;
                    rows.push(SegRow {
                        n,
                        layout: dist.into(),
                        monoid: "f32_sum",
                        form,
                        label,
                        ms,
                        bytes: layout.bytes::<Sum<f32>>(n as usize, form),
                        plain_gbs: plain_f32,
                        correct: None,
                    });
                    kernels.poison(&mut out_affine)?;
                    let ms = layout.time(&gpu, affine.items(), &mut out_affine, form, config)?;
                    let correct = gpu.download(&out_affine)? == expected;
                    rows.push(SegRow {
                        n,
                        layout: dist.into(),
                        monoid: "affine",
                        form,
                        label,
                        ms,
                        bytes: layout.bytes::<Affine>(n as usize, form),
                        plain_gbs: plain_affine,
                        correct: Some(correct),
                    });
                }
            }
            eprintln!("segmented: n = {n} {dist} done");
        }
    }
    // One row of cells, written as CSV and as an aligned table.
    const HEAD: [&str; 11] = [
        "n",
        "layout",
        "monoid",
        "form",
        "algorithm",
        "median_ms",
        "gbs_moved",
        "of_plain_shuffle",
        "speedup_vs_cub",
        "speedup_vs_torch",
        "correct",
    ];
    const WIDTH: [usize; 11] = [9, 13, 8, 7, 20, 8, 6, 6, 7, 7, 3];
    let aligned = |cells: &[String]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(WIDTH)
            .enumerate()
            .map(|(i, (c, w))| {
                if (1..5).contains(&i) {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        padded.join(" ")
    };
    let mut csv = HEAD.join(",") + "\n";
    let mut table = vec![aligned(&HEAD.map(String::from))];
    for r in &rows {
        let cub = refs.get(&r.cub_key()).map(|c| c / r.ms as f64);
        let torch = r
            .torch_key()
            .and_then(|k| refs.get(&k))
            .map(|t| t / r.ms as f64);
        let opt =
            |x: Option<f64>, digits: usize| x.map_or(String::new(), |x| format!("{x:.digits$}"));
        let cells = [
            r.n.to_string(),
            r.layout.clone(),
            r.monoid.to_string(),
            r.form.to_string(),
            r.label.to_string(),
            format!("{:.5}", r.ms),
            format!("{:.1}", r.gbs()),
            format!("{:.3}", r.of_plain()),
            opt(cub, 2),
            opt(torch, 2),
            r.correct
                .map_or("-", |c| if c { "yes" } else { "NO" })
                .to_string(),
        ];
        let _ = writeln!(csv, "{}", cells.join(","));
        table.push(aligned(&cells));
    }
    std::fs::write(args.out.join("segmented.csv"), &csv).expect("writing segmented.csv");
    println!("{}", table.join("\n"));
    println!("{}", summary(&rows, &refs).join("\n"));
    if rows.iter().any(|r| r.correct == Some(false)) {
        eprintln!("ERROR: some segmented results were wrong");
        std::process::exit(1);
    }
    Ok(())
}

/// The worst distribution per (n, form, monoid, configuration), as a fraction of plain Shuffle,
/// and the smallest speedup over CUB.
fn summary(rows: &[SegRow], refs: &HashMap<String, f64>) -> Vec<String> {
    let mut lines = vec![
        "worst distribution per group (fraction of plain Shuffle; speedup vs CUB):".to_string(),
    ];
    let mut groups: Vec<(u64, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r.n, r.form, r.monoid, r.label))
        .collect();
    groups.dedup();
    groups.sort();
    groups.dedup();
    for (n, form, monoid, label) in groups {
        let members: Vec<&SegRow> = rows
            .iter()
            .filter(|r| (r.n, r.form, r.monoid, r.label) == (n, form, monoid, label))
            .collect();
        let worst = members
            .iter()
            .min_by(|a, b| a.of_plain().total_cmp(&b.of_plain()))
            .unwrap();
        let cub_min = members
            .iter()
            .filter_map(|r| refs.get(&r.cub_key()).map(|c| (c / r.ms as f64, &r.layout)))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        lines.push(format!(
            "{n:>9} {form:<7} {monoid:<7} {label:<19} min xplain {:.2} ({}){}",
            worst.of_plain(),
            worst.layout,
            cub_min.map_or(String::new(), |(x, l)| format!(", min xCUB {x:.1} ({l})"))
        ));
    }
    lines
}
