//! `bench segargmax [--out DIR] [--cub FILE]`: ArgMax per segment lifted from f32 items, every
//! distribution, the heavy tails and a few long segments (`segargmax.csv`, `segargmax.txt`).

use crate::anchors::read_refs;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::{self, distribution, DISTRIBUTIONS, FEW_SEGMENTS, HEAVY_TAILS};
use crate::monoids::{masks_f32, ArgMax};
use crate::output::report;
use crate::timing::{median_ms, REPS};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{DeviceVec, Gpu, Lift, SegAlgorithm, SegConfig};
use std::fmt::Write as _;

/// The item count of `bench segargmax`: the first size of `bench segmented`, whose layouts
/// `bench seglayouts` writes for the CUB anchor.
const SEG_N: u64 = 1 << 26;

/// `bench segargmax [--out DIR] [--cub FILE]`: ArgMax per segment lifted from f32 items, on
/// every distribution, the heavy tails (`layouts::HEAVY_TAILS`) and a few long segments
/// (`layouts::FEW_SEGMENTS`) at N = 2^26, both forms; against CUB's
/// `DeviceSegmentedReduce::ArgMax` (`anchors/segargmax_anchor.cu`, same layouts, same device
/// command; it has neither of the last two), against the read roof
/// on the bytes that must move (items, layout, one result per segment), and against the same
/// reduction over materialised (value, index) items, which reads twice the item bytes.
pub fn segargmax(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let refs = read_refs(&args.cub);
    let n = SEG_N as usize;
    let filled = kernels.fill_random::<f32>(n, 21, &masks_f32())?;
    let xs = filled.items();
    let roof_gbs = (n * 4) as f64 / (kernels.read_roof_ms(&filled, REPS)? as f64 * 1e6);
    let host: Vec<ArgMax> = gpu
        .download(xs)?
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
    let heads = SegConfig::new(SegAlgorithm::SegHeads);
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    let mut csv = String::from(
        "layout,segments,variant,median_ms,gbs_moved,ratio_to_roof,speedup_vs_cub,correct\n",
    );
    let mut lines = Vec::new();
    let (mut worst_roof, mut worst_cub) = (f64::INFINITY, f64::INFINITY);
    let mut wrong = 0;
    for dist in DISTRIBUTIONS
        .into_iter()
        .chain(HEAVY_TAILS)
        .chain(FEW_SEGMENTS)
    {
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
        let variants: [(&str, f64, bool, Run); 8] = [
            (
                "lifted offsets Auto trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_lifted_into(xs, &dev_offsets, out, auto.trusted())
                }),
            ),
            (
                "lifted offsets Auto validated",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| gpu.reduce_segments_lifted_into(xs, &dev_offsets, out, auto)),
            ),
            (
                "lifted offsets SegMerge trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_lifted_into(xs, &dev_offsets, out, merge.trusted())
                }),
            ),
            (
                "lifted offsets SegShuffle k16 trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    let config = shuffle.items_per_thread(16).trusted();
                    gpu.reduce_segments_lifted_into(xs, &dev_offsets, out, config)
                }),
            ),
            (
                "lifted offsets SegHeads trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_lifted_into(xs, &dev_offsets, out, heads.trusted())
                }),
            ),
            (
                "lifted offsets SegBlocks trusted",
                4.0 * n as f64 + csr + results,
                true,
                Box::new(|out| {
                    gpu.reduce_segments_lifted_into(xs, &dev_offsets, out, blocks.trusted())
                }),
            ),
            (
                "lifted owner Auto trusted",
                8.0 * n as f64 + results,
                false,
                Box::new(|out| {
                    gpu.reduce_by_owner_lifted_into(xs, &dev_owner, segments, out, auto.trusted())
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
            kernels.poison(&mut out)?;
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
