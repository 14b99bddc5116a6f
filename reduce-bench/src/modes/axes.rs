//! `bench axes [--out DIR] [--log2 N]`: reductions along the axes of arrays of 2^N f32 items
//! (default 2^26; issue 13 also asks for 2^28 on an H200):
//! the rows and the columns of (R, C)
//! matrices from C = 1 to the whole array, the middle axis of (B, K, C) batches, and lifted
//! ArgMax and log-sum-exp per row of logits, the affine monoid (not commutative: the order kept)
//! on some of the shapes, against the read roof of the same buffer in the
//! same command: ×roof = roof time × (bytes moved / bytes read by the roof) / time, the bytes
//! moved being the input read and the results written; where every item is its own result (a
//! copy through the lift: rows of 1, columns of one row) against the copy roof the same way,
//! its bytes moved being the buffer read and written; the logits, which read a prefix of the
//! buffer, against the read roof of that prefix (`axes.csv`, `axes.txt`, and the figure
//! `axes.svg`: GB/s against the row length, both axes, ours and the peers'). With `--torch`
//! and `--cub` (the outputs of `anchors/torch_axes.py` and `anchors/cub_axes.cu` from the same
//! command), each row also gets the peer's time ÷ ours (above 1: ours is faster): `torch.sum`,
//! `torch.argmax` and `torch.logsumexp` along the same dim, CUB's `DeviceSegmentedReduce` on
//! rows.

use crate::anchors::read_cub;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::monoids::{masks_affine, masks_f32, Affine, ArgMax, LogSumExp};
use crate::output::{report, svg_plot};
use crate::timing::{median_ms, REPS};
use reduce_cuda::{AxisAlgorithm, CudaMonoid, DeviceSlice, Gpu, Lift, Sum};
use std::fmt::Write as _;

/// (rows, vocabulary) of the logits per row: a vocabulary of 32000 in up to 4096 rows (2048 at
/// 2^26 items), 32 rows of 128000, 2^20 rows of 64. The anchors take the same shapes.
pub(super) fn logits(n: usize) -> [(usize, usize); 3] {
    [((n >> 15).min(4096), 32_000), (32, 128_000), (1 << 20, 64)]
}

/// (label, shape, axes) of the f32 sums over `n` items.
pub(super) fn cases(n: usize) -> Vec<(String, Vec<usize>, Vec<usize>)> {
    let mut cases = Vec::new();
    for c in [1usize, 2, 4, 8, 16, 64, 256, 4096, 1 << 16, 1 << 20, n] {
        let shape = vec![n / c, c];
        cases.push((format!("rows of {c}"), shape.clone(), vec![1]));
        cases.push((
            format!("columns of {} ({c} of them)", n / c),
            shape,
            vec![0],
        ));
    }
    for (b, k, c) in [
        (64, 1024, 1024),
        (1024, 64, 1024),
        (16, 4096, 1024),
        (4096, 16, 1024),
        (1024, 1024, 64),
    ] {
        // (B, K, C) of 2^26 items, B scaled for other sizes
        let b = b * n / (1 << 26);
        cases.push((format!("middle of ({b}; {k}; {c})"), vec![b, k, c], vec![1]));
    }
    cases
}

