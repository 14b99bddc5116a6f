//! Benchmarks of reductions over several GPUs in one process (feature `nccl`): weak scaling
//! and the latency the cross-GPU combine adds. Not timed tests: warm-up, medians, random
//! non-zero data generated on each GPU.
//!
//! ```text
//! bench_cluster [--quick] [--out DIR] [--torch FILE] [--max-gpus N]
//! bench_cluster --rank R --world W --id-file PATH [--quick] [--out DIR]   (one process per GPU)
//! ```
//!
//! * Both exchanges of a one-process cluster, each GPU count measured with each:
//!   `Exchange::PeerAccess` (peer-access kernels; the synchronous call folds pinned partials on
//!   the host) and `Exchange::Nccl` (NCCL all-gathers, as a cluster of several processes uses).
//! * weak scaling: 2^28 and 2^30 items per GPU, f32 sum and 8-byte affine maps, on 1, 2 and 4
//!   GPUs (as many as there are). Each rank reduces its shard, the partials are exchanged and
//!   folded in rank order. Two timings: `sync` = the wall time of one `Cluster::reduce` (host
//!   gets the value), `pipe` = the wall time per call of 20 queued `Cluster::reduce_into` calls
//!   (values stay on the devices) and one `read`. Parallel efficiency E = the same timing of
//!   `Gpu::reduce` (or 20 `reduce_into`) of rank 0's shard alone, same process, over the
//!   cluster's.
//! * combine latency: 2^10, 2^16, 2^20 items per GPU: `Cluster::reduce` minus `Gpu::reduce`
//!   of one GPU's shard alone = what the cross-GPU combine adds.
//! * every row also times the synchronous `Cluster::reduce` with `Config::portable` (one GPU's
//!   bits over any shards), interleaved with the others: `portable_sync_ms`, `portable_cost`
//!   (÷ the default's `sync`); and 20 queued `Cluster::reduce_into` with it and one `read`:
//!   `portable_pipe_ms`, `portable_pipe_cost` (÷ the default's `pipe`).
//! * segmented (`cluster_segmented.rs`): `Cluster::reduce_segments` in the default and the
//!   portable grouping, f32 sums over shards that cut segments anywhere, 2^24 items per GPU
//!   (`--quick`: 2^22), mean segment lengths 30 and 3000; `cluster-segmented.csv`.
//! * `--rank R --world W --id-file PATH`: one process per GPU (start W of them; rank 0 writes the
//!   NCCL id to PATH, the others read it), the NCCL exchange: the combine latency at small N and
//!   the synchronous efficiency at 2^28 items per GPU, as above; rank 0 prints them and writes
//!   `cluster-processes.csv`.
//! * `--torch FILE`: the output of `anchors/torch_allreduce.py` from the same device command
//!   (`torch.sum` + `all_reduce` over NCCL, one process per GPU; commutative monoids only),
//!   printed side by side.

use crate::cluster_timing::{exchange_name, interleaved_medians, median_wall_ms, Result};
use crate::kernels::{AnyBits, BenchKernels, FillMasks};
use crate::monoids::{masks_affine, masks_f32, Affine};
use reduce_cuda::cluster::{Cluster, ClusterId, Exchange, Sharded};
use reduce_cuda::{fold, Algorithm, Config, CudaMonoid, Gpu, Sum};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

struct Args {
    quick: bool,
    out: PathBuf,
    torch: Option<PathBuf>,
    max_gpus: usize,
    /// (rank, world, id file): one process per GPU.
    rank: Option<(usize, usize, PathBuf)>,
}

