//! SegPipeline's kernel logic without a GPU (SegShuffle's tile fed by a producer warp's bulk
//! copies through a ring of shared-memory stages guarded by mbarriers; kernels/pipe.cuh and
//! kernels/seg_shuffle.cu) on the CPU emulator (`tests/emu/cuda_emu.hpp`: every CUDA thread a
//! fiber, AddressSanitizer on every access, fibers in three orders; a bulk copy poisons its stage
//! and lands only when a thread waits on the stage's mbarrier): equal to the sequential fold on
//! every layout, size and grid, both forms, u32 and u64 layouts, one to three stages, items at
//! and past 16-byte boundaries, lifted items; the kernel with one of its waits taken out fails
//! in every order; trusted garbage layouts stay in bounds.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::{fold_segments, SegIndex};
use reduce_cuda::{SegAlgorithm, SegConfig};
use reduce_tests::emu::{self, bytes_of, compiler, values_from, Case, Emulated, Order, CHECK_NONE};
use reduce_tests::layouts::{every_shape_in_tiles, offsets_of};
use reduce_tests::monoids::small::Tri8;
use reduce_tests::{Affine, Mat2, Random, TestRng};

/// SegPipeline (SegShuffle's tile fed by a producer warp's bulk copies through `stages`
/// shared-memory stages) with `threads` per block and `items` per thread.
fn seg_pipeline(threads: u32, items: u32, stages: u32) -> SegConfig {
    SegConfig::new(SegAlgorithm::SegPipeline)
        .block(threads)
        .items_per_thread(items)
        .stages(stages)
}

/// SegPipeline's kernel for monoid `M`, layouts of index type `I`, items `shift` bytes past a
/// 16-byte boundary.
fn pipeline_kernel<M: reduce_core::CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: SegConfig,
    offsets_form: bool,
    shift: u64,
) -> Emulated {
    emu::seg_kernel_edited::<M, I>(cxx, config, offsets_form, shift, "pipe", |text| {
        assert!(text.contains("#define R_PIPE "))
    })
}

/// SegPipeline equals the fold on every layout, size and grid, in both forms, with u32 and u64
/// layouts, one to three stages (a ring shorter and longer than a block's tiles), items at
/// 16-byte boundaries and past them, and lifted items. The emulator's bulk copies land only when
/// a thread waits on the stage's barrier (the stage holds poison before), so a thread that reads
/// its items before waiting, or a producer that refills a stage before every warp released it,
/// gives wrong segments here.
#[test]
fn seg_pipeline_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    for stages in [1, 2, 3] {
        let config = seg_pipeline(64, 16, stages);
        let kernel = pipeline_kernel::<Affine, u32>(&cxx, config, true, 0);
        emu::check_filling(
            &kernel,
            Affine::random_vec,
            |x: Affine, _| x,
            40 + stages as u64,
        );
    }
    let config = seg_pipeline(64, 16, 2);
    let kernel = pipeline_kernel::<Affine, u32>(&cxx, config, true, 4);
    emu::check_filling(&kernel, Affine::random_vec, |x: Affine, _| x, 44);
    let kernel = pipeline_kernel::<Affine, u64>(&cxx, config, true, 8);
    emu::check_filling(&kernel, Affine::random_vec, |x: Affine, _| x, 45);
    let config = seg_pipeline(64, 4, 2);
    let kernel = pipeline_kernel::<Mat2, u32>(&cxx, config, false, 8);
    emu::check_filling(&kernel, Mat2::random_vec, |x: Mat2, _| x, 46);
    let kernel = pipeline_kernel::<Mat2, u64>(&cxx, config, false, 0);
    emu::check_filling(&kernel, Mat2::random_vec, |x: Mat2, _| x, 47);
    // Lifted: f32 items 12 bytes past a boundary into 8-byte (value, index) pairs.
    let config = seg_pipeline(64, 16, 2);
    emu::check_lifted_argmax(&cxx, config, "pipe_argmax_at12", 48);
    // Monoids of unusual shapes: 3-byte values (no whole vectors at 4 items per thread).
    let config = seg_pipeline(64, 4, 2);
    let kernel = pipeline_kernel::<Tri8, u32>(&cxx, config, true, 0);
    emu::check_layouts::<Tri8>(&kernel, &every_shape_in_tiles(kernel.tile, 5), 49);
}

