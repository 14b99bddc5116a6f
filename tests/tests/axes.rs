//! Reductions along the axes of arrays on the GPU against `reduce_core::fold_axes`, bit for
//! bit, with non-commutative monoids: shapes of every rank up to 4 with every set of axes,
//! extents of 0 and 1, sizes around the strips and the rows schedule's tiles (rows of 63, 64,
//! 513, 4097, 100 003), short rows of 1 to 17 items in up to 9 million rows, lifted items (the
//! flat index), the `_into` forms and the bad-input errors. NVRTC compiles the family's kernels
//! (CI too).

use reduce_core::{fold_axes, LayoutError};
use reduce_cuda::{AxisAlgorithm, AxisConfig, Backend, Error};
use reduce_tests::monoids::lang::{lifted, ArgMax};
use reduce_tests::*;

/// Every set of axes of `shape` (as a list in the order given, and reversed).
fn axis_sets(dims: usize) -> Vec<Vec<usize>> {
    (0..1usize << dims)
        .map(|mask| (0..dims).filter(|a| mask >> a & 1 == 1).collect())
        .collect()
}

fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    (0..n).map(|_| (rng.next_u32() % 1000) as f32).collect()
}

#[test]
fn the_family_compiles() {
    if !require_nvrtc() {
        return;
    }
    for config in [
        AxisConfig::default(),
        AxisConfig::new(AxisAlgorithm::Strips).min_strip(2),
        AxisConfig::default().portable(),
    ] {
        reduce_cuda::testing::compile_axes_kernel::<Affine>(config, CI_ARCH).unwrap();
        reduce_cuda::testing::compile_axes_kernel::<Mat3>(config, CI_ARCH).unwrap();
        // a monoid whose device type is a plain float (no lookup of m_lift by its argument)
        reduce_cuda::testing::compile_axes_kernel::<reduce_cuda::Sum<f32>>(config, CI_ARCH)
            .unwrap();
        reduce_cuda::testing::compile_axes_kernel_lifted::<ArgMax, f32>(config, CI_ARCH).unwrap();
    }
}

#[test]
fn the_cpu_backend_is_the_reference() {
    let shape = [7, 0, 3];
    let xs: Vec<Affine> = Vec::new();
    for axes in axis_sets(3) {
        let want = fold_axes(&xs, &shape, &axes).unwrap();
        assert_eq!(
            Backend::cpu()
                .reduce_axes(&xs, &shape, &axes, AxisAlgorithm::Auto)
                .unwrap(),
            want
        );
    }
    let xs = Affine::random_vec(60, 3);
    let e = Backend::cpu().reduce_axes(&xs, &[7, 9], &[0], AxisAlgorithm::Auto);
    assert!(
        matches!(e, Err(Error::Layout(LayoutError::ShapeMismatch { .. }))),
        "{e:?}"
    );
}

#[test]
fn every_axis_set_is_the_fold() {
    let Some(gpu) = gpu() else { return };
    let shapes: &[&[usize]] = &[
        &[],
        &[1],
        &[1000],
        &[0],
        &[33, 65],
        &[1, 300],
        &[300, 1],
        &[5, 0, 4],
        &[2, 3, 4, 5],
        &[3, 1, 257, 2],
        &[17, 3, 31],
        &[4097, 3],
        &[3, 40_003],
        &[2, 70_001, 2],
        &[5, 64],
        &[7, 63],
        &[4, 4097],
        &[2, 100_003],
        &[9, 513, 1],
    ];
    for (k, shape) in shapes.iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs = Affine::random_vec(n, k as u64);
        let dxs = gpu.upload(&xs).unwrap();
        for axes in axis_sets(shape.len()) {
            let want = fold_axes(&xs, shape, &axes).unwrap();
            for config in [
                AxisConfig::default(),
                AxisConfig::new(AxisAlgorithm::Strips).min_strip(2),
                AxisConfig::new(AxisAlgorithm::Strips).min_strip(1000),
            ] {
                let got = gpu.reduce_axes(&dxs, shape, &axes, config).unwrap();
                assert_eq!(
                    gpu.download(&got).unwrap(),
                    want,
                    "{shape:?} {axes:?} {config:?}"
                );
            }
            let rev: Vec<usize> = axes.iter().rev().copied().collect();
            let got = gpu
                .reduce_axes(&dxs, shape, &rev, AxisAlgorithm::Auto)
                .unwrap();
            assert_eq!(gpu.download(&got).unwrap(), want, "{shape:?} {rev:?}");
        }
    }
}

