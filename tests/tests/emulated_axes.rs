//! The default mode's kernels along axes (kernels/axes.cu: strips, short rows, rows and few
//! columns read as 64-byte vector runs) without a GPU: the generated CUDA text runs on the CPU
//! under `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, warp collectives as real
//! rendezvous, AddressSanitizer on every access, the fibers of a block in three orders), launch
//! after launch as the library plans them for a device of few threads (so that small shapes
//! take every schedule and several passes), on grids of 1, 3 and 7 blocks, and must give
//! `reduce_core::fold_axes`'s value: an exactly associative, non-commutative monoid through
//! `Strips` (the order kept everywhere), a commutative one through `Auto` (rows and few columns
//! folded out of order), both also one item past a 16-byte boundary, and lifted items 1 and 2
//! items past it (the vector runs' shifted loads, and the general loop where they cannot run).
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold_axes, CudaMonoid};
use reduce_cuda::testing::{axes_strips_launches, axes_strips_source, axes_strips_source_lifted};
use reduce_cuda::{AxisAlgorithm, Sum};
use reduce_tests::emu::{axes_kernel, bytes_of, check_on_grids, compiler, PassesCase};
use reduce_tests::monoids::lang::{lifted, ArgMax};
use reduce_tests::{Affine, Random, TestRng};
use std::fmt::Debug;

/// Shapes and axis sets that take every schedule on a device of `THREADS` threads: short rows
/// (1 to 16 items), rows of whole and partial 64-byte runs over several passes, 2, 3, 4, 8 and
/// 16 columns, middle axes, several reduced axes, extents of 1.
fn shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut cases = Vec::new();
    for (rows, k) in [
        (37usize, 1usize),
        (300, 2),
        (1000, 3),
        (129, 4),
        (90, 8),
        (33, 16),
    ] {
        cases.push((vec![rows, k], vec![1]));
    }
    for k in [64usize, 100, 1000, 5003] {
        cases.push((vec![3, k], vec![1]));
    }
    // strips of several tiles, the last strip of each row one row short of whole runs in its
    // last lane
    cases.push((vec![2, 70_655], vec![1]));
    cases.push((vec![70_001], vec![0]));
    cases.push((vec![20_000, 2], vec![0]));
    // few columns over two passes of the rows schedule (with the order kept: long runs of 8-byte
    // values in both)
    cases.push((vec![70_001, 4], vec![0]));
    for c in [2usize, 3, 4, 8, 16] {
        cases.push((vec![700, c], vec![0]));
        cases.push((vec![2, 333, c], vec![1]));
    }
    cases.extend([
        (vec![1, 4099], vec![0]),
        (vec![17, 3, 31], vec![0, 2]),
        (vec![3, 2, 5, 2, 7], vec![4, 0, 2]),
        (vec![5, 1, 257, 2], vec![1, 2]),
    ]);
    cases
}

/// The words of each entry point's launch record: entry, threads, outputs, then the arguments
/// of its signature (strips 5, rows 6, few columns 7, short rows 2, few columns of long runs
/// 7), both passes.
const RECORD_LENS: [usize; 10] = [8, 8, 9, 9, 10, 10, 5, 5, 10, 10];

/// The threads the plans are made for: few, so that strips are short and passes many.
const THREADS: u64 = 4096;

