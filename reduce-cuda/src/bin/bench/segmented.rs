//! The segmented modes of `bench`: `seglayouts`, `segmented`, `segsweep`, `segvariants`,
//! `segncu`, `fig5`, and the segmented part of `sanitize`.
//!
//! Layouts come from `reduce_cuda::bench::layouts` (seeded); `seglayouts` writes them as u32
//! offsets files that the CUB (`scripts/cub_sweep.cu`) and PyTorch (`scripts/torch_seg.py`)
//! anchors read, so every peer reduces the same layouts in the same device command.

use crate::{masks_affine, masks_f32, report, svg_plot, Affine, Args, Mat2, REPS};
use reduce_cuda::bench::layouts::{self, distribution, mean_length, DISTRIBUTIONS};
use reduce_cuda::bench::{median_ms, BenchKernels};
use reduce_cuda::reduce_core::{fold_segments, Cpu};
use reduce_cuda::{
    Algorithm, Config, CudaMonoid, DeviceVec, Gpu, Min, SegAlgorithm, SegConfig, Sum,
};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The item counts of `bench segmented`.
const SIZES: [u64; 2] = [1 << 26, 30 << 20];
/// The item count of the mean-length sweep.
const SWEEP_N: u64 = 1 << 26;
/// Mean segment lengths of the sweep: 1, 2, 4, ..., 2^20.
const SWEEP_LOG2_MAX: u32 = 20;

fn key(name: &str, n: u64) -> String {
    format!("{name}@{n}")
}

fn sweep_name(mean: u64) -> String {
    format!("sweep{mean}")
}

/// Writes every layout of `segmented` and `segsweep` into `args.layouts` for the anchors.
pub fn seglayouts(args: &Args) -> reduce_cuda::Result<()> {
    std::fs::create_dir_all(&args.layouts).expect("creating the layouts folder");
    let mut written = 0;
    let mut write = |name: String, offsets: Vec<u64>| {
        let path = args.layouts.join(format!("{name}.u32"));
        layouts::write_offsets(&path, &offsets).expect("writing a layout");
        written += 1;
    };
    for n in SIZES {
        for dist in DISTRIBUTIONS {
            write(key(dist, n), distribution(dist, n, 7).unwrap());
        }
    }
    for k in 0..=SWEEP_LOG2_MAX {
        let mean = 1u64 << k;
        write(
            key(&sweep_name(mean), SWEEP_N),
            mean_length(mean, SWEEP_N, 7),
        );
    }
    println!("{written} layouts in {}", args.layouts.display());
    Ok(())
}

/// Reference times from the same device command: CUB keys `<routine>_<monoid> <layout>`,
/// torch keys `<routine> <layout>`.
pub fn read_refs(path: &Option<std::path::PathBuf>) -> HashMap<String, f64> {
    let mut map = HashMap::new();
    let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) else {
        return map;
    };
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some(ms) = w
            .iter()
            .position(|x| *x == "ms")
            .and_then(|at| w.get(at + 1))
            .and_then(|x| x.parse::<f64>().ok())
        else {
            continue;
        };
        match w.first() {
            Some(&"cubseg") if w.len() > 3 => map.insert(format!("{} {}", w[1], w[2]), ms),
            Some(first) if first.starts_with("torch_") && w.len() > 2 => {
                map.insert(format!("{} {}", w[0], w[1]), ms)
            }
            _ => None,
        };
    }
    map
}

/// A layout on the device in both forms.
struct DeviceLayout {
    offsets: DeviceVec<u32>,
    owner: DeviceVec<u32>,
    segments: usize,
}

impl DeviceLayout {
    fn new(gpu: &Gpu, offsets: &[u64]) -> reduce_cuda::Result<Self> {
        Ok(DeviceLayout {
            offsets: gpu.upload(&layouts::to_u32(offsets))?,
            owner: gpu.upload(&layouts::owners(offsets))?,
            segments: offsets.len() - 1,
        })
    }

