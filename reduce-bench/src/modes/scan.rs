//! `bench scan [--quick] [--out DIR] [--cub FILE] [--torch FILE]`: scans (`Gpu::scan_into`,
//! `ScanAlgorithm::Auto`, which is LookAhead for scans of the monoid's own values but by CSR
//! segments fewer than the tiles of values larger than 8 bytes, and `LookBack` beside it) of f32
//! sums, the 8-byte affine monoid, 2x2 matrices (16 bytes), the f32 linear recurrence and 12-byte
//! Heisenberg matrices at 2^20, 2^24 and 2^28 items, inclusive and exclusive, and the segmented
//! scans (CSR offsets, and keys: each item's segment id; both also by LookBack and exclusive; 2x2
//! matrices inclusive by `Auto` only) of `bench segmented`'s distributions at 2^26, against the
//! copy roof measured on the same bytes in the same command — the faster of `cuMemcpyDtoD` and a
//! 16-byte-vector copy kernel, each byte read once and written once: ×roof = roof time × (bytes
//! moved / bytes the roof moves) / time — and against CUB's `DeviceScan` (`anchors/cub_scan.cu`;
//! the segmented scans against its `InclusiveScanByKey` over the same segments, f32 and affine)
//! and against the newer CUB the device script builds from the CCCL headers it stages where
//! they are 3.3 or later (the `newer_cub` columns: its `DeviceScan`, and for the scans by
//! offsets its `DeviceSegmentedScan`) and `torch.cumsum`
//! (`anchors/torch_scan.py`) from the same command (`scan.csv`, `scan.txt`). The exact monoids'
//! outputs are checked against the sequential scan up to 2^24 items (and the segmented ones at
//! 2^26; CUB's by key too).

use crate::anchors::read_cub;
use crate::cli::Args;
use crate::kernels::{AnyBits, BenchKernels, FillMasks, Filled};
use crate::layouts::{distribution, owners, to_u32, DISTRIBUTIONS};
use crate::monoids::{masks_affine, masks_affine_f32, masks_f32, masks_mat2};
use crate::monoids::{Affine, AffineF32, Heis, Mat2};
use crate::output::report;
use crate::timing::{median_ms, REPS};
use reduce_cuda::{CudaMonoid, Gpu, Scan, ScanAlgorithm, ScanConfig, Sum};
use std::collections::HashMap;
use std::fmt::Write as _;

/// What every row needs: the report and the anchors' times.
struct Table {
    lines: Vec<String>,
    csv: String,
    anchors: HashMap<(String, usize), (f64, String)>,
}

/// One measured case.
struct Row<'a> {
    case: &'a str,
    n: usize,
    ms: f32,
    /// Bytes the case must move (read and written).
    moved: f64,
    /// The copy roof's time, and the bytes it moved.
    roof: (f32, f64),
    /// The anchors' keys (empty: none): CUB's (`DeviceScan`, or by key), torch's, and the newer
    /// CUB's (`DeviceScan`, or `DeviceSegmentedScan` by CSR offsets).
    peers: [&'a str; 3],
    /// The check of the output against the sequential scan ("yes", "NO", or empty: none).
    correct: &'a str,
}

impl<'a> Row<'a> {
    /// A case without anchors or a check.
    fn alone(case: &'a str, n: usize, ms: f32, moved: f64, roof: (f32, f64)) -> Self {
        Row {
            case,
            n,
            ms,
            moved,
            roof,
            peers: ["", "", ""],
            correct: "",
        }
    }
}

impl Table {
    fn row(&mut self, r: Row) {
        let gbs = r.moved / (r.ms as f64 * 1e6);
        let ratio = r.roof.0 as f64 * (r.moved / r.roof.1) / r.ms as f64;
        let mut line = format!(
            "{:<44} n={:<10} {:>8.4} ms {gbs:>7.0} GB/s  x roof {ratio:.3}",
            r.case, r.n, r.ms
        );
        let mut cols = Vec::new();
        for key in r.peers {
            let peer = self.anchors.get(&(key.to_string(), r.n)).cloned();
            match &peer {
                Some((ms, verdict)) if verdict == "NO" => {
                    let _ = write!(line, "  {key} {ms:.4} ms: WRONG OUTPUT");
                }
                Some((ms, _)) => {
                    let _ = write!(line, "  {key} {ms:.4} ms: x{:.2}", ms / r.ms as f64);
                }
                None => {}
            }
            let (ms, verdict) = peer.unwrap_or((f64::NAN, String::new()));
            cols.push(format!("{ms},{verdict}"));
        }
        if !r.correct.is_empty() {
            let _ = write!(line, "  correct {}", r.correct);
        }
        self.lines.push(line);
        // A case naming its variant after a comma is one quoted field.
        let case = if r.case.contains(',') {
            format!("\"{}\"", r.case)
        } else {
            r.case.to_string()
        };
        let _ = writeln!(
            self.csv,
            "{},{},{},{gbs},{ratio},{},{}",
            case,
            r.n,
            r.ms,
            cols.join(","),
            r.correct
        );
    }
}

