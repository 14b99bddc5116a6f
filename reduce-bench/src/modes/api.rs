//! `bench api [--quick] [--out DIR] [--cub FILE] [--torch FILE]`: every public call timed as a
//! user calls it — allocating forms, `_into` forms, `reduce` returning its value to the host
//! (also in the portable mode: `reduce (portable)`), upload + reduce — by the host clock around
//! the call and a synchronisation (median of many calls after a warm-up), beside the time of the
//! kernels behind it (CUDA events around the `_into` form). Plain at 2^10, 2^16, 2^20, 2^24 and
//! 2^28 items (f32 sum, affine maps, lifted f32 ArgMax); segmented on every distribution of
//! `bench segmented` at both its sizes (30 x 2^20 and 2^26 f32 items, both forms); the scans
//! (plain: into a buffer, allocating, in place; by the offsets of each distribution: into a
//! buffer and allocating); a loop of allocating calls whose sizes change from call to call (the
//! pool must serve mixed sizes). CUB (`DeviceReduce` + a copy into pinned memory + a
//! synchronisation, `anchors/cub_latency.cu`) and PyTorch (`anchors/torch_api.py`) from the same
//! device command, by the same host clock. Writes `api.csv`.

use crate::anchors::read_api_refs;
use crate::cli::Args;
use crate::kernels::{BenchKernels, Filled};
use crate::layouts::{distribution, key, DISTRIBUTIONS};
use crate::monoids::{masks_affine, masks_f32, Affine, ArgMax};
use crate::seg_common::DeviceLayout;
use crate::timing::{host_median_us, median_ms, REPS};
use reduce_cuda::{
    Algorithm, Config, CudaMonoid, DeviceInput, DeviceSlice, Gpu, Scan, ScanAlgorithm,
    SegAlgorithm, Sum,
};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Host-timed calls per point.
const CALLS: usize = 50;

/// One measured call.
struct Row {
    call: &'static str,
    monoid: &'static str,
    n: u64,
    layout: String,
    host_us: f64,
    kernel_us: f64,
}

impl Row {
    fn anchor_key(&self, peer: &str) -> String {
        format!(
            "{peer} {} {} {}",
            self.call,
            self.monoid,
            key(&self.layout, self.n)
        )
    }
}

