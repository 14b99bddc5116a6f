//! The paper's left-storing segmented trees without a GPU (kernels/seg_tree.cu: Tb2Seg, which
//! segmented `Auto` runs by u32 owners for values too large for SegShuffle's and SegMerge's
//! shared memory, and Tb4WarpSeg) on the CPU emulator (`tests/emu/cuda_emu.hpp`: every CUDA
//! thread a fiber, barriers as real rendezvous, poisoned shared memory, AddressSanitizer, fibers
//! in three orders), with the runtime's passes (`tests/emu/seg_tree_main.cpp`): equal to the
//! sequential fold on layouts of every kind at sizes around a data block and past one, two and
//! three passes, for 8-, 16- and 20-byte non-commutative monoids.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold_by_owner, CudaMonoid};
use reduce_cuda::SegAlgorithm;
use reduce_tests::emu::{compiler, seg_tree_kernel, values_from, Order};
use reduce_tests::layouts::{filling, owners_of};
use reduce_tests::monoids::wide::UtAff20;
use reduce_tests::{Affine, Mat2, Random, TestRng};

/// `algorithm` with `block` threads (data blocks of `d` values) equals `fold_by_owner` on every
/// layout of `filling` at sizes around a data block and past two and three passes, the fibers in
/// every order.
fn check<M: CudaMonoid + Random>(cxx: &str, algorithm: SegAlgorithm, block: u32, d: u64) {
    let kernel = seg_tree_kernel::<M>(cxx, algorithm, block);
    let mut rng = TestRng::new(71 + block as u64);
    let (mut cases, mut want, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for n in [1, d - 1, d, d + 1, 3 * d + 5, d * d + 1, d * d * 2 + 7] {
        for (name, lengths) in filling(n, d, &mut rng) {
            let items = M::random_vec(n as usize, rng.next_u64());
            let owners = owners_of(&lengths);
            let segments = lengths.len() as u64;
            want.push(fold_by_owner(&items, &owners, segments as usize).unwrap());
            names.push(format!("{name}, n = {n}"));
            cases.push((items, owners, segments));
        }
    }
    for order in Order::ALL {
        for ((got, want), name) in kernel.run(&cases, order).iter().zip(&want).zip(&names) {
            let got: Vec<M> = values_from(got);
            if let Some(s) = (0..want.len()).find(|&s| got[s] != want[s]) {
                panic!(
                    "{algorithm} ({}, block {block}, fibers {order:?}): {name}: segment {s} of {} \
                     is {:?}, the fold is {:?}",
                    M::CUDA_NAME,
                    want.len(),
                    got[s],
                    want[s]
                );
            }
        }
    }
    eprintln!(
        "{algorithm} ({}, block {block}): {} emulated calls equal to the fold, fibers in every \
         order",
        M::CUDA_NAME,
        cases.len()
    );
}

/// Tb2Seg (data blocks of two values a thread, the pad word a 32) is the fold, on one-warp and
/// larger blocks.
#[test]
fn tb2_seg_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check::<Affine>(&cxx, SegAlgorithm::Tb2Seg, 32, 64);
    check::<UtAff20>(&cxx, SegAlgorithm::Tb2Seg, 32, 64);
    check::<Mat2>(&cxx, SegAlgorithm::Tb2Seg, 64, 128);
}

/// Tb4WarpSeg (data blocks of four values a thread, a warp's tree then warp 0's) is the fold.
#[test]
fn tb4_warp_seg_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check::<Affine>(&cxx, SegAlgorithm::Tb4WarpSeg, 64, 256);
    check::<UtAff20>(&cxx, SegAlgorithm::Tb4WarpSeg, 32, 128);
}
