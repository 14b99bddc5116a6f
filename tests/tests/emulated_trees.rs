//! The paper's left-storing trees without a GPU on the CPU emulator (`tests/emu/cuda_emu.hpp`:
//! every CUDA thread a fiber, barriers as real rendezvous, poisoned shared memory,
//! AddressSanitizer, fibers in three orders), with the runtime's passes: plain Tb2
//! (kernels/tb2.cu, `tests/emu/plain_main.cpp`) equal to the sequential fold at sizes around a
//! data block and past one, two and three passes; Tb2Seg, which segmented `Auto` runs by u32
//! owners for values too large for SegShuffle's and SegMerge's shared memory, and Tb4WarpSeg
//! (kernels/seg_tree.cu, `tests/emu/seg_tree_main.cpp`) equal to the sequential fold on layouts
//! of every kind at those sizes; for 8-, 16-, 20-, 128- and 1024-byte non-commutative monoids,
//! the large ones in the shared memory the runtime sizes for their pitched slots.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold, fold_by_owner, CudaMonoid};
use reduce_cuda::testing::{dynamic_smem, kernel_source_with};
use reduce_cuda::{Algorithm, Config, SegAlgorithm};
use reduce_tests::emu::{
    bytes_of, compiler, plain_kernel, seg_tree_kernel, values_from, EmulatedPlain, EmulatedTree,
    Order,
};
use reduce_tests::layouts::{filling, owners_of};
use reduce_tests::monoids::wide::{Record1024, Record128, UtAff20};
use reduce_tests::{Affine, Mat2, Random, TestRng};

/// Calls on every layout of `filling` at sizes around a data block of `d` values and past two and
/// three passes, and their folds.
type Calls<M> = (Vec<(Vec<M>, Vec<u32>, u64)>, Vec<Vec<M>>, Vec<String>);

fn calls<M: CudaMonoid + Random>(d: u64, seed: u64) -> Calls<M> {
    let mut rng = TestRng::new(seed);
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
    (cases, want, names)
}

/// The first call (in `order`) whose segments differ from the fold: its name, segment, value and
/// the fold's.
fn first_difference<M: CudaMonoid + Random>(
    kernel: &EmulatedTree,
    (cases, want, names): &Calls<M>,
    order: Order,
) -> Option<String> {
    for ((got, want), name) in kernel.run(cases, order).iter().zip(want).zip(names) {
        let got: Vec<M> = values_from(got);
        if let Some(s) = (0..want.len()).find(|&s| got[s] != want[s]) {
            return Some(format!(
                "{name}: segment {s} of {} is {:?}, the fold is {:?}",
                want.len(),
                got[s],
                want[s]
            ));
        }
    }
    None
}

/// `algorithm` with `block` threads (data blocks of `d` values) equals `fold_by_owner` on every
/// layout of [`calls`], the fibers in every order.
fn check<M: CudaMonoid + Random>(cxx: &str, algorithm: SegAlgorithm, block: u32, d: u64) {
    let kernel = seg_tree_kernel::<M>(cxx, algorithm, block, "", |_| {});
    let calls = calls::<M>(d, 71 + block as u64);
    for order in Order::ALL {
        if let Some(diff) = first_difference(&kernel, &calls, order) {
            panic!(
                "{algorithm} ({}, block {block}, fibers {order:?}): {diff}",
                M::CUDA_NAME
            );
        }
    }
    eprintln!(
        "{algorithm} ({}, block {block}): {} emulated calls equal to the fold, fibers in every \
         order",
        M::CUDA_NAME,
        calls.0.len()
    );
}

/// Tb2Seg (data blocks of two values a thread, the pad word a 32) is the fold, on one-warp and
/// larger blocks; for values of 128 bytes and 1 KiB too, whose slots lie a value and 8 bytes
/// apart (kernels/common.cuh's `R_SLOT_PITCH`) in the shared memory the runtime sizes for them.
#[test]
fn tb2_seg_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check::<Affine>(&cxx, SegAlgorithm::Tb2Seg, 32, 64);
    check::<UtAff20>(&cxx, SegAlgorithm::Tb2Seg, 32, 64);
    check::<Mat2>(&cxx, SegAlgorithm::Tb2Seg, 64, 128);
    check::<Record128>(&cxx, SegAlgorithm::Tb2Seg, 32, 64);
    check::<Record1024>(&cxx, SegAlgorithm::Tb2Seg, 32, 64);
}

/// Tb4WarpSeg (data blocks of four values a thread, a warp's tree then warp 0's) is the fold.
#[test]
fn tb4_warp_seg_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check::<Affine>(&cxx, SegAlgorithm::Tb4WarpSeg, 64, 256);
    check::<UtAff20>(&cxx, SegAlgorithm::Tb4WarpSeg, 32, 128);
}