fn parse_args() -> Args {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        quick: false,
        out: PathBuf::from("bench-out"),
        torch: None,
        max_gpus: 4,
        rank: None,
    };
    let (mut rank, mut world, mut id_file) = (None, None, None);
    while let Some(a) = args.next() {
        let mut value = |what: &str| {
            args.next().unwrap_or_else(|| {
                eprintln!("{a} needs {what}");
                std::process::exit(2)
            })
        };
        match a.as_str() {
            "--quick" => parsed.quick = true,
            "--out" => parsed.out = PathBuf::from(value("a folder")),
            "--torch" => parsed.torch = Some(PathBuf::from(value("a file"))),
            "--rank" => rank = value("a rank").parse().ok(),
            "--world" => world = value("a count").parse().ok(),
            "--id-file" => id_file = Some(PathBuf::from(value("a file"))),
            "--max-gpus" => {
                parsed.max_gpus = value("a count").parse().unwrap_or_else(|_| {
                    eprintln!("--max-gpus needs a number");
                    std::process::exit(2)
                })
            }
            other => {
                eprintln!("unknown argument {other}\nusage: bench_cluster [--quick] [--out DIR] [--torch FILE] [--max-gpus N]\n       bench_cluster --rank R --world W --id-file PATH [--quick] [--out DIR]");
                std::process::exit(2);
            }
        }
    }
    match (rank, world, id_file) {
        (Some(r), Some(w), Some(f)) if r < w => parsed.rank = Some((r, w, f)),
        (None, None, None) => {}
        _ => {
            eprintln!("--rank R --world W --id-file PATH go together, with R < W");
            std::process::exit(2);
        }
    }
    parsed
}

/// Runs the benchmark the command line asks for; exits with 1 on a failure.
pub fn main() {
    let args = parse_args();
    let result = match &args.rank {
        Some((rank, world, id_file)) => run_rank(&args, *rank, *world, id_file),
        None => run(&args),
    };
    if let Err(e) = result {
        eprintln!("bench_cluster failed: {e}");
        std::process::exit(1);
    }
}

/// One measured configuration.
struct Row {
    section: &'static str,
    exchange: &'static str,
    monoid: &'static str,
    item_bytes: usize,
    gpus: usize,
    n_per_gpu: usize,
    sync_ms: f64,
    pipe_ms: f64,
    single_sync_ms: f64,
    /// The slowest rank's own `Gpu::reduce` of its shard (what bounds a synchronous call).
    slowest_sync_ms: f64,
    single_pipe_ms: f64,
    /// The synchronous `Cluster::reduce` with `Config::portable` (one GPU's bits).
    portable_sync_ms: f64,
    /// `pipe_ms` of `Cluster::reduce_into` with `Config::portable`.
    portable_pipe_ms: f64,
    correct: bool,
}

fn run(args: &Args) -> Result<()> {
    std::fs::create_dir_all(&args.out)?;
    let count = (0..16).take_while(|&i| Gpu::new(i).is_ok()).count();
    let counts: Vec<usize> = [1, 2, 4]
        .into_iter()
        .filter(|&g| g <= count.min(args.max_gpus))
        .collect();
    if counts.is_empty() {
        return Err("no GPU".into());
    }
    let torch = read_torch(&args.torch);
    let big: Vec<usize> = if args.quick {
        vec![1 << 24]
    } else {
        vec![1 << 28, 1 << 30]
    };
    let small = [1usize << 10, 1 << 16, 1 << 20];
    let mut rows = Vec::new();
    let mut seg_rows = Vec::new();
    for (&g, exchange) in counts
        .iter()
        .flat_map(|g| [(g, Exchange::PeerAccess), (g, Exchange::Nccl)])
    {
        let ordinals: Vec<usize> = (0..g).collect();
        let cluster =
            match Cluster::new_with_exchange(&ordinals, exchange, Cluster::DEFAULT_TIMEOUT) {
                Ok(cluster) => cluster,
                Err(e) => {
                    eprintln!("{g} GPU(s), {exchange:?}: not measured ({e})");
                    continue;
                }
            };
        eprintln!(
            "{g} GPU(s), {exchange:?}: {} (NCCL {})",
            cluster
                .gpu(0)
                .map(|d| d.info().name.clone())
                .unwrap_or_default(),
            cluster.nccl_version()
        );
        let kernels: Vec<BenchKernels> = (0..g)
            .map(|r| BenchKernels::new(cluster.gpu(r).expect("local rank")))
            .collect::<std::result::Result<_, _>>()?;
        for &n in &big {
            rows.push(measure::<Sum<f32>>(
                &cluster,
                &kernels,
                "weak",
                "f32 sum",
                n,
                &masks_f32(),
                20,
            )?);
            rows.push(measure::<Affine>(
                &cluster,
                &kernels,
                "weak",
                "affine",
                n,
                &masks_affine(),
                20,
            )?);
        }
        for &n in &small {
            rows.push(measure::<Sum<f32>>(
                &cluster,
                &kernels,
                "latency",
                "f32 sum",
                n,
                &masks_f32(),
                200,
            )?);
            rows.push(measure::<Affine>(
                &cluster,
                &kernels,
                "latency",
                "affine",
                n,
                &masks_affine(),
                200,
            )?);
        }
        let seg_n = if args.quick { 1 << 22 } else { 1 << 24 };
        seg_rows.extend(crate::cluster_segmented::measure(
            &cluster, &kernels, seg_n, 10,
        )?);
    }
    report(&rows, &torch, &args.out)?;
    crate::cluster_segmented::report(&seg_rows, &args.out)
}

