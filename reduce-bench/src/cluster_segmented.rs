//! `bench_cluster`'s segmented section: `Cluster::reduce_segments` (CSR offsets, owned
//! placement, f32 sums) in the default mode and with `SegConfig::portable` (one GPU's bits for
//! any shards: each shard reduced in aligned blocks, the crossing segments joined on the host),
//! interleaved, against one GPU's own `Gpu::reduce_segments` of rank 0's shard. Shards of the
//! same length that cut segments (and runs) anywhere; mean segment lengths 30 and 3000. The
//! portable results are checked bit for bit against `reduce_core::portable::fold_segments`.
//! Writes `cluster-segmented.csv`.

use crate::cluster_timing::{exchange_name, interleaved_medians, Result};
use crate::kernels::BenchKernels;
use crate::layouts::{mean_length, to_u32};
use crate::monoids::masks_f32;
use reduce_cuda::cluster::{Cluster, Placement};
use reduce_cuda::{Gpu, SegConfig, Sum};
use std::fmt::Write as _;

/// One measured configuration.
pub(crate) struct SegRow {
    exchange: &'static str,
    gpus: usize,
    n_per_gpu: usize,
    mean_len: usize,
    default_ms: f64,
    portable_ms: f64,
    single_ms: f64,
    correct: bool,
}

/// The section for one cluster: about `n` f32 in [1, 2) per GPU (random, filled on each GPU by
/// its `kernels`) at each mean length.
pub(crate) fn measure(
    cluster: &Cluster,
    kernels: &[BenchKernels],
    n: usize,
    reps: usize,
) -> Result<Vec<SegRow>> {
    let gpus = cluster.world_size();
    let total = n * gpus;
    // Shards of n items, with the first boundary a few items off a run boundary.
    let mut lens = vec![n; gpus];
    if gpus > 1 {
        lens[0] += 5;
        lens[gpus - 1] -= 5;
    }
    let mut parts = Vec::with_capacity(gpus);
    let mut items = Vec::with_capacity(total);
    for (r, (k, &len)) in kernels.iter().zip(&lens).enumerate() {
        let gpu = cluster.gpu(r).expect("local rank");
        let filled = k.fill_random::<Sum<f32>>(len, 0x5eed + r as u64, &masks_f32())?;
        let part = gpu.copy(filled.items())?;
        items.extend(gpu.download(&part)?);
        parts.push(part);
    }
    let xs = cluster.shard(parts)?;
    let mut rows = Vec::new();
    for mean in [30usize, 3000] {
        let offsets = to_u32(&mean_length(mean as u64, total as u64, 7));
        let want = reduce_cuda::reduce_core::portable::fold_segments(&items, &offsets)?;
        let portable = SegConfig::default().portable();
        let result = cluster.reduce_segments(&xs, &offsets, portable, Placement::Owned)?;
        let mut got = Vec::new();
        for part in result.parts() {
            got.extend(
                cluster
                    .gpu(part.rank)
                    .expect("local")
                    .download(&part.values)?,
            );
        }
        let correct = got.len() == want.len()
            && got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.0.to_bits() == b.0.to_bits() || (a.0.is_nan() && b.0.is_nan()));
        // Rank 0's shard alone on its GPU, with its own offsets.
        let gpu: &Gpu = cluster.gpu(0).expect("rank 0 is local");
        let local = result.plan().local_offsets(&offsets, 0)?;
        let local = gpu.upload(&local)?;
        let part = xs.part(0).expect("rank 0 is local");
        let config = SegConfig::default();
        let mut calls: Vec<Box<dyn FnMut() -> Result<()> + '_>> = vec![
            Box::new(|| {
                Ok(cluster
                    .reduce_segments(&xs, &offsets, config, Placement::Owned)
                    .map(drop)?)
            }),
            Box::new(|| {
                Ok(cluster
                    .reduce_segments(&xs, &offsets, portable, Placement::Owned)
                    .map(drop)?)
            }),
            Box::new(|| Ok(gpu.reduce_segments(part, &local, config).map(drop)?)),
        ];
        let medians = interleaved_medians(reps, &mut calls)?;
        let row = SegRow {
            exchange: exchange_name(cluster),
            gpus,
            n_per_gpu: n,
            mean_len: mean,
            default_ms: medians[0],
            portable_ms: medians[1],
            single_ms: medians[2],
            correct,
        };
        eprintln!(
            "  segmented {:5} GPUs {gpus} n/GPU=2^{:<2} mean {mean:4} default {:.4} ms portable {:.4} ms ({:.2}x) | 1 GPU alone {:.4} ms | portable bits {}",
            row.exchange,
            n.trailing_zeros(),
            row.default_ms,
            row.portable_ms,
            row.portable_ms / row.default_ms,
            row.single_ms,
            if correct { "yes" } else { "NO" }
        );
        rows.push(row);
    }
    Ok(rows)
}

/// Prints the section and writes `cluster-segmented.csv` in `out`.
pub(crate) fn report(rows: &[SegRow], out: &std::path::Path) -> Result<()> {
    let mut csv = String::from(
        "exchange,gpus,n_per_gpu,mean_len,default_ms,portable_ms,single_ms,portable_cost,correct\n",
    );
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.5},{:.5},{:.5},{:.4},{}",
            r.exchange,
            r.gpus,
            r.n_per_gpu,
            r.mean_len,
            r.default_ms,
            r.portable_ms,
            r.single_ms,
            r.portable_ms / r.default_ms,
            r.correct
        );
    }
    println!("\n== segmented (reduce_segments, f32 sum, owned): portable against default\n{csv}");
    std::fs::write(out.join("cluster-segmented.csv"), csv)?;
    if rows.iter().any(|r| !r.correct) {
        return Err("the portable segmented results differ from portable::fold_segments".into());
    }
    Ok(())
}
