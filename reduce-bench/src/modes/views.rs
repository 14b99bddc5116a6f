//! `bench views [--quick] [--out DIR]`: a view at an odd item offset (not 16-byte aligned)
//! against an aligned view of as many items (`views.csv`, `views.txt`).

use crate::cli::Args;
use crate::kernels::{AnyBits, BenchKernels, FillMasks, Filled};
use crate::layouts::distribution;
use crate::monoids::{masks_f32, ArgMax, Heis, Pair, Triple};
use crate::output::report;
use crate::seg_common::DeviceLayout;
use crate::timing::{median_ms, REPS};
use reduce_cuda::{
    Algorithm, CudaMonoid, DeviceCopy, DeviceSlice, DeviceVec, Gpu, Lift, SegAlgorithm, SegConfig,
    Sum,
};

/// The rounds; the aligned and odd views alternate within each.
const ROUNDS: usize = 3;

/// For 4-, 8- and 12-byte items (f32 sums, affine maps, [`Heis`]) and lifts from each (ArgMax
/// from f32, Heis from [`Pair`] and [`Triple`]): the plain call (`reduce_into`), the segmented
/// call over CSR offsets (random lengths 10..50, `reduce_segments_into`) and the lifted call
/// (`reduce_lifted_into`), each on n - 1 items from item 0 (16-byte aligned) and from item 1
/// (4, 8 or 12 bytes past a boundary), Auto configurations, 2^28 items (2^24 with `--quick`).
/// Each odd view's result is checked against the same items copied to an aligned buffer (the
/// grouping does not depend on the address, so the bits agree). The verdict per row: the
/// median over rounds of odd / aligned, within 3%.
pub fn views(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let n: usize = if args.quick { 1 << 24 } else { 1 << 28 };
    let kernels = BenchKernels::new(&gpu)?;
    let offsets = distribution("random_10_50", (n - 1) as u64, 5).expect("a distribution");
    let layout = DeviceLayout::new(&gpu, &offsets)?;
    let mut lines = vec![format!(
        "views: n - 1 = 2^{} - 1 items from item 0 (aligned) and item 1 (odd), Auto, median of {REPS} per view and round, {ROUNDS} rounds",
        n.trailing_zeros()
    )];
    let mut csv = vec!["call,item,round,aligned_ms,odd_ms".to_string()];
    let mut bench = Bench {
        gpu: &gpu,
        layout: &layout,
        lines: &mut lines,
        csv: &mut csv,
    };
    {
        let items = kernels.fill_random::<Sum<f32>>(n, 3, &masks_f32())?;
        bench.plain_and_segmented("f32 sum", &items)?;
        let items = kernels.fill_random::<f32>(n, 4, &masks_f32())?;
        bench.lifted::<ArgMax, f32>("ArgMax from f32", &items)?;
    }
    {
        let items =
            kernels.fill_random::<crate::monoids::Affine>(n, 5, &crate::monoids::masks_affine())?;
        bench.plain_and_segmented("affine (8 B)", &items)?;
        let items = kernels.fill_random::<Pair>(n, 6, &FillMasks::default())?;
        bench.lifted::<Heis, Pair>("Heis from 8 B", &items)?;
    }
    {
        let items = kernels.fill_random::<Heis>(n, 7, &FillMasks::default())?;
        bench.plain_and_segmented("Heis (12 B)", &items)?;
        let items = kernels.fill_random::<Triple>(n, 8, &FillMasks::default())?;
        bench.lifted::<Heis, Triple>("Heis from 12 B", &items)?;
    }
    std::fs::write(args.out.join("views.csv"), csv.join("\n") + "\n")
        .unwrap_or_else(|e| panic!("writing views.csv: {e}"));
    report(&args.out, "views.txt", &lines);
    Ok(())
}

struct Bench<'a> {
    gpu: &'a Gpu,
    layout: &'a DeviceLayout,
    lines: &'a mut Vec<String>,
    csv: &'a mut Vec<String>,
}

