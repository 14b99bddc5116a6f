//! The portable mode along axes (`AxisConfig::portable`) on the GPU: every result has the bits
//! of the CPU reference `reduce_core::portable::fold_axes` — f32 and f64 sums of mixed
//! magnitudes with cancelling pairs, zeros of both signs, subnormals, infinities and NaN (any
//! NaN matches any NaN), a float monoid of two fields lifted from f32 (log-sum-exp) — on rows,
//! columns, middle axes and several reduced axes of many shapes (extents of 0 and 1, rows of one
//! to three passes, results past 2^16), an exactly associative non-commutative monoid equal to
//! `fold_axes`, views at odd offsets, the `_into` forms; the CPU backend gives the same bits,
//! and the settings the mode refuses are typed errors. Each case prints a hash of its bits
//! (`portable-axes-hash`), to compare devices.
//!
//! GPU tests skip without a device and fail under `REDUCE_REQUIRE_GPU=1`; the CPU ones run
//! everywhere.

use reduce_bench::monoids::LogSumExp;
use reduce_core::{fold_axes, portable};
use reduce_cuda::{AxisAlgorithm, AxisConfig, Backend, CudaMonoid, Error, Gpu, Sum};
use reduce_tests::floats::{assert_same_bits, SameBits};
use reduce_tests::monoids::lang::lifted;
use reduce_tests::{bits_hash, gpu, placed, Affine, Random, TestRng};

/// (shape, axes): rows, columns and middle axes of several lengths, several reduced axes, and
/// the edge shapes.
fn shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut v: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for (r, c) in [
        (1usize, 1usize),
        (1000, 1),
        (1, 1000),
        (4097, 3),
        (3, 4097),
        (513, 64),
        (64, 513),
        (100_003, 5),
        (5, 100_003),
        (2, 1_000_003),
        (1 << 16, 17),
        (1 << 21, 2),
    ] {
        v.push((vec![r, c], vec![1]));
        v.push((vec![r, c], vec![0]));
        v.push((vec![r, c], vec![0, 1]));
    }
    v.extend([
        (vec![], vec![]),
        (vec![7, 0, 3], vec![1]),
        (vec![7, 0, 3], vec![0, 2]),
        (vec![0, 5], vec![1]),
        (vec![40, 300, 33], vec![1]),
        (vec![3, 1, 257, 2], vec![0, 2]),
        (vec![6, 2, 7, 3, 5], vec![4, 2, 0]),
        (vec![2, 3, 4, 5, 6, 7], vec![1, 3, 5]),
        (vec![3, 4], vec![]),
        (vec![1 << 23], vec![0]),
    ]);
    v
}

/// f32 items of every kind a sum's bits can tell apart: mixed magnitudes, cancelling pairs,
/// zeros of both signs, subnormals, and (`special`) infinities and NaN.
fn axes_f32(n: usize, seed: u64, special: bool) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    let mut xs: Vec<f32> = (0..n)
        .map(|_| match rng.range(0, 16) {
            0 => -0.0,
            1 => f32::from_bits(rng.next_u32() & 0x807f_ffff), // subnormal
            2 => 1e30 * if rng.range(0, 2) == 0 { 1.0 } else { -1.0 },
            _ => {
                let e = rng.range(100, 150) as u32;
                f32::from_bits((rng.next_u32() & 0x807f_ffff) | (e << 23))
            }
        })
        .collect();
    for i in (1..n).step_by(7) {
        xs[i] = -xs[i - 1]; // cancelling pairs
    }
    if special && n > 10 {
        xs[n / 3] = f32::INFINITY;
        xs[n / 2] = f32::NAN;
        xs[n - 1] = f32::NEG_INFINITY;
    }
    xs
}