    /// Bytes a segmented reduction must move: items, the layout, one result per segment.
    fn bytes<M>(&self, n: usize, form: &str) -> f64 {
        let index = if form == "owner" {
            n
        } else {
            self.segments + 1
        };
        (n * std::mem::size_of::<M>() + 4 * index + self.segments * std::mem::size_of::<M>()) as f64
    }

    /// One reduction into `out` (no allocation).
    fn run<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        items: &DeviceVec<M>,
        out: &mut DeviceVec<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<()> {
        if form == "owner" {
            gpu.reduce_by_owner_into(items, &self.owner, self.segments, out, config)
        } else {
            gpu.reduce_segments_into(items, &self.offsets, out, config)
        }
    }

    fn time<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        items: &DeviceVec<M>,
        out: &mut DeviceVec<M>,
        form: &str,
        config: SegConfig,
    ) -> reduce_cuda::Result<f32> {
        median_ms(gpu, REPS, || self.run(gpu, items, out, form, config))
    }
}

/// Median ms of plain Shuffle over `items` (the throughput segmented rows are compared with).
fn plain_shuffle_ms<M: CudaMonoid>(gpu: &Gpu, items: &DeviceVec<M>) -> reduce_cuda::Result<f32> {
    let mut out = gpu.identities::<M>(1)?;
    let config = Config::new(Algorithm::Shuffle);
    median_ms(gpu, REPS, || gpu.reduce_into(items, &mut out, config))
}

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

const FORMS: [&str; 2] = ["owner", "offsets"];

