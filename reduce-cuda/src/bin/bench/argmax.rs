//! The lifted modes of `bench`: `argmax` (f32 items straight into (max, first index)) and
//! `segargmax` (the same per segment), against CUB, PyTorch and the read roof.

use crate::segmented::read_refs;
use crate::{masks_f32, read_cub, report, Args, REPS};
use reduce_cuda::bench::layouts::{self, distribution, DISTRIBUTIONS};
use reduce_cuda::bench::{median_ms, BenchKernels};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{Algorithm, Config, DeviceVec, Gpu, Lift, Monoid, SegAlgorithm, SegConfig};
use std::fmt::Write as _;

/// The maximum and its first index (NaN-free data), lifted from f32 items.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = ArgMax { v: f32::NEG_INFINITY, i: u32::MAX },
    combine = |l, r| if r.v > l.v || (r.v == l.v && r.i < l.i) { r } else { l },
    commutative,
    lift(f32) = |x, i| ArgMax { v: x, i: i as u32 }
)]
struct ArgMax {
    v: f32,
    i: u32,
}

/// `bench argmax [--quick] [--out DIR] [--cub FILE] [--torch FILE]`: a lifted reduction
/// (transform-reduce) of f32 items straight into (max, first index), against CUB's
/// `DeviceReduce::ArgMax` (`scripts/argmax_anchor.cu`) and `torch.argmax`
/// (`scripts/argmax_torch.py`) from the same device command, and against the read roof on the
/// input bytes. Also reduces materialised (value, index) items, which reads twice the bytes.
pub fn argmax(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let cub = read_cub(&args.cub);
    let torch = read_cub(&args.torch);
    println!(
        "device {} ({} SMs, L2 {} MB)",
        gpu.info().name,
        gpu.info().multiprocessors,
        gpu.info().l2_bytes >> 20
    );
    let sizes: &[u32] = if args.quick {
        &[24, 28]
    } else {
        &[20, 24, 26, 28]
    };
    let mut csv = String::from(
        "n,variant,median_ms,gbs_input,ratio_to_roof,ratio_to_cub,ratio_to_torch,correct\n",
    );
    let mut lines = Vec::new();
    for &log2 in sizes {
        let n = 1usize << log2;
        let bytes = n * 4;
        let rotation = (4 * gpu.info().l2_bytes).div_ceil(bytes).clamp(1, 16);
        let buffers: Vec<DeviceVec<f32>> = (0..rotation)
            .map(|i| kernels.fill_random::<f32>(n, 11 + i as u64 * 7919 + n as u64, &masks_f32()))
            .collect::<Result<_, _>>()?;
        let roof = kernels.read_roof_ms(&buffers[0], REPS)?;
        let host = gpu.download(&buffers[0])?;
        // The first maximum, on the CPU.
        let want = host
            .iter()
            .enumerate()
            .fold(ArgMax::identity(), |acc, (i, &x)| {
                ArgMax::combine(acc, ArgMax::lift(x, i as u64))
            });
        let mut out = gpu.identities::<ArgMax>(1)?;
        let mut rows: Vec<(String, f32, f64, bool)> = Vec::new();
        for (label, config) in [
            ("lifted Auto", Config::new(Algorithm::Auto)),
            (
                "lifted Shuffle (order-keeping)",
                Config::new(Algorithm::Shuffle),
            ),
        ] {
            let mut i = 0usize;
            let ms = median_ms(&gpu, REPS, || {
                i += 1;
                gpu.reduce_lifted_into::<ArgMax, f32>(&buffers[i % rotation], &mut out, config)
            })?;
            let got: ArgMax = gpu.reduce_lifted(&buffers[0], config)?;
            rows.push((label.to_string(), ms, bytes as f64, got == want));
        }
        // Materialised (value, index) items: what a reduction without lifts has to read.
        if n * 8 < gpu.memory_info()?.0 / 3 {
            let items: Vec<ArgMax> = host
                .iter()
                .enumerate()
                .map(|(i, &x)| ArgMax::lift(x, i as u64))
                .collect();
            let dev = gpu.upload(&items)?;
            drop(items);
            let ms = median_ms(&gpu, REPS, || {
                gpu.reduce_into(&dev, &mut out, Algorithm::Auto)
            })?;
            let got = gpu.reduce(&dev, Algorithm::Auto)?;
            rows.push((
                "materialised Auto".to_string(),
                ms,
                bytes as f64,
                got == want,
            ));
        }
        let cub_ms = cub.get(&("cub_argmax_f32".to_string(), n)).map(|c| c.0);
        let torch_ms = torch.get(&("torch_argmax_f32".to_string(), n)).map(|c| c.0);
        lines.push(format!(
            "argmax n=2^{log2}: read roof {:.1} GB/s; CUB ArgMax {}; torch.argmax {}; first max at {}",
            bytes as f64 / (roof as f64 * 1e6),
            cub_ms.map_or("-".into(), |ms| format!("{:.1} GB/s", bytes as f64 / (ms * 1e6))),
            torch_ms.map_or("-".into(), |ms| format!("{:.1} GB/s", bytes as f64 / (ms * 1e6))),
            want.i
        ));
        for (label, ms, input_bytes, correct) in rows {
            let gbs = input_bytes / (ms as f64 * 1e6);
            let roof_ratio = roof as f64 / ms as f64;
            let vs = |other: Option<f64>| {
                other.map_or("-".to_string(), |o| format!("{:.2}", o / ms as f64))
            };
            lines.push(format!(
                "  {label:<32} {ms:>9.4} ms {gbs:>8.1} GB/s of input  x roof {roof_ratio:.3}  x CUB {}  x torch {}  correct {}",
                vs(cub_ms),
                vs(torch_ms),
                if correct { "yes" } else { "NO" }
            ));
            let _ = writeln!(
                csv,
                "{n},{label},{ms},{gbs},{roof_ratio},{},{},{correct}",
                cub_ms.map_or(String::new(), |c| (c / ms as f64).to_string()),
                torch_ms.map_or(String::new(), |t| (t / ms as f64).to_string())
            );
        }
        eprintln!("argmax: n = 2^{log2} done");
    }
    std::fs::write(args.out.join("argmax.csv"), csv).expect("writing argmax.csv");
    report(&args.out, "argmax.txt", &lines);
    Ok(())
}

