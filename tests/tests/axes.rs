//! Reductions along the axes of arrays on the GPU against `reduce_core::fold_axes`, bit for
//! bit, with non-commutative monoids: shapes of every rank up to 4 with every set of axes,
//! extents of 0 and 1, sizes around the strips and the rows schedule's tiles (rows of 63, 64,
//! 513, 4097, 100 003), short rows of 1 to 17 items in up to 9 million rows, few columns
//! folded side by side (order kept, and order-free for a commutative monoid), views at any
//! offset, lifted items (the flat index), more than 2^32 items, the `_into` forms and the
//! bad-input errors. NVRTC compiles the family's kernels (CI too).

use reduce_core::{fold_axes, LayoutError};
use reduce_cuda::{AxisAlgorithm, AxisConfig, Backend, Error, Sum};
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

/// `Auto`'s ArgMax of the f32 `xs` at `dxs` (the same items on the device, any view) along
/// `axes` of `shape`, lifted with the flat index, equals `fold_axes` of the lifted items.
fn check_lifted(
    gpu: &reduce_cuda::Gpu,
    xs: &[f32],
    dxs: &impl reduce_cuda::DeviceInput<f32>,
    shape: &[usize],
    axes: &[usize],
) {
    let items: Vec<ArgMax> = lifted(xs);
    let got = gpu
        .reduce_axes_lifted::<ArgMax, f32>(dxs, shape, axes, AxisAlgorithm::Auto)
        .unwrap();
    let want = fold_axes(&items, shape, axes).unwrap();
    assert!(
        gpu.download(&got).unwrap() == want,
        "lifted {shape:?} {axes:?}"
    );
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
    // An empty array whose kept extents promise more results than one allocation holds: the
    // reference's error, from both backends and both forms (the GPU's in
    // `into_forms_and_bad_input`).
    let huge = [1usize << 62, 0];
    assert!(matches!(
        fold_axes::<Affine>(&[], &huge, &[1]),
        Err(LayoutError::TooLarge {
            what: "result count",
            ..
        })
    ));
    let e = Backend::cpu().reduce_axes::<Affine>(&[], &huge, &[1], AxisAlgorithm::Auto);
    assert!(too_many_results(&e), "{e:?}");
    let e = Backend::cpu().reduce_axes_lifted::<ArgMax, f32>(&[], &huge, &[1], AxisAlgorithm::Auto);
    assert!(too_many_results(&e), "{e:?}");
}

fn too_many_results<T: std::fmt::Debug>(e: &Result<T, Error>) -> bool {
    matches!(
        e,
        Err(Error::Layout(LayoutError::TooLarge {
            what: "result count",
            ..
        }))
    )
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
            let got = gpu
                .reduce_axes(&dxs, &shape, &[1], AxisAlgorithm::Auto)
                .unwrap();
            let want = fold_axes(&xs, &shape, &[1]).unwrap();
            assert!(gpu.download(&got).unwrap() == want, "{shape:?}");
            // the array of rows of 1 read down its columns: a copy as well
            let got = gpu
                .reduce_axes(&dxs, &[1, rows * k], &[0], AxisAlgorithm::Auto)
                .unwrap();
            assert!(gpu.download(&got).unwrap() == xs, "{shape:?} by columns");
            let fl = floats(rows * k, rows as u64);
            check_lifted(&gpu, &fl, &gpu.upload(&fl).unwrap(), &shape, &[1]);
        }
    }
}

/// Few columns (2, 4 and 8 are folded side by side by the rows schedule; 3 and 16 by strips) down
/// K from the rows schedule's tile and up, batches around them, through several passes: a
/// non-commutative monoid (order kept), a commutative one (`Auto` folds it order-free) and
/// lifted items.
#[test]
fn few_columns_side_by_side() {
    let Some(gpu) = gpu() else { return };
    for c in [2usize, 3, 4, 8, 16] {
        for (b, k) in [
            (1usize, 64usize),
            (3, 65),
            (1, 1000),
            (2, 100_003),
            (1, 1 << 20),
        ] {
            let shape = [b, k, c];
            let n = b * k * c;
            let xs = Affine::random_vec(n, n as u64);
            let dxs = gpu.upload(&xs).unwrap();
            let want = fold_axes(&xs, &shape, &[1]).unwrap();
            for config in [
                AxisConfig::default(),
                AxisConfig::new(AxisAlgorithm::Strips).min_strip(2),
            ] {
                let got = gpu.reduce_axes(&dxs, &shape, &[1], config).unwrap();
                assert!(gpu.download(&got).unwrap() == want, "{shape:?} {config:?}");
            }
            let us: Vec<Sum<u32>> = (0..n as u32)
                .map(|i| Sum(i.wrapping_mul(2_654_435_761)))
                .collect();
            let dus = gpu.upload(&us).unwrap();
            let got = gpu
                .reduce_axes(&dus, &shape, &[1], AxisAlgorithm::Auto)
                .unwrap();
            let want = fold_axes(&us, &shape, &[1]).unwrap();
            assert!(gpu.download(&got).unwrap() == want, "u32 sums {shape:?}");
            let fl = floats(n, k as u64);
            check_lifted(&gpu, &fl, &gpu.upload(&fl).unwrap(), &shape, &[1]);
        }
    }
}