/// The plain scans of one monoid at `n` items: both kinds, into a buffer; `check` compares the
/// outputs with the sequential scan (exact monoids).
fn plain<M: CudaMonoid + AnyBits + PartialEq>(
    gpu: &Gpu,
    kernels: &BenchKernels,
    table: &mut Table,
    (name, anchors): (&str, [&str; 2]),
    n: usize,
    masks: &FillMasks,
    check: bool,
) -> reduce_cuda::Result<()> {
    let xs = kernels.fill_random::<M>(n, n as u64 ^ 0x5ca7, masks)?;
    let size = std::mem::size_of::<M>();
    let roof = kernels.copy_roof_ms(&xs, REPS)?;
    let bytes = (2 * n * size) as f64;
    let mut out = gpu.identities::<M>(n)?;
    let algorithms = [
        (ScanAlgorithm::Auto, ""),
        (ScanAlgorithm::LookBack, ", LookBack"),
    ];
    for ((algorithm, label), kind) in algorithms
        .into_iter()
        .flat_map(|a| [Scan::Inclusive, Scan::Exclusive].map(|kind| (a, kind)))
    {
        let ms = median_ms(gpu, REPS, || {
            gpu.scan_into(xs.items(), kind, &mut out, algorithm)
        })?;
        let correct = match check {
            true if n <= 1 << 24 => {
                let want = reduce_cuda::scan(&gpu.download(xs.items())?, kind);
                if gpu.download(&out)? == want {
                    "yes"
                } else {
                    "NO"
                }
            }
            _ => "",
        };
        let kind_name = if kind == Scan::Inclusive {
            "inclusive"
        } else {
            "exclusive"
        };
        // the anchors beside the default's rows only
        let [cub, torch] = anchors.map(|a| match a {
            "" => String::new(),
            _ if algorithm != ScanAlgorithm::Auto => String::new(),
            a => format!("{a}_{kind_name}"),
        });
        let newer = match cub.as_str() {
            "" => String::new(),
            cub => format!("newer_{cub}"),
        };
        table.row(Row {
            case: &format!("{name} {kind_name}{label}"),
            n,
            ms,
            moved: bytes,
            roof: (roof, bytes),
            peers: [&cub, &torch, &newer],
            correct,
        });
    }
    // What users call: the allocating form (a new output each call).
    if n >= 1 << 24 {
        let ms = median_ms(gpu, REPS, || {
            gpu.scan(xs.items(), Scan::Inclusive, ScanAlgorithm::Auto)
                .map(drop)
        })?;
        table.row(Row::alone(
            &format!("{name} inclusive, allocating"),
            n,
            ms,
            bytes,
            (roof, bytes),
        ));
    }
    Ok(())
}

pub fn scan(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let mut anchors = read_cub(&args.cub);
    anchors.extend(read_cub(&args.torch));
    let mut table = Table {
        lines: vec![format!("device {}", gpu.info().name)],
        csv: String::from(
            "case,n,median_ms,gbs_moved,ratio_to_copy_roof,cub_ms,cub_correct,torch_ms,torch_correct,\
             newer_cub_ms,newer_cub_correct,correct\n",
        ),
        anchors,
    };
    let sizes: &[u32] = if args.quick { &[24] } else { &[20, 24, 28] };
    for &log2 in sizes {
        let n = 1usize << log2;
        plain::<Sum<f32>>(
            &gpu,
            &kernels,
            &mut table,
            ("f32 sum", ["cub_sum_f32", "torch_cumsum_f32"]),
            n,
            &masks_f32(),
            false,
        )?;
        plain::<Affine>(
            &gpu,
            &kernels,
            &mut table,
            ("affine", ["cub_affine", ""]),
            n,
            &masks_affine(),
            true,
        )?;
        plain::<Mat2>(
            &gpu,
            &kernels,
            &mut table,
            ("mat2", ["cub_mat2", ""]),
            n,
            &masks_mat2(),
            true,
        )?;
        plain::<AffineF32>(
            &gpu,
            &kernels,
            &mut table,
            ("f32 recurrence", ["cub_affine_f32", ""]),
            n,
            &masks_affine_f32(),
            false,
        )?;
        // 12 bytes: no 16-byte vector holds whole items (staged in chunks of three vectors)
        plain::<Heis>(
            &gpu,
            &kernels,
            &mut table,
            ("heis 12 B", ["", ""]),
            n,
            &FillMasks::default(),
            true,
        )?;
        eprintln!("scan: n = 2^{log2} done");
    }
    tile_shapes::<Sum<f32>>(&gpu, &kernels, &mut table, "f32 sum", &masks_f32())?;
    tile_shapes::<Affine>(&gpu, &kernels, &mut table, "affine", &masks_affine())?;
    segmented(&gpu, &kernels, &mut table, args.quick)?;
    std::fs::write(args.out.join("scan.csv"), &table.csv).expect("writing scan.csv");
    report(&args.out, "scan.txt", &table.lines);
    Ok(())
}

