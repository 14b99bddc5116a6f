//! `bench segwide`: u64 layouts (offsets and owners, as PyTorch and most graph libraries hold
//! them) on every distribution of `bench segmented`, f32 sum and affine, in one run: `Auto` with
//! u64 layouts (SegShuffle, which reads the entries narrowed to 32 bits, but SegHeads in its
//! bands: `tuning::SEG_HEADS_BANDS`), trusted and validated; `SegMerge` with u64
//! layouts (Auto's choice for them before SegShuffle took them); `SegHeads` with u64 offsets,
//! trusted and validated, and with u32 ones; and `Auto` on the same layout as u32. `--log2 K`:
//! 2^K items instead of 30·2^20. Each row: ms, GB/s moved (items, the layout at its own width,
//! one result per segment), the fraction of plain `Shuffle` on the same items, and for f32 sum
//! in the offsets form the ratio to `torch.segment_reduce` (int64 lengths) from the same device
//! command (`--torch`).

use crate::anchors::read_refs;
use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::{self, distribution, DISTRIBUTIONS};
use crate::monoids::{masks_affine, masks_f32, Affine};
use crate::output::report;
use crate::seg_common::plain_shuffle_ms;
use crate::timing::{median_ms, REPS};
use reduce_cuda::reduce_core::Cpu;
use reduce_cuda::{
    CudaMonoid, DeviceInput, DeviceOutput, DeviceVec, Gpu, SegAlgorithm, SegConfig, Sum,
};
/// A layout on the device in both forms and both index widths.
struct WideLayout {
    offsets32: DeviceVec<u32>,
    owner32: DeviceVec<u32>,
    offsets64: DeviceVec<u64>,
    owner64: DeviceVec<u64>,
    segments: usize,
}

impl WideLayout {
    fn new(gpu: &Gpu, offsets: &[u64]) -> reduce_cuda::Result<Self> {
        let owner = layouts::owners(offsets);
        let owner64: Vec<u64> = owner.iter().map(|&o| o as u64).collect();
        Ok(WideLayout {
            offsets32: gpu.upload(&layouts::to_u32(offsets))?,
            owner32: gpu.upload(&owner)?,
            offsets64: gpu.upload(offsets)?,
            owner64: gpu.upload(&owner64)?,
            segments: offsets.len() - 1,
        })
    }

    /// Bytes a reduction must move: items, the layout's entries, one result per segment.
    fn bytes<M>(&self, n: usize, owner_form: bool, wide: bool) -> f64 {
        let entries = if owner_form { n } else { self.segments + 1 };
        let width = if wide { 8 } else { 4 };
        let m = std::mem::size_of::<M>();
        (n * m + width * entries + self.segments * m) as f64
    }

    fn run<M: CudaMonoid>(
        &self,
        gpu: &Gpu,
        items: &impl DeviceInput<M>,
        out: &mut impl DeviceOutput<M>,
        owner_form: bool,
        wide: bool,
        config: SegConfig,
    ) -> reduce_cuda::Result<()> {
        let s = self.segments;
        match (owner_form, wide) {
            (true, false) => gpu.reduce_by_owner_into(items, &self.owner32, s, out, config),
            (true, true) => gpu.reduce_by_owner_into(items, &self.owner64, s, out, config),
            (false, false) => gpu.reduce_segments_into(items, &self.offsets32, out, config),
            (false, true) => gpu.reduce_segments_into(items, &self.offsets64, out, config),
        }
    }
}