/// Runs every shape through the kernels of `source` (`algorithm`'s plan for items of
/// `in_size` bytes), items `shift` bytes past a 16-byte boundary (`check_on_grids`: grids of 1,
/// 3 and 7 blocks, fibers in every order), and holds each result against `expected`. Returns
/// which entry points ran (the first eight always do; the few-columns kernels of long runs,
/// 8 and 9, only with the order kept).
#[allow(clippy::too_many_arguments)]
fn check<X: reduce_cuda::DeviceCopy, M: CudaMonoid + Debug + PartialEq>(
    cxx: &str,
    tag: &str,
    source: &reduce_cuda::KernelSource,
    algorithm: AxisAlgorithm,
    shift: usize,
    items: impl Fn(usize, u64) -> Vec<X>,
    expected: impl Fn(&[X], &[usize], &[usize]) -> Vec<M>,
) -> [bool; 10] {
    let kernel = axes_kernel(cxx, source, tag, std::mem::size_of::<M>());
    let mut cases = Vec::new();
    let mut entries = [false; 10];
    let mut columns = [false; 2];
    let in_size = std::mem::size_of::<X>();
    for (k, (shape, axes)) in shapes().into_iter().enumerate() {
        let n: usize = shape.iter().product();
        let xs = items(n, k as u64);
        let want = expected(&xs, &shape, &axes);
        let mut passes =
            axes_strips_launches::<M>(algorithm, in_size, &shape, &axes, THREADS).unwrap();
        for l in &mut passes {
            // entry, threads, outputs and the arguments of the entry's signature, padded to
            // the record axes_main.cpp reads
            assert_eq!(
                l.len(),
                RECORD_LENS[l[0] as usize],
                "{tag}: launch record {l:?}"
            );
            l.resize(10, 0);
            entries[l[0] as usize] = true;
            // the rows schedule over few columns: of the call's items, and of values
            if l[0] / 2 == 2 {
                columns[l[0] as usize % 2] = true;
            }
        }
        let case = PassesCase {
            n: n as u64,
            items: bytes_of(&xs),
            shift: shift as u64,
            grid: 0,
            passes,
            outputs: want.len() as u64,
        };
        cases.push((format!("{shape:?} along {axes:?}"), case, want));
    }
    // every entry point, of the call's items and of values, ran
    assert_eq!(entries[..8], [true; 8], "{tag}: entry points run");
    assert_eq!(columns, [true; 2], "{tag}: few columns run");
    check_on_grids(&kernel, tag, cases);
    entries
}

/// Items at a 16-byte boundary and one item past it: there the first row's first runs are not
/// read as vectors (they would start before the items), so its strips go through the rows
/// schedule's general loop from their first tile. Columns of 4 take the few-columns kernels of
/// long runs (4 rows of 32 bytes a lane).
#[test]
fn strips_keep_the_order_of_an_exact_monoid() {
    let Some(cxx) = compiler() else { return };
    let source = axes_strips_source::<Affine>(AxisAlgorithm::Strips).unwrap();
    for shift in [0, 8] {
        let entries = check(
            &cxx,
            &format!("affine_{shift}"),
            &source,
            AxisAlgorithm::Strips,
            shift,
            Affine::random_vec,
            |xs: &[Affine], shape, axes| fold_axes(xs, shape, axes).unwrap(),
        );
        assert_eq!(entries[8..], [true; 2], "affine_{shift}: long runs");
    }
}

/// At a 16-byte boundary and one item past it (as for the exact monoid).
#[test]
fn auto_folds_a_commutative_monoid_out_of_order() {
    let Some(cxx) = compiler() else { return };
    let source = axes_strips_source::<Sum<u32>>(AxisAlgorithm::Auto).unwrap();
    for shift in [0, 4] {
        check(
            &cxx,
            &format!("u32_{shift}"),
            &source,
            AxisAlgorithm::Auto,
            shift,
            |n, seed| {
                let mut rng = TestRng::new(seed);
                (0..n).map(|_| Sum(rng.next_u32())).collect()
            },
            |xs: &[Sum<u32>], shape, axes| fold_axes(xs, shape, axes).unwrap(),
        );
    }
}

#[test]
fn lifted_items_past_a_boundary_get_their_flat_index() {
    let Some(cxx) = compiler() else { return };
    let source = axes_strips_source_lifted::<ArgMax, f32>(AxisAlgorithm::Strips).unwrap();
    for shift in [4, 8] {
        check(
            &cxx,
            &format!("argmax_{shift}"),
            &source,
            AxisAlgorithm::Strips,
            shift,
            |n, seed| {
                // few distinct values: ties, which the index breaks
                let mut rng = TestRng::new(seed);
                (0..n).map(|_| (rng.next_u32() % 7) as f32).collect()
            },
            |xs: &[f32], shape, axes| {
                let items: Vec<ArgMax> = lifted(xs);
                fold_axes(&items, shape, axes).unwrap()
            },
        );
    }
}