/// Rows and few columns, whose lanes read 64-byte runs as vectors, from views 0 to 5 items past a
/// 16-byte boundary (lifted f32 and the 8-byte affine monoid), the runs at the view's ends read
/// item by item.
#[test]
fn vector_runs_from_views_at_any_offset() {
    let Some(gpu) = gpu() else { return };
    for (shape, axes) in [
        (vec![37usize, 1001], vec![1usize]),
        (vec![3, 4099], vec![1]),
        (vec![5003, 2], vec![0]),
        (vec![3, 1001, 4], vec![1]),
    ] {
        let n: usize = shape.iter().product();
        let fl = floats(n, 5);
        let xs = Affine::random_vec(n, 6);
        let want_affine = fold_axes(&xs, &shape, &axes).unwrap();
        for skip in 0..6 {
            let (_keep, view) = placed(&gpu, &fl, skip);
            check_lifted(&gpu, &fl, &view, &shape, &axes);
            let (_keep, view) = placed(&gpu, &xs, skip);
            let got = gpu
                .reduce_axes(&view, &shape, &axes, AxisAlgorithm::Auto)
                .unwrap();
            assert!(
                gpu.download(&got).unwrap() == want_affine,
                "affine {shape:?} +{skip}"
            );
        }
    }
}

/// Past the u32 index range: arrays of more than 2^32 one-byte items (a non-commutative S4
/// permutation each), three long rows and their 1.4 billion columns of 3, and 65537 rows of 65537
/// and their columns, against the CPU backend (which the other tests hold to `fold_axes`). Needs
/// about 4.3 GB of device memory and 8.6 GB of host memory.
#[test]
fn more_than_u32_max_items() {
    let Some(gpu) = gpu() else { return };
    for shape in [[3usize, 1_431_655_767], [65_537, 65_537]] {
        let n = shape[0] * shape[1];
        assert!(n > 1 << 32);
        if gpu.info().total_memory < 3 * n {
            eprintln!("skipped: the device has less than {} bytes", 3 * n);
            return;
        }
        // a random block whose period does not divide 2^32, repeated: an index truncated to 32
        // bits would read other values
        let block = Perm4::random_vec((1 << 26) + 1, 42);
        let items: Vec<Perm4> = block.iter().copied().cycle().take(n).collect();
        let xs = gpu.upload(&items).unwrap();
        for axes in [[1usize], [0]] {
            let want = Backend::cpu()
                .reduce_axes(&items, &shape, &axes, AxisAlgorithm::Auto)
                .unwrap();
            let got = gpu
                .reduce_axes(&xs, &shape, &axes, AxisAlgorithm::Auto)
                .unwrap();
            assert!(gpu.download(&got).unwrap() == want, "{shape:?} {axes:?}");
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
        for axes in axis_sets(2) {
            check_lifted(&gpu, &xs, &dxs, &shape, &axes);
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
    let empty = gpu.upload::<Mat3>(&[]).unwrap();
    let e = gpu.reduce_axes(&empty, &[1 << 62, 0], &[1], AxisAlgorithm::Auto);
    assert!(too_many_results(&e), "{e:?}");
    let e = gpu.reduce_axes_into(&empty, &[1 << 62, 0], &[1], &mut short, AxisAlgorithm::Auto);
    assert!(too_many_results(&e), "{e:?}");
    // Nothing to compute (a kept extent of 0) still checks the memory: a view at an odd byte
    // offset is misaligned.
    let bytes = gpu.stream().alloc_zeros::<u8>(64).unwrap();
    // SAFETY: any bytes are u32 values; the view is only checked.
    let odd = unsafe { bytes.slice(1..).transmute::<u32>(0) }.unwrap();
    let e = gpu.reduce_axes::<Sum<u32>>(&odd, &[0, 5], &[1], AxisAlgorithm::Auto);
    assert!(matches!(e, Err(Error::Misaligned { .. })), "{e:?}");
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