/// The plain calls on `items` (a `DeviceInput<M>` of `n` items, with a host copy).
fn plain_rows<M: CudaMonoid>(
    gpu: &Gpu,
    monoid: &'static str,
    items: &impl DeviceInput<M>,
    host: &[M],
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<()> {
    let n = host.len() as u64;
    let mut out = gpu.identities::<M>(1)?;
    let kernel_us = median_ms(gpu, REPS, || {
        gpu.reduce_into(items, &mut out, Algorithm::Auto)
    })? as f64
        * 1e3;
    let mut row = |call, host_us| {
        rows.push(Row {
            call,
            monoid,
            n,
            layout: "plain".into(),
            host_us,
            kernel_us,
        })
    };
    row(
        "reduce_into",
        host_median_us(gpu, CALLS, || {
            gpu.reduce_into(items, &mut out, Algorithm::Auto)
        })?,
    );
    row(
        "reduce",
        host_median_us(gpu, CALLS, || gpu.reduce(items, Algorithm::Auto).map(drop))?,
    );
    row(
        "upload+reduce",
        host_median_us(gpu, CALLS.min(16), || {
            gpu.reduce(&gpu.upload(host)?, Algorithm::Auto).map(drop)
        })?,
    );
    // The portable mode as users call it (its own kernels' time beside it).
    let portable = Config::default().portable();
    let kernel_us =
        median_ms(gpu, REPS, || gpu.reduce_into(items, &mut out, portable))? as f64 * 1e3;
    let host_us = host_median_us(gpu, CALLS, || gpu.reduce(items, portable).map(drop))?;
    rows.push(Row {
        call: "reduce (portable)",
        monoid,
        n,
        layout: "plain".into(),
        host_us,
        kernel_us,
    });
    Ok(())
}

/// The scans of `items` (n items) as users call them: into a buffer, allocating, in place; the
/// kernels' time of the `_into` form beside them.
fn scan_rows<M: CudaMonoid>(
    gpu: &Gpu,
    monoid: &'static str,
    items: &impl DeviceInput<M>,
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<()> {
    let (n, kind, auto) = (items.len(), Scan::Inclusive, ScanAlgorithm::Auto);
    let mut out = gpu.identities::<M>(n)?;
    let kernel_us =
        median_ms(gpu, REPS, || gpu.scan_into(items, kind, &mut out, auto))? as f64 * 1e3;
    let into_us = host_median_us(gpu, CALLS, || gpu.scan_into(items, kind, &mut out, auto))?;
    let alloc_us = host_median_us(gpu, CALLS, || gpu.scan(items, kind, auto).map(drop))?;
    // (in place the values change from call to call, f32 sums to +inf: not the time)
    let in_place_us = host_median_us(gpu, CALLS, || gpu.scan_in_place(&mut out, kind, auto))?;
    for (call, host_us) in [
        ("scan_into", into_us),
        ("scan", alloc_us),
        ("scan_in_place", in_place_us),
    ] {
        rows.push(Row {
            call,
            monoid,
            n: n as u64,
            layout: "plain".into(),
            host_us,
            kernel_us,
        });
    }
    Ok(())
}

/// The segmented calls on `sums` (n items) over distribution `dist`, both forms: the kernels,
/// the `_into` form and the allocating form. Returns the layout.
fn segmented_rows(
    gpu: &Gpu,
    sums: &Filled<Sum<f32>>,
    n: u64,
    dist: &str,
    rows: &mut Vec<Row>,
) -> reduce_cuda::Result<DeviceLayout> {
    let auto = SegAlgorithm::Auto;
    let offsets = distribution(dist, n, 7).unwrap();
    let layout = DeviceLayout::new(gpu, &offsets)?;
    let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
    // The scan by the same offsets, validated (the default): into a buffer and allocating.
    let (kind, scan_auto) = (Scan::Inclusive, ScanAlgorithm::Auto);
    let mut scanned = gpu.identities::<Sum<f32>>(n as usize)?;
    let mut scan_into = || {
        gpu.scan_segments_into(
            sums.items(),
            layout.offsets(),
            kind,
            &mut scanned,
            scan_auto,
        )
    };
    let kernel_us = median_ms(gpu, REPS, &mut scan_into)? as f64 * 1e3;
    let into_us = host_median_us(gpu, CALLS, scan_into)?;
    let alloc_us = host_median_us(gpu, CALLS, || {
        gpu.scan_segments(sums.items(), layout.offsets(), kind, scan_auto)
            .map(drop)
    })?;
    for (call, host_us) in [("scan_segments_into", into_us), ("scan_segments", alloc_us)] {
        rows.push(Row {
            call,
            monoid: "f32_sum",
            n,
            layout: dist.into(),
            host_us,
            kernel_us,
        });
    }
    for form in ["offsets", "owner"] {
        let kernel_us = layout.time(gpu, sums.items(), &mut out, form, auto.into())? as f64 * 1e3;
        let into_us = host_median_us(gpu, CALLS, || {
            layout.run(gpu, sums.items(), &mut out, form, auto.into())
        })?;
        let alloc_us = host_median_us(gpu, CALLS, || {
            layout.allocating(gpu, sums.items(), form, auto.into())
        })?;
        let (into, allocating) = match form {
            "offsets" => ("reduce_segments_into", "reduce_segments"),
            _ => ("reduce_by_owner_into", "reduce_by_owner"),
        };
        for (call, host_us) in [(into, into_us), (allocating, alloc_us)] {
            rows.push(Row {
                call,
                monoid: "f32_sum",
                n,
                layout: dist.into(),
                host_us,
                kernel_us,
            });
        }
    }
    eprintln!("api: segmented {dist} at n = {n} done");
    Ok(layout)
}

/// `bench api`: see the module's docs.
pub fn api(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs: HashMap<String, f64> = read_api_refs(&args.cub)
        .into_iter()
        .chain(read_api_refs(&args.torch))
        .collect();
    let mut rows = Vec::new();
    let logs: &[u32] = if args.quick {
        &[10, 16, 20, 24]
    } else {
        &[10, 16, 20, 24, 28]
    };
    for &log in logs {
        let n = 1usize << log;
        let sums = kernels.fill_random::<Sum<f32>>(n, 3, &masks_f32())?;
        let host_sums = gpu.download(sums.items())?;
        plain_rows(&gpu, "f32_sum", sums.items(), &host_sums, &mut rows)?;
        scan_rows(&gpu, "f32_sum", sums.items(), &mut rows)?;
        let affine = kernels.fill_random::<Affine>(n, 4, &masks_affine())?;
        let host_affine = gpu.download(affine.items())?;
        plain_rows(&gpu, "affine", affine.items(), &host_affine, &mut rows)?;
        scan_rows(&gpu, "affine", affine.items(), &mut rows)?;
        // Lifted: f32 items, (max, index) values.
        let floats = kernels.fill_random::<f32>(n, 5, &masks_f32())?;
        let mut out = gpu.identities::<ArgMax>(1)?;
        let kernel_us = median_ms(&gpu, REPS, || {
            gpu.reduce_lifted_into::<ArgMax, f32>(floats.items(), &mut out, Algorithm::Auto)
        })? as f64
            * 1e3;
        let host_us = host_median_us(&gpu, CALLS, || {
            gpu.reduce_lifted::<ArgMax, f32>(floats.items(), Algorithm::Auto)
                .map(drop)
        })?;
        rows.push(Row {
            call: "reduce_lifted",
            monoid: "argmax_f32",
            n: n as u64,
            layout: "plain".into(),
            host_us,
            kernel_us,
        });
        eprintln!("api: plain n = 2^{log} done");
    }

    // Segmented: every distribution, f32 sum, both forms, validated (the default), at both sizes
    // of `bench segmented`; the loop of changing sizes below runs on the larger.
    let sizes: &[u64] = if args.quick {
        &[1 << 24]
    } else {
        &[30 << 20, 1 << 26]
    };
    let auto = SegAlgorithm::Auto;
    for &n in &sizes[..sizes.len() - 1] {
        let sums = kernels.fill_random::<Sum<f32>>(n as usize, 6, &masks_f32())?;
        for dist in DISTRIBUTIONS {
            segmented_rows(&gpu, &sums, n, dist, &mut rows)?;
        }
    }
    let n = sizes[sizes.len() - 1];
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 6, &masks_f32())?;
    let mut layouts: Vec<DeviceLayout> = Vec::new();
    for dist in DISTRIBUTIONS {
        layouts.push(segmented_rows(&gpu, &sums, n, dist, &mut rows)?);
    }

    // Sizes changing from call to call: each call takes the next distribution, every other
    // one over half the items (so the outputs' sizes change too).
    let halves: Vec<DeviceLayout> = DISTRIBUTIONS
        .iter()
        .map(|dist| DeviceLayout::new(&gpu, &distribution(dist, n / 2, 11).unwrap()))
        .collect::<reduce_cuda::Result<_>>()?;
    let half = sums.prefix(&gpu, n as usize / 2)?;
    let calls: Vec<(&DeviceLayout, &DeviceSlice<Sum<f32>>)> = layouts
        .iter()
        .zip(&halves)
        .flat_map(|(whole, halved)| [(whole, sums.items()), (halved, &half)])
        .collect();
    for allocating in [false, true] {
        let mut k = 0usize;
        let host_us = host_median_us(&gpu, 4 * CALLS, || {
            let (layout, items) = calls[k % calls.len()];
            k += 1;
            if allocating {
                layout.allocating(&gpu, items, "offsets", auto.into())
            } else {
                let mut out = gpu.zeroed::<Sum<f32>>(layout.segments)?;
                layout.run(&gpu, items, &mut out, "offsets", auto.into())
            }
        })?;
        rows.push(Row {
            call: if allocating {
                "reduce_segments (sizes changing)"
            } else {
                "zeroed + reduce_segments_into (sizes changing)"
            },
            monoid: "f32_sum",
            n,
            layout: "mixed".into(),
            host_us,
            kernel_us: f64::NAN,
        });
    }
    let usage = gpu.pool_usage()?;
    println!(
        "memory pool after the run: {} MiB held, {} MiB in use",
        usage.held >> 20,
        usage.in_use >> 20
    );

    let mut csv =
        String::from("call,monoid,n,layout,host_us,kernel_us,host_over_kernel,cub_us,torch_us\n");
    println!(
        "{}",
        table_line(&[
            "call", "monoid", "n", "layout", "host us", "kernel", "x", "CUB us", "torch us"
        ])
    );
    for r in &rows {
        let cub = refs.get(&r.anchor_key("cub_api")).copied();
        let torch = refs.get(&r.anchor_key("torch_api")).copied();
        let opt = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.2}"));
        let cells = [
            r.call.to_string(),
            r.monoid.to_string(),
            r.n.to_string(),
            r.layout.clone(),
            format!("{:.2}", r.host_us),
            format!("{:.2}", r.kernel_us),
            format!("{:.3}", r.host_us / r.kernel_us),
            opt(cub),
            opt(torch),
        ];
        let _ = writeln!(csv, "{}", cells.join(","));
        println!("{}", table_line(&cells));
    }
    std::fs::write(args.out.join("api.csv"), &csv).expect("writing api.csv");
    Ok(())
}

/// One line of the printed table: the call, the monoid and the layout to the left, numbers to
/// the right.
fn table_line(cells: &[impl AsRef<str>]) -> String {
    const WIDTHS: [usize; 9] = [58, 10, 10, 13, 9, 9, 6, 8, 8];
    let line: Vec<String> = cells
        .iter()
        .zip(WIDTHS)
        .enumerate()
        .map(|(i, (c, w))| match i {
            0 | 1 | 3 => format!("{:<w$}", c.as_ref()),
            _ => format!("{:>w$}", c.as_ref()),
        })
        .collect();
    line.join(" ")
}
