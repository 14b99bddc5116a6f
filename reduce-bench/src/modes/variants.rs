//! `bench variants [--out DIR]`: Shuffle's tuning space at 2^24 and 2^28 (f32 sum, affine, 2x2
//! matrix), against the roof: `variants.txt`.

use crate::cli::Args;
use crate::kernels::BenchKernels;
use crate::measure::measure_plain_monoid;
use crate::output::report;
use reduce_cuda::{Algorithm, Config, Gpu};

/// Shuffle's tuning space at 2^24 and 2^28 (f32 sum, affine, 2x2 matrix), against the roof.
pub fn variants(args: &Args) -> reduce_cuda::Result<()> {
    let gpu = Gpu::new(0)?;
    let kernels = BenchKernels::new(&gpu)?;
    let sms = gpu.info().multiprocessors;
    let shuffle = Config::new(Algorithm::Shuffle);
    let configs: Vec<(String, Config)> = vec![
        ("default".into(), shuffle),
        (
            "Auto (order-free if commutative)".into(),
            Config::new(Algorithm::Auto),
        ),
        ("items /2".into(), shuffle.items_per_thread(0)),
        (
            "b512 g2 k2".into(),
            shuffle.block(512).grid(2 * sms).tile_group(2),
        ),
        (
            "b512 g2 k1".into(),
            shuffle.block(512).grid(2 * sms).tile_group(1),
        ),
        (
            "b512 g2 k4".into(),
            shuffle.block(512).grid(2 * sms).tile_group(4),
        ),
        (
            "b512 g2 k2 items /2".into(),
            shuffle
                .block(512)
                .grid(2 * sms)
                .tile_group(2)
                .items_per_thread(0),
        ),
        (
            "b512 g3 k2".into(),
            shuffle.block(512).grid(3 * sms).tile_group(2),
        ),
        (
            "b512 g4 k2".into(),
            shuffle.block(512).grid(4 * sms).tile_group(2),
        ),
        (
            "b1024 g1 k1".into(),
            shuffle.block(1024).grid(sms).tile_group(1),
        ),
        (
            "b1024 g1 k2".into(),
            shuffle.block(1024).grid(sms).tile_group(2),
        ),
        (
            "b256 g4 k4".into(),
            shuffle.block(256).grid(4 * sms).tile_group(4),
        ),
        (
            "b256 g2 k4".into(),
            shuffle.block(256).grid(2 * sms).tile_group(4),
        ),
        ("b512 g2 warp runs".into(), shuffle.block(512).grid(2 * sms)),
    ];
    let mut lines = vec![format!(
        "{:<11} {:>5} {:<28} {:>9} {:>8} {:>6}",
        "monoid", "log2N", "variant", "ms", "GB/s", "roof"
    )];
    for log2 in [24usize, 28] {
        let n = 1 << log2;
        for (name, size) in [("f32_sum", 4usize), ("affine_u32", 8), ("mat2_u32", 16)] {
            // Items per lane: the default is 64 bytes' worth; x2 and /2 scale it.
            let base = (64 / size) as u32;
            let sized: Vec<(String, Config)> = configs
                .iter()
                .map(|(l, c)| {
                    let mut c = *c;
                    if l.contains("items x2") {
                        c.items_per_thread = Some(2 * base);
                    } else if l.contains("items /2") {
                        c.items_per_thread = Some((base / 2).max(1));
                    }
                    (l.clone(), c)
                })
                .collect();
            let mut rows = Vec::new();
            let roof = measure_plain_monoid(&gpu, &kernels, name, n, &sized, &mut rows)?;
            for r in rows {
                lines.push(format!(
                    "{:<11} {:>5} {:<28} {:>9.4} {:>8.1} {:>6.3} {}",
                    r.monoid,
                    log2,
                    r.algorithm,
                    r.ms,
                    r.gbs(),
                    roof / r.ms,
                    r.correct.map_or("", |c| if c { "" } else { "WRONG" })
                ));
            }
        }
    }
    report(&args.out, "variants.txt", &lines);
    Ok(())
}