/// Rows of 1 to 17 items (a copy through the lift, then the short rows a thread folds each, then
/// longer ones), in row counts around the rows a block takes at a time and past what one launch
/// of the grid covers (the grid-stride loop), both kinds of item and lifted ones.
#[test]
fn short_rows_and_copies() {
    let Some(gpu) = gpu() else { return };
    for k in 1..=17usize {
        let mut counts = vec![1usize, 255, 4099, 70_001];
        if k == 1 || k == 3 {
            counts.push(9_000_003 / k);
        }
        for rows in counts {
            let shape = [rows, k];
            let xs = Affine::random_vec(rows * k, (rows * k) as u64);
            let dxs = gpu.upload(&xs).unwrap();
            let got = gpu.reduce_axes(&dxs, &shape, &[1], AxisAlgorithm::Auto).unwrap();
            let want = fold_axes(&xs, &shape, &[1]).unwrap();
            assert!(gpu.download(&got).unwrap() == want, "{shape:?}");
            // the array of rows of 1 read down its columns: a copy as well
            let got = gpu.reduce_axes(&dxs, &[1, rows * k], &[0], AxisAlgorithm::Auto).unwrap();
            assert!(gpu.download(&got).unwrap() == xs, "{shape:?} by columns");
            let fl = floats(rows * k, rows as u64);
            let dfl = gpu.upload(&fl).unwrap();
            let items: Vec<ArgMax> = lifted(&fl);
            let got = gpu
                .reduce_axes_lifted::<ArgMax, f32>(&dfl, &shape, &[1], AxisAlgorithm::Auto)
                .unwrap();
            let want = fold_axes(&items, &shape, &[1]).unwrap();
            assert!(gpu.download(&got).unwrap() == want, "lifted {shape:?}");
        }
    }
}

#[test]
fn lifted_items_get_their_flat_index() {
    let Some(gpu) = gpu() else { return };
    for shape in [[64usize, 1000], [1000, 64], [3, 100_000]] {
        let n = shape[0] * shape[1];
        let xs = floats(n, n as u64);
        let dxs = gpu.upload(&xs).unwrap();
        let items: Vec<ArgMax> = lifted(&xs);
        for axes in axis_sets(2) {
            let want = fold_axes(&items, &shape, &axes).unwrap();
            let got = gpu
                .reduce_axes_lifted::<ArgMax, f32>(&dxs, &shape, &axes, AxisAlgorithm::Auto)
                .unwrap();
            assert_eq!(gpu.download(&got).unwrap(), want, "{shape:?} {axes:?}");
        }
    }
}

#[test]
fn into_forms_and_bad_input() {
    let Some(gpu) = gpu() else { return };
    let xs = Mat3::random_vec(6 * 50, 9);
    let dxs = gpu.upload(&xs).unwrap();
    let want = fold_axes(&xs, &[6, 50], &[1]).unwrap();
    // a longer output gets the results in its first values
    let mut out = gpu.identities::<Mat3>(10).unwrap();
    gpu.reduce_axes_into(&dxs, &[6, 50], &[1], &mut out, AxisAlgorithm::Auto)
        .unwrap();
    assert_eq!(&gpu.download(&out).unwrap()[..6], &want[..]);
    let mut short = gpu.identities::<Mat3>(5).unwrap();
    let e = gpu.reduce_axes_into(&dxs, &[6, 50], &[1], &mut short, AxisAlgorithm::Auto);
    assert!(matches!(e, Err(Error::LengthMismatch { .. })), "{e:?}");
    for (shape, axes) in [
        (&[6usize, 51][..], &[1usize][..]),
        (&[6, 50], &[2]),
        (&[6, 50], &[1, 1]),
    ] {
        let e = gpu.reduce_axes(&dxs, shape, axes, AxisAlgorithm::Auto);
        assert!(
            matches!(e, Err(Error::Layout(_))),
            "{shape:?} {axes:?}: {e:?}"
        );
    }
    let e = gpu.reduce_axes(&dxs, &[6, 50], &[1], AxisConfig::default().min_strip(1));
    assert!(matches!(e, Err(Error::InvalidConfig { .. })), "{e:?}");
    // the lifted into form
    let fl = floats(300, 1);
    let dfl = gpu.upload(&fl).unwrap();
    let mut out = gpu.identities::<ArgMax>(50).unwrap();
    gpu.reduce_axes_lifted_into::<ArgMax, f32>(&dfl, &[6, 50], &[0], &mut out, AxisAlgorithm::Auto)
        .unwrap();
    let items: Vec<ArgMax> = lifted(&fl);
    assert_eq!(
        gpu.download(&out).unwrap(),
        fold_axes(&items, &[6, 50], &[0]).unwrap()
    );
    // Backend on the GPU
    let backend = Backend::Gpu(gpu);
    assert_eq!(
        backend
            .reduce_axes(&xs, &[6, 50], &[1], AxisAlgorithm::Auto)
            .unwrap(),
        want
    );
}