/// Times one configuration: the cluster (sync and pipelined) and GPU 0 alone on its shard.
fn measure<M: CudaMonoid + AnyBits + PartialEq>(
    cluster: &Cluster,
    kernels: &[BenchKernels],
    section: &'static str,
    monoid: &'static str,
    n: usize,
    masks: &FillMasks,
    reps: usize,
) -> Result<Row> {
    // Each shard is a DeviceVec of its rank's Gpu, filled on that Gpu.
    let parts = kernels
        .iter()
        .enumerate()
        .map(|(r, k)| {
            let filled = k.fill_random::<M>(n, 1 + 7919 * r as u64 + n as u64, masks)?;
            cluster.gpu(r).expect("local rank").copy(filled.items())
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let xs: Sharded<M> = cluster.shard(parts)?;
    let config = Algorithm::Auto;
    // The expected value: each shard alone on its GPU, folded in rank order on the host.
    let mut partials = Vec::new();
    for (rank, part) in xs.parts() {
        partials.push(cluster.gpu(rank).expect("local").reduce(part, config)?);
    }
    let expected = fold(&partials);
    let got = cluster.reduce(&xs, config)?;
    let mut out = cluster.replicated::<M>()?;
    cluster.reduce_into(&xs, &mut out, config)?;
    let correct = got == expected && cluster.read(&out)? == expected;

    // The synchronous calls interleaved: the cluster's, then each rank's own `Gpu::reduce` of
    // its shard; the portable grouping's call beside them.
    let portable = Config::default().portable();
    let mut calls: Vec<Box<dyn FnMut() -> Result<()> + '_>> = vec![
        Box::new(|| Ok(cluster.reduce(&xs, config).map(drop)?)),
        Box::new(|| Ok(cluster.reduce(&xs, portable).map(drop)?)),
    ];
    for (rank, part) in xs.parts() {
        let gpu = cluster.gpu(rank).expect("local rank");
        calls.push(Box::new(move || Ok(gpu.reduce(part, config).map(drop)?)));
    }
    let medians = interleaved_medians(reps, &mut calls)?;
    drop(calls);
    let (sync_ms, portable_sync_ms, single_sync_ms) = (medians[0], medians[1], medians[2]);
    let slowest_sync_ms = medians[2..].iter().copied().fold(single_sync_ms, f64::max);
    const QUEUED: usize = 20;
    let pipe_ms = median_wall_ms(5, || {
        for _ in 0..QUEUED {
            cluster.reduce_into(&xs, &mut out, config)?;
        }
        cluster.read(&out).map(|_| ())
    })? / QUEUED as f64;

    let gpu = cluster.gpu(0).expect("rank 0 is local");
    let part = xs.part(0).expect("rank 0 is local");
    let mut single_out = gpu.identities::<M>(1)?;
    let single_pipe_ms = median_wall_ms(5, || {
        for _ in 0..QUEUED {
            gpu.reduce_into(part, &mut single_out, config)?;
        }
        gpu.synchronize()
    })? / QUEUED as f64;
    // The portable grouping queued: its value is the synchronous call's.
    cluster.reduce_into(&xs, &mut out, portable)?;
    let correct = correct && cluster.read(&out)? == cluster.reduce(&xs, portable)?;
    let portable_pipe_ms = median_wall_ms(5, || {
        for _ in 0..QUEUED {
            cluster.reduce_into(&xs, &mut out, portable)?;
        }
        cluster.read(&out).map(|_| ())
    })? / QUEUED as f64;
    let row = Row {
        section,
        exchange: exchange_name(cluster),
        monoid,
        item_bytes: std::mem::size_of::<M>(),
        gpus: cluster.world_size(),
        n_per_gpu: n,
        sync_ms,
        pipe_ms,
        single_sync_ms,
        slowest_sync_ms,
        single_pipe_ms,
        portable_sync_ms,
        portable_pipe_ms,
        correct,
    };
    eprintln!(
        "  {section:7} {:5} {monoid:8} n/GPU=2^{:<2} sync {:.4} ms pipe {:.4} ms | 1 GPU alone: sync {:.4} pipe {:.4} | portable sync {:.4} pipe {:.4} ms | correct {}",
        row.exchange,
        n.trailing_zeros(),
        row.sync_ms,
        row.pipe_ms,
        row.single_sync_ms,
        row.single_pipe_ms,
        row.portable_sync_ms,
        row.portable_pipe_ms,
        if correct { "yes" } else { "NO" }
    );
    Ok(row)
}

/// One rank of a cluster of one process per GPU (GPU `rank` of this machine): the synchronous
/// `Cluster::reduce` against this GPU's own `Gpu::reduce` of its shard, at small N and at
/// 2^28 items per GPU (`--quick`: 2^24). Every rank makes the same calls; rank 0 reports.
fn run_rank(args: &Args, rank: usize, world: usize, id_file: &std::path::Path) -> Result<()> {
    let id = if rank == 0 {
        let id = ClusterId::new()?;
        let partial = id_file.with_extension("partial");
        std::fs::write(&partial, id.to_hex())?;
        std::fs::rename(&partial, id_file)?;
        id
    } else {
        let start = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(id_file) {
                break ClusterId::from_hex(&text)?;
            }
            if start.elapsed() > Cluster::DEFAULT_TIMEOUT {
                return Err("rank 0's id file did not appear".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let cluster = Cluster::join(&id, rank, world, rank)?;
    let gpu = cluster.gpu(rank).expect("the local rank").clone();
    let kernels = BenchKernels::new(&gpu)?;
    let big = if args.quick { 1 << 24 } else { 1 << 28 };
    let mut csv = String::from(
        "monoid,item_bytes,processes,n_per_gpu,sync_ms,single_sync_ms,e_sync,combine_us\n",
    );
    if rank == 0 {
        println!("\n== one process per GPU ({world} processes, NCCL {}): Cluster::reduce against Gpu::reduce of rank 0's shard", cluster.nccl_version());
        println!(
            "{:8} {:>6} {:>12} {:>12} {:>12} {:>8}",
            "monoid", "n/GPU", "cluster us", "1 GPU us", "adds us", "E sync"
        );
    }
    for &(n, reps) in &[
        (1usize << 10, 200),
        (1 << 16, 200),
        (1 << 20, 200),
        (big, 20),
    ] {
        let rows = [
            rank_row::<Sum<f32>>(&cluster, &gpu, &kernels, n, &masks_f32(), reps)?,
            rank_row::<Affine>(&cluster, &gpu, &kernels, n, &masks_affine(), reps)?,
        ];
        for (monoid, bytes, (sync, single)) in [("f32 sum", 4, rows[0]), ("affine", 8, rows[1])] {
            let _ = writeln!(
                csv,
                "{monoid},{bytes},{world},{n},{sync:.5},{single:.5},{:.4},{:.2}",
                single / sync,
                (sync - single) * 1e3
            );
            if rank == 0 {
                println!(
                    "{monoid:8} {:>6} {:>12.1} {:>12.1} {:>12.1} {:>8.3}",
                    format!("2^{}", n.trailing_zeros()),
                    sync * 1e3,
                    single * 1e3,
                    (sync - single) * 1e3,
                    single / sync
                );
            }
        }
    }
    if rank == 0 {
        std::fs::create_dir_all(&args.out)?;
        std::fs::write(args.out.join("cluster-processes.csv"), csv)?;
    }
    Ok(())
}

/// (median ms of a synchronous `Cluster::reduce`, of `Gpu::reduce` of this rank's shard alone)
/// at `n` items per GPU.
fn rank_row<M: CudaMonoid + AnyBits + PartialEq>(
    cluster: &Cluster,
    gpu: &Gpu,
    kernels: &BenchKernels,
    n: usize,
    masks: &FillMasks,
    reps: usize,
) -> Result<(f64, f64)> {
    let rank = cluster.local_ranks()[0];
    let filled = kernels.fill_random::<M>(n, 1 + 7919 * rank as u64 + n as u64, masks)?;
    let xs: Sharded<M> = cluster.shard(vec![gpu.copy(filled.items())?])?;
    let config = Algorithm::Auto;
    let part = xs.part(rank).expect("the local shard");
    // Interleaved, as in `measure`.
    let medians = interleaved_medians(
        reps,
        &mut [
            Box::new(|| Ok(cluster.reduce(&xs, config).map(drop)?)),
            Box::new(|| Ok(gpu.reduce(part, config).map(drop)?)),
        ],
    )?;
    Ok((medians[0], medians[1]))
}

/// `torch_allreduce world=G n=N sync_ms S pipe_ms P` lines: (G, N) -> (S, P).
fn read_torch(path: &Option<PathBuf>) -> HashMap<(usize, usize), (f64, f64)> {
    let mut map = HashMap::new();
    let Some(path) = path else { return map };
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("warning: could not read {}", path.display());
        return map;
    };
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() == 6 && w[0] == "torch_allreduce" && w[2] == "sync_ms" && w[4] == "pipe_ms" {
            let (Some(g), Some(n)) = (
                w[1].split_once(',')
                    .and_then(|(g, _)| g.strip_prefix("world=")?.parse().ok()),
                w[1].split_once(',')
                    .and_then(|(_, n)| n.strip_prefix("n=")?.parse().ok()),
            ) else {
                continue;
            };
            if let (Ok(s), Ok(p)) = (w[3].parse(), w[5].parse()) {
                map.insert((g, n), (s, p));
            }
        }
    }
    map
}

fn report(
    rows: &[Row],
    torch: &HashMap<(usize, usize), (f64, f64)>,
    out: &std::path::Path,
) -> Result<()> {
    // Efficiency as issue 16 defines it: one GPU's own reduction of rank 0's shard (same
    // process, same items per GPU) over the cluster's, for the synchronous and queued calls.
    let efficiency = |r: &Row| (r.single_sync_ms / r.sync_ms, r.single_pipe_ms / r.pipe_ms);
    let torch_of = |r: &Row| {
        (r.monoid == "f32 sum")
            .then(|| torch.get(&(r.gpus, r.n_per_gpu)).copied())
            .flatten()
            .unwrap_or((f64::NAN, f64::NAN))
    };
    let mut csv = String::from(
        "section,exchange,monoid,item_bytes,gpus,n_per_gpu,sync_ms,pipe_ms,single_sync_ms,slowest_sync_ms,single_pipe_ms,e_sync,e_pipe,combine_us,torch_sync_ms,torch_pipe_ms,correct,portable_sync_ms,portable_cost,portable_pipe_ms,portable_pipe_cost\n",
    );
    println!("\n== weak scaling (one process; E = one GPU's own call on rank 0's shard / the cluster's call)");
    println!(
        "{:5} {:8} {:>5} {:>6} {:>10} {:>10} {:>9} {:>7} {:>7} {:>12} {:>12} {:>8}",
        "exch",
        "monoid",
        "GPUs",
        "n/GPU",
        "sync ms",
        "pipe ms",
        "agg GB/s",
        "E sync",
        "E pipe",
        "torch sync",
        "torch pipe",
        "correct"
    );
    for r in rows {
        let (e_sync, e_pipe) = efficiency(r);
        let combine_us = (r.sync_ms - r.single_sync_ms) * 1e3;
        let (t_sync, t_pipe) = torch_of(r);
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{:.5},{:.5},{:.5},{:.5},{:.5},{:.4},{:.4},{:.2},{:.5},{:.5},{},{:.5},{:.4},{:.5},{:.4}",
            r.section,
            r.exchange,
            r.monoid,
            r.item_bytes,
            r.gpus,
            r.n_per_gpu,
            r.sync_ms,
            r.pipe_ms,
            r.single_sync_ms,
            r.slowest_sync_ms,
            r.single_pipe_ms,
            e_sync,
            e_pipe,
            combine_us,
            t_sync,
            t_pipe,
            r.correct,
            r.portable_sync_ms,
            r.portable_sync_ms / r.sync_ms,
            r.portable_pipe_ms,
            r.portable_pipe_ms / r.pipe_ms
        );
        if r.section == "weak" {
            let gbs = (r.gpus * r.n_per_gpu * r.item_bytes) as f64 / (r.pipe_ms * 1e6);
            println!(
                "{:5} {:8} {:>5} {:>6} {:>10.4} {:>10.4} {:>9.0} {:>7.3} {:>7.3} {:>12.4} {:>12.4} {:>8}",
                r.exchange,
                r.monoid,
                r.gpus,
                format!("2^{}", r.n_per_gpu.trailing_zeros()),
                r.sync_ms,
                r.pipe_ms,
                gbs,
                e_sync,
                e_pipe,
                t_sync,
                t_pipe,
                if r.correct { "yes" } else { "NO" }
            );
        }
    }
    println!("\n== combine latency (one process): Cluster::reduce minus Gpu::reduce of GPU 0's shard alone");
    println!(
        "{:5} {:8} {:>5} {:>6} {:>12} {:>12} {:>12} {:>12} {:>8}",
        "exch",
        "monoid",
        "GPUs",
        "n/GPU",
        "cluster us",
        "1 GPU us",
        "adds us",
        "torch us",
        "correct"
    );
    for r in rows.iter().filter(|r| r.section == "latency") {
        println!(
            "{:5} {:8} {:>5} {:>6} {:>12.1} {:>12.1} {:>12.1} {:>12.1} {:>8}",
            r.exchange,
            r.monoid,
            r.gpus,
            format!("2^{}", r.n_per_gpu.trailing_zeros()),
            r.sync_ms * 1e3,
            r.single_sync_ms * 1e3,
            (r.sync_ms - r.single_sync_ms) * 1e3,
            torch_of(r).0 * 1e3,
            if r.correct { "yes" } else { "NO" }
        );
    }
    // The targets (parallel efficiency, combine latency), from the largest GPU count measured.
    let g = rows.iter().map(|r| r.gpus).max().unwrap_or(1);
    for r in rows
        .iter()
        .filter(|r| r.gpus == g && r.section == "weak" && r.n_per_gpu == 1 << 28)
    {
        let (e_sync, e_pipe) = efficiency(r);
        println!(
            "target: parallel efficiency at 2^28 {} per GPU on {g} GPUs ({}) >= 0.95: sync {e_sync:.3}, queued {e_pipe:.3} (the slowest GPU alone over the cluster: {:.3})",
            r.monoid, r.exchange, r.slowest_sync_ms / r.sync_ms
        );
    }
    for exchange in ["peer", "nccl"] {
        let latency = rows
            .iter()
            .filter(|r| r.gpus == g && r.section == "latency" && r.exchange == exchange);
        if let Some(worst) = latency
            .clone()
            .map(|r| (r.sync_ms - r.single_sync_ms) * 1e3)
            .max_by(f64::total_cmp)
        {
            let slower_than_torch = latency
                .filter(|r| r.sync_ms > torch_of(r).0)
                .map(|r| format!("{} 2^{}", r.monoid, r.n_per_gpu.trailing_zeros()))
                .collect::<Vec<_>>();
            println!(
                "target: the combine adds <= 15 us on {g} GPUs in one process ({exchange}): worst over small N {worst:.1} us; slower than torch sum + all_reduce at: {}",
                if slower_than_torch.is_empty() { "none".to_string() } else { slower_than_torch.join(", ") }
            );
        }
    }
    let all_correct = rows.iter().all(|r| r.correct);
    println!(
        "all results correct: {}",
        if all_correct { "yes" } else { "NO" }
    );
    std::fs::write(out.join("cluster.csv"), csv)?;
    if !all_correct {
        return Err("a result differed from the per-GPU fold".into());
    }
    Ok(())
}
