//! Benchmarks on the GPU machine (not timed tests): CUDA events, warm-up, median of >= 20,
//! random non-zero data rotated over several buffers that together exceed the L2 several times.
//!
//! ```text
//! bench plain [--quick] [--out DIR] [--cub FILE]    every algorithm, N = 2^10..2^30, vs roof and CUB
//! bench fig4 [--quick] [--out DIR]                  the paper's Fig. 4: min f32, N = m * 2^20
//! bench seglayouts [--layouts DIR]                 writes the segmented layouts for the anchors
//! bench segmented [--quick] [--out DIR] [--cub F] [--torch F]  every segment-length distribution, both forms
//! bench segsweep [--out DIR] [--cub F] [--torch F]  throughput against mean segment length
//! bench segwide [--out DIR] [--torch F]             u64 layouts: SegShuffle, SegMerge, u32 alongside
//! bench fig5 [--quick] [--out DIR]                  the paper's Fig. 5 sweep (progress bar)
//! bench jit [--out DIR]                             NVRTC, disk-cache and in-process latency
//! bench variants | segvariants [--out DIR]          Shuffle's and SegShuffle's tuning spaces
//! bench sanitize | ncu | segncu                     workloads for compute-sanitizer and ncu
//! bench interop [--quick] [--out DIR]               borrowed cudarc slices against a DeviceVec
//! bench argmax [--quick] [--out DIR] [--cub F] [--torch F]  lifted f32 -> (max, index)
//! bench segargmax [--out DIR] [--cub F]             the same per segment, every distribution
//! ```
//!
//! `--cub FILE` is the output of `scripts/cub_sweep.cu` (and `--torch FILE` of the PyTorch
//! anchor) from the same device command: ratios are only meaningful within one run on one device.

use reduce_cuda::bench::{median_ms, BenchKernels, FillMasks};
use reduce_cuda::{
    fold, Algorithm, Config, CudaMonoid, DeviceVec, Gpu, KernelOrigin, Min, Monoid, Sum,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

#[path = "bench/argmax.rs"]
mod argmax;
#[path = "bench/segmented.rs"]
mod segmented;
#[path = "bench/segwide.rs"]
mod segwide;

#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
struct Affine {
    a: u32,
    b: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat2 { m: [1, 0, 0, 1] },
         combine = |l, r| Mat2 { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[3])),
             l.m[2].wrapping_mul(r.m[0]).wrapping_add(l.m[3].wrapping_mul(r.m[2])),
             l.m[2].wrapping_mul(r.m[1]).wrapping_add(l.m[3].wrapping_mul(r.m[3])),
         ] })]
struct Mat2 {
    m: [u32; 4],
}

const REPS: usize = 20;

struct Args {
    mode: String,
    quick: bool,
    out: PathBuf,
    cub: Option<PathBuf>,
    torch: Option<PathBuf>,
    /// Where `seglayouts` writes (and the anchors read) the segmented layouts.
    layouts: PathBuf,
}

fn parse_args() -> Args {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "plain".into());
    let mut parsed = Args {
        mode,
        quick: false,
        out: PathBuf::from("bench-out"),
        cub: None,
        torch: None,
        layouts: PathBuf::from("/tmp/reduce-layouts"),
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => parsed.quick = true,
            "--out" => parsed.out = PathBuf::from(args.next().expect("--out DIR")),
            "--cub" => parsed.cub = Some(PathBuf::from(args.next().expect("--cub FILE"))),
            "--torch" => parsed.torch = Some(PathBuf::from(args.next().expect("--torch FILE"))),
            "--layouts" => parsed.layouts = PathBuf::from(args.next().expect("--layouts DIR")),
            other => {
                eprintln!("unknown argument {other}\nusage: bench plain|variants|fig4|segmented|fig5|jit [--quick] [--out DIR] [--cub FILE] [--torch FILE]");
                std::process::exit(2);
            }
        }
    }
    parsed
}