/// The configurations of a row: label, u64 layout, configuration, and the one form it runs in
/// (`Some(true)`: owners only; `Some(false)`: offsets only). The owner form's SegShuffle at 12
/// and 8 items per thread: u64 owners double the bytes a thread has in flight, and at f32's
/// default 16 items the kernel spills under its register cap. SegHeads takes offsets only.
fn configs() -> [(&'static str, bool, SegConfig, Option<bool>); 10] {
    let auto = SegConfig::new(SegAlgorithm::Auto);
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
    let heads = SegConfig::new(SegAlgorithm::SegHeads);
    [
        ("u32 Auto trusted", false, auto.trusted(), None),
        ("u64 Auto trusted", true, auto.trusted(), None),
        ("u64 Auto validated", true, auto, None),
        ("u64 SegMerge trusted", true, merge.trusted(), None),
        ("u64 SegMerge validated", true, merge, None),
        (
            "u64 SegShuffle k12 trusted",
            true,
            shuffle.items_per_thread(12),
            Some(true),
        ),
        (
            "u64 SegShuffle k8 trusted",
            true,
            shuffle.items_per_thread(8),
            Some(true),
        ),
        ("u32 SegHeads trusted", false, heads.trusted(), Some(false)),
        ("u64 SegHeads trusted", true, heads.trusted(), Some(false)),
        ("u64 SegHeads validated", true, heads, Some(false)),
    ]
}

/// Runs the mode (see the module docs).
pub fn segwide(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let torch = read_refs(&args.torch);
    // `--log2 K`: 2^K items instead (the PyTorch anchor holds 30·2^20 only).
    let n = args.log2.map_or(30u64 << 20, |k| 1u64 << k);
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 12, &masks_f32())?;
    let affine = kernels.fill_random::<Affine>(n as usize, 13, &masks_affine())?;
    let plain_f32 = (n * 4) as f64 / (plain_shuffle_ms(&gpu, sums.items())? as f64 * 1e6);
    let plain_affine = (n * 8) as f64 / (plain_shuffle_ms(&gpu, affine.items())? as f64 * 1e6);
    let host_affine = gpu.download(affine.items())?;
    let mut lines = vec![format!(
        "n = {n}: plain Shuffle f32 sum {plain_f32:.0} GB/s, affine {plain_affine:.0} GB/s"
    )];
    let mut csv = String::from(
        "n,layout,form,algorithm,monoid,median_ms,gbs_moved,of_plain_shuffle,speedup_vs_torch,correct\n",
    );
    let mut wrong = false;
    for dist in DISTRIBUTIONS {
        let offsets = distribution(dist, n, 7).unwrap();
        let layout = WideLayout::new(&gpu, &offsets)?;
        let expected = Cpu::new()
            .reduce_segments(&host_affine, &offsets)
            .expect("valid layout");
        let mut out_f32 = gpu.zeroed::<Sum<f32>>(layout.segments)?;
        let mut out_affine = gpu.zeroed::<Affine>(layout.segments)?;
        for owner_form in [true, false] {
            let form = if owner_form { "owner" } else { "offsets" };
            for (label, wide, config, only) in configs() {
                if only.is_some_and(|owners| owners != owner_form) {
                    continue;
                }
                let ms_f32 = median_ms(&gpu, REPS, || {
                    layout.run(&gpu, sums.items(), &mut out_f32, owner_form, wide, config)
                })?;
                kernels.poison(&mut out_affine)?;
                let ms_affine = median_ms(&gpu, REPS, || {
                    layout.run(
                        &gpu,
                        affine.items(),
                        &mut out_affine,
                        owner_form,
                        wide,
                        config,
                    )
                })?;
                let correct = gpu.download(&out_affine)? == expected;
                wrong |= !correct;
                let torch_ms = (!owner_form)
                    .then(|| torch.get(&format!("torch_segment_reduce {dist}@{n}")))
                    .flatten();
                let mut cells = Vec::new();
                for (monoid, ms, bytes, plain) in [
                    (
                        "f32_sum",
                        ms_f32,
                        layout.bytes::<Sum<f32>>(n as usize, owner_form, wide),
                        plain_f32,
                    ),
                    (
                        "affine",
                        ms_affine,
                        layout.bytes::<Affine>(n as usize, owner_form, wide),
                        plain_affine,
                    ),
                ] {
                    let gbs = bytes / (ms as f64 * 1e6);
                    let vs_torch = torch_ms
                        .filter(|_| monoid == "f32_sum")
                        .map(|t| t / ms as f64);
                    let torch_cell = vs_torch.map_or(String::new(), |x| format!("{x:.2}"));
                    csv.push_str(&format!(
                        "{n},{dist},{form},{label},{monoid},{ms:.5},{gbs:.1},{:.3},{torch_cell},{}\n",
                        gbs / plain,
                        if monoid == "affine" { correct.to_string() } else { "-".into() }
                    ));
                    let torch_note = vs_torch.map_or(String::new(), |x| format!(" x{x:.1} torch"));
                    cells.push(format!(
                        "{monoid} {ms:.4} ms {gbs:>6.0} GB/s {:.2}{torch_note}",
                        gbs / plain
                    ));
                }
                lines.push(format!(
                    "{dist:<13} {form:<7} {label:<26} {} | {}{}",
                    cells[0],
                    cells[1],
                    if correct { "" } else { " WRONG" }
                ));
            }
        }
        eprintln!("segwide: {dist} done");
    }
    std::fs::write(args.out.join("segwide.csv"), &csv).expect("writing segwide.csv");
    report(&args.out, "segwide.txt", &lines);
    if wrong {
        eprintln!("ERROR: some segmented results were wrong");
        std::process::exit(1);
    }
    Ok(())
}
