//! SegMerge's kernel logic without a GPU (kernels/seg_merge.cu: merge-path tiles whose items and
//! segment ends or owners stream through rings of shared-memory chunks filled by `cp.async`
//! copies that arrive on one mbarrier a chunk) on the CPU emulator (`tests/emu/cuda_emu.hpp`:
//! every CUDA thread a fiber, AddressSanitizer on every access, fibers in three orders; a
//! `cp.async` poisons its destination and lands only when a thread waits on the barrier its
//! arrival went to): equal to the sequential fold on every layout, size and grid, both forms, u32
//! and u64 layouts, rings of three and four chunks, items at 16-byte boundaries and past them
//! (plain copies), 3-byte values, lifted items; the fused check flags exactly the bad layouts;
//! trusted garbage stays in bounds; the kernel without its waits for the rings fails.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::layout::{check_offsets, check_owner};
use reduce_core::{CudaMonoid, SegIndex};
use reduce_cuda::{SegAlgorithm, SegConfig};
use reduce_tests::emu::{self, bytes_of, compiler, Case, Emulated, Order, CHECK_FUSED, CHECK_NONE};
use reduce_tests::layouts::{every_shape_in_tiles, offsets_of, owners_of};
use reduce_tests::monoids::small::Tri8;
use reduce_tests::{Affine, Mat2, Random, TestRng};

/// SegMerge with `threads` per block, `steps` path steps a thread and tile, `stages` chunks a
/// ring.
fn seg_merge(threads: u32, steps: u32, stages: u32) -> SegConfig {
    SegConfig::new(SegAlgorithm::SegMerge)
        .block(threads)
        .items_per_thread(steps)
        .stages(stages)
}

/// SegMerge's kernel for monoid `M`, layouts of index type `I`, items `shift` bytes past a
/// 16-byte boundary (any shift but 0 builds the kernel that copies its items with plain loads).
fn merge_kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: SegConfig,
    offsets_form: bool,
    shift: u64,
) -> Emulated {
    emu::seg_kernel_edited::<M, I>(cxx, config, offsets_form, shift, "merge", |text| {
        assert!(text.contains("reduce_seg_merge"))
    })
}

/// SegMerge equals the fold on every layout of `filling` at sizes around the tile, grids of one
/// to four blocks and one a tile, validated and trusted: both forms, u32 and u64 layouts, rings
/// of three chunks (one in flight) and four, items copied by `cp.async` and (off a 16-byte
/// boundary) by plain loads, lifted items and 3-byte values. A thread that reads a chunk before
/// its barrier's wait reads the copies' poison here.
#[test]
fn seg_merge_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    let same = |x, _| x;
    for (stages, seed) in [(3, 60), (4, 61)] {
        let kernel = merge_kernel::<Affine, u32>(&cxx, seg_merge(64, 4, stages), true, 0);
        emu::check_filling(&kernel, Affine::random_vec, same, seed);
    }
    let config = seg_merge(64, 4, 3);
    let kernel = merge_kernel::<Affine, u32>(&cxx, config, false, 0);
    emu::check_filling(&kernel, Affine::random_vec, same, 62);
    let kernel = merge_kernel::<Affine, u64>(&cxx, config, true, 4);
    emu::check_filling(&kernel, Affine::random_vec, same, 63);
    let kernel = merge_kernel::<Mat2, u64>(&cxx, seg_merge(32, 8, 4), false, 8);
    emu::check_filling(&kernel, Mat2::random_vec, |x: Mat2, _| x, 64);
    emu::check_lifted_argmax(&cxx, config, "merge_argmax_at12", 65);
    // 3-byte values: no whole 4-byte pieces, so plain copies at the rings' offsets.
    let kernel = merge_kernel::<Tri8, u32>(&cxx, config, true, 0);
    emu::check_layouts::<Tri8>(&kernel, &every_shape_in_tiles(kernel.tile, 5), 66);
}