fn main() {
    let args = parse_args();
    std::fs::create_dir_all(&args.out).expect("creating the output folder");
    let result = match args.mode.as_str() {
        "plain" => plain(&args),
        "fig4" => fig4(&args),
        "jit" => jit(&args),
        "variants" => variants(&args),
        "ncu" => ncu_target(),
        "seglayouts" => segmented::seglayouts(&args),
        "segmented" => segmented::segmented(&args),
        "segsweep" => segmented::segsweep(&args),
        "segwide" => segwide::segwide(&args),
        "fig5" => segmented::fig5(&args),
        "segvariants" => segmented::segvariants(&args),
        "segncu" => segmented::segncu(),
        "sanitize" => sanitize_target(),
        "interop" => interop(&args),
        "argmax" => argmax::argmax(&args),
        "segargmax" => argmax::segargmax(&args),
        other => {
            eprintln!("unknown mode {other}: plain, fig4 or jit");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("bench failed: {e}");
        std::process::exit(1);
    }
}

/// One measured point.
struct Row {
    monoid: &'static str,
    item_bytes: usize,
    n: usize,
    algorithm: String,
    ms: f32,
    correct: Option<bool>,
}

impl Row {
    fn gbs(&self) -> f64 {
        (self.n * self.item_bytes) as f64 / (self.ms as f64 * 1e6)
    }
}

/// CUB's times from scripts/cub_sweep.cu: (case, n) -> ms.
fn read_cub(path: &Option<PathBuf>) -> HashMap<(String, usize), (f64, String)> {
    let mut map = HashMap::new();
    let Some(path) = path else { return map };
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("warning: could not read {}", path.display());
        return map;
    };
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        // <case> n=<n> ms <ms> [correct yes|NO]
        if words.len() >= 4 && words[1].starts_with("n=") && words[2] == "ms" {
            let (Ok(n), Ok(ms)) = (words[1][2..].parse::<usize>(), words[3].parse::<f64>()) else {
                continue;
            };
            let verdict = words
                .iter()
                .position(|w| *w == "correct")
                .map(|i| words[i + 1].to_string())
                .unwrap_or_default();
            map.insert((words[0].to_string(), n), (ms, verdict));
        }
    }
    map
}

fn masks_affine() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 1; // odd multipliers: long products stay informative
    m
}

fn masks_mat2() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 1;
    m.or_mask[3] = 1;
    m.and_mask[1] = !1; // a, d odd, b even: invertible mod 2^32
    m
}

fn masks_f32() -> FillMasks {
    let mut m = FillMasks::default();
    m.or_mask[0] = 0x3f80_0000; // [1, 2): sign 0, exponent 127
    m.and_mask[0] = 0x3fff_ffff;
    m
}

/// How a result is checked: exact monoids against the CPU fold (n <= 2^22) or against each
/// other; float sums against an f64 sum with a relative tolerance (their grouping differs).
#[derive(Clone, Copy)]
enum Check<M> {
    Exact,
    Approx(fn(&[M], &M) -> bool),
}

fn f32_sum_close(items: &[Sum<f32>], got: &Sum<f32>) -> bool {
    let exact: f64 = items.iter().map(|x| x.0 as f64).sum();
    ((got.0 as f64 - exact) / exact.abs().max(1.0)).abs() < 1e-4
}

