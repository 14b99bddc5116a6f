//! SegBlocks' kernel (kernels/seg_blocks.cu) without a GPU: the generated CUDA text runs on the
//! CPU under `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, warp collectives as real
//! rendezvous, AddressSanitizer on every access, fibers in three thread orders), its blocks in
//! a scrambled order, and must equal the sequential fold bit for bit on every layout shape at
//! sizes around the chunk — segments inside a chunk, across one boundary and many, starting on
//! boundaries, empty ones anywhere, one segment of all the items — on grids of one block, a
//! few and a block a unit, with u32 and u64 offsets, items at 16-byte boundaries and past
//! them, vector and item-by-item loads, and lifted items, validated and trusted. A validated
//! call's fused check must flag exactly the layouts the CPU check rejects, and a garbage
//! layout must finish in bounds.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::layout::check_offsets;
use reduce_core::{fold_segments, CudaMonoid, Lift, Monoid, SegIndex};
use reduce_cuda::testing::{seg_kernel_variants_at, seg_kernel_variants_lifted_at};
use reduce_cuda::{KernelSource, SegAlgorithm, SegConfig};
use reduce_tests::emu::{
    bytes_of, compiler, seg_blocks_kernel, values_from, EmulatedHeads, HeadsCase, Order,
};
use reduce_tests::layouts::{broken_offsets, filling, garbage_offsets, offsets_u64};
use reduce_tests::monoids::lang::ArgMax;
use reduce_tests::{lifted_by, Affine, Mat2, Random, TestRng};
use std::fmt::Debug;

/// SegBlocks with `block` threads and `items` per lane run.
fn blocks(block: u32, items: u32) -> SegConfig {
    SegConfig::new(SegAlgorithm::SegBlocks)
        .block(block)
        .items_per_thread(items)
}

/// The emulated kernel of `source` with chunks of `chunk_runs` runs, tagged by its parameters.
fn build<M, I: SegIndex>(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    chunk_runs: u32,
) -> EmulatedHeads {
    let tag = format!("{tag}_c{chunk_runs}{}", if I::WIDE { "_u64" } else { "" });
    seg_blocks_kernel(
        cxx,
        source,
        &tag,
        std::mem::size_of::<M>(),
        I::WIDE,
        chunk_runs,
    )
}

/// SegBlocks for monoid `M`, offsets of type `I`, items `shift` bytes past a 16-byte boundary,
/// chunks of `chunk_runs` runs.
fn kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    (block, items, chunk_runs): (u32, u32, u32),
    shift: u64,
) -> EmulatedHeads {
    let source = seg_kernel_variants_at::<M, I>(blocks(block, items), true, shift)
        .unwrap()
        .remove(0);
    let tag = format!("{}_b{block}_k{items}_at{shift}", M::CUDA_NAME);
    build::<M, I>(cxx, &source, &tag, chunk_runs)
}

/// Every layout of [`filling`] (at chunk scale) at sizes around the chunk, one segment of many
/// chunks, segments of exactly a chunk and empty segments on the chunks' boundaries, on grids
/// of 1 and 3 blocks and a block a unit, against the fold of the lifted items, with the fibers
/// in every order.
fn check_layouts<X: reduce_cuda::DeviceCopy, M: Monoid + PartialEq + Debug>(
    kernel: &EmulatedHeads,
    chunk: u64,
    random_items: impl Fn(usize, u64) -> Vec<X>,
    lift: impl Fn(X, u64) -> M,
    seed: u64,
) {
    let mut rng = TestRng::new(seed);
    let mut layouts: Vec<(String, Vec<u32>)> = Vec::new();
    for n in [
        1,
        2,
        31,
        chunk - 1,
        chunk,
        chunk + 1,
        3 * chunk + 7,
        9 * chunk + 5,
    ] {
        for (name, lengths) in filling(n, chunk, &mut rng) {
            layouts.push((format!("{name}, n {n}"), lengths));
        }
    }
    let c = chunk as u32;
    layouts.push((
        "one segment of 7 chunks and 3 items".into(),
        vec![7 * c + 3],
    ));
    layouts.push((
        "chunk-long segments on the boundaries, empty ones between".into(),
        vec![c, 0, 0, c, 0, c - 1, 1, 0, 2 * c, 0],
    ));
    layouts.push((
        "segments from just before a boundary".into(),
        vec![c - 1, 2, c - 1, c + 2, 3, 4 * c],
    ));
    // Segments of up to three chunks starting around the middle of a chunk.
    let h = c / 2;
    for start in [h.saturating_sub(1), h, h + 1] {
        layouts.push((
            format!("segments from {start} items into a chunk"),
            vec![
                start,
                c - start,
                start,
                c + 1,
                c - 1,
                2 * c + h,
                h,
                h + 1,
                3,
            ],
        ));
    }
    let (mut cases, mut expected, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (name, lengths) in layouts {
        let offsets = offsets_u64(&lengths);
        let n = *offsets.last().unwrap();
        let segments = offsets.len() as u64 - 1;
        let items = random_items(n as usize, rng.next_u64());
        let lifted: Vec<M> = lifted_by(&items, &lift);
        let want = fold_segments(&lifted, &offsets).unwrap();
        // A unit a chunk, one a chunk's first piece, one a segment (kernels/seg_blocks.cu).
        let units = 2 * n.div_ceil(chunk) + segments;
        for grid in [1, 3, units.max(1)] {
            let validate = cases.len() % 2 == 1;
            cases.push(HeadsCase {
                n,
                items: bytes_of(&items),
                offsets: offsets.clone(),
                owners: None,
                grid,
                validate,
            });
            expected.push(want.clone());
            let checked = if validate { "validated" } else { "trusted" };
            names.push(format!("{name}, grid {grid}, {checked}"));
        }
    }
    for order in Order::ALL {
        for ((name, want), (status, bytes)) in
            names.iter().zip(&expected).zip(kernel.run(&cases, order))
        {
            if name.ends_with("validated") {
                assert_eq!(status, u64::MAX, "{name}: a valid layout reported bad");
            }
            let got: Vec<M> = values_from(&bytes);
            let first_bad = (0..want.len()).find(|&s| got.get(s) != want.get(s));
            assert_eq!(
                first_bad, None,
                "{name}, fibers {order:?}: segment {first_bad:?} differs from the fold"
            );
        }
    }
    eprintln!(
        "{} emulated calls equal to the fold, fibers in every order",
        cases.len()
    );
}

/// Affine maps (8-byte, exact, not commutative) with vector loads (4 items a run: two 16-byte
/// vectors) and item by item (1 and 3 a run), u32 and u64 offsets, items at 16-byte boundaries
/// and 4 or 8 bytes past them; blocks of one warp and of three (warps whose shares are empty),
/// chunks of 5 and 64 runs.
#[test]
fn seg_blocks_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    let k = kernel::<Affine, u32>(&cxx, (64, 4, 64), 0);
    check_layouts(&k, 4 * 64, Affine::random_vec, |x: Affine, _| x, 1);
    let k = kernel::<Affine, u32>(&cxx, (96, 4, 5), 4);
    check_layouts(&k, 4 * 5, Affine::random_vec, |x: Affine, _| x, 2);
    let k = kernel::<Affine, u64>(&cxx, (32, 3, 64), 8);
    check_layouts(&k, 3 * 64, Affine::random_vec, |x: Affine, _| x, 3);
    let k = kernel::<Mat2, u64>(&cxx, (32, 1, 5), 0);
    check_layouts(&k, 5, Mat2::random_vec, |x: Mat2, _| x, 4);
}