/// The emulator catches a pipeline that does not wait: SegPipeline's kernel with the threads
/// reading a stage before they wait for its bulk copy (they read the poison the copy left), with
/// the producer not waiting for a stage to be free (it refills a stage the threads may still
/// read), or with the threads releasing a stage before they read it, gives wrong segments or
/// fails (the emulator's report), in every fiber order, where the kernel as it is gives the
/// fold. This is what makes `seg_pipeline_is_the_fold` a test of the waits and not only of the
/// fold.
#[test]
fn seg_pipeline_without_its_waits_fails() {
    let Some(cxx) = compiler() else { return };
    let wait = "const unsigned char* base = r_stage_wait(s_stages, s_full, k);";
    let release = "r_stage_release(s_empty, k);";
    let free_wait = "if (k >= R_PIPE) r_mbar_wait(&empty[k % R_PIPE], (k / R_PIPE - 1) & 1u);";
    let released_first = format!("{wait} {release}");
    let edits = [
        (
            "_read_first",
            "the threads read a stage before they wait for it",
            vec![
                (
                    wait,
                    "const unsigned char* base = r_stage_items_at(s_stages, k);",
                ),
                (
                    release,
                    "r_stage_wait(s_stages, s_full, k); r_stage_release(s_empty, k);",
                ),
            ],
        ),
        (
            "_refill_early",
            "the producer refills a stage before the threads release it",
            vec![(free_wait, ";")],
        ),
        (
            "_release_first",
            "the threads release a stage before they read it",
            vec![(release, ";"), (wait, released_first.as_str())],
        ),
    ];
    let config = seg_pipeline(64, 4, 2);
    let mut rng = TestRng::new(50);
    // Segments of 1 to 40 items over 9 tiles of 256: a block of the grid of 1 or 2 takes
    // several tiles through each of the two stages.
    let mut lengths = Vec::new();
    while lengths.iter().sum::<u64>() < 9 * 256 {
        lengths.push(rng.range(1, 40));
    }
    let offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap();
    let items = Affine::random_vec(n as usize, 51);
    let want = fold_segments(&items, &offsets).unwrap();
    let cases: Vec<Case> = [1, 2]
        .into_iter()
        .map(|grid| Case {
            n,
            items: bytes_of(&items),
            index: offsets.clone(),
            segments: lengths.len() as u64,
            grid,
            check: CHECK_NONE,
        })
        .collect();
    let right = |results: &[(u64, Vec<u8>)]| {
        results
            .iter()
            .all(|(_, bytes)| values_from::<Affine>(bytes) == want)
    };
    let kernel = pipeline_kernel::<Affine, u64>(&cxx, config, true, 0);
    for order in Order::ALL {
        assert!(right(&kernel.run(&cases, order)), "fibers {order:?}");
    }
    for (tag, what, replacements) in edits {
        let kernel = emu::seg_kernel_edited::<Affine, u64>(&cxx, config, true, 0, tag, |text| {
            for (from, to) in &replacements {
                assert_eq!(text.matches(from).count(), 1, "the kernel changed: {from}");
                *text = text.replace(from, to);
            }
        });
        for order in Order::ALL {
            let outcome = kernel.try_run(&cases, order);
            if let Ok(results) = outcome {
                assert!(
                    !right(&results),
                    "{what}: every segment right, fibers {order:?}"
                );
            }
        }
    }
}

/// SegPipeline with a trusted garbage layout finishes and stays in bounds.
#[test]
fn seg_pipeline_garbage_offsets_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    let kernel = pipeline_kernel::<Affine, u32>(&cxx, seg_pipeline(64, 16, 2), true, 0);
    emu::check_garbage_offsets(&kernel, false, 7);
}
