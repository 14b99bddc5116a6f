//! `bench portable [--quick] [--out DIR] [--cub FILE]`: the portable mode (`Config::portable`:
//! the same bits on any device, any grid, the CPU) against the default mode in the same
//! command — f32 sums, f64 sums and log-sum-exp lifted from f32 logits (a float monoid of two
//! fields), 2^20 … 2^30 items — with the read roof on the input bytes, the ordered `Shuffle`
//! for reference, and CUB's `DeviceReduce::Sum` at its default (`run_to_run`) and with
//! `gpu_to_gpu` determinism (`anchors/cub_portable.cu`, where the toolkit's CCCL has it).
//! Each portable result is checked against `reduce_core::portable::fold` on the CPU (up to 2^26
//! items: `cpu bits` yes/NO) and against itself over the timed runs (`repeat bits`); its bytes
//! (`bits`, hex) are the same on every device, whose data is the same.
//! Then the segmented reductions (`SegConfig::portable`): f32 sums (trusted and validated), f64
//! sums and log-sum-exp lifted from f32 logits (trusted) over every distribution of `bench
//! segmented` at 2^26 items, both forms, portable against the default (`Auto`) in the same
//! command, each portable output checked against the CPU's (`Cpu::reduce_segments_portable`)
//! and hashed (`bits`: FNV-1a of the output's bytes; the CSV's last column names the case).
//! Then the reductions along axes (`AxisConfig::portable`, `portable_axes.rs`) and the scans
//! (`ScanConfig::portable`, `portable_scans.rs`).
//! Writes `portable.csv`, `portable-seg.csv`, `portable-axes.csv`, `portable-scan.csv` and
//! `portable.txt`.
//! `bench portable-plain` and `bench portable-seg` run the plain and the segmented section
//! alone (`portable_plain`, `portable_seg`).

use super::section::{compared, verdict};
use crate::anchors::read_cub;
use crate::cli::Args;
use crate::kernels::{AnyBits, BenchKernels, FillMasks};
use crate::layouts::{distribution, DISTRIBUTIONS};
use crate::monoids::{masks_f32, masks_f64, LogSumExp};
use crate::output::{hash_of, report};
use crate::seg_common::{plain_shuffle_ms, DeviceLayout, FORMS};
use crate::timing::{median_ms, REPS};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{
    reduce_core, Algorithm, Config, CudaMonoid, DeviceCopy, DeviceSlice, DeviceVec, Gpu, Lift,
    Result, SegConfig, Sum,
};
use std::fmt::Write as _;

/// One case's timings (ms) and checks.
struct Row {
    default: f32,
    shuffle: f32,
    portable: f32,
    cpu_bits: &'static str,
    repeat_bits: &'static str,
    /// The portable result's bytes, in hex: the same on every device (the data is the same).
    bits: String,
}

/// Times `into` (a reduction into its output) in the three modes, and checks the portable
/// bits against themselves and against `reference` (the CPU's, where it gives one).
fn measure<M: CudaMonoid + std::fmt::Debug>(
    gpu: &Gpu,
    mut into: impl FnMut(Config, &mut DeviceVec<M>) -> Result<()>,
    reference: impl FnOnce() -> Result<Option<M>>,
) -> Result<Row> {
    let mut out = gpu.identities::<M>(1)?;
    let mut time = |config: Config| median_ms(gpu, REPS, || into(config, &mut out));
    let portable = Config::default().portable();
    let default = time(Config::default())?;
    let shuffle = time(Config::new(Algorithm::Shuffle))?;
    let portable_ms = time(portable)?;
    let mut result = || -> Result<M> {
        into(portable, &mut out)?;
        Ok(gpu.download(&out)?[0])
    };
    let (first, again) = (result()?, result()?);
    let hex = |m: &M| {
        reduce_core::monoid::bytes_of(std::slice::from_ref(m))
            .iter()
            .rev()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let (first, again) = (hex(&first), hex(&again));
    Ok(Row {
        default,
        shuffle,
        portable: portable_ms,
        cpu_bits: match reference()? {
            Some(want) => verdict(hex(&want) == first),
            None => "unchecked",
        },
        repeat_bits: verdict(first == again),
        bits: first,
    })
}

/// The CPU's portable value of `xs` lifted by `lift`, for inputs up to 2^26 items.
fn cpu<M: CudaMonoid, X: DeviceCopy>(
    gpu: &Gpu,
    xs: &DeviceSlice<X>,
    lift: impl Fn(X, u64) -> M,
) -> Result<Option<M>> {
    if xs.len() > 1 << 26 {
        return Ok(None);
    }
    let host = gpu.download(xs)?;
    let lifted: Vec<M> = host
        .iter()
        .enumerate()
        .map(|(i, &x)| lift(x, i as u64))
        .collect();
    Ok(Some(reduce_core::portable::fold(&lifted)))
}

/// A sum of `n` random `M` items (`masks` applied): its row and the read roof on its bytes.
fn sums<M: CudaMonoid + AnyBits + std::fmt::Debug>(
    gpu: &Gpu,
    kernels: &BenchKernels,
    n: usize,
    seed: u32,
    masks: &FillMasks,
) -> Result<(Row, f32)> {
    let xs = kernels.fill_random::<M>(n, seed as u64, masks)?;
    let roof = kernels.read_roof_ms(&xs, REPS)?;
    let xs = xs.items();
    let into = |c, out: &mut DeviceVec<M>| gpu.reduce_into(xs, out, c);
    let row = measure::<M>(gpu, into, || cpu(gpu, xs, |x, _| x))?;
    Ok((row, roof))
}

pub fn portable(args: &Args) -> Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let mut lines = vec![format!("device {}", gpu.info().name)];
    let csv = plain(&gpu, &kernels, &mut lines, args)?;
    sweep(&gpu, &kernels, &mut lines)?;
    std::fs::write(args.out.join("portable.csv"), csv).expect("writing portable.csv");
    let seg_csv = segmented(&gpu, &kernels, &mut lines, &[true, false])?;
    std::fs::write(args.out.join("portable-seg.csv"), seg_csv).expect("writing portable-seg.csv");
    let axes_csv = super::portable_axes::along_axes(&gpu, &kernels, &mut lines)?;
    std::fs::write(args.out.join("portable-axes.csv"), axes_csv)
        .expect("writing portable-axes.csv");
    let scan_csv = super::portable_scans::scans(&gpu, &kernels, &mut lines, args.quick)?;
    std::fs::write(args.out.join("portable-scan.csv"), scan_csv)
        .expect("writing portable-scan.csv");
    report(&args.out, "portable.txt", &lines);
    Ok(())
}