pub fn axes(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let log2 = args.log2.unwrap_or(26);
    assert!(
        log2 >= 26,
        "bench axes takes --log2 26 or more (its shapes are of 2^26 items and up)"
    );
    let n = 1usize << log2;
    let mut peers = read_cub(&args.torch);
    peers.extend(read_cub(&args.cub));
    let mut csv = String::from(
        "case,shape,axes,median_ms,gbs_moved,ratio_to_roof,torch_over_ours,cub_over_ours\n",
    );
    let mut lines = vec![format!("device {}", gpu.info().name)];
    let xs = kernels.fill_random::<Sum<f32>>(n, 26, &masks_f32())?;
    let roof = kernels.read_roof_ms(&xs, REPS)?;
    let in_bytes = (n * 4) as f64;
    let copy = kernels.copy_roof_ms(&xs, REPS)?;
    lines.push(format!(
        "read roof: {roof:.4} ms for {n} f32 ({:.1} GB/s); copy roof: {copy:.4} ms ({:.1} GB/s moved)",
        in_bytes / (roof as f64 * 1e6),
        2.0 * in_bytes / (copy as f64 * 1e6)
    ));
    // ×roof against the measured roof scaled to the bytes moved: items of `in_size` bytes read,
    // results of `out_size` written; a copy (as many results as items) against the copy roof.
    // `ops`: the peers' names of the operation (torch's, CUB's), or none. `own_roof`: a case
    // that reads only a prefix of the buffer (the logits) is set against the read roof of that
    // prefix, (ms, bytes), measured in the same command.
    let mut roof_lines = Vec::new();
    let mut row = |label: &str,
                   shape: &[usize],
                   axes: &[usize],
                   sizes: (usize, usize),
                   ms: f32,
                   ops: Option<(&str, &str)>,
                   own_roof: Option<(f32, f64)>| {
        let (roof, in_bytes) = own_roof.unwrap_or((roof, in_bytes));
        let items = shape.iter().product::<usize>();
        let read = (items * sizes.0) as f64;
        let results = results_of(shape, axes);
        let moved = read + (results * sizes.1) as f64;
        let ratio = if results == items {
            copy as f64 * (moved / (2.0 * in_bytes)) / ms as f64
        } else {
            roof as f64 * (moved / in_bytes) / ms as f64
        };
        let gbs = moved / (ms as f64 * 1e6);
        let shape = shape
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("x");
        let axes = axes
            .iter()
            .map(|a| a.to_string())
            .collect::<Vec<_>>()
            .join(" ");
        // the peer's time over ours, where it ran and its check passed
        let over = |peer: &str, op: &str| {
            let key = (format!("{peer}_{op}:{shape}:{axes}"), items);
            match peers.get(&key) {
                Some((peer_ms, verdict)) if verdict != "NO" => {
                    format!("{:.2}", peer_ms / ms as f64)
                }
                _ => String::new(),
            }
        };
        let (torch, cub) = ops.map_or((String::new(), String::new()), |(t, c)| {
            (over("torch", t), over("cub", c))
        });
        let mut line = format!("{label:<40} {ms:>8.4} ms {gbs:>8.1} GB/s  x roof {ratio:.3}");
        if !torch.is_empty() {
            let _ = write!(line, "  torch/ours {torch}");
        }
        if !cub.is_empty() {
            let _ = write!(line, "  cub/ours {cub}");
        }
        lines.push(line);
        let _ = writeln!(
            csv,
            "{label},{shape},{axes},{ms},{gbs},{ratio},{torch},{cub}"
        );
    };
    for (label, shape, axes) in cases(n) {
        let ms = timed(&gpu, xs.items(), &shape, &axes)?;
        row(
            &label,
            &shape,
            &axes,
            (4, 4),
            ms,
            Some(("sum", "sum")),
            None,
        );
    }
    // The affine monoid (8 bytes, not commutative: every schedule keeps the order).
    let affine = kernels.fill_random::<Affine>(n / 2, 27, &masks_affine())?;
    for (label, shape, axes) in cases(n / 2) {
        let picked = ["rows of 64", "rows of 4096", "rows of 1048576", "middle of"];
        let few_columns = [2, 4, 8, 64].contains(&shape[1]) && axes == [0];
        if picked.iter().any(|c| label.starts_with(c)) || few_columns {
            let ms = timed(&gpu, affine.items(), &shape, &axes)?;
            row(
                &format!("affine {label}"),
                &shape,
                &axes,
                (8, 8),
                ms,
                None,
                None,
            );
        }
    }
    // Logits: (rows, vocabulary), per row, lifted with the flat index.
    for (rows, vocab) in logits(n) {
        let count = rows * vocab;
        let prefix = xs.prefix(&gpu, count)?;
        // SAFETY: the same live memory read as f32 (Sum<f32> is a transparent f32).
        let values = unsafe { DeviceSlice::<f32>::from_raw(prefix.address(), count, &gpu)? };
        let shape = [rows, vocab];
        let own_roof = (
            kernels.read_roof_prefix_ms(&xs, count * 4, REPS)?,
            (count * 4) as f64,
        );
        roof_lines.push(format!(
            "read roof of the first {count} f32 (the logits of {rows} x {vocab}): {:.4} ms ({:.1} GB/s)",
            own_roof.0,
            own_roof.1 / (own_roof.0 as f64 * 1e6)
        ));
        let argmax = per_row::<ArgMax>(&gpu, &values, &shape)?;
        row(
            &format!("argmax per row of {vocab} ({rows} rows)"),
            &shape,
            &[1],
            (4, 8),
            argmax,
            Some(("argmax", "argmax")),
            Some(own_roof),
        );
        let lse = per_row::<LogSumExp>(&gpu, &values, &shape)?;
        let label = format!("log-sum-exp per row of {vocab} ({rows} rows)");
        row(
            &label,
            &shape,
            &[1],
            (4, 8),
            lse,
            Some(("logsumexp", "logsumexp")),
            Some(own_roof),
        );
    }
    let roof_gbs = in_bytes / (roof as f64 * 1e6);
    std::fs::write(
        args.out.join("axes.svg"),
        plot(&csv, roof_gbs, n.trailing_zeros()),
    )
    .expect("writing axes.svg");
    std::fs::write(args.out.join("axes.csv"), csv).expect("writing axes.csv");
    lines.extend(roof_lines);
    report(&args.out, "axes.txt", &lines);
    Ok(())
}