/// Times every config on rotated buffers of n items and checks each result.
#[allow(clippy::too_many_arguments)]
fn measure<M: CudaMonoid + PartialEq + std::fmt::Debug>(
    check: Check<M>,
    gpu: &Gpu,
    kernels: &BenchKernels,
    name: &'static str,
    n: usize,
    masks: &FillMasks,
    configs: &[(String, Config)],
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<f32> {
    let size = std::mem::size_of::<M>();
    let bytes = n * size;
    let rotation = (4 * gpu.info().l2_bytes)
        .div_ceil(bytes.max(1))
        .clamp(1, 16);
    let buffers: Vec<DeviceVec<M>> = (0..rotation)
        .map(|i| kernels.fill_random::<M>(n, 1 + i as u64 * 7919 + n as u64, masks))
        .collect::<Result<_, _>>()?;
    let roof = kernels.read_roof_ms(&buffers[0], REPS)?;
    let host = if n <= 1 << 22 {
        Some(gpu.download(&buffers[0])?)
    } else {
        None
    };
    let mut out = gpu.identities::<M>(1)?;
    let mut first_result: Option<M> = None;
    for (label, config) in configs {
        let mut i = 0usize;
        let ms = median_ms(gpu, REPS, || {
            i += 1;
            gpu.reduce_into(&buffers[i % rotation], &mut out, *config)
        })?;
        let got = gpu.reduce(&buffers[0], *config)?;
        let correct = match (check, &host) {
            (Check::Exact, Some(items)) => Some(got == fold(items)),
            (Check::Approx(close), Some(items)) => Some(close(items, &got)),
            (Check::Exact, None) => {
                let agree = first_result.is_none_or(|f| f == got);
                first_result.get_or_insert(got);
                Some(agree)
            }
            (Check::Approx(_), None) => None,
        };
        rows.push(Row {
            monoid: name,
            item_bytes: size,
            n,
            algorithm: label.clone(),
            ms,
            correct,
        });
    }
    Ok(roof)
}

/// `measure` for the plain benchmark's three monoids by name: "f32_sum", "affine_u32", "mat2_u32".
fn measure_plain_monoid(
    gpu: &Gpu,
    kernels: &BenchKernels,
    name: &'static str,
    n: usize,
    configs: &[(String, Config)],
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<f32> {
    match name {
        "f32_sum" => measure::<Sum<f32>>(
            Check::Approx(f32_sum_close),
            gpu,
            kernels,
            name,
            n,
            &masks_f32(),
            configs,
            rows,
        ),
        "affine_u32" => measure::<Affine>(
            Check::Exact,
            gpu,
            kernels,
            name,
            n,
            &masks_affine(),
            configs,
            rows,
        ),
        _ => measure::<Mat2>(
            Check::Exact,
            gpu,
            kernels,
            name,
            n,
            &masks_mat2(),
            configs,
            rows,
        ),
    }
}

fn plain(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let cub = read_cub(&args.cub);
    println!(
        "device {} ({} SMs, L2 {} MB)",
        gpu.info().name,
        gpu.info().multiprocessors,
        gpu.info().l2_bytes >> 20
    );
    let configs: Vec<(String, Config)> = Algorithm::ALL
        .iter()
        .chain([Algorithm::Auto].iter())
        .map(|&a| (a.name().to_string(), Config::new(a)))
        .collect();
    let (lo, hi, step) = if args.quick { (16, 28, 4) } else { (10, 30, 1) };
    let mut rows = Vec::new();
    let mut roofs: Vec<(usize, f32, usize)> = Vec::new(); // (n, roof ms, item bytes)
    let free = gpu.memory_info()?.0;
    for log2 in (lo..=hi).step_by(step) {
        let n = 1usize << log2;
        let started = Instant::now();
        for (name, size) in [("f32_sum", 4), ("affine_u32", 8), ("mat2_u32", 16)] {
            // The rotation of small sizes and one buffer of big ones must fit with room to spare.
            if n * size > free / 3 {
                continue;
            }
            let roof = measure_plain_monoid(&gpu, &kernels, name, n, &configs, &mut rows)?;
            roofs.push((n, roof, size));
        }
        eprintln!("plain: n = 2^{log2} done in {:.1?}", started.elapsed());
    }

    // CSV.
    let mut csv = String::from(
        "monoid,item_bytes,n,algorithm,median_ms,gbs,ratio_to_roof,ratio_to_cub,correct\n",
    );
    let roof_of =
        |n: usize, size: usize| roofs.iter().find(|r| r.0 == n && r.2 == size).map(|r| r.1);
    let cub_case = |monoid: &str| match monoid {
        "f32_sum" => "cub_sum_f32",
        "affine_u32" => "cub_reduce_affine",
        _ => "cub_reduce_mat2",
    };
    for r in &rows {
        let roof = roof_of(r.n, r.item_bytes).map(|ms| ms as f64 / r.ms as f64);
        let cub_ms = cub.get(&(cub_case(r.monoid).to_string(), r.n)).map(|c| c.0);
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.5},{:.1},{},{},{}",
            r.monoid,
            r.item_bytes,
            r.n,
            r.algorithm,
            r.ms,
            r.gbs(),
            roof.map_or(String::new(), |x| format!("{x:.3}")),
            cub_ms.map_or(String::new(), |c| format!("{:.3}", c / r.ms as f64)),
            r.correct.map_or("", |c| if c { "yes" } else { "NO" })
        );
    }
    std::fs::write(args.out.join("plain.csv"), &csv).expect("writing plain.csv");

    // One plot per monoid: GB/s vs log2 N, a line per algorithm, plus roof and CUB.
    for monoid in ["f32_sum", "affine_u32", "mat2_u32"] {
        let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        for (label, _) in &configs {
            let pts = rows
                .iter()
                .filter(|r| r.monoid == monoid && &r.algorithm == label)
                .map(|r| ((r.n as f64).log2(), r.gbs()))
                .collect();
            series.push((label.clone(), pts));
        }
        let size = rows
            .iter()
            .find(|r| r.monoid == monoid)
            .map_or(4, |r| r.item_bytes);
        let roof_pts = roofs
            .iter()
            .filter(|r| r.2 == size)
            .map(|r| {
                (
                    (r.0 as f64).log2(),
                    (r.0 * size) as f64 / (r.1 as f64 * 1e6),
                )
            })
            .collect();
        series.push(("read roof".into(), roof_pts));
        let cub_pts: Vec<(f64, f64)> = cub
            .iter()
            .filter(|((case, _), _)| case == cub_case(monoid))
            .map(|((_, n), (ms, _))| ((*n as f64).log2(), (*n * size) as f64 / (ms * 1e6)))
            .collect();
        if !cub_pts.is_empty() {
            let label = if monoid == "f32_sum" {
                "CUB DeviceReduce::Sum"
            } else {
                "CUB DeviceReduce::Reduce (WRONG order)"
            };
            series.push((label.into(), sorted(cub_pts)));
        }
        let svg = svg_plot(
            &format!("{monoid}: throughput vs N on {}", gpu.info().name),
            "log2 N",
            "GB/s",
            &series,
        );
        std::fs::write(args.out.join(format!("plain-{monoid}.svg")), svg)
            .expect("writing the plot");
    }

    // The short table last: the sizes the targets name.
    println!(
        "\n{:<11} {:>6} {:<17} {:>9} {:>8} {:>6} {:>6} {:>4}",
        "monoid", "log2N", "algorithm", "ms", "GB/s", "roof", "CUB", "ok"
    );
    for r in rows
        .iter()
        .filter(|r| [20usize, 24, 28].contains(&(r.n.trailing_zeros() as usize)))
    {
        let roof = roof_of(r.n, r.item_bytes).map_or(f64::NAN, |ms| ms as f64 / r.ms as f64);
        let cub_ratio = cub
            .get(&(cub_case(r.monoid).to_string(), r.n))
            .map_or(f64::NAN, |c| c.0 / r.ms as f64);
        println!(
            "{:<11} {:>6} {:<17} {:>9.4} {:>8.1} {:>6.3} {:>6.3} {:>4}",
            r.monoid,
            r.n.trailing_zeros(),
            r.algorithm,
            r.ms,
            r.gbs(),
            roof,
            cub_ratio,
            r.correct.map_or("-", |c| if c { "yes" } else { "NO" })
        );
    }
    if rows.iter().any(|r| r.correct == Some(false)) {
        eprintln!("ERROR: some results were wrong");
        std::process::exit(1);
    }
    Ok(())
}

