//! `bench portable`'s section of scans (`ScanConfig::portable`): inclusive scans of f32 sums,
//! f64 sums and log-sum-exp lifted from f32 logits, plain, by key and by CSR offsets (trusted;
//! the segments of `bench segmented`'s random 10..50 distribution), at 2^24 and 2^28 items
//! (`--quick`: 2^24), portable against the default mode (`Auto`) in the same command, with the
//! copy roof scaled to the bytes moved; each portable output checked against the CPU's
//! (`reduce_core::portable`, up to 2^24 items) and against itself over the timed runs, and
//! hashed (`bits`). `bench portable-scan [--quick] [--out DIR]` runs this section alone
//! (`portable-scan.csv`, `portable-scan.txt`).

use super::section::{compared, verdict};
use crate::cli::Args;
use crate::kernels::{AnyBits, BenchKernels};
use crate::layouts::{distribution, owners};
use crate::monoids::{masks_f32, masks_f64, LogSumExp};
use crate::output::hash_of;
use crate::seg_common::DeviceLayout;
use crate::timing::{median_ms, REPS};
use reduce_cuda::reduce_core::{portable, Lift};
use reduce_cuda::{
    CudaMonoid, DeviceCopy, DeviceSlice, DeviceVec, Gpu, Result, Scan, ScanConfig, Sum,
};
use std::fmt::Write as _;

/// The largest input whose portable outputs are checked on the CPU.
const CPU_CHECK_MAX: usize = 1 << 24;

pub fn portable_scan(args: &Args) -> Result<()> {
    super::section::section(args, "portable-scan", |gpu, kernels, lines| {
        scans(gpu, kernels, lines, args.quick)
    })
}

/// The section's lines into `lines`; returns its CSV.
pub(super) fn scans(
    gpu: &Gpu,
    kernels: &BenchKernels,
    lines: &mut Vec<String>,
    quick: bool,
) -> Result<String> {
    let sizes: &[u32] = if quick { &[24] } else { &[24, 28] };
    let mut csv = String::from(
        "case,form,n,default_ms,portable_ms,portable_cost,default_x_roof,portable_x_roof,\
         cpu_bits,repeat_bits,bits\n",
    );
    lines.push(
        "scans, inclusive: case form n: default / portable ms, cost, ×copy roof default / \
         portable, cpu bits, repeat, bits"
            .into(),
    );
    for &log2 in sizes {
        let n = 1usize << log2;
        let offsets = distribution("random_10_50", n as u64, 7).expect("a known distribution");
        let layout = Layout {
            device: DeviceLayout::new(gpu, &offsets)?,
            host_keys: owners(&offsets),
            host_offsets: offsets,
        };
        let mut table = Table {
            lines: &mut *lines,
            csv: &mut csv,
        };
        let f32s = kernels.fill_random::<Sum<f32>>(n, 40 + log2 as u64, &masks_f32())?;
        own(gpu, kernels, &mut table, "f32 sum", &f32s, &layout)?;
        drop(f32s);
        let f64s = kernels.fill_random::<Sum<f64>>(n, 41 + log2 as u64, &masks_f64())?;
        own(gpu, kernels, &mut table, "f64 sum", &f64s, &layout)?;
        drop(f64s);
        // log-sum-exp: f32 logits read, (max, sum) pairs written; the copy roof of the pairs'
        // bytes (a buffer of as many 8-byte values), scaled to the bytes moved
        let logits = kernels.fill_random::<f32>(n, 42 + log2 as u64, &masks_f32())?;
        let pairs = kernels.fill_random::<Sum<f64>>(n, 43, &masks_f64())?;
        let roof = kernels.copy_roof_ms(&pairs, REPS)?;
        drop(pairs);
        let xs = logits.items();
        let lift = <LogSumExp as Lift<f32>>::lift;
        let host = checked_on_cpu(gpu, xs, lift)?;
        let kind = Scan::Inclusive;
        table.case::<LogSumExp>(
            (gpu, kernels),
            "lse f32",
            4,
            &layout,
            roof,
            host,
            |form, c, out| match form {
                Form::Plain => gpu.scan_lifted_into(xs, kind, out, c),
                Form::Keys => gpu.scan_by_key_lifted_into(xs, layout.device.owner(), kind, out, c),
                Form::Offsets => {
                    gpu.scan_segments_lifted_into(xs, layout.device.offsets(), kind, out, c)
                }
            },
        )?;
        eprintln!("portable: scans at 2^{log2} done");
    }
    Ok(csv)
}