/// The lifted part of the sanitizer workload: plain and segmented ArgMax lifted from f32, items
/// aligned and not (plain loads), u32 and u64 layouts with empty segments, small SegMerge
/// tiles over several blocks. Returns the number of mismatches.
pub fn sanitize(gpu: &Gpu, next: &mut impl FnMut() -> u32) -> reduce_cuda::Result<usize> {
    let n = 20_011;
    let xs: Vec<f32> = (0..n + 1).map(|_| (next() % 1000) as f32).collect();
    let all = gpu
        .stream()
        .clone_htod(&xs)
        .map_err(|source| reduce_cuda::Error::Driver {
            during: "uploading the sanitizer items",
            source,
        })?;
    let mut offsets = vec![0u64];
    while *offsets.last().unwrap() < n as u64 {
        let step = [0, 1, 2, 7, 300][next() as usize % 5];
        offsets.push((offsets.last().unwrap() + step).min(n as u64));
    }
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let mut failures = 0;
    for skip in [0, 1] {
        let items = all.slice(skip..skip + n);
        let host: Vec<ArgMax> = xs[skip..skip + n]
            .iter()
            .enumerate()
            .map(|(i, &x)| ArgMax::lift(x, i as u64))
            .collect();
        let want = Cpu::new().reduce_segments(&host, &offsets).expect("valid");
        let plain: ArgMax = gpu.reduce_lifted(&items, Algorithm::Auto)?;
        failures += usize::from(plain != reduce_cuda::fold(&host));
        let offsets32 = gpu.upload(&layouts::to_u32(&offsets))?;
        let offsets64 = gpu.upload(&offsets)?;
        for config in [
            merge,
            merge.trusted(),
            merge.block(64).items_per_thread(2).stages(3),
        ] {
            let a = gpu.reduce_segments_lifted::<ArgMax, f32>(&items, &offsets32, config)?;
            let b = gpu.reduce_segments_lifted::<ArgMax, f32>(&items, &offsets64, config)?;
            failures += usize::from(gpu.download(&a)? != want);
            failures += usize::from(gpu.download(&b)? != want);
        }
    }
    Ok(failures)
}

/// The item count of `bench segargmax`: the first size of `bench segmented`, whose layouts
/// `bench seglayouts` writes for the CUB anchor.
const SEG_N: u64 = 1 << 26;