fn sorted(mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// A short run for a profiler: the roof kernel and Shuffle on 2^28 f32 (two launches each).
fn ncu_target() -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let xs = kernels.fill_random::<Sum<f32>>(1 << 28, 1, &masks_f32())?;
    let _ = kernels.read_roof_ms(&xs, 1)?;
    let mut out = gpu.identities::<Sum<f32>>(1)?;
    for _ in 0..2 {
        gpu.reduce_into(&xs, &mut out, Algorithm::Shuffle)?;
    }
    gpu.synchronize()
}

/// Shuffle's tuning space at 2^24 and 2^28 (f32 sum, affine, 2x2 matrix), against the roof.
fn variants(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let sms = gpu.info().multiprocessors;
    let shuffle = Config::new(Algorithm::Shuffle);
    let configs: Vec<(String, Config)> = vec![
        ("default".into(), shuffle),
        (
            "Auto (order-free if commutative)".into(),
            Config::new(Algorithm::Auto),
        ),
        ("items /2".into(), shuffle.items_per_thread(0)),
        (
            "b512 g2 k2".into(),
            shuffle.block(512).grid(2 * sms).tile_group(2),
        ),
        (
            "b512 g2 k1".into(),
            shuffle.block(512).grid(2 * sms).tile_group(1),
        ),
        (
            "b512 g2 k4".into(),
            shuffle.block(512).grid(2 * sms).tile_group(4),
        ),
        (
            "b512 g2 k2 items /2".into(),
            shuffle
                .block(512)
                .grid(2 * sms)
                .tile_group(2)
                .items_per_thread(0),
        ),
        (
            "b512 g3 k2".into(),
            shuffle.block(512).grid(3 * sms).tile_group(2),
        ),
        (
            "b512 g4 k2".into(),
            shuffle.block(512).grid(4 * sms).tile_group(2),
        ),
        (
            "b1024 g1 k1".into(),
            shuffle.block(1024).grid(sms).tile_group(1),
        ),
        (
            "b1024 g1 k2".into(),
            shuffle.block(1024).grid(sms).tile_group(2),
        ),
        (
            "b256 g4 k4".into(),
            shuffle.block(256).grid(4 * sms).tile_group(4),
        ),
        (
            "b256 g2 k4".into(),
            shuffle.block(256).grid(2 * sms).tile_group(4),
        ),
        ("b512 g2 warp runs".into(), shuffle.block(512).grid(2 * sms)),
    ];
    let mut lines = vec![format!(
        "{:<11} {:>5} {:<28} {:>9} {:>8} {:>6}",
        "monoid", "log2N", "variant", "ms", "GB/s", "roof"
    )];
    for log2 in [24usize, 28] {
        let n = 1 << log2;
        for (name, size) in [("f32_sum", 4usize), ("affine_u32", 8), ("mat2_u32", 16)] {
            // Items per lane: the default is 64 bytes' worth; x2 and /2 scale it.
            let base = (64 / size) as u32;
            let sized: Vec<(String, Config)> = configs
                .iter()
                .map(|(l, c)| {
                    let mut c = *c;
                    if l.contains("items x2") {
                        c.items_per_thread = Some(2 * base);
                    } else if l.contains("items /2") {
                        c.items_per_thread = Some((base / 2).max(1));
                    }
                    (l.clone(), c)
                })
                .collect();
            let mut rows = Vec::new();
            let roof = measure_plain_monoid(&gpu, &kernels, name, n, &sized, &mut rows)?;
            for r in rows {
                lines.push(format!(
                    "{:<11} {:>5} {:<28} {:>9.4} {:>8.1} {:>6.3} {}",
                    r.monoid,
                    log2,
                    r.algorithm,
                    r.ms,
                    r.gbs(),
                    roof / r.ms,
                    r.correct.map_or("", |c| if c { "" } else { "WRONG" })
                ));
            }
        }
    }
    report(&args.out, "variants.txt", &lines);
    Ok(())
}