/// The scans of `xs`, the monoid's own values, in the three forms.
fn own<M: CudaMonoid + AnyBits>(
    gpu: &Gpu,
    kernels: &BenchKernels,
    table: &mut Table,
    case: &str,
    xs: &crate::kernels::Filled<M>,
    layout: &Layout,
) -> Result<()> {
    let roof = kernels.copy_roof_ms(xs, REPS)?;
    let xs = xs.items();
    let host = checked_on_cpu(gpu, xs, |x, _| x)?;
    let size = std::mem::size_of::<M>();
    let kind = Scan::Inclusive;
    table.case::<M>(
        (gpu, kernels),
        case,
        size,
        layout,
        roof,
        host,
        |form, c, out| match form {
            Form::Plain => gpu.scan_into(xs, kind, out, c),
            Form::Keys => gpu.scan_by_key_into(xs, layout.device.owner(), kind, out, c),
            Form::Offsets => gpu.scan_segments_into(xs, layout.device.offsets(), kind, out, c),
        },
    )
}

/// The values of `xs` lifted by `lift`, on the host, where the section checks them there.
fn checked_on_cpu<M, X: DeviceCopy>(
    gpu: &Gpu,
    xs: &DeviceSlice<X>,
    lift: impl Fn(X, u64) -> M,
) -> Result<Option<Vec<M>>> {
    if xs.len() > CPU_CHECK_MAX {
        return Ok(None);
    }
    let raw = gpu.download(xs)?;
    Ok(Some(
        raw.iter()
            .enumerate()
            .map(|(i, &x)| lift(x, i as u64))
            .collect(),
    ))
}

/// The scans' forms.
#[derive(Clone, Copy)]
enum Form {
    Plain,
    Keys,
    Offsets,
}

/// The segments of a size: CSR offsets on the host and the device, and each item's segment id
/// as its key.
struct Layout {
    host_offsets: Vec<u64>,
    host_keys: Vec<u32>,
    /// The offsets and the keys (each item's segment id) on the device.
    device: DeviceLayout,
}

/// Where the rows go.
struct Table<'a> {
    lines: &'a mut Vec<String>,
    csv: &'a mut String,
}

impl Table<'_> {
    /// One monoid's scans by `run` (a form, a configuration, the output) in the three forms,
    /// default and portable, of n items of `in_size` bytes; `roof`: the copy roof's time for
    /// n values of `M` (read and written), scaled to the bytes each form moves; `host`: the
    /// values on the host, for the CPU's check.
    #[allow(clippy::too_many_arguments)]
    fn case<M: CudaMonoid + AnyBits>(
        &mut self,
        (gpu, kernels): (&Gpu, &BenchKernels),
        case: &str,
        in_size: usize,
        layout: &Layout,
        roof: f32,
        host: Option<Vec<M>>,
        run: impl Fn(Form, ScanConfig, &mut DeviceVec<M>) -> Result<()>,
    ) -> Result<()> {
        let n = layout.host_keys.len();
        let mut out = gpu.identities::<M>(n)?;
        let (default, portable_mode) = (
            ScanConfig::default().trusted(),
            ScanConfig::default().portable().trusted(),
        );
        for (form, name) in [
            (Form::Plain, "plain"),
            (Form::Keys, "by key"),
            (Form::Offsets, "by offsets"),
        ] {
            let default_ms = median_ms(gpu, REPS, || run(form, default, &mut out))?;
            let portable_ms = median_ms(gpu, REPS, || run(form, portable_mode, &mut out))?;
            // Checked from a poisoned output: the forms of one layout write the same values.
            kernels.poison(&mut out)?;
            run(form, portable_mode, &mut out)?;
            let first = gpu.download(&out)?;
            run(form, portable_mode, &mut out)?;
            let again = gpu.download(&out)?;
            let kind = Scan::Inclusive;
            let want = host.as_ref().map(|h| match form {
                Form::Plain => portable::scan(h, kind),
                Form::Keys => portable::scan_by_key(h, &layout.host_keys, kind).expect("keys"),
                Form::Offsets => {
                    portable::scan_segments(h, &layout.host_offsets, kind).expect("valid offsets")
                }
            });
            let bits = hash_of(&first);
            let cpu_bits = want.map_or("unchecked", |w| verdict(hash_of(&w) == bits));
            // ×roof: the items read, the layout read and the outputs written, at the copy
            // roof's rate
            let size = std::mem::size_of::<M>();
            let layout_bytes = match form {
                Form::Plain => 0,
                Form::Keys => 4 * n,
                Form::Offsets => 4 * layout.host_offsets.len(),
            };
            let moved = (n * (in_size + size) + layout_bytes) as f64;
            let x_roof = |ms: f32| roof as f64 * (moved / (2 * n * size) as f64) / ms as f64;
            let (cells, line) = compared(
                (default_ms, portable_ms),
                ("×roof", x_roof),
                cpu_bits,
                hash_of(&again) == bits,
                &bits,
            );
            self.lines
                .push(format!("{case:<8} {name:<10} n={n}: {line}"));
            let _ = writeln!(self.csv, "{case},{name},{n},{cells}");
        }
        Ok(())
    }
}