/// `bench segargmax [--out DIR] [--cub FILE]`: ArgMax per segment lifted from f32 items, on
/// every distribution at N = 2^26, both forms; against CUB's `DeviceSegmentedReduce::ArgMax`
/// (`scripts/segargmax_anchor.cu`, same layouts, same device command), against the read roof
/// on the bytes that must move (items, layout, one result per segment), and against the same
/// reduction over materialised (value, index) items, which reads twice the item bytes.
pub fn segargmax(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs = read_refs(&args.cub);
    let n = SEG_N as usize;
    let xs = kernels.fill_random::<f32>(n, 21, &masks_f32())?;
    let roof_gbs = (n * 4) as f64 / (kernels.read_roof_ms(&xs, REPS)? as f64 * 1e6);
    let host: Vec<ArgMax> = gpu
        .download(&xs)?
        .iter()
        .enumerate()
        .map(|(i, &x)| ArgMax::lift(x, i as u64))
        .collect();
    let materialised = gpu.upload(&host)?;
    println!(
        "device {}: segmented ArgMax, n = 2^26 f32, read roof {roof_gbs:.0} GB/s",
        gpu.info().name
    );
    let cpu = Cpu::new();
    let auto = SegConfig::new(SegAlgorithm::Auto);
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let mut csv = String::from(
        "layout,segments,variant,median_ms,gbs_moved,ratio_to_roof,speedup_vs_cub,correct\n",
    );
    let mut lines = Vec::new();
    let (mut worst_roof, mut worst_cub) = (f64::INFINITY, f64::INFINITY);
    let mut wrong = 0;
    for dist in DISTRIBUTIONS {
        let offsets = distribution(dist, SEG_N, 7).unwrap();
        let segments = offsets.len() - 1;
        let want = cpu.reduce_segments(&host, &offsets).expect("valid layout");
        let dev_offsets = gpu.upload(&layouts::to_u32(&offsets))?;
        let dev_owner = gpu.upload(&layouts::owners(&offsets))?;
        let mut out = gpu.identities::<ArgMax>(segments)?;
        let results = (segments * 8) as f64;
        let csr = (4 * (segments + 1)) as f64;
        let cub_ms = refs.get(&format!("segmented_argmax_f32 {dist}@{SEG_N}"));
        type Run<'a> = Box<dyn FnMut(&mut DeviceVec<ArgMax>) -> reduce_cuda::Result<()> + 'a>;
        let variants: [(&str, f64, bool, Run); 6] = [
            (
                "lifted offsets Auto trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_lifted_into(&xs, &dev_offsets, out, auto.trusted())
                }),
            ),
            (
                "lifted offsets Auto validated",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| gpu.reduce_segments_lifted_into(&xs, &dev_offsets, out, auto)),
            ),
            (
                "lifted offsets SegMerge trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_lifted_into(&xs, &dev_offsets, out, merge.trusted())
                }),
            ),
            (
                "lifted offsets SegShuffle k16 trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    let config = shuffle.items_per_thread(16).trusted();
                    gpu.reduce_segments_lifted_into(&xs, &dev_offsets, out, config)
                }),
            ),
            (
                "lifted owner Auto trusted",
                8.0 * n as f64 + results,
                false,
                Box::new(|out| {
                    gpu.reduce_by_owner_lifted_into(&xs, &dev_owner, segments, out, auto.trusted())
                }),
            ),
            (
                "materialised offsets Auto trusted",
                8.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_into(&materialised, &dev_offsets, out, auto.trusted())
                }),
            ),
        ];
        lines.push(format!(
            "{dist}: {segments} segments; CUB DeviceSegmentedReduce::ArgMax {}",
            cub_ms.map_or("-".into(), |ms| format!("{ms:.4} ms"))
        ));
        for (label, bytes, offsets_form, mut run) in variants {
            let ms = median_ms(&gpu, REPS, || run(&mut out))? as f64;
            let correct = gpu.download(&out)? == want;
            let gbs = bytes / (ms * 1e6);
            let of_roof = gbs / roof_gbs;
            let vs_cub = cub_ms.filter(|_| offsets_form).map(|c| c / ms);
            if label == "lifted offsets Auto trusted" {
                worst_roof = worst_roof.min(of_roof);
                worst_cub = worst_cub.min(vs_cub.unwrap_or(f64::INFINITY));
            }
            lines.push(format!(
                "  {label:<34} {ms:>8.4} ms {gbs:>7.1} GB/s moved  x roof {of_roof:.3}  x CUB {}  correct {}",
                vs_cub.map_or("-".into(), |v| format!("{v:.2}")),
                if correct { "yes" } else { "NO" }
            ));
            let _ = writeln!(
                csv,
                "{dist},{segments},{label},{ms},{gbs},{of_roof},{},{correct}",
                vs_cub.map_or(String::new(), |v| v.to_string())
            );
            if !correct {
                eprintln!("ERROR: {dist} {label}: wrong result");
                wrong += 1;
            }
        }
        eprintln!("segargmax: {dist} done");
    }
    lines.push(format!(
        "lifted offsets Auto trusted, worst distribution: x roof {worst_roof:.3}, x CUB {}",
        if worst_cub.is_finite() {
            format!("{worst_cub:.2}")
        } else {
            "-".into()
        }
    ));
    std::fs::write(args.out.join("segargmax.csv"), csv).expect("writing segargmax.csv");
    report(&args.out, "segargmax.txt", &lines);
    if wrong > 0 {
        std::process::exit(1);
    }
    Ok(())
}
