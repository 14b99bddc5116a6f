//! `bench plain [--quick] [--out DIR] [--cub FILE]`: every algorithm (and `Auto`) on f32 sums,
//! affine maps and 2x2 matrices, N = 2^10..2^30 (`--quick`: 2^16..2^28 in steps of 2^4),
//! against the read roof and CUB (`anchors/cub_sweep.cu`) from the same device command:
//! `plain.csv`, one `plain-<monoid>.svg` per monoid, and a short table of 2^20, 2^24 and 2^28.

use crate::anchors::read_cub;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::measure::measure_plain_monoid;
use crate::output::svg_plot;
use reduce_cuda::{Algorithm, Config, Gpu};
use std::fmt::Write as _;
use std::time::Instant;

pub fn plain(args: &Args) -> reduce_cuda::Result<()> {
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