/// Every shape of `items(n)` on the GPU (and, below 2^20 items, through `Backend::cpu()`)
/// against the reference bits.
fn check<M: CudaMonoid + SameBits>(gpu: &Gpu, name: &str, items: impl Fn(usize, u64) -> Vec<M>) {
    let config = AxisConfig::default().portable();
    for (k, (shape, axes)) in shapes().into_iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs = items(n, k as u64);
        let want = portable::fold_axes(&xs, &shape, &axes).unwrap();
        println!(
            "portable-axes-hash {name} {shape:?} {axes:?} {:016x}",
            bits_hash(&want)
        );
        let what = format!("{name} {shape:?} along {axes:?}");
        let dxs = gpu.upload(&xs).unwrap();
        let got = gpu.reduce_axes(&dxs, &shape, &axes, config).unwrap();
        assert_same_bits(&gpu.download(&got).unwrap(), &want, &what);
        let strips = AxisConfig::new(AxisAlgorithm::Strips).portable();
        let got = gpu.reduce_axes(&dxs, &shape, &axes, strips).unwrap();
        assert_same_bits(&gpu.download(&got).unwrap(), &want, &what);
        if n < 1 << 20 {
            let cpu = Backend::cpu()
                .reduce_axes(&xs, &shape, &axes, config)
                .unwrap();
            assert_same_bits(&cpu, &want, &format!("CPU backend, {what}"));
        }
    }
}

#[test]
fn f32_sums_have_the_reference_bits() {
    let Some(gpu) = gpu() else { return };
    check(&gpu, "f32", |n, seed| {
        axes_f32(n, seed, true).into_iter().map(Sum).collect()
    });
}

#[test]
fn f64_sums_have_the_reference_bits() {
    let Some(gpu) = gpu() else { return };
    check(&gpu, "f64", |n, seed| {
        let xs = axes_f32(n, seed, false);
        xs.into_iter()
            .map(|x| Sum(x as f64 * 1.000_000_1))
            .collect()
    });
}

#[test]
fn an_exact_monoid_gets_the_fold_in_order() {
    let Some(gpu) = gpu() else { return };
    let config = AxisConfig::default().portable();
    for (k, (shape, axes)) in shapes().into_iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs = Affine::random_vec(n, k as u64);
        let want = fold_axes(&xs, &shape, &axes).unwrap();
        let dxs = gpu.upload(&xs).unwrap();
        let got = gpu.reduce_axes(&dxs, &shape, &axes, config).unwrap();
        assert_eq!(gpu.download(&got).unwrap(), want, "{shape:?} {axes:?}");
    }
}

/// Log-sum-exp per row and per column of f32 logits, lifted (the flat index), from views 0 to 5
/// items past a 16-byte boundary, into a longer output.
#[test]
fn lifted_log_sum_exp_from_views_at_any_offset() {
    let Some(gpu) = gpu() else { return };
    for (shape, axes) in [
        (vec![300usize, 1001], vec![1usize]),
        (vec![300, 1001], vec![0]),
        (vec![7, 33, 65], vec![0, 2]),
    ] {
        let n: usize = shape.iter().product();
        let logits: Vec<f32> = axes_f32(n, 3, false)
            .iter()
            .map(|x| x.clamp(-80.0, 80.0))
            .collect();
        let items: Vec<LogSumExp> = lifted(&logits);
        let want = portable::fold_axes(&items, &shape, &axes).unwrap();
        for skip in 0..6 {
            let (_keep, view) = placed(&gpu, &logits, skip);
            let mut out = gpu.identities::<LogSumExp>(want.len() + 3).unwrap();
            gpu.reduce_axes_lifted_into::<LogSumExp, f32>(
                &view,
                &shape,
                &axes,
                &mut out,
                AxisConfig::default().portable(),
            )
            .unwrap();
            let got = gpu.download(&out).unwrap();
            assert_same_bits(
                &got[..want.len()],
                &want,
                &format!("{shape:?} {axes:?} +{skip}"),
            );
        }
    }
}

#[test]
fn refused_settings_are_typed_errors() {
    let config = AxisConfig::default().portable().min_strip(16);
    let xs = Affine::random_vec(12, 1);
    let e = Backend::cpu().reduce_axes(&xs, &[3, 4], &[1], config);
    assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
    let e = Backend::cpu().reduce_axes(&xs, &[3, 5], &[1], AxisConfig::default().portable());
    assert!(matches!(e, Err(Error::Layout(_))), "{e:?}");
    let Some(gpu) = gpu() else { return };
    let dxs = gpu.upload(&xs).unwrap();
    let e = gpu.reduce_axes(&dxs, &[3, 4], &[1], config);
    assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
}