/// Inclusive scans of 2^28 items of `M` with other tile shapes than the default (threads per
/// block, items per thread) for LookBack: what the defaults were chosen from; and the multi-pass
/// baseline (`ReduceThenScan`, the default tile: the same bits, each item read twice).
fn tile_shapes<M: CudaMonoid + AnyBits>(
    gpu: &Gpu,
    kernels: &BenchKernels,
    table: &mut Table,
    name: &str,
    masks: &FillMasks,
) -> reduce_cuda::Result<()> {
    let n = 1usize << 28;
    let xs = kernels.fill_random::<M>(n, 0x7135, masks)?;
    let roof = kernels.copy_roof_ms(&xs, REPS)?;
    let bytes = (2 * n * std::mem::size_of::<M>()) as f64;
    let mut out = gpu.identities::<M>(n)?;
    // the default is 256 threads of 128 bytes' worth of items (at most 32 items)
    let per = (128 / std::mem::size_of::<M>() as u32).min(32);
    let shapes = [
        (128, per),
        (512, per),
        (512, per / 2),
        (256, per / 2),
        (256, per / 4),
    ]
    .map(|(block, items)| {
        let config = ScanConfig::new(ScanAlgorithm::LookBack)
            .block(block)
            .items_per_thread(items);
        (format!("{block} x {items}"), config)
    });
    let baseline = ScanAlgorithm::ReduceThenScan;
    for (label, config) in shapes
        .into_iter()
        .chain([(baseline.name().into(), baseline.into())])
    {
        let ms = median_ms(gpu, REPS, || {
            gpu.scan_into(xs.items(), Scan::Inclusive, &mut out, config)
        })?;
        table.row(Row::alone(
            &format!("{name} inclusive, {label}"),
            n,
            ms,
            bytes,
            (roof, bytes),
        ));
    }
    Ok(())
}

/// The segmented scans of the distributions at 2^26 items, f32 sums and the affine monoid
/// (checked), offsets and keys, inclusive by `Auto` and by LookBack and exclusive by `Auto`,
/// trusted offsets (the check is a pass of its own); 2x2 matrices (checked) inclusive by `Auto`
/// only.
fn segmented(
    gpu: &Gpu,
    kernels: &BenchKernels,
    table: &mut Table,
    quick: bool,
) -> reduce_cuda::Result<()> {
    let n = 1usize << 26;
    let mut sums = Segmented::<Sum<f32>>::new(gpu, kernels, "f32", n, 12, &masks_f32())?;
    let mut affine = Segmented::<Affine>::new(gpu, kernels, "affine", n, 13, &masks_affine())?;
    // 2x2 matrices (16 bytes) by `Auto` only: LookAhead's runs of seven vectors by key
    let mut mat2 = Segmented::<Mat2>::new(gpu, kernels, "mat2", n, 14, &masks_mat2())?;
    let host_affine = gpu.download(affine.xs.items())?;
    let host_mat2 = gpu.download(mat2.xs.items())?;
    let dists: &[&str] = if quick {
        &["size_1", "size_3", "random_10_50", "equal_1000", "empty_90"]
    } else {
        &DISTRIBUTIONS
    };
    for dist in dists {
        let offsets = distribution(dist, n as u64, 7).expect("a known distribution");
        let d_offsets = gpu.upload(&to_u32(&offsets))?;
        let d_keys = gpu.upload(&owners(&offsets))?;
        let want = reduce_cuda::scan_segments(&host_affine, &offsets, Scan::Inclusive)
            .expect("a valid layout");
        let want_exclusive = reduce_cuda::scan_segments(&host_affine, &offsets, Scan::Exclusive)
            .expect("a valid layout");
        let want_mat2 = reduce_cuda::scan_segments(&host_mat2, &offsets, Scan::Inclusive)
            .expect("a valid layout");
        for (form, layout) in [
            ("offsets", &d_offsets),
            ("offsets, LookBack", &d_offsets),
            ("keys", &d_keys),
            ("keys, LookBack", &d_keys),
            ("offsets, exclusive", &d_offsets),
            ("keys, exclusive", &d_keys),
        ] {
            let exclusive = form.ends_with(", exclusive");
            sums.time((gpu, kernels), table, dist, form, layout, None)?;
            let want = if exclusive { &want_exclusive } else { &want };
            affine.time((gpu, kernels), table, dist, form, layout, Some(want))?;
            if !form.ends_with(", LookBack") && !exclusive {
                mat2.time((gpu, kernels), table, dist, form, layout, Some(&want_mat2))?;
            }
        }
        eprintln!("scan: segmented {dist} done");
    }
    Ok(())
}