/// The paper's Fig. 4: min on f32, N = m * 2^20 for m = 16..31, every algorithm.
fn fig4(args: &Args) -> reduce_cuda::Result<()> {
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

/// JIT latency: a kernel never compiled before (cold NVRTC), the same kernel from the disk
/// cache in a fresh Gpu (what a second process sees), and the in-process cache.
fn jit(args: &Args) -> reduce_cuda::Result<()> {
    let cache_dir = args.out.join("jit-cache");
    let _ = std::fs::remove_dir_all(&cache_dir);
    // SAFETY: set before any other thread exists.
    unsafe { std::env::set_var(reduce_cuda::testing::CACHE_DIR_ENV, &cache_dir) };
    let mut lines = Vec::new();
    let config = Config::new(Algorithm::Shuffle);
    for round in 0..3 {
        let gpu = Gpu::new(0)?; // a fresh in-process cache, like a new process
        let first = gpu.prepare::<Affine>(config)?;
        let second = gpu.prepare::<Affine>(config)?;
        lines.push(format!(
            "round {round}: first use {:?} {:.3} ms; second use {:?} {:.4} ms",
            first.origin,
            first.elapsed.as_secs_f64() * 1e3,
            second.origin,
            second.elapsed.as_secs_f64() * 1e3
        ));
        assert_eq!(
            first.origin,
            if round == 0 {
                KernelOrigin::Compiled
            } else {
                KernelOrigin::Disk
            }
        );
        assert_eq!(second.origin, KernelOrigin::Memory);
    }
    // In-process hit inside a reduction call path, averaged over many calls.
    let gpu = Gpu::new(0)?;
    gpu.prepare::<Affine>(config)?;
    let t = Instant::now();
    let calls = 10_000;
    for _ in 0..calls {
        gpu.prepare::<Affine>(config)?;
    }
    lines.push(format!(
        "in-process lookup: {:.2} us per call (mean of {calls})",
        t.elapsed().as_secs_f64() * 1e6 / calls as f64
    ));
    report(&args.out, "jit.txt", &lines);
    Ok(())
}

/// Reducing memory that already lives on the GPU costs what reducing a `DeviceVec` costs. The
/// same 2^28 random f32 (1 GiB, far past the L2) as a `DeviceVec`, as a cudarc `CudaSlice`
/// on the Gpu's stream and as one on another stream of the context (the joined path), each
/// reduced into a device output (no host synchronisation in the timed region); the variants
/// alternate within each of 3 rounds, median of REPS per variant and round; the verdict is the
/// median over rounds of borrowed / DeviceVec. A view one item in (not 16-byte aligned: item
/// loads) is measured for information.
fn interop(args: &Args) -> reduce_cuda::Result<()> {
    use reduce_cuda::cudarc::driver::CudaSlice;
    let driver = |during| move |source| reduce_cuda::Error::Driver { during, source };
    let gpu = Gpu::new(0)?;
    let n: usize = if args.quick { 1 << 24 } else { 1 << 28 };
    let kernels = BenchKernels::new(&gpu)?;
    let owned: DeviceVec<Sum<f32>> = kernels.fill_random(n, 17, &masks_f32())?;
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

/// Prints the lines (the short table the device run shows last) and writes them to `out/file`.
fn report(out: &std::path::Path, file: &str, lines: &[String]) {
    let text = lines.join("\n");
    println!("{text}");
    std::fs::write(out.join(file), text + "\n").unwrap_or_else(|e| panic!("writing {file}: {e}"));
}

/// A small, complete workload for compute-sanitizer: every plain algorithm at odd sizes around
/// block and grid boundaries, every segmented algorithm in both forms on a mixed layout with
/// empty segments; every result is checked against the CPU fold (exit code 1 on a mismatch).
fn sanitize_target() -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let mut state = 1u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let mut failures = 0;
    // Odd small sizes; one past the data blocks of Tb2 (512), Tb4Warp/Matrix (1024),
    // SegShuffle's tile (4096), Shuffle's block tile (512 x 8 affine items); one past Shuffle's
    // grid of block tiles (2 blocks per SM); one large size.
    let sms = gpu.info().multiprocessors as usize;
    for n in [
        1usize,
        33,
        513,
        1025,
        4097,
        4096 + 1,
        8193,
        70_001,
        512 * 8 * 2 * sms + 1,
        1 << 22,
    ] {
        let items: Vec<Affine> = (0..n)
            .map(|_| Affine {
                a: next() | 1,
                b: next(),
            })
            .collect();
        let xs = gpu.upload(&items)?;
        for alg in Algorithm::ALL.into_iter().chain([Algorithm::Auto]) {
            if gpu.reduce(&xs, alg)? != fold(&items) {
                eprintln!("MISMATCH plain {alg} n={n}");
                failures += 1;
            }
        }
    }
    failures += segmented::sanitize(&gpu, &mut next)?;
    failures += argmax::sanitize(&gpu, &mut next)?;
    println!("sanitize workload: {failures} mismatches");
    if failures > 0 {
        std::process::exit(1);
    }
    Ok(())
}

/// A self-contained SVG line plot.
fn svg_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 520.0, 70.0, 230.0, 40.0, 50.0);
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        if y.is_finite() {
            y1 = y1.max(y);
        }
    }
    if x0 >= x1 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.08 };
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - y / y1 * (h - top - bottom);
    let colors = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let mut s = format!("<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n<text x='{}' y='22' font-size='15'>{title}</text>\n", left);
    for i in 0..=5 {
        let y = y1 * i as f64 / 5.0;
        let (x_end, y_px, x_text) = (w - right, py(y), left - 6.0);
        let _ = writeln!(s, "<line x1='{left}' x2='{x_end}' y1='{y_px}' y2='{y_px}' stroke='#ddd'/><text x='{x_text}' y='{}' text-anchor='end'>{y:.0}</text>", y_px + 4.0);
    }
    let xticks = (x1 - x0).round().max(1.0) as usize;
    let step = xticks.div_ceil(12).max(1);
    for i in (0..=xticks).step_by(step) {
        let x = x0 + i as f64;
        let _ = writeln!(
            s,
            "<text x='{}' y='{}' text-anchor='middle'>{x:.0}</text>",
            px(x),
            h - bottom + 18.0
        );
    }
    let _ = writeln!(s, "<text x='{}' y='{}' text-anchor='middle'>{x_label}</text><text x='16' y='{}' transform='rotate(-90 16 {})' text-anchor='middle'>{y_label}</text>", (left + w - right) / 2.0, h - 10.0, h / 2.0, h / 2.0);
    let _ = writeln!(s, "<line x1='{left}' x2='{left}' y1='{top}' y2='{}' stroke='black'/><line x1='{left}' x2='{}' y1='{1}' y2='{1}' stroke='black'/>", h - bottom, w - right);
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let dash = if name.contains("roof") || name.contains("CUB") {
            " stroke-dasharray='6 4'"
        } else {
            ""
        };
        let path: Vec<String> = pts
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        if !path.is_empty() {
            let _ = writeln!(
                s,
                "<polyline fill='none' stroke='{color}' stroke-width='2'{dash} points='{}'/>",
                path.join(" ")
            );
        }
        let ly = top + 10.0 + i as f64 * 18.0;
        let _ = writeln!(s, "<line x1='{}' x2='{}' y1='{ly}' y2='{ly}' stroke='{color}' stroke-width='3'{dash}/><text x='{}' y='{}'>{name}</text>", w - right + 10.0, w - right + 34.0, w - right + 40.0, ly + 4.0);
    }
    s.push_str("</svg>\n");
    s
}