/// Lifted items: f32 12 bytes past a boundary into 8-byte (value, first index) pairs, 16 a run
/// (the default: vector loads) and 5 (item by item).
#[test]
fn seg_blocks_lifted_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    let random = |n: usize, seed: u64| -> Vec<f32> {
        let mut rng = TestRng::new(seed);
        (0..n).map(|_| rng.range(0, 40) as f32 - 20.0).collect()
    };
    for (items, chunk_runs, seed) in [(16, 8, 5), (5, 3, 6)] {
        let source = seg_kernel_variants_lifted_at::<ArgMax, f32, u32>(blocks(64, items), true, 12)
            .unwrap()
            .remove(0);
        let k = build::<ArgMax, u32>(&cxx, &source, &format!("argmax_k{items}_at12"), chunk_runs);
        check_layouts(
            &k,
            (items * chunk_runs) as u64,
            random,
            <ArgMax as Lift<f32>>::lift,
            seed,
        );
    }
}

/// A validated call flags every broken offsets rule ([`broken_offsets`]) and a garbage layout
/// exactly when the CPU check rejects it; a garbage layout, trusted or validated, finishes
/// without an access out of bounds or a deadlock and leaves the status word reset, in every
/// fiber order.
#[test]
fn seg_blocks_checks_and_garbage() {
    let Some(cxx) = compiler() else { return };
    for wide_index in [false, true] {
        let k = if wide_index {
            kernel::<Affine, u64>(&cxx, (32, 4, 4), 0)
        } else {
            kernel::<Affine, u32>(&cxx, (32, 4, 4), 0)
        };
        let mut rng = TestRng::new(7 + wide_index as u64);
        let mut cases = Vec::new();
        for n in [1u64, 100, 1024, 5000] {
            let items = bytes_of(&Affine::random_vec(n as usize, rng.next_u64()));
            let good = offsets_u64(&filling(n, 64, &mut rng)[4].1);
            let garbage: Vec<_> = (0..6)
                .map(|_| garbage_offsets(&mut rng, n, wide_index))
                .collect();
            for offsets in broken_offsets(&good, n, wide_index)
                .into_iter()
                .chain(garbage)
            {
                for validate in [true, false] {
                    cases.push(HeadsCase {
                        n,
                        items: items.clone(),
                        offsets: offsets.clone(),
                        owners: None,
                        grid: rng.range(1, 40),
                        validate,
                    });
                }
            }
        }
        for order in Order::ALL {
            for (case, (status, _)) in cases.iter().zip(k.run(&cases, order)) {
                if case.validate {
                    let bad = check_offsets(&case.offsets, case.n as usize).is_err();
                    assert_eq!(
                        status != u64::MAX,
                        bad,
                        "offsets {:?} over {} items (u64: {wide_index}), fibers {order:?}",
                        case.offsets,
                        case.n
                    );
                }
            }
        }
    }
}