/// One monoid's items of a segmented case, their copy roof and an output buffer.
struct Segmented<M: CudaMonoid> {
    name: &'static str,
    xs: Filled<M>,
    roof: f32,
    out: reduce_cuda::DeviceVec<M>,
}

impl<M: CudaMonoid + AnyBits + PartialEq> Segmented<M> {
    /// `n` random items (`BenchKernels::fill_random`'s `seed` and `masks`).
    fn new(
        gpu: &Gpu,
        kernels: &BenchKernels,
        name: &'static str,
        n: usize,
        seed: u64,
        masks: &FillMasks,
    ) -> reduce_cuda::Result<Self> {
        let xs = kernels.fill_random(n, seed, masks)?;
        let roof = kernels.copy_roof_ms(&xs, REPS)?;
        let out = gpu.identities::<M>(xs.items().len())?;
        Ok(Segmented {
            name,
            xs,
            roof,
            out,
        })
    }

    /// Times the scan with segments from `layout` (`form`: offsets or keys, inclusive by `Auto`
    /// or, where it says so, by LookBack or exclusive), trusted, and checks it against `want`
    /// where given (the output poisoned first: the forms write the same values).
    fn time(
        &mut self,
        (gpu, kernels): (&Gpu, &BenchKernels),
        table: &mut Table,
        dist: &str,
        form: &str,
        layout: &reduce_cuda::DeviceVec<u32>,
        want: Option<&[M]>,
    ) -> reduce_cuda::Result<()> {
        let algorithm = if form.ends_with(", LookBack") {
            ScanAlgorithm::LookBack
        } else {
            ScanAlgorithm::Auto
        };
        let trusted = ScanConfig::new(algorithm).trusted();
        let kind = match form.ends_with(", exclusive") {
            true => Scan::Exclusive,
            false => Scan::Inclusive,
        };
        if want.is_some() {
            kernels.poison(&mut self.out)?;
        }
        let (xs, out) = (self.xs.items(), &mut self.out);
        let ms = median_ms(gpu, REPS, || {
            if form.starts_with("offsets") {
                gpu.scan_segments_into(xs, layout, kind, out, trusted)
            } else {
                gpu.scan_by_key_into(xs, layout, kind, out, trusted)
            }
        })?;
        let correct = match want {
            Some(want) if gpu.download(&*out)? == want => "yes",
            Some(_) => "NO",
            None => "",
        };
        let n = xs.len();
        let bytes = (2 * n * std::mem::size_of::<M>()) as f64;
        // CUB's inclusive scans of the same segments: by key (its keys: each item's segment
        // id), and by the CSR offsets beside ours by offsets.
        let (cub, csr) = match kind {
            Scan::Inclusive => (
                format!("cub_segscan_{}_{dist}", self.name),
                format!("cub_segscan_csr_{}_{dist}", self.name),
            ),
            Scan::Exclusive => (String::new(), String::new()),
        };
        let csr = if form.starts_with("offsets") {
            csr
        } else {
            String::new()
        };
        table.row(Row {
            case: &format!("segmented {} {form} {dist}", self.name),
            n,
            ms,
            moved: bytes + (4 * layout.len()) as f64,
            roof: (self.roof, bytes),
            peers: [&cub, "", &csr],
            correct,
        });
        Ok(())
    }
}