/// A validated launch (the fused check: keys compared in order as their chunks are released,
/// blocks meeting where their searches put them, the first and last offsets) flags exactly the
/// layouts the CPU check rejects, in both forms, whatever the grid.
#[test]
fn seg_merge_fused_check_flags_exactly_the_bad_layouts() {
    let Some(cxx) = compiler() else { return };
    let mut rng = TestRng::new(67);
    for offsets_form in [true, false] {
        let kernel = merge_kernel::<Affine, u32>(&cxx, seg_merge(64, 4, 3), offsets_form, 0);
        let (mut cases, mut bad) = (Vec::new(), Vec::new());
        for n in [1u64, 700, 5000, 20_000] {
            for bug in 0..10 {
                let lengths: Vec<u64> = (0..rng.range(1, n + 3)).map(|_| rng.range(0, 5)).collect();
                let offsets = offsets_of(&lengths);
                let items = (*offsets.last().unwrap()).max(1);
                let segments = lengths.len() as u64;
                let mask = u32::MAX as u64;
                let mut index = if offsets_form {
                    offsets
                } else {
                    let mut w = owners_of(&lengths);
                    w.resize(items as usize, 0);
                    w
                };
                let last = index.len() - 1;
                let at = rng.range(1, last.max(1) as u64) as usize;
                match (offsets_form, bug) {
                    (true, 0) => index[0] = 1 + rng.range(0, 9),
                    (true, 1) => index[last] += 1,
                    (true, 3) => index.iter_mut().for_each(|x| *x *= 2),
                    (false, 1) => index[at.min(last)] = segments,
                    (_, 2) if last > 1 => index[at] = index[at - 1].wrapping_sub(1) & mask,
                    (_, 4) => index.reverse(),
                    (_, 5) => index[at.min(last)] = mask,
                    (_, 6) => {
                        // a run of entries far ahead (searches land past it), then back
                        let k = (at + rng.range(1, 600) as usize).min(last);
                        index[at..k]
                            .iter_mut()
                            .for_each(|x| *x = (*x + 3000).min(mask));
                    }
                    (_, 7) => index.iter_mut().for_each(|x| *x = rng.range(0, items)),
                    _ => {}
                }
                let narrow: Vec<u32> = index.iter().map(|&x| x as u32).collect();
                let is_bad = if offsets_form {
                    check_offsets(&narrow, items as usize).is_err()
                } else {
                    check_owner(&narrow, items as usize, segments as usize).is_err()
                };
                bad.push(is_bad);
                cases.push(Case {
                    n: items,
                    items: bytes_of(&Affine::random_vec(items as usize, rng.next_u64())),
                    index,
                    segments: lengths.len() as u64,
                    grid: rng.range(
                        1,
                        (items + lengths.len() as u64).div_ceil(kernel.tile).min(4),
                    ),
                    check: CHECK_FUSED,
                });
            }
        }
        let flagged = bad.iter().filter(|&&b| b).count();
        assert!(
            flagged > 8 && flagged < bad.len(),
            "{flagged} bad of {}",
            bad.len()
        );
        emu::check_flags(
            &kernel,
            &cases,
            &bad,
            &format!("offsets form {offsets_form}"),
        );
    }
}

/// Trusted garbage (offsets anywhere, sorted or not; owners anywhere) gives unspecified values
/// but every launch ends, in bounds (AddressSanitizer aborts the process otherwise).
#[test]
fn seg_merge_garbage_layouts_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    let config = seg_merge(64, 4, 3);
    let kernel = merge_kernel::<Affine, u64>(&cxx, config, true, 0);
    emu::check_garbage_offsets(&kernel, true, 68);
    let kernel = merge_kernel::<Affine, u32>(&cxx, config, false, 0);
    let mut rng = TestRng::new(69);
    let cases: Vec<Case> = (0..12)
        .map(|_| {
            let n = rng.range(1, 3000);
            let segments = rng.range(1, 2 * n);
            Case {
                n,
                items: bytes_of(&Affine::random_vec(n as usize, rng.next_u64())),
                index: (0..n).map(|_| rng.range(0, u32::MAX as u64)).collect(),
                segments,
                grid: rng.range(1, 4),
                check: CHECK_NONE,
            }
        })
        .collect();
    for order in Order::ALL {
        assert_eq!(kernel.run(&cases, order).len(), cases.len());
    }
}

/// The emulator catches rings read before their copies land or refilled while still read:
/// SegMerge's kernel with its wait for the items' chunks, or for the segment ends' chunks,
/// taken out, or refilling the items' ring one chunk early (over the chunk the next tile reads),
/// reads the copies' poison (wrong segments, or the emulator's report) in every fiber order,
/// where the kernel as it is gives the fold.
#[test]
fn seg_merge_without_its_waits_fails() {
    let Some(cxx) = compiler() else { return };
    let refill = "r_ring_refill<R_ITEMS_ASYNC, r_in, r_in>(items, nullptr, s_bars[0], next_i);";
    let edits = [
        (
            "_no_item_wait",
            "r_ring_wait(items, s_bars[0], i0, i0 + avail_i);",
            ";".to_string(),
        ),
        (
            "_no_end_wait",
            "r_ring_wait(ring_keys, key_bars, s0, s0 + avail_s);",
            ";".to_string(),
        ),
        (
            "_early_refill",
            refill,
            refill.replace("next_i)", "next_i + R_TILE)"),
        ),
    ];
    let lengths: Vec<u64> = (0..3000).map(|i| i % 7).collect();
    let offsets = offsets_of(&lengths);
    let n = *offsets.last().unwrap();
    let items = Affine::random_vec(n as usize, 70);
    let want = reduce_core::fold_segments(&items, &offsets).unwrap();
    let cases = [Case {
        n,
        items: bytes_of(&items),
        index: offsets,
        segments: lengths.len() as u64,
        grid: 2,
        check: CHECK_NONE,
    }];
    let config = seg_merge(64, 4, 3);
    let kernel = merge_kernel::<Affine, u32>(&cxx, config, true, 0);
    for order in Order::ALL {
        let got = kernel.run(&cases, order);
        assert!(
            emu::values_from::<Affine>(&got[0].1) == want,
            "{order:?}: not the fold"
        );
    }
    for (tag, from, to) in edits {
        let kernel = emu::seg_kernel_edited::<Affine, u32>(&cxx, config, true, 0, tag, |text| {
            assert_eq!(text.matches(from).count(), 1, "{tag}: the line moved");
            *text = text.replace(from, &to);
        });
        for order in Order::ALL {
            let caught = match kernel.try_run(&cases, order) {
                Err(_) => true,
                Ok(results) => emu::values_from::<Affine>(&results[0].1) != want,
            };
            assert!(caught, "{tag}, fibers {order:?}: the kernel gave the fold");
        }
    }
}