/// The n - 1 items of `items` from item 0 and from item 1, and a copy of the latter (aligned).
fn aligned_and_odd<T: DeviceCopy>(
    gpu: &Gpu,
    items: &Filled<T>,
) -> reduce_cuda::Result<([DeviceSlice<T>; 2], DeviceVec<T>)> {
    let slice = items.items();
    let view = |first: usize| {
        let address = slice.address() + (first * std::mem::size_of::<T>()) as u64;
        // SAFETY: inside the filled buffer, which outlives the view; written before
        // (synchronised).
        unsafe { DeviceSlice::from_raw(address, slice.len() - 1, gpu) }
    };
    let views = [view(0)?, view(1)?];
    let copy = gpu.copy(&views[1])?;
    Ok((views, copy))
}

impl Bench<'_> {
    fn plain_and_segmented<M: CudaMonoid + AnyBits + PartialEq + std::fmt::Debug>(
        &mut self,
        item: &str,
        items: &Filled<M>,
    ) -> reduce_cuda::Result<()> {
        let gpu = self.gpu;
        let (views, copy) = aligned_and_odd(gpu, items)?;
        let mut out = gpu.identities::<M>(1)?;
        self.row("plain", item, views[1].address(), |v| {
            gpu.reduce_into(&views[v], &mut out, Algorithm::Auto)
        })?;
        let same = gpu.reduce(&views[1], Algorithm::Auto)? == gpu.reduce(&copy, Algorithm::Auto)?;
        let config = SegConfig::new(SegAlgorithm::Auto);
        let mut segs = gpu.identities::<M>(self.layout.segments)?;
        self.row("segmented", item, views[1].address(), |v| {
            self.layout
                .run(gpu, &views[v], &mut segs, "offsets", config)
        })?;
        let odd = gpu.download(&segs)?;
        self.layout.run(gpu, &copy, &mut segs, "offsets", config)?;
        let same_seg = odd == gpu.download(&segs)?;
        self.check(item, same && same_seg);
        Ok(())
    }

    fn lifted<M: Lift<X> + PartialEq, X: DeviceCopy>(
        &mut self,
        item: &str,
        items: &Filled<X>,
    ) -> reduce_cuda::Result<()> {
        let gpu = self.gpu;
        let (views, copy) = aligned_and_odd(gpu, items)?;
        let mut out = gpu.identities::<M>(1)?;
        self.row("lifted", item, views[1].address(), |v| {
            gpu.reduce_lifted_into::<M, X>(&views[v], &mut out, Algorithm::Auto)
        })?;
        let same = gpu.reduce_lifted::<M, X>(&views[1], Algorithm::Auto)?
            == gpu.reduce_lifted::<M, X>(&copy, Algorithm::Auto)?;
        self.check(item, same);
        Ok(())
    }

    /// Times `run(0)` (aligned) and `run(1)` (odd) alternately.
    fn row(
        &mut self,
        call: &str,
        item: &str,
        odd_at: u64,
        mut run: impl FnMut(usize) -> reduce_cuda::Result<()>,
    ) -> reduce_cuda::Result<()> {
        let mut ratios = Vec::new();
        let mut times = Vec::new();
        for round in 0..ROUNDS {
            let aligned = median_ms(self.gpu, REPS, || run(0))?;
            let odd = median_ms(self.gpu, REPS, || run(1))?;
            self.csv
                .push(format!("{call},{item},{round},{aligned:.5},{odd:.5}"));
            ratios.push(odd / aligned);
            times.push((aligned, odd));
        }
        let mut sorted = ratios.clone();
        sorted.sort_by(f32::total_cmp);
        let ratio = sorted[ROUNDS / 2];
        let (aligned, odd) = times[ROUNDS / 2];
        self.lines.push(format!(
            "{call:<9} {item:<16} odd view {} B past 16: aligned {aligned:.4} ms, odd {odd:.4} ms, odd / aligned {ratio:.4} (rounds {}); within 3%: {}",
            odd_at % 16,
            ratios
                .iter()
                .map(|r| format!("{r:.3}"))
                .collect::<Vec<_>>()
                .join(" "),
            if ratio <= 1.03 { "yes" } else { "NO" }
        ));
        Ok(())
    }

    fn check(&mut self, item: &str, same: bool) {
        self.lines.push(format!(
            "{item}: the odd view's results equal those of its aligned copy bit for bit: {}",
            if same { "yes" } else { "NO" }
        ));
    }
}
