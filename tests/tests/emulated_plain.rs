//! Shuffle's kernel logic (kernels/shuffle.cu: the plain reductions' `Auto` and `Shuffle`)
//! without a GPU: the generated CUDA text runs on the CPU under `tests/emu/cuda_emu.hpp` (every
//! CUDA thread a fiber, barriers and warp collectives as real rendezvous, AddressSanitizer on
//! every access, the fibers of a block in three orders), block by block, the last block folding
//! the blocks' partials — and must give the sequential fold: an exactly associative,
//! non-commutative monoid in each of Shuffle's orders (warps owning runs of tiles, blocks
//! owning runs of block tiles folded every k tiles), commutative exact monoids on the
//! order-free path `Auto` takes for them, lifted items, and inputs past a 16-byte boundary (the
//! kernel specialised for the offset), at sizes around lanes, tiles and block tiles, on grids
//! of 1 to 7 blocks.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold, Lift};
use reduce_cuda::testing::{kernel_source_at, kernel_source_lifted};
use reduce_cuda::{Algorithm, Config, KernelSource, Sum};
use reduce_tests::emu::{check_plain, compiler};
use reduce_tests::monoids::lang::{lifted, method_inputs, ArgMax, Methods};
use reduce_tests::monoids::wide::Record;
use reduce_tests::{Affine, Random, TestRng};
use std::fmt::Debug;

/// Shuffle's shapes: one warp per block whose warps own runs of tiles (`tile_group(0)`), two
/// warps of 2 items per lane folding their block tiles every 3 tiles, one warp of 64 items per
/// lane (more items a lane than the grid has threads), and the defaults.
fn configs() -> [Config; 4] {
    [
        Config::new(Algorithm::Shuffle).block(32).tile_group(0),
        Config::new(Algorithm::Shuffle)
            .block(64)
            .items_per_thread(2)
            .tile_group(3),
        Config::new(Algorithm::Shuffle)
            .block(32)
            .items_per_thread(64)
            .tile_group(1),
        Config::new(Algorithm::Shuffle),
    ]
}

/// Item counts around a lane's `lane` items and a block tile of `block` lanes: empty, partial
/// lanes and tiles, a last tile of one item, and several block tiles per block of a grid of 7.
fn sizes(lane: usize, block: usize) -> Vec<usize> {
    let tile = 32 * lane;
    vec![
        0,
        1,
        lane - 1,
        lane + 1,
        tile - 1,
        tile + 1,
        block * lane + 3,
        7 * block * lane,
        23 * block * lane + tile + 5,
    ]
}

/// Runs each input through `source`'s kernel on grids of 1, 3 and 7 blocks, the fibers in
/// every order, and checks each result against `expected`, bit for bit.
fn check<X: reduce_cuda::DeviceCopy, M: Copy + Debug + PartialEq>(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    inputs: &[Vec<X>],
    expected: impl Fn(&[X]) -> M,
) {
    let tag = format!("shuffle_{tag}");
    check_plain(cxx, source, &tag, inputs, expected, |a, b| a == b);
}

