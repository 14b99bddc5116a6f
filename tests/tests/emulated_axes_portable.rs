//! The portable reduction along axes' kernels (kernels/axes_portable.cu,
//! `AxisConfig::portable`) without a GPU: the generated CUDA text runs on the CPU under
//! `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, barriers and warp collectives as real
//! rendezvous, AddressSanitizer on every access, the fibers of a block in three orders), pass
//! after pass as the library launches them, and must give `reduce_core::portable::fold_axes`'s
//! bits: f32 sums of mixed magnitudes (whose bits depend on the grouping) and an exactly
//! associative, non-commutative monoid (`fold_axes`'s value), lifted items at an odd offset, on
//! every set of axes of shapes of rank 0 to 5 (rows, columns, middle axes, several reduced axes
//! around kept ones, extents of 0 and 1, rows of several passes), with blocks of 32 to 256
//! threads and grids of 1 to 7 blocks — the knobs that must change nothing.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold_axes, portable, CudaMonoid};
use reduce_cuda::testing::{
    axes_portable_passes, axes_portable_source, axes_portable_source_lifted,
};
use reduce_cuda::Sum;
use reduce_tests::emu::{axes_portable_kernel, bytes_of, check_on_grids, compiler, PassesCase};
use reduce_tests::monoids::lang::{lifted, ArgMax};
use reduce_tests::{Affine, Random, TestRng};
use std::fmt::Debug;

/// Shapes and their axis sets: every set for the small ranks, chosen ones for the others.
fn shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut cases = Vec::new();
    let every: &[&[usize]] = &[
        &[],
        &[1],
        &[0],
        &[37],
        &[33, 65],
        &[5, 64],
        &[300, 3],
        &[3, 0, 4],
        &[17, 3, 31],
        &[3, 1, 257, 2],
    ];
    for shape in every {
        for mask in 0..1usize << shape.len() {
            let axes = (0..shape.len()).filter(|a| mask >> a & 1 == 1).collect();
            cases.push((shape.to_vec(), axes));
        }
    }
    // rows of two and three passes (more than 256 runs, more than 2^16), columns of many
    // tiles, three reduced runs around two kept ones, reduced axes listed out of order
    cases.extend([
        (vec![3, 5000], vec![1]),
        (vec![70_001], vec![0]),
        (vec![4100, 2], vec![0]),
        (vec![2, 2100, 40], vec![1]),
        (vec![3, 2, 5, 2, 7], vec![4, 0, 2]),
        (vec![2, 3, 2, 3, 2], vec![1, 3]),
    ]);
    cases
}

/// Floats of magnitudes from 2^-10 to 2^14, both signs: sums whose bits depend on the grouping.
fn wide_f32(n: usize, seed: u64) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    (0..n)
        .map(|_| {
            let e = rng.range(117, 141) as u32;
            f32::from_bits((rng.next_u64() as u32 & 0x807f_ffff) | (e << 23))
        })
        .collect()
}

/// Runs every shape through the kernels of `source` (blocks of `block` threads), items `shift`
/// bytes past a 16-byte boundary (`check_on_grids`: grids of 1, 3 and 7 blocks, fibers in every
/// order), and holds each result against `expected`.
fn check<X: reduce_cuda::DeviceCopy, M: CudaMonoid + Debug + PartialEq>(
    cxx: &str,
    tag: &str,
    source: &reduce_cuda::KernelSource,
    block: u32,
    shift: usize,
    items: impl Fn(usize, u64) -> Vec<X>,
    expected: impl Fn(&[X], &[usize], &[usize]) -> Vec<M>,
) {
    let kernel = axes_portable_kernel(cxx, source, tag, std::mem::size_of::<M>());
    let mut cases = Vec::new();
    for (k, (shape, axes)) in shapes().into_iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs = items(n, k as u64);
        let want = expected(&xs, &shape, &axes);
        if want.is_empty() {
            continue; // no result: the library launches nothing
        }
        let case = PassesCase {
            n: n as u64,
            items: bytes_of(&xs),
            shift: shift as u64,
            grid: 0,
            passes: axes_portable_passes::<M>(block, &shape, &axes).unwrap(),
            outputs: want.len() as u64,
        };
        cases.push((format!("{shape:?} along {axes:?}"), case, want));
    }
    check_on_grids(&kernel, tag, cases);
}

#[test]
fn float_sums_have_the_reference_bits_on_every_block() {
    let Some(cxx) = compiler() else { return };
    for block in [32, 64, 128, 256] {
        let source = axes_portable_source::<Sum<f32>>(block).unwrap();
        check(
            &cxx,
            &format!("f32_{block}"),
            &source,
            block,
            0,
            |n, seed| wide_f32(n, seed).into_iter().map(Sum).collect(),
            |xs: &[Sum<f32>], shape, axes| {
                // bits, so that the comparison is exact (no NaN among these items)
                let want = portable::fold_axes(xs, shape, axes).unwrap();
                assert!(want.iter().all(|x| !x.0.is_nan()));
                want
            },
        );
    }
}

#[test]
fn an_exact_monoid_gets_the_fold_in_order() {
    let Some(cxx) = compiler() else { return };
    for block in [32, 256] {
        let source = axes_portable_source::<Affine>(block).unwrap();
        check(
            &cxx,
            &format!("affine_{block}"),
            &source,
            block,
            0,
            Affine::random_vec,
            |xs: &[Affine], shape, axes| {
                let want = fold_axes(xs, shape, axes).unwrap();
                assert_eq!(portable::fold_axes(xs, shape, axes).unwrap(), want);
                want
            },
        );
    }
}

#[test]
fn lifted_items_at_an_odd_offset_get_their_flat_index() {
    let Some(cxx) = compiler() else { return };
    let source = axes_portable_source_lifted::<ArgMax, f32>(64).unwrap();
    check(
        &cxx,
        "argmax",
        &source,
        64,
        4,
        |n, seed| {
            // few distinct values: ties, which the index breaks
            let mut rng = TestRng::new(seed);
            (0..n).map(|_| (rng.next_u32() % 7) as f32).collect()
        },
        |xs: &[f32], shape, axes| {
            let items: Vec<ArgMax> = lifted(xs);
            portable::fold_axes(&items, shape, axes).unwrap()
        },
    );
}