/// The plain section: f32 sums, f64 sums and log-sum-exp at 2^20 … 2^30 items (`--quick`: 2^24,
/// 2^26, 2^28) in the three modes, against CUB where `--cub` gives its times. Returns the CSV.
fn plain(
    gpu: &Gpu,
    kernels: &BenchKernels,
    lines: &mut Vec<String>,
    args: &Args,
) -> Result<String> {
    let cub = read_cub(&args.cub);
    let sizes: &[u32] = if args.quick {
        &[24, 26, 28]
    } else {
        &[20, 22, 24, 26, 28, 30]
    };
    let mut csv = String::from(
        "case,n,default_ms,shuffle_ms,portable_ms,portable_cost,default_x_roof,portable_x_roof,\
         cub_run_to_run_ms,cub_gpu_to_gpu_ms,portable_speedup_over_cub_gpu_to_gpu,cpu_bits,repeat_bits,bits\n",
    );
    lines.push("case n: default / Shuffle / portable ms, portable cost (time ÷ default), ×roof default and portable, CUB run_to_run / gpu_to_gpu ms, bits".into());
    for &log2 in sizes {
        let n = 1usize << log2;
        for case in ["f32 sum", "f64 sum", "lse f32"] {
            let (row, roof, key) = match case {
                "f32 sum" => {
                    let (row, roof) = sums::<Sum<f32>>(gpu, kernels, n, 3 + log2, &masks_f32())?;
                    (row, roof, "cub_sum_f32")
                }
                "f64 sum" => {
                    let (row, roof) = sums::<Sum<f64>>(gpu, kernels, n, 4 + log2, &masks_f64())?;
                    (row, roof, "cub_sum_f64")
                }
                _ => {
                    let xs = kernels.fill_random::<f32>(n, 5 + log2 as u64, &masks_f32())?;
                    let roof = kernels.read_roof_ms(&xs, REPS)?;
                    let xs = xs.items();
                    let into = |c, out: &mut DeviceVec<_>| gpu.reduce_lifted_into(xs, out, c);
                    let lift = <LogSumExp as Lift<f32>>::lift;
                    let row = measure::<LogSumExp>(gpu, into, || cpu(gpu, xs, lift))?;
                    (row, roof, "")
                }
            };
            let anchor = |level: &str| cub.get(&(format!("{key}_{level}"), n)).map(|(ms, _)| *ms);
            let (r2r, g2g) = (anchor("run_to_run"), anchor("gpu_to_gpu"));
            let show = |ms: Option<f64>| ms.map_or("-".to_string(), |ms| format!("{ms:.4}"));
            let cost = row.portable / row.default;
            let speedup = g2g.map(|g| g / row.portable as f64);
            let cells = [
                format!("{:.6}", row.default),
                format!("{:.6}", row.shuffle),
                format!("{:.6}", row.portable),
                format!("{cost:.3}"),
                format!("{:.3}", roof / row.default),
                format!("{:.3}", roof / row.portable),
                show(r2r),
                show(g2g),
                speedup.map_or("-".to_string(), |s| format!("{s:.3}")),
                row.cpu_bits.to_string(),
                row.repeat_bits.to_string(),
                row.bits,
            ];
            lines.push(format!(
                "{case:<8} 2^{log2}: {} / {} / {} ms  cost {}  ×roof {} / {}  CUB {} / {} (÷ CUB gpu_to_gpu: {})  cpu bits {} repeat {} bits {}",
                cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7], cells[8],
                cells[9], cells[10], cells[11]
            ));
            let _ = writeln!(csv, "{case},{n},{}", cells.join(","));
        }
        eprintln!("portable: n = 2^{log2} done");
    }
    Ok(csv)
}