/// The items a lane folds per tile, and the lanes of a block, under `config`.
fn lane_and_block(source: &KernelSource) -> (usize, usize) {
    let param = |name: &str| -> usize {
        let line = (source.text.lines())
            .find(|l| l.starts_with(&format!("#define {name} ")))
            .unwrap_or_else(|| panic!("{name} in the kernel text"));
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    (param("R_ITEMS"), param("R_BLOCK"))
}

/// An exact, non-commutative monoid in each of Shuffle's orders: any change of the order of
/// two items shows.
#[test]
fn ordered_affine_is_the_sequential_fold() {
    let Some(cxx) = compiler() else { return };
    for (k, config) in configs().into_iter().enumerate() {
        let source = kernel_source_at::<Affine>(config, 0).unwrap();
        let (lane, block) = lane_and_block(&source);
        let inputs: Vec<Vec<Affine>> = (sizes(lane, block).into_iter())
            .map(|n| Affine::random_vec(n, n as u64 + 1))
            .collect();
        check(&cxx, &source, &format!("affine_{k}"), &inputs, fold);
    }
}

/// Commutative monoids under `Auto` take the order-free path (a grid stride over lanes' runs):
/// every item is still folded exactly once — also where a lane's items outnumber the grid's
/// threads (one block of 32 threads of 64 items: up to 63 items past the last whole lane).
#[test]
fn order_free_commutative_monoids_fold_every_item_once() {
    let Some(cxx) = compiler() else { return };
    let few_threads = Config::default().block(32).items_per_thread(64);
    for (k, config) in [Config::default(), few_threads].into_iter().enumerate() {
        let source = kernel_source_at::<Sum<u32>>(config, 0).unwrap();
        assert!(
            source.text.contains("#define R_ORDER_FREE 1"),
            "Auto takes the order-free path"
        );
        let (lane, block) = lane_and_block(&source);
        let mut rng = TestRng::new(5);
        let inputs: Vec<Vec<Sum<u32>>> = (sizes(lane, block).into_iter())
            .map(|n| (0..n).map(|_| Sum(rng.next_u64() as u32)).collect())
            .collect();
        check(&cxx, &source, &format!("sum_u32_{k}"), &inputs, fold);
    }
}

/// Lifted items (8-byte ArgMax from 4-byte f32, each item lifted with its global index), on the
/// order-free path and in order: ties to the first index need every index right.
#[test]
fn lifted_items_fold_with_their_indices() {
    let Some(cxx) = compiler() else { return };
    let lifted = |xs: &[f32]| -> ArgMax {
        let values: Vec<ArgMax> = (xs.iter().enumerate())
            .map(|(i, &x)| ArgMax::lift(x, i as u64))
            .collect();
        fold(&values)
    };
    for (k, config) in [Config::default(), configs()[1]].into_iter().enumerate() {
        let source = kernel_source_lifted::<ArgMax, f32>(config).unwrap();
        let (lane, block) = lane_and_block(&source);
        let mut rng = TestRng::new(9);
        // Few distinct values: many ties.
        let inputs: Vec<Vec<f32>> = (sizes(lane, block).into_iter())
            .map(|n| (0..n).map(|_| rng.range(0, 8) as f32).collect())
            .collect();
        check(&cxx, &source, &format!("argmax_{k}"), &inputs, lifted);
    }
}

/// The derive's exact float methods and integer bit methods (`Methods`, lifted from `u64`: the
/// prelude's helpers, compiled on the host) give Rust's bits: every special input as items 0 and
/// 1 (both paths of the lift), and thousands of random ones, summed field by field.
#[test]
fn exact_methods_are_rusts_through_the_kernel() {
    let Some(cxx) = compiler() else { return };
    let source = kernel_source_lifted::<Methods, u64>(Config::default()).unwrap();
    let xs = method_inputs(3000, 5);
    let mut inputs: Vec<Vec<u64>> = xs.iter().take(27).map(|&x| vec![x, x]).collect();
    inputs.push(xs);
    check(&cxx, &source, "methods", &inputs, |xs: &[u64]| {
        fold(&lifted::<Methods, u64>(xs))
    });
}

/// Inputs 4, 8 and 12 bytes past a 16-byte boundary (the kernel specialised for each, whole
/// runs read as shifted vectors, the first and last item by item; AddressSanitizer reports a
/// read before or past the items).
#[test]
fn items_past_a_16_byte_boundary_are_the_fold() {
    let Some(cxx) = compiler() else { return };
    let source = kernel_source_at::<Affine>(configs()[1], 8).unwrap();
    let (lane, block) = lane_and_block(&source);
    let inputs: Vec<Vec<Affine>> = (sizes(lane, block).into_iter())
        .map(|n| Affine::random_vec(n, n as u64 + 3))
        .collect();
    check(&cxx, &source, "affine_at_8", &inputs, fold);
    for shift in [4u64, 8, 12] {
        let source = kernel_source_at::<Sum<u32>>(Config::default(), shift).unwrap();
        let (lane, block) = lane_and_block(&source);
        let mut rng = TestRng::new(shift);
        let inputs: Vec<Vec<Sum<u32>>> = (sizes(lane, block).into_iter())
            .map(|n| (0..n).map(|_| Sum(rng.next_u64() as u32)).collect())
            .collect();
        check(&cxx, &source, &format!("sum_at_{shift}"), &inputs, fold);
    }
}

/// Values of 2 and 4 KiB (a keep-last record, exact and non-commutative) under `Auto`: the
/// block shrinks to one warp and the group to one tile, and the block's values take a slot a
/// warp (not 32), so that the kernel's static shared memory fits; the fold is the sequential one.
#[test]
fn values_of_2_and_4_kib_are_the_fold() {
    let Some(cxx) = compiler() else { return };
    fn run<const K: usize>(cxx: &str) {
        let source = kernel_source_at::<Record<K>>(Config::default(), 0).unwrap();
        let (lane, block) = lane_and_block(&source);
        let inputs: Vec<Vec<Record<K>>> = [1, 33, 5 * block * lane + 2]
            .into_iter()
            .map(|n| Record::<K>::random_vec(n, n as u64 + K as u64))
            .collect();
        let tag = format!("record_{}", std::mem::size_of::<Record<K>>());
        check(cxx, &source, &tag, &inputs, fold);
    }
    run::<255>(&cxx);
    run::<511>(&cxx);
}
