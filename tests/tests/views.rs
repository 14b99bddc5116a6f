//! Views at any offset: the plain, segmented and lifted calls on items that start 0 to 5 items
//! past a 16-byte boundary (4-, 8-, 12- and 16-byte items; lifts from 4-, 8- and 12-byte
//! items) and end where their allocation ends, so that a read past the view is a read past
//! the allocation (`compute-sanitizer --tool memcheck` reports it), at sizes around the tiles.
//! The kernels read every whole run of a lane with 16-byte vectors at any alignment (SegPipeline
//! bulk-copies the whole 16-byte blocks of a tile and has its lanes copy the bytes before and
//! after them); the grouping does not depend on the address: bit for bit against the
//! sequential fold.
//!
//! GPU tests: they skip without a device, and fail under `REDUCE_REQUIRE_GPU=1`.

use reduce_bench::monoids::{Heis, Pair, Triple};
use reduce_core::{fold, fold_segments, Lift};
use reduce_cuda::{Algorithm, CudaMonoid, DeviceCopy, SegAlgorithm, SegConfig, Sum};
use reduce_tests::layouts::{mixture, offsets_of};
use reduce_tests::monoids::lang::ArgMax;
use reduce_tests::sweep::same;
use reduce_tests::{convert, gpu, placed, Affine, Mat2, Random, TestRng};
use std::fmt::Debug;

/// Item counts: empty, inside one lane's run, around a tile, and large.
const SIZES: [usize; 9] = [0, 1, 15, 17, 255, 4097, 65_539, 300_007, 1_048_581];

/// CSR offsets over `n` items: a random mixture of segment lengths, the last ones ending at `n`.
fn offsets(rng: &mut TestRng, n: usize) -> Vec<u64> {
    let mut offsets = offsets_of(&mixture(rng, n as u64));
    offsets.iter_mut().for_each(|o| *o = (*o).min(n as u64));
    offsets
}

/// Plain and segmented calls on `M` items at every offset.
fn plain_and_segmented<M: CudaMonoid + PartialEq + Debug>(random: impl Fn(&mut TestRng) -> M) {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(std::mem::size_of::<M>() as u64);
    for n in SIZES {
        let items: Vec<M> = (0..n).map(|_| random(&mut rng)).collect();
        let want = fold(&items);
        let offsets = offsets(&mut rng, n);
        let segments = fold_segments(&items, &offsets).unwrap();
        let offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
        for skip in 0..=5 {
            let (_keep, view) = placed(&gpu, &items, skip);
            let ctx = format!("{} n {n} skip {skip}", M::CUDA_NAME);
            for algorithm in [Algorithm::Auto, Algorithm::Shuffle] {
                let got = gpu.reduce(&view, algorithm).unwrap();
                assert_eq!(got, want, "{ctx} {algorithm}");
            }
            for algorithm in [
                SegAlgorithm::Auto,
                SegAlgorithm::SegShuffle,
                SegAlgorithm::SegPipeline,
            ]
            .into_iter()
            .filter(|&a| a.runs_on(gpu.info()))
            {
                let got = gpu
                    .reduce_segments(&view, &offsets, SegConfig::new(algorithm))
                    .unwrap();
                same(
                    &format!("{ctx} {algorithm}"),
                    &gpu.download(&got).unwrap(),
                    &segments,
                );
            }
        }
    }
}

/// Lifted plain and segmented calls reading `X` items at every offset.
fn lifted<M: Lift<X> + PartialEq + Debug, X: DeviceCopy>(random: impl Fn(&mut TestRng) -> X) {
    let Some(gpu) = gpu() else { return };
    let mut rng = TestRng::new(7 * std::mem::size_of::<X>() as u64);
    for n in SIZES {
        let items: Vec<X> = (0..n).map(|_| random(&mut rng)).collect();
        let values: Vec<M> = (0..n).map(|i| M::lift(items[i], i as u64)).collect();
        let want = fold(&values);
        let offsets = offsets(&mut rng, n);
        let segments = fold_segments(&values, &offsets).unwrap();
        let offsets = gpu.upload(&convert::<u32>(&offsets)).unwrap();
        for skip in 0..=5 {
            let (_keep, view) = placed(&gpu, &items, skip);
            let ctx = format!(
                "{} from {} B, n {n} skip {skip}",
                M::CUDA_NAME,
                size_of::<X>()
            );
            let got = gpu.reduce_lifted::<M, X>(&view, Algorithm::Auto).unwrap();
            assert_eq!(got, want, "{ctx}");
            for algorithm in [SegAlgorithm::Auto, SegAlgorithm::SegPipeline]
                .into_iter()
                .filter(|&a| a.runs_on(gpu.info()))
            {
                let config = SegConfig::new(algorithm);
                let got = gpu
                    .reduce_segments_lifted::<M, X>(&view, &offsets, config)
                    .unwrap();
                same(
                    &format!("{ctx} {algorithm}"),
                    &gpu.download(&got).unwrap(),
                    &segments,
                );
            }
        }
    }
}

#[test]
fn views_of_4_byte_items() {
    plain_and_segmented(|rng| Sum(rng.next_u32()));
}

#[test]
fn views_of_8_byte_items() {
    plain_and_segmented(Affine::random);
}

#[test]
fn views_of_12_byte_items() {
    plain_and_segmented(|rng| Heis {
        a: rng.next_u32(),
        b: rng.next_u32(),
        c: rng.next_u32(),
    });
}

#[test]
fn views_of_16_byte_items() {
    plain_and_segmented(Mat2::random);
}

#[test]
fn lifted_views_of_4_byte_items() {
    lifted::<ArgMax, f32>(|rng| (rng.next_u32() % 1000) as f32);
}

#[test]
fn lifted_views_of_8_byte_items() {
    lifted::<Heis, Pair>(|rng| Pair {
        a: rng.next_u32(),
        b: rng.next_u32(),
    });
}

#[test]
fn lifted_views_of_12_byte_items() {
    lifted::<Heis, Triple>(|rng| Triple {
        a: rng.next_u32(),
        b: rng.next_u32(),
        c: rng.next_u32(),
    });
}