/// `bench portable-plain [--quick] [--out DIR] [--cub FILE]`: the plain section alone
/// (`portable-plain.csv`, `portable-plain.txt`), without the knobs' sweep.
pub fn portable_plain(args: &Args) -> Result<()> {
    super::section::section(args, "portable-plain", |gpu, kernels, lines| {
        plain(gpu, kernels, lines, args)
    })
}

/// The knobs that move the portable mode's speed (never its bits), f32 sums at 2^24 and 2^28:
/// threads per block, runs per lane and block tiles per node, as time ÷ the default mode's.
fn sweep(gpu: &Gpu, kernels: &BenchKernels, lines: &mut Vec<String>) -> Result<()> {
    for log2 in [24u32, 28] {
        let n = 1usize << log2;
        let xs = kernels.fill_random::<Sum<f32>>(n, 9, &masks_f32())?;
        let mut out = gpu.identities::<Sum<f32>>(1)?;
        let mut time =
            |config: Config| median_ms(gpu, REPS, || gpu.reduce_into(xs.items(), &mut out, config));
        let default = time(Config::default())?;
        let mut cells = Vec::new();
        for block in [256u32, 512, 1024] {
            for runs in [1u32, 2, 4] {
                for group in [1u32, 4] {
                    let config = Config::default()
                        .portable()
                        .block(block)
                        .items_per_thread(16 * runs)
                        .tile_group(group);
                    let ms = time(config)?;
                    cells.push(format!("b{block} r{runs} g{group} {:.3}", ms / default));
                }
            }
        }
        lines.push(format!(
            "sweep f32 2^{log2} (time ÷ default {default:.4} ms): {}",
            cells.join(", ")
        ));
    }
    Ok(())
}

/// `bench portable-seg [--quick] [--out DIR]`: the segmented section alone
/// (`portable-seg.csv`, `portable-seg.txt`); `--quick` times trusted calls only (f64 sums and
/// log-sum-exp are timed trusted only either way).
pub fn portable_seg(args: &Args) -> Result<()> {
    let passes: &[bool] = if args.quick { &[true] } else { &[true, false] };
    super::section::section(args, "portable-seg", |gpu, kernels, lines| {
        segmented(gpu, kernels, lines, passes)
    })
}