/// The tests see the trees' order and their passes: Tb2Seg with a join's operands swapped (later
/// items before earlier ones), or with the last pass's single block handing its piece on instead
/// of appending it, differs from the fold in every fiber order.
#[test]
fn tb2_seg_mutations_are_caught() {
    let Some(cxx) = compiler() else { return };
    let join = "else s_data[ai] = m_combine(s_data[ai], s_data[bi]);";
    let last = "if (gridDim.x == 1) {";
    let edits = [
        (
            "_swapped",
            join,
            "else s_data[ai] = m_combine(s_data[bi], s_data[ai]);",
        ),
        ("_no_append", last, "if (false) {"),
    ];
    let calls = calls::<Affine>(64, 72);
    for (tag, from, to) in edits {
        let kernel = seg_tree_kernel::<Affine>(&cxx, SegAlgorithm::Tb2Seg, 32, tag, |text| {
            assert_eq!(text.matches(from).count(), 1, "{tag}: the line moved");
            *text = text.replace(from, to);
        });
        for order in Order::ALL {
            assert!(
                first_difference(&kernel, &calls, order).is_some(),
                "{tag}, fibers {order:?}: the mutated kernel gave the fold"
            );
        }
    }
}

/// Plain Tb2 with `block` threads for `M`, its text changed by `edit` first (a test's mutation;
/// `tag` names it), in the dynamic shared memory the runtime gives it.
fn tb2_kernel<M: CudaMonoid>(
    cxx: &str,
    block: u32,
    tag: &str,
    edit: impl FnOnce(&mut String),
) -> EmulatedPlain {
    let config = Config::new(Algorithm::Tb2).block(block);
    let mut source = kernel_source_with::<M>(config).unwrap();
    edit(&mut source.text);
    let smem = dynamic_smem::<M>(config).unwrap();
    let tag = format!("tb2{tag}_{}_b{block}", M::CUDA_NAME);
    plain_kernel(cxx, &source, &tag, std::mem::size_of::<M>(), smem)
}

/// Inputs around a data block of `d` values and past two and three passes.
fn plain_inputs<M: Random>(d: u64, seed: u64) -> Vec<Vec<M>> {
    let mut rng = TestRng::new(seed);
    [0, 1, d - 1, d, d + 1, 3 * d + 5, d * d + 1, d * d * 2 + 7]
        .into_iter()
        .map(|n| M::random_vec(n as usize, rng.next_u64()))
        .collect()
}

/// The first input (in `order`) whose root differs from the fold: its size, root and the fold.
fn plain_difference<M: CudaMonoid + Random>(
    kernel: &EmulatedPlain,
    inputs: &[Vec<M>],
    order: Order,
) -> Option<String> {
    let cases: Vec<_> = (inputs.iter())
        .map(|xs| (bytes_of(xs), xs.len() as u64, 0))
        .collect();
    for (xs, got) in inputs.iter().zip(kernel.run(&cases, order)) {
        let (got, want) = (values_from::<M>(&got)[0], fold(xs));
        if got != want {
            return Some(format!("n = {}: {got:?}, the fold is {want:?}", xs.len()));
        }
    }
    None
}

/// Plain Tb2 (a data block of two values a thread, through the runtime's passes) is the fold, on
/// one-warp and larger blocks, for values of 128 bytes and 1 KiB too (slots a value and 8 bytes
/// apart).
#[test]
fn tb2_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    fn check<M: CudaMonoid + Random>(cxx: &str, block: u32) {
        let kernel = tb2_kernel::<M>(cxx, block, "", |_| {});
        let inputs = plain_inputs::<M>(2 * block as u64, 91 + block as u64);
        for order in Order::ALL {
            if let Some(diff) = plain_difference(&kernel, &inputs, order) {
                panic!(
                    "Tb2 ({}, block {block}, fibers {order:?}): {diff}",
                    M::CUDA_NAME
                );
            }
        }
    }
    check::<Affine>(&cxx, 32);
    check::<Mat2>(&cxx, 64);
    check::<Record128>(&cxx, 32);
    check::<Record1024>(&cxx, 32);
}

/// The tests see plain Tb2's order: with a tree step's operands swapped (later items before
/// earlier ones) it differs from the fold in every fiber order.
#[test]
fn tb2_mutation_is_caught() {
    let Some(cxx) = compiler() else { return };
    let step = "s[R_PAD(ai)] = m_combine(s[R_PAD(ai)], s[R_PAD(bi)]);";
    let kernel = tb2_kernel::<Affine>(&cxx, 32, "_swapped", |text| {
        assert_eq!(text.matches(step).count(), 1, "the step moved");
        *text = text.replace(
            step,
            "s[R_PAD(ai)] = m_combine(s[R_PAD(bi)], s[R_PAD(ai)]);",
        );
    });
    let inputs = plain_inputs::<Affine>(64, 92);
    for order in Order::ALL {
        assert!(
            plain_difference(&kernel, &inputs, order).is_some(),
            "fibers {order:?}: the mutated kernel gave the fold"
        );
    }
}