fn bench_configs() -> [(&'static str, SegConfig); 6] {
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    [
        ("Auto trusted", SegConfig::new(SegAlgorithm::Auto).trusted()),
        ("Auto validated", SegConfig::new(SegAlgorithm::Auto)),
        ("SegMerge trusted", merge.trusted()),
        ("SegMerge validated", merge),
        ("SegShuffle trusted", shuffle.trusted()),
        ("SegShuffle validated", shuffle),
    ]
}

/// Every distribution at both sizes, f32 sum and affine, both forms, trusted and validated;
/// against plain Shuffle on the same items, CUB and PyTorch from the same device command.
/// `--quick`: N = 30 * 2^20 and SegShuffle only (for A/B runs of kernel variants).
pub fn segmented(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs = read_refs(&args.cub)
        .into_iter()
        .chain(read_refs(&args.torch))
        .collect::<HashMap<_, _>>();
    let cpu = Cpu::new();
    let mut rows = Vec::new();
    let sizes: &[u64] = if args.quick { &[30 << 20] } else { &SIZES };
    let configs: Vec<_> = bench_configs()
        .into_iter()
        .filter(|(label, _)| !args.quick || label.starts_with("SegShuffle"))
        .collect();
    for &n in sizes {
        let sums = kernels.fill_random::<Sum<f32>>(n as usize, 12, &masks_f32())?;
        let affine = kernels.fill_random::<Affine>(n as usize, 13, &masks_affine())?;
        let plain_f32 = (n * 4) as f64 / (plain_shuffle_ms(&gpu, &sums)? as f64 * 1e6);
        let plain_affine = (n * 8) as f64 / (plain_shuffle_ms(&gpu, &affine)? as f64 * 1e6);
        println!(
            "n = {n}: plain Shuffle f32 sum {plain_f32:.0} GB/s, affine {plain_affine:.0} GB/s"
        );
        let host_affine = gpu.download(&affine)?;
        for dist in DISTRIBUTIONS {
            let offsets = distribution(dist, n, 7).unwrap();
            let layout = DeviceLayout::new(&gpu, &offsets)?;
            let expected = cpu
                .reduce_segments(&host_affine, &offsets)
                .expect("valid layout");
            let mut out_f32 = gpu.zeroed::<Sum<f32>>(layout.segments)?;
            let mut out_affine = gpu.zeroed::<Affine>(layout.segments)?;
            for form in FORMS {
                for &(label, config) in &configs {
                    let ms = layout.time(&gpu, &sums, &mut out_f32, form, config)?;
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
                    let ms = layout.time(&gpu, &affine, &mut out_affine, form, config)?;
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

/// The targets, per (n, form, monoid, configuration): the worst distribution.
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

/// Throughput against mean segment length (1 .. 2^20), both forms, ours and the peers:
/// `segsweep.csv` and `segsweep.svg`.
pub fn segsweep(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs = read_refs(&args.cub)
        .into_iter()
        .chain(read_refs(&args.torch))
        .collect::<HashMap<_, _>>();
    let n = SWEEP_N;
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 21, &masks_f32())?;
    let plain = (n * 4) as f64 / (plain_shuffle_ms(&gpu, &sums)? as f64 * 1e6);
    let ours = [
        ("SegMerge", SegConfig::new(SegAlgorithm::SegMerge).trusted()),
        (
            "SegShuffle",
            SegConfig::new(SegAlgorithm::SegShuffle).trusted(),
        ),
    ];
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
    for (label, _) in ours {
        for form in FORMS {
            series.push((format!("{label} {form}"), Vec::new()));
        }
    }
    for (label, _, _) in peers {
        series.push((label.to_string(), Vec::new()));
    }
    series.push(("plain Shuffle (no segments)".into(), Vec::new()));
    let mut csv = String::from("mean_length,segments,series,median_ms,gbs_moved\n");
    for k in 0..=SWEEP_LOG2_MAX {
        let mean = 1u64 << k;
        let offsets = mean_length(mean, n, 7);
        let layout = DeviceLayout::new(&gpu, &offsets)?;
        let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
        let mut at = 0;
        for (label, config) in ours {
            for form in FORMS {
                let ms = layout.time(&gpu, &sums, &mut out, form, config)?;
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
        eprint!("\rsegsweep: mean 2^{k}   ");
    }
    eprintln!();
    std::fs::write(args.out.join("segsweep.csv"), &csv).expect("writing segsweep.csv");
    let svg = svg_plot(
        &format!(
            "Segmented f32 sum, N = 2^26, on {}: throughput against mean segment length",
            gpu.info().name
        ),
        "log2 of the mean segment length",
        "GB/s moved",
        &series,
    );
    std::fs::write(args.out.join("segsweep.svg"), svg).expect("writing segsweep.svg");
    for (label, pts) in &series {
        let cells: Vec<String> = pts.iter().map(|p| format!("{:.0}", p.1)).collect();
        println!("{label:<28} {}", cells.join(" "));
    }
    Ok(())
}

/// SegShuffle's and SegMerge's tuning spaces (trusted layouts): fraction of plain Shuffle per
/// variant.
pub fn segvariants(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let n = 30u64 << 20;
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 3, &masks_f32())?;
    let affine = kernels.fill_random::<Affine>(n as usize, 4, &masks_affine())?;
    let plain_f32 = (n * 4) as f64 / (plain_shuffle_ms(&gpu, &sums)? as f64 * 1e6);
    let plain_affine = (n * 8) as f64 / (plain_shuffle_ms(&gpu, &affine)? as f64 * 1e6);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
    let mut variants = vec![
        (
            "Auto".to_string(),
            SegConfig::new(SegAlgorithm::Auto).trusted(),
        ),
        ("SegShuffle default".to_string(), shuffle),
    ];
    for (block, items) in [(256, 8), (256, 24), (128, 16), (512, 8)] {
        variants.push((
            format!("SegShuffle b{block} k{items}"),
            shuffle.block(block).items_per_thread(items),
        ));
    }
    let base = SegConfig::new(SegAlgorithm::SegMerge).trusted();
    variants.push(("SegMerge default".to_string(), base));
    for (block, steps, stages) in [(256, 8, 3), (64, 32, 3)] {
        variants.push((
            format!("SegMerge b{block} k{steps} s{stages}"),
            base.block(block).items_per_thread(steps).stages(stages),
        ));
    }
    let mut lines = vec![format!(
        "plain Shuffle: f32 sum {plain_f32:.0} GB/s, affine {plain_affine:.0} GB/s (n = {n})"
    )];
    for dist in [
        "one_segment",
        "size_1",
        "size_3",
        "random_10_50",
        "power_2",
        "power_3",
        "empty_90",
    ] {
        let offsets = distribution(dist, n, 7).unwrap();
        let layout = DeviceLayout::new(&gpu, &offsets)?;
        let mut out_f32 = gpu.zeroed::<Sum<f32>>(layout.segments)?;
        let mut out_affine = gpu.zeroed::<Affine>(layout.segments)?;
        for form in FORMS {
            for (label, config) in &variants {
                let cell = |ms: reduce_cuda::Result<f32>, bytes: f64, plain: f64| match ms {
                    Ok(ms) => format!("{ms:.4} ms {:.2}", bytes / (ms as f64 * 1e6) / plain),
                    Err(e) => format!("({e})"),
                };
                let f = cell(
                    layout.time(&gpu, &sums, &mut out_f32, form, *config),
                    layout.bytes::<Sum<f32>>(n as usize, form),
                    plain_f32,
                );
                let a = cell(
                    layout.time(&gpu, &affine, &mut out_affine, form, *config),
                    layout.bytes::<Affine>(n as usize, form),
                    plain_affine,
                );
                lines.push(format!(
                    "{dist:<13} {form:<7} {label:<22} f32_sum {f} | affine {a}"
                ));
            }
        }
    }
    report(&args.out, "segvariants.txt", &lines);
    Ok(())
}

/// A short run for a profiler, f32 sum at 30 * 2^20, trusted: SegShuffle (offsets and owner
/// form: one segment, size 3) and SegMerge (default and a small-block variant: size-3 segments
/// in the offsets form, one segment and size 3 in the owner form); then SegShuffle validated
/// and trusted in the offsets form on one segment and 1000 equal segments; last, SegShuffle
/// trusted on random 10..50 in the offsets form (its slowest layout).
pub fn segncu() -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let n = 30u64 << 20;
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 3, &masks_f32())?;
    let run = |config: SegConfig, cases: &[(&str, &str)]| -> reduce_cuda::Result<()> {
        for &(dist, form) in cases {
            let layout = DeviceLayout::new(&gpu, &distribution(dist, n, 7).unwrap())?;
            let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
            layout.run(&gpu, &sums, &mut out, form, config)?;
        }
        Ok(())
    };
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
    run(
        shuffle,
        &[
            ("one_segment", "offsets"),
            ("one_segment", "owner"),
            ("size_3", "offsets"),
            ("size_3", "owner"),
        ],
    )?;
    let merge = SegConfig::new(SegAlgorithm::SegMerge).trusted();
    for config in [merge, merge.block(128).items_per_thread(16).stages(3)] {
        run(
            config,
            &[
                ("size_3", "offsets"),
                ("one_segment", "owner"),
                ("size_3", "owner"),
            ],
        )?;
    }
    // Validated against trusted, offsets form, on layouts where the check's cost shows most
    // (SegShuffle launches 4, 5 and 6 of this command).
    let checked = SegConfig::new(SegAlgorithm::SegShuffle);
    run(checked, &[("one_segment", "offsets")])?;
    run(shuffle, &[("equal_1000", "offsets")])?;
    run(checked, &[("equal_1000", "offsets")])?;
    // SegShuffle launches 7 and 8.
    run(
        shuffle,
        &[("random_10_50", "offsets"), ("two_level", "offsets")],
    )?;
    gpu.synchronize()
}

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
                    layout.run(&gpu, &items, &mut out, "owner", *config)
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

/// The segmented part of the sanitizer workload: every algorithm in both forms on a mixed
/// layout; SegMerge and SegShuffle with small tiles and grids on path lengths around tile and
/// block boundaries, u32 and u64 layouts, validated and trusted; and a bad layout through the
/// fused check. Returns the number of mismatches.
pub fn sanitize(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let mut failures = 0;
    let mut check = |what: String, ok: bool| {
        if !ok {
            eprintln!("MISMATCH segmented {what}");
            failures += 1;
        }
    };
    let mut random_items = |n: usize| -> Vec<Affine> {
        (0..n)
            .map(|_| Affine {
                a: next() | 1,
                b: next(),
            })
            .collect()
    };
    let lengths: Vec<u64> = (0..700u64)
        .map(|i| if i % 5 == 0 { 0 } else { i * 7919 % 40 })
        .chain([5000, 0, 3])
        .collect();
    let mixed: Vec<u64> = std::iter::once(0)
        .chain(lengths.iter().scan(0, |acc, l| {
            *acc += l;
            Some(*acc)
        }))
        .collect();
    let items = random_items(*mixed.last().unwrap() as usize);
    let xs = gpu.upload(&items)?;
    let expected = fold_segments(&items, &mixed).expect("valid layout");
    let layout = DeviceLayout::new(gpu, &mixed)?;
    for alg in SegAlgorithm::ALL {
        for form in FORMS {
            let mut out = gpu.zeroed::<Affine>(layout.segments)?;
            layout.run(gpu, &xs, &mut out, form, alg.into())?;
            check(format!("{alg} {form}"), gpu.download(&out)? == expected);
        }
    }
    // SegMerge: tiles of 64 x 4 = 256 path steps, 1..5 blocks, path lengths k * 256 + {-1, 0, 1};
    // SegShuffle: tiles of 64 x 4 = 256 items on the same layouts.
    let small = SegConfig::new(SegAlgorithm::SegMerge)
        .block(64)
        .items_per_thread(4)
        .stages(3);
    let small_shuffle = SegConfig::new(SegAlgorithm::SegShuffle)
        .block(64)
        .items_per_thread(4);
    // Which of SegShuffle's two u32 offsets kernels these tiles run (the sums, Mat2 and Affine
    // with 12 items per thread at the loop's end): u32 sums, Affine and Mat2 with 4 items the one
    // with a tile's first offsets loaded ahead (one module each); Affine with 12 the one without
    // (16 bytes of spill with the load ahead, none without: it loads the first, sees its local
    // memory, loads the second). Register allocation of NVRTC 13.0 for sm_90.
    let affine_12 = small_shuffle.items_per_thread(12);
    let before = gpu.loaded_kernels();
    gpu.prepare_segmented::<Sum<u32>, u32>(small_shuffle, true)?;
    gpu.prepare_segmented::<Affine, u32>(small_shuffle, true)?;
    gpu.prepare_segmented::<Mat2, u32>(small_shuffle, true)?;
    let ahead = gpu.loaded_kernels() - before;
    check(
        format!("u32 sums, Affine and Mat2 load {ahead} modules, not 3"),
        ahead == 3,
    );
    gpu.prepare_segmented::<Affine, u32>(affine_12, true)?;
    let fallback = gpu.loaded_kernels() - before - ahead;
    check(
        format!("Affine with 12 items per thread loads {fallback} modules, not 2"),
        fallback == 2,
    );
    for path in [255u64, 256, 257, 4 * 256 + 1, 9 * 256 - 1] {
        for segments in [1u64, path / 2, path - 1] {
            let n = path - segments;
            // Even segments, every third one merged into its neighbour (left empty).
            let mut offsets: Vec<u64> = (0..=segments).map(|s| n * s / segments).collect();
            for s in (3..segments as usize).step_by(3) {
                offsets[s] = offsets[s - 1];
            }
            let items = random_items(n as usize);
            let expected = fold_segments(&items, &offsets).expect("valid layout");
            let xs = gpu.upload(&items)?;
            let layout = DeviceLayout::new(gpu, &offsets)?;
            let wide_offsets = gpu.upload(&offsets)?;
            let wide_owner: Vec<u64> = layouts::owners(&offsets)
                .iter()
                .map(|&o| o as u64)
                .collect();
            let wide_owner = gpu.upload(&wide_owner)?;
            let configs = [
                small.grid(1),
                small.grid(3),
                small.grid(3).trusted(),
                small_shuffle.grid(3),
                small_shuffle.grid(2).trusted(),
            ];
            for config in configs {
                let what = format!("path {path} segments {segments} {config:?}");
                for form in FORMS {
                    let mut out = gpu.zeroed::<Affine>(layout.segments)?;
                    layout.run(gpu, &xs, &mut out, form, config)?;
                    check(format!("{what} {form}"), gpu.download(&out)? == expected);
                }
                let wide = gpu.reduce_segments(&xs, &wide_offsets, config)?;
                check(
                    format!("{what} u64 offsets"),
                    gpu.download(&wide)? == expected,
                );
                let wide = gpu.reduce_by_owner(&xs, &wide_owner, layout.segments, config)?;
                check(
                    format!("{what} u64 owner"),
                    gpu.download(&wide)? == expected,
                );
            }
            // SegShuffle's two u32 offsets kernels: a tile's first offsets loaded ahead of its
            // marks (one-word sums and Mat2; Affine above takes it too), and without, where the
            // first spills (Affine with 12 items per thread, tiles of 768: 16 bytes, NVRTC 13.0
            // on sm_90).
            let narrow = gpu.upload(&offsets.iter().map(|&o| o as u32).collect::<Vec<u32>>())?;
            let sums: Vec<Sum<u32>> = items.iter().map(|x| Sum(x.b)).collect();
            let mats: Vec<Mat2> = items
                .iter()
                .map(|x| Mat2 {
                    m: [x.a, x.b, x.b ^ 7, x.a.wrapping_add(3)],
                })
                .collect();
            let (expected_sums, expected_mats) = (
                fold_segments(&sums, &offsets).expect("valid layout"),
                fold_segments(&mats, &offsets).expect("valid layout"),
            );
            let (sums, mats) = (gpu.upload(&sums)?, gpu.upload(&mats)?);
            for (config, fallback) in [
                (small_shuffle.grid(3), affine_12.grid(3)),
                (small_shuffle.grid(2).trusted(), affine_12.grid(2).trusted()),
            ] {
                let what = format!("path {path} segments {segments} {config:?}");
                let out = gpu.reduce_segments(&sums, &narrow, config)?;
                check(
                    format!("{what} u32 sums"),
                    gpu.download(&out)? == expected_sums,
                );
                let out = gpu.reduce_segments(&mats, &narrow, config)?;
                check(format!("{what} Mat2"), gpu.download(&out)? == expected_mats);
                let out = gpu.reduce_segments(&xs, &narrow, fallback)?;
                check(
                    format!("{what} Affine, 12 items per thread"),
                    gpu.download(&out)? == expected,
                );
            }
        }
    }
    // A bad layout goes through the fused check and comes back as the exact error; SegShuffle's
    // validated CSR calls check few offsets early (the grid's last block, before its tiles),
    // more in the marks (block 64: more than 1024 offsets).
    let bad = gpu.upload(&[0u32, 5, 3, 10])?;
    let ten = gpu.upload(&random_items(10))?;
    check(
        "bad offsets through SegMerge".into(),
        gpu.reduce_segments(&ten, &bad, SegAlgorithm::SegMerge)
            .is_err(),
    );
    check(
        "bad offsets through SegShuffle's early check".into(),
        gpu.reduce_segments(&ten, &bad, SegAlgorithm::SegShuffle)
            .is_err(),
    );
    let mut many: Vec<u32> = (0..=2000u32).map(|s| s * 3 / 2).collect();
    many[1000] = many[998];
    let (many, items) = (gpu.upload(&many)?, gpu.upload(&random_items(3000))?);
    check(
        "bad offsets through SegShuffle's fused check".into(),
        gpu.reduce_segments(&items, &many, small_shuffle.grid(3))
            .is_err(),
    );
    Ok(failures)
}
