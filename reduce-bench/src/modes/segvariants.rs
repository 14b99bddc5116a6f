//! `bench segvariants [--out DIR]`: SegShuffle's, SegPipeline's, SegHeads' (CSR offsets) and
//! SegMerge's tuning spaces (`segvariants.txt`), on seven distributions of `bench segmented` and
//! four of `bench segsweep`'s mean lengths (256, 1024 and 4096, inside or at the edge of
//! SegHeads' bands; 4096 and 16384, where CUB's block per segment is faster); f32 sums, the
//! affine monoid and ArgMax lifted from the f32 items.

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::layouts::{distribution, mean_length};
use crate::monoids::{masks_affine, masks_f32, Affine, ArgMax};
use crate::output::report;
use crate::seg_common::{forms_of, plain_shuffle_ms, runs_here, DeviceLayout, FORMS};
use reduce_cuda::{Gpu, SegAlgorithm, SegConfig, Sum};

/// SegShuffle's, SegPipeline's, SegHeads' and SegMerge's tuning spaces (trusted layouts):
/// fraction of plain Shuffle per variant (lifted ArgMax: of plain Shuffle on its f32 items).
pub fn segvariants(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let n = 30u64 << 20;
    let sums = kernels.fill_random::<Sum<f32>>(n as usize, 3, &masks_f32())?;
    let floats = kernels.fill_random::<f32>(n as usize, 3, &masks_f32())?;
    let affine = kernels.fill_random::<Affine>(n as usize, 4, &masks_affine())?;
    let plain_f32 = (n * 4) as f64 / (plain_shuffle_ms(&gpu, sums.items())? as f64 * 1e6);
    let plain_affine = (n * 8) as f64 / (plain_shuffle_ms(&gpu, affine.items())? as f64 * 1e6);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle).trusted();
    let mut variants = vec![
        (
            "Auto".to_string(),
            SegConfig::new(SegAlgorithm::Auto).trusted(),
        ),
        ("SegShuffle default".to_string(), shuffle),
    ];
    for (block, items) in [
        (256, 8),
        (256, 24),
        (256, 32),
        (128, 16),
        (512, 8),
        (512, 16),
        (1024, 16),
    ] {
        variants.push((
            format!("SegShuffle b{block} k{items}"),
            shuffle.block(block).items_per_thread(items),
        ));
    }
    let pipeline = SegConfig::new(SegAlgorithm::SegPipeline).trusted();
    variants.push(("SegPipeline default".to_string(), pipeline));
    for stages in [1, 3, 4] {
        variants.push((format!("SegPipeline s{stages}"), pipeline.stages(stages)));
    }
    let heads = SegConfig::new(SegAlgorithm::SegHeads).trusted();
    variants.push(("SegHeads default".to_string(), heads));
    for (block, items) in [
        (256, 8),
        (256, 16),
        (256, 32),
        (128, 16),
        (512, 8),
        (512, 16),
    ] {
        variants.push((
            format!("SegHeads b{block} k{items}"),
            heads.block(block).items_per_thread(items),
        ));
    }
    variants.retain(|(_, config)| runs_here(&gpu, config));
    let base = SegConfig::new(SegAlgorithm::SegMerge).trusted();
    variants.push(("SegMerge default".to_string(), base));
    for (block, steps, stages) in [(256, 8, 3), (64, 32, 3)] {
        variants.push((
            format!("SegMerge b{block} k{steps} s{stages}"),
            base.block(block).items_per_thread(steps).stages(stages),
        ));
    }
    let mut lines = vec![format!(
        "plain Shuffle: f32 sum {plain_f32:.0} GB/s, affine {plain_affine:.0} GB/s (n = {n})"
    )];
    for dist in [
        "one_segment",
        "size_1",
        "size_3",
        "random_10_50",
        "power_2",
        "power_3",
        "empty_90",
        "mean_256",
        "mean_1024",
        "mean_4096",
        "mean_16384",
    ] {
        let offsets = match dist.strip_prefix("mean_") {
            Some(mean) => mean_length(mean.parse().expect("a mean length"), n, 7),
            None => distribution(dist, n, 7).expect("a distribution"),
        };
        let layout = DeviceLayout::new(&gpu, &offsets)?;
        let mut out_f32 = gpu.zeroed::<Sum<f32>>(layout.segments)?;
        let mut out_affine = gpu.zeroed::<Affine>(layout.segments)?;
        let mut out_argmax = gpu.identities::<ArgMax>(layout.segments)?;
        for form in FORMS {
            // SegHeads takes CSR offsets only (for owners it runs `Auto`'s rows).
            for (label, config) in variants
                .iter()
                .filter(|(_, c)| forms_of(*c).any(|f| f == form))
            {
                let cell = |ms: reduce_cuda::Result<f32>, bytes: f64, plain: f64| match ms {
                    Ok(ms) => format!("{ms:.4} ms {:.2}", bytes / (ms as f64 * 1e6) / plain),
                    Err(e) => format!("({e})"),
                };
                let f = cell(
                    layout.time(&gpu, sums.items(), &mut out_f32, form, *config),
                    layout.bytes::<Sum<f32>>(n as usize, form),
                    plain_f32,
                );
                let a = cell(
                    layout.time(&gpu, affine.items(), &mut out_affine, form, *config),
                    layout.bytes::<Affine>(n as usize, form),
                    plain_affine,
                );
                let g = cell(
                    layout.time_lifted(&gpu, floats.items(), &mut out_argmax, form, *config),
                    layout.lifted_bytes::<f32, ArgMax>(n as usize, form),
                    plain_f32,
                );
                lines.push(format!(
                    "{dist:<13} {form:<7} {label:<22} f32_sum {f} | affine {a} | argmax {g}"
                ));
            }
        }
    }
    report(&args.out, "segvariants.txt", &lines);
    Ok(())
}