/// The figure of `axes.csv`'s f32 sums over (R, C) matrices: GB/s moved against log2 C, rows
/// (axis 1) and columns (axis 0), ours and the peers' (their time on the same bytes), and the
/// read roof.
fn plot(csv: &str, roof_gbs: f64, log2: u32) -> String {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = [
        "ours, rows",
        "ours, columns",
        "torch.sum, rows",
        "torch.sum, columns",
        "CUB segmented, rows",
    ]
    .iter()
    .map(|name| (name.to_string(), Vec::new()))
    .collect();
    let mut xs = Vec::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let dims: Vec<f64> = f[1].split('x').filter_map(|e| e.parse().ok()).collect();
        let rows = f[0].starts_with("rows of ");
        if dims.len() != 2 || !(rows || f[0].starts_with("columns of ")) {
            continue;
        }
        let (x, gbs) = (dims[1].log2(), f[4].parse::<f64>().unwrap_or(f64::NAN));
        xs.push(x);
        let peer = |over: &str| over.parse::<f64>().map_or(f64::NAN, |o| gbs / o);
        let at = if rows { 0 } else { 1 };
        series[at].1.push((x, gbs));
        series[2 + at].1.push((x, peer(f[6])));
        if rows {
            series[4].1.push((x, peer(f[7])));
        }
    }
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    series.push((
        "read roof".to_string(),
        vec![(lo, roof_gbs), (hi, roof_gbs)],
    ));
    svg_plot(
        &format!("f32 sums along an axis of (2^{log2} / C, C)"),
        "log2 C (the row length)",
        "GB/s moved",
        &series,
    )
}

/// The number of results of reducing `axes` of `shape`.
pub(super) fn results_of(shape: &[usize], axes: &[usize]) -> usize {
    (shape.iter().enumerate())
        .filter(|(a, _)| !axes.contains(a))
        .map(|(_, e)| e)
        .product()
}

/// The median time of reducing `axes` of `shape` of the items `xs` into a buffer of the results.
fn timed<M: CudaMonoid>(
    gpu: &Gpu,
    xs: &DeviceSlice<M>,
    shape: &[usize],
    axes: &[usize],
) -> reduce_cuda::Result<f32> {
    let mut out = gpu.identities::<M>(results_of(shape, axes))?;
    median_ms(gpu, REPS, || {
        gpu.reduce_axes_into(xs, shape, axes, &mut out, AxisAlgorithm::Auto)
    })
}

/// The median time of reducing every row of the (rows, vocabulary) `shape` of `values`, lifted
/// into `M`.
fn per_row<M: CudaMonoid + Lift<f32>>(
    gpu: &Gpu,
    values: &DeviceSlice<f32>,
    shape: &[usize; 2],
) -> reduce_cuda::Result<f32> {
    let mut out = gpu.identities::<M>(shape[0])?;
    median_ms(gpu, REPS, || {
        gpu.reduce_axes_lifted_into::<M, f32>(values, shape, &[1], &mut out, AxisAlgorithm::Auto)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_figure_has_a_line_per_series() {
        let csv =
            "case,shape,axes,median_ms,gbs_moved,ratio_to_roof,torch_over_ours,cub_over_ours\n\
                   rows of 2,8x2,1,1,3000,0.9,2.00,100\n\
                   columns of 8 (2 of them),8x2,0,1,2500,0.8,1.25,\n\
                   rows of 4,4x4,1,1,3100,0.9,,\n\
                   middle of (2; 2; 2),2x2x2,1,1,2000,0.5,1,\n";
        let svg = super::plot(csv, 4000.0, 26);
        // ours (rows, columns), torch (rows, columns), CUB rows, the roof
        assert_eq!(svg.matches("<polyline").count(), 6, "{svg}");
    }
}