/// The segmented portable mode over every `bench segmented` distribution at 2^26 items, both
/// forms, against the default mode (`Auto`): f32 sums trusted and/or validated (`passes`:
/// whether each is trusted), f64 sums and log-sum-exp lifted from f32 logits trusted; each
/// portable output checked against the CPU's (`Cpu::reduce_segments_portable`) and against
/// itself, and hashed. Returns the CSV.
fn segmented(
    gpu: &Gpu,
    kernels: &BenchKernels,
    lines: &mut Vec<String>,
    passes: &[bool],
) -> Result<String> {
    let n = 1u64 << 26;
    let mut csv = String::from(
        "layout,form,trust,n,segments,default_ms,portable_ms,portable_cost,default_of_plain,\
         portable_of_plain,cpu_bits,repeat_bits,bits,case\n",
    );
    let f32s = kernels.fill_random::<Sum<f32>>(n as usize, 12, &masks_f32())?;
    let f64s = kernels.fill_random::<Sum<f64>>(n as usize, 13, &masks_f64())?;
    let logits = kernels.fill_random::<f32>(n as usize, 14, &masks_f32())?;
    let lift = <LogSumExp as Lift<f32>>::lift;
    let host_f32 = gpu.download(f32s.items())?;
    let host_f64 = gpu.download(f64s.items())?;
    let host_lse: Vec<LogSumExp> = (gpu.download(logits.items())?.into_iter().enumerate())
        .map(|(i, x)| lift(x, i as u64))
        .collect();
    // plain Shuffle's GB/s on each case's values (log-sum-exp: on its f32 logits, lifted)
    let plain_f32 = (n * 4) as f64 / (plain_shuffle_ms(gpu, f32s.items())? as f64 * 1e6);
    let plain_f64 = (n * 8) as f64 / (plain_shuffle_ms(gpu, f64s.items())? as f64 * 1e6);
    let mut lse_out = gpu.identities::<LogSumExp>(1)?;
    let config = Config::new(Algorithm::Shuffle);
    let lse_ms = median_ms(gpu, REPS, || {
        gpu.reduce_lifted_into(logits.items(), &mut lse_out, config)
    })?;
    let plain_lse = (n * 4) as f64 / (lse_ms as f64 * 1e6);
    lines.push(format!(
        "segmented, 2^26 items (plain Shuffle f32 {plain_f32:.0}, f64 {plain_f64:.0}, lse \
         {plain_lse:.0} GB/s): case layout form trust: default / portable ms, cost, ×plain \
         default / portable, cpu bits, repeat, bits"
    ));
    let cpu = Cpu::new();
    for dist in DISTRIBUTIONS {
        let offsets = distribution(dist, n, 7).expect("a known distribution");
        let layout = DeviceLayout::new(gpu, &offsets)?;
        let mut rows = Rows {
            gpu,
            lines: &mut *lines,
            csv: &mut csv,
            layout: &layout,
            dist,
            n: n as usize,
        };
        let want = cpu
            .reduce_segments_portable(&host_f32, &offsets)
            .expect("valid");
        let xs = f32s.items();
        rows.case("f32 sum", passes, 4, plain_f32, &want, |form, c, out| {
            layout.run(gpu, xs, out, form, c)
        })?;
        let want = cpu
            .reduce_segments_portable(&host_f64, &offsets)
            .expect("valid");
        let xs = f64s.items();
        rows.case("f64 sum", &[true], 8, plain_f64, &want, |form, c, out| {
            layout.run(gpu, xs, out, form, c)
        })?;
        let want = cpu
            .reduce_segments_portable(&host_lse, &offsets)
            .expect("valid");
        let xs = logits.items();
        rows.case("lse f32", &[true], 4, plain_lse, &want, |form, c, out| {
            layout.run_lifted(gpu, xs, out, form, c)
        })?;
        eprintln!("portable: segmented {dist} done");
    }
    Ok(csv)
}

/// Where the segmented rows of one layout go.
struct Rows<'a> {
    gpu: &'a Gpu,
    lines: &'a mut Vec<String>,
    csv: &'a mut String,
    layout: &'a DeviceLayout,
    dist: &'a str,
    n: usize,
}

impl Rows<'_> {
    /// One case (`run`: a reduction in a form and a configuration into an output) in both
    /// forms and each of `passes`, default and portable, items of `in_size` bytes; `plain_gbs`:
    /// plain Shuffle's on the same items; `want`: the CPU's portable values.
    #[allow(clippy::too_many_arguments)]
    fn case<M: CudaMonoid>(
        &mut self,
        case: &str,
        passes: &[bool],
        in_size: usize,
        plain_gbs: f64,
        want: &[M],
        run: impl Fn(&str, SegConfig, &mut DeviceVec<M>) -> Result<()>,
    ) -> Result<()> {
        let gpu = self.gpu;
        let mut out = gpu.identities::<M>(self.layout.segments)?;
        for form in FORMS {
            for &trusted in passes {
                let trust = |c: SegConfig| if trusted { c.trusted() } else { c };
                let default = trust(SegConfig::default());
                let portable = trust(SegConfig::default().portable());
                let default_ms = median_ms(gpu, REPS, || run(form, default, &mut out))?;
                let portable_ms = median_ms(gpu, REPS, || run(form, portable, &mut out))?;
                let first = gpu.download(&out)?;
                run(form, portable, &mut out)?;
                let again = gpu.download(&out)?;
                // moved: the items, the layout, one value per segment
                let index = self.layout.index_bytes(self.n, form);
                let size = std::mem::size_of::<M>();
                let bytes = (self.n * in_size + index + self.layout.segments * size) as f64;
                let of_plain = |ms: f32| bytes / (ms as f64 * 1e6) / plain_gbs;
                let trust = if trusted { "trusted" } else { "validated" };
                let bits = hash_of(&first);
                let (cells, line) = compared(
                    (default_ms, portable_ms),
                    ("×plain", of_plain),
                    verdict(hash_of(want) == bits),
                    hash_of(&again) == bits,
                    &bits,
                );
                let dist = self.dist;
                self.lines
                    .push(format!("{case:<8} {dist:<13} {form:<7} {trust:<9}: {line}"));
                let _ = writeln!(
                    self.csv,
                    "{dist},{form},{trust},{},{},{cells},{case}",
                    self.n, self.layout.segments,
                );
            }
        }
        Ok(())
    }
}
