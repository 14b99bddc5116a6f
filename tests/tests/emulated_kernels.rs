//! SegShuffle's kernel logic without a GPU: the generated CUDA text runs on the CPU under
//! `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, barriers and warp collectives as real
//! rendezvous, poisoned dynamic shared memory, AddressSanitizer on every access, fibers in three
//! thread orders), block by block, and must equal the sequential fold bit for bit on every
//! layout — segments inside one thread, across threads, tiles and blocks, empty segments before,
//! between and after the items, tiles inside one segment — for 8- and 16-byte monoids and for
//! lifted items, with u32 and u64 layouts. The offsets check fused into a validated launch must
//! report the CPU check's first error (u64 entries past the u32 range included), and bad
//! layouts (a trusted call's garbage) must finish without touching memory out of bounds. The
//! monoids of unusual shapes (`reduce_tests::monoids::small`, `wide`) run on every layout shape
//! scaled to a tile. Timing and the memory model stay the GPU tests' to check. SegPipeline's
//! kernel (the same tile fed by bulk copies): `emulated_seg_pipeline.rs`.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::layout::check_offsets;
use reduce_core::{LayoutError, Lift, SegIndex};
use reduce_cuda::testing::{
    seg_dynamic_smem, seg_dynamic_smem_lifted, seg_kernel_source_for, seg_kernel_variants_at,
    seg_kernel_variants_for, seg_kernel_variants_lifted,
};
use reduce_cuda::{SegAlgorithm, SegConfig};
use reduce_tests::emu::{
    self, bytes_of, compiler, seg_shuffle_kernel, Case, Emulated, Order, CHECK_EARLY, CHECK_FUSED,
};
use reduce_tests::layouts::{every_shape_in_tiles, offsets_of, owners_of};
use reduce_tests::monoids::lang::ArgMax;
use reduce_tests::monoids::small::{Grid16, Nib8, Tri8};
use reduce_tests::monoids::wide::{Record512, UtAff20};
use reduce_tests::{Affine, Mat2, Random, TestRng};

/// SegShuffle with `threads` per block and `items` per thread.
fn seg_shuffle(threads: u32, items: u32) -> SegConfig {
    SegConfig::new(SegAlgorithm::SegShuffle)
        .block(threads)
        .items_per_thread(items)
}

/// A monoid whose items are its values, with layouts of index type `I`.
fn check_plain<M: reduce_core::CudaMonoid + Random, I: SegIndex>(
    cxx: &str,
    threads: u32,
    items: u32,
    offsets_form: bool,
    seed: u64,
) {
    let kernel = seg_shuffle_kernel::<M, I>(cxx, threads, items, offsets_form, 0);
    emu::check_filling(&kernel, M::random_vec, |x: M, _| x, seed);
}

/// SegShuffle's other variant for u32 offsets (`seg_kernel_variants_for`: without a tile's
/// first offsets loaded ahead of its marks, which the runtime runs where the preferred kernel
/// spills), for a monoid whose items are its values, validated and trusted.
fn check_second_variant<M: reduce_core::CudaMonoid + Random>(
    cxx: &str,
    threads: u32,
    items: u32,
    seed: u64,
) {
    let config = seg_shuffle(threads, items);
    let mut variants = seg_kernel_variants_for::<M, u32>(config, true).unwrap();
    assert_eq!(
        variants.len(),
        2,
        "SegShuffle with u32 offsets has two variants"
    );
    assert!(variants[0].text.contains("#define R_MARKS_AHEAD 1"));
    let source = variants.pop().unwrap();
    assert!(source.text.contains("#define R_MARKS_AHEAD 0"));
    let smem = seg_dynamic_smem::<M>(config, true).unwrap();
    let tag = format!("m{}_second", std::mem::size_of::<M>());
    let size = std::mem::size_of::<M>();
    let kernel = Emulated::build(cxx, source, &tag, config, true, false, size, smem);
    emu::check_filling(&kernel, M::random_vec, |x: M, _| x, seed);
}

#[test]
fn seg_shuffle_offsets_form_second_variant_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check_second_variant::<Affine>(&cxx, 64, 16, 16);
    check_second_variant::<Affine>(&cxx, 96, 3, 17);
    // 12 items: the kernel the sanitizer workload runs without the load ahead (its spill).
    check_second_variant::<Affine>(&cxx, 64, 12, 18);
}

#[test]
fn seg_shuffle_offsets_form_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    // 16 items per thread: the head bytes move as 16-byte vectors; 4: as words; 3: byte by byte.
    // 64: the head bits of a thread span two words.
    check_plain::<Affine, u32>(&cxx, 64, 16, true, 1);
    check_plain::<Affine, u32>(&cxx, 32, 4, true, 2);
    check_plain::<Affine, u32>(&cxx, 96, 3, true, 3);
    check_plain::<Affine, u32>(&cxx, 32, 64, true, 19);
}

/// u64 offsets and owners: quads of offsets and pairs of owners as 16-byte loads, narrowed.
#[test]
fn seg_shuffle_u64_layouts_are_the_fold() {
    let Some(cxx) = compiler() else { return };
    check_plain::<Affine, u64>(&cxx, 64, 16, true, 12);
    check_plain::<Affine, u64>(&cxx, 96, 3, true, 13);
    check_plain::<Affine, u64>(&cxx, 64, 16, false, 14);
    check_plain::<Affine, u64>(&cxx, 32, 3, false, 15);
}

#[test]
fn seg_shuffle_default_block_offsets_form_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check_plain::<Affine, u32>(&cxx, 256, 16, true, 4);
    // 16-byte matrices: 4 items per thread, as SegShuffle's default for them.
    check_plain::<Mat2, u32>(&cxx, 256, 4, true, 7);
}

#[test]
fn seg_shuffle_owner_form_is_the_fold() {
    let Some(cxx) = compiler() else { return };
    check_plain::<Affine, u32>(&cxx, 64, 16, false, 5);
}

/// Items of another type, lifted with their global index: f32 -> ArgMax (value, first index).
#[test]
fn seg_shuffle_lifted_items_are_the_fold() {
    let Some(cxx) = compiler() else { return };
    let random = |n: usize, seed: u64| -> Vec<f32> {
        let mut rng = TestRng::new(seed);
        // few distinct values: ties, so the first index matters
        (0..n).map(|_| rng.range(0, 40) as f32 - 20.0).collect()
    };
    for offsets_form in [true, false] {
        let config = seg_shuffle(64, 16);
        // Both kernels the runtime may run (u32 offsets: with and without the marks' load ahead).
        let variants =
            seg_kernel_variants_lifted::<ArgMax, f32, u32>(config, offsets_form).unwrap();
        assert_eq!(variants.len(), if offsets_form { 2 } else { 1 });
        let smem = seg_dynamic_smem_lifted::<ArgMax, f32, u32>(config, offsets_form).unwrap();
        for (k, source) in variants.into_iter().enumerate() {
            let tag = format!("argmax{k}");
            let kernel = Emulated::build(&cxx, source, &tag, config, offsets_form, false, 8, smem);
            emu::check_filling(&kernel, random, <ArgMax as Lift<f32>>::lift, 8);
        }
    }
}

/// Items at every offset from a 16-byte boundary that their alignment allows (the kernel
/// specialised for it: each whole run read as 16-byte vectors and shifted into place; the
/// harness places the items there, at the end of their allocation), plain and lifted.
#[test]
fn seg_shuffle_items_at_any_offset_are_the_fold() {
    let Some(cxx) = compiler() else { return };
    let config = seg_shuffle(64, 16);
    let source = seg_kernel_variants_at::<Affine, u32>(config, true, 4)
        .unwrap()
        .remove(0);
    assert!(source.text.contains("#define R_ITEM_SHIFT 4"));
    let smem = seg_dynamic_smem::<Affine>(config, true).unwrap();
    let kernel = Emulated::build(&cxx, source, "affine_at4", config, true, false, 8, smem);
    emu::check_filling(&kernel, Affine::random_vec, |x: Affine, _| x, 31);
    // 16-byte items 8 bytes past a boundary: every run spans one more vector.
    let config = seg_shuffle(64, 4);
    let source = seg_kernel_variants_at::<Mat2, u32>(config, false, 8)
        .unwrap()
        .remove(0);
    let smem = seg_dynamic_smem::<Mat2>(config, false).unwrap();
    let kernel = Emulated::build(&cxx, source, "mat2_at8", config, false, false, 16, smem);
    emu::check_filling(&kernel, Mat2::random_vec, |x: Mat2, _| x, 32);
    let config = seg_shuffle(64, 16);
    emu::check_lifted_argmax(&cxx, config, "argmax_at12", 33);
}

/// A trusted call with a garbage layout: any result, but it finishes and stays in bounds;
/// u32 and u64 offsets, the u64 ones also far past the u32 range.
#[test]
fn seg_shuffle_garbage_offsets_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    for wide in [false, true] {
        emu::check_garbage_offsets(&affine_offsets_kernel(&cxx, wide, 64, 16), wide, 6);
    }
}

/// Bad owners that ask every tile for long identity fills (owners jumping between 0 and the last
/// segment, random ones): the launch's fill budget runs out, the launch finishes in bounds and
/// leaves the budget 0, and a validated one reports the first owner below the one before it.
#[test]
fn seg_shuffle_garbage_owners_stay_within_the_fill_budget() {
    let Some(cxx) = compiler() else { return };
    emu::check_garbage_owners(
        &seg_shuffle_kernel::<Affine, u32>(&cxx, 64, 16, false, 0),
        7,
    );
}

/// SegShuffle's offsets-form kernel for Affine, with u64 offsets (`wide`) or u32.
fn affine_offsets_kernel(cxx: &str, wide: bool, threads: u32, items: u32) -> Emulated {
    if wide {
        seg_shuffle_kernel::<Affine, u64>(cxx, threads, items, true, 0)
    } else {
        seg_shuffle_kernel::<Affine, u32>(cxx, threads, items, true, 0)
    }
}

/// Whether the CPU check rejects the offsets.
fn offsets_are_bad<I: SegIndex>(offsets: &[I], n: usize) -> bool {
    check_offsets(offsets, n).is_err()
}

/// A validated launch checks the offsets on the reads its marks make, and that the reads of all
/// blocks cover every entry: it flags every bad layout (the host then runs the exact check for
/// the first error), wherever the error is and whatever the grid, and never a valid one. With
/// u64 offsets also entries past the u32 range whose low 32 bits are a valid layout's.
#[test]
fn seg_shuffle_fused_check_flags_exactly_the_bad_offsets() {
    let Some(cxx) = compiler() else { return };
    for wide in [false, true] {
        let kernel = affine_offsets_kernel(&cxx, wide, 64, 16);
        // The index type's largest value (arithmetic below wraps there).
        let mask = if wide { u64::MAX } else { u32::MAX as u64 };
        let mut rng = TestRng::new(9);
        let (mut cases, mut bad) = (Vec::new(), Vec::new());
        for n in [1u64, 2, 700, 1024, 5000] {
            for bug in 0..14 {
                let lengths: Vec<u32> = (0..rng.range(1, n + 3))
                    .map(|_| rng.range(0, 5) as u32)
                    .collect();
                let mut offsets: Vec<u64> =
                    offsets_of(&lengths).into_iter().map(u64::from).collect();
                let last = offsets.len() - 1;
                let items = offsets[last].max(1);
                let any = |rng: &mut TestRng| rng.range(0, last as u64) as usize;
                match bug {
                    0 => offsets[0] = 1 + rng.range(0, 9),           // first not 0
                    1 => offsets[last] = (offsets[last] + 1) & mask, // last not n
                    2 | 3 => {
                        // one or two decreasing places anywhere: before, inside, across blocks
                        for _ in 0..bug - 1 {
                            let i = any(&mut rng).max(1);
                            offsets[i] = offsets[i - 1].wrapping_sub(1 + rng.range(0, 3)) & mask;
                        }
                    }
                    4 => offsets.iter_mut().for_each(|o| *o *= 2), // past n
                    5 => offsets.reverse(),
                    6 => offsets[any(&mut rng)] = mask, // far past n
                    7 => {
                        // a run of entries far ahead (the marks stop reading early), then back
                        let i = any(&mut rng);
                        let k = (i + rng.range(1, 600) as usize).min(last);
                        offsets[i..k]
                            .iter_mut()
                            .for_each(|o| *o = (*o + 3000).min(mask));
                    }
                    8 => offsets
                        .iter_mut()
                        .for_each(|o| *o = rng.range(0, items + 1)), // noise
                    9 => offsets[any(&mut rng)] = 0, // a zero inside
                    // u64: past 2^32 with the low 32 bits of a valid layout, one entry or a
                    // run from an entry to the end
                    10 if wide => offsets[any(&mut rng)] += 1 << 32,
                    11 if wide => {
                        let i = any(&mut rng);
                        offsets[i..].iter_mut().for_each(|o| *o += 1 << 32);
                    }
                    _ => {} // valid (unless there are no items: then the last offset is not n)
                }
                bad.push(offsets_are_bad(&offsets, items as usize));
                cases.push(Case {
                    n: items,
                    items: bytes_of(&Affine::random_vec(items as usize, rng.next_u64())),
                    segments: last as u64,
                    index: offsets,
                    grid: rng.range(1, items.div_ceil(kernel.tile).min(5)),
                    check: CHECK_FUSED,
                });
            }
        }
        let flagged = bad.iter().filter(|&&b| b).count();
        assert!(
            flagged > 35 && flagged < bad.len(),
            "{flagged} bad layouts of {}",
            bad.len()
        );
        emu::check_flags(&kernel, &cases, &bad, &format!("wide {wide}"));
    }
}

/// The exact check's key of the CPU check's first error (class << 62 | index; u64::MAX: none).
fn error_key<I: SegIndex>(offsets: &[I], n: usize) -> u64 {
    match check_offsets(offsets, n) {
        Ok(_) => u64::MAX,
        Err(LayoutError::FirstOffsetNotZero { .. }) => 0,
        Err(LayoutError::OffsetsDecreasing { index, .. }) => 1 << 62 | index as u64,
        Err(LayoutError::LastOffsetNotLen { index, .. }) => 2 << 62 | index as u64,
        Err(e) => panic!("not an offsets error: {e}"),
    }
}

/// A validated launch over few offsets (at most 16 per thread) checks them all in the grid's
/// last block before its tiles, and stores the first error's key (the CPU check's first error)
/// where the host reads it; its marks check nothing. Every grid, bad entries anywhere, u32 and
/// u64 (entries past the u32 range with a valid layout's low 32 bits among them); valid
/// layouts report none.
#[test]
fn seg_shuffle_early_check_reports_the_first_error() {
    let Some(cxx) = compiler() else { return };
    for wide in [false, true] {
        let kernel = affine_offsets_kernel(&cxx, wide, 64, 4);
        let mask = if wide { u64::MAX } else { u32::MAX as u64 };
        let mut rng = TestRng::new(13);
        let (mut cases, mut keys) = (Vec::new(), Vec::new());
        for entries in [2u64, 3, 100, 1023, 1024] {
            for bug in 0..8 {
                let lengths: Vec<u32> = (0..entries - 1).map(|_| rng.range(0, 4) as u32).collect();
                let mut offsets: Vec<u64> =
                    offsets_of(&lengths).into_iter().map(u64::from).collect();
                let last = offsets.len() - 1;
                let n = offsets[last].max(1);
                let any = |rng: &mut TestRng| rng.range(1, last.max(1) as u64) as usize;
                match bug {
                    0 => offsets[0] = 1 + rng.range(0, 9),
                    1 => offsets[last] = (offsets[last] + 1) & mask,
                    2 | 3 => {
                        for _ in 0..bug - 1 {
                            let i = any(&mut rng);
                            offsets[i] = offsets[i - 1].wrapping_sub(1 + rng.range(0, 3)) & mask;
                        }
                    }
                    4 => offsets[any(&mut rng)] = mask,
                    5 if wide => offsets[any(&mut rng)] += 1 << 32,
                    _ => {} // valid (unless there are no items)
                }
                keys.push(error_key(&offsets, n as usize));
                cases.push(Case {
                    n,
                    items: bytes_of(&Affine::random_vec(n as usize, rng.next_u64())),
                    segments: last as u64,
                    index: offsets,
                    grid: rng.range(1, n.div_ceil(kernel.tile).min(4)),
                    check: CHECK_EARLY,
                });
            }
        }
        let bad = keys.iter().filter(|&&k| k != u64::MAX).count();
        assert!(bad > 15 && bad < keys.len(), "{bad} bad of {}", keys.len());
        for order in Order::ALL {
            for (k, ((status, _), &want)) in kernel.run(&cases, order).iter().zip(&keys).enumerate()
            {
                assert_eq!(
                    *status, want,
                    "wide {wide}, case {k}, {order:?}: offsets {:?}",
                    cases[k].index
                );
            }
        }
    }
}

/// One entry 0 or far past n, at every place in turn, one block per tile: where the marks stop
/// reading before it and the next block's search lands at or after it (a 0 probed there), only
/// the coverage check (the reads of all blocks must reach every entry) sees it. With u64
/// offsets, "far past" is 2^32 above the valid entry (the same low 32 bits).
#[test]
fn seg_shuffle_fused_check_flags_an_entry_no_tile_needs() {
    let Some(cxx) = compiler() else { return };
    for wide in [false, true] {
        let kernel = affine_offsets_kernel(&cxx, wide, 32, 4);
        let mut rng = TestRng::new(11);
        let lengths: Vec<u32> = (0..300).map(|_| rng.range(1, 3) as u32).collect();
        let valid: Vec<u64> = offsets_of(&lengths).into_iter().map(u64::from).collect();
        let n = valid[valid.len() - 1];
        let items = bytes_of(&Affine::random_vec(n as usize, 5));
        let cases: Vec<Case> = (2..2 * valid.len() - 2)
            .filter_map(|k| {
                let j = k / 2;
                let far = if wide {
                    valid[j] + (1 << 32)
                } else {
                    u32::MAX as u64 - 7
                };
                let mut offsets = valid.clone();
                offsets[j] = if k % 2 == 0 { 0 } else { far };
                offsets_are_bad(&offsets, n as usize).then_some(Case {
                    n,
                    items: items.clone(),
                    segments: lengths.len() as u64,
                    index: offsets,
                    grid: n.div_ceil(kernel.tile),
                    check: CHECK_FUSED,
                })
            })
            .collect();
        assert!(cases.len() > 500, "{} cases", cases.len());
        for (k, (status, _)) in kernel.run(&cases, Order::Increasing).iter().enumerate() {
            let j = cases[k].index.iter().zip(&valid).position(|(a, b)| a != b);
            let value = j.map(|j| cases[k].index[j]);
            assert_ne!(
                *status,
                u64::MAX,
                "wide {wide}: offsets[{j:?}] = {value:?} not seen"
            );
        }
    }
}

/// The owner form checks every owner it reads: a u64 owner past the u32 range (with the low 32
/// bits of a valid owner), alone or from there to the end, is reported at its index.
#[test]
fn seg_shuffle_u64_owners_past_u32_are_reported() {
    let Some(cxx) = compiler() else { return };
    let kernel = seg_shuffle_kernel::<Affine, u64>(&cxx, 32, 4, false, 0);
    let mut rng = TestRng::new(21);
    let lengths: Vec<u32> = (0..400).map(|_| rng.range(0, 4) as u32).collect();
    let valid: Vec<u64> = owners_of(&lengths).into_iter().map(u64::from).collect();
    let n = valid.len() as u64;
    let items = bytes_of(&Affine::random_vec(n as usize, 6));
    let (mut cases, mut want) = (Vec::new(), Vec::new());
    for i in (0..valid.len()).step_by(7) {
        for suffix in [false, true] {
            let mut owner = valid.clone();
            let end = if suffix { owner.len() } else { i + 1 };
            owner[i..end].iter_mut().for_each(|o| *o += 1 << 32);
            cases.push(Case {
                n,
                items: items.clone(),
                index: owner,
                segments: lengths.len() as u64,
                grid: rng.range(1, n.div_ceil(kernel.tile)),
                check: CHECK_FUSED,
            });
            want.push(i as u64);
        }
    }
    for order in Order::ALL {
        for (k, (status, _)) in kernel.run(&cases, order).iter().enumerate() {
            assert_eq!(*status, want[k], "case {k}, fibers {order:?}");
        }
    }
}

/// SegShuffle's offsets form with u32 offsets, both kernels the runtime may run (with and
/// without a tile's first offsets loaded ahead of its marks), for the 3-byte monoid; the owner
/// form for the 1-byte one.
#[test]
fn emulated_seg_shuffle_small_items() {
    let Some(cxx) = compiler() else { return };
    for variant in [0, 1] {
        let kernel = seg_shuffle_kernel::<Tri8, u32>(&cxx, 64, 4, true, variant);
        emu::check_layouts::<Tri8>(&kernel, &every_shape_in_tiles(kernel.tile, 1), 11);
    }
    let kernel = seg_shuffle_kernel::<Nib8, u32>(&cxx, 32, 16, false, 0);
    emu::check_layouts::<Nib8>(&kernel, &every_shape_in_tiles(kernel.tile, 2), 12);
}

/// u64 layouts: the 12-byte nested array aligned to 2 (owners) and the 20-byte monoid
/// (offsets, 3 items per thread: no whole 16-byte vectors).
#[test]
fn emulated_seg_shuffle_u64_layouts() {
    let Some(cxx) = compiler() else { return };
    let kernel = seg_shuffle_kernel::<Grid16, u64>(&cxx, 64, 4, false, 0);
    emu::check_layouts::<Grid16>(&kernel, &every_shape_in_tiles(kernel.tile, 3), 13);
    let kernel = seg_shuffle_kernel::<UtAff20, u64>(&cxx, 96, 3, true, 0);
    emu::check_layouts::<UtAff20>(&kernel, &every_shape_in_tiles(kernel.tile, 4), 14);
}

/// 512-byte values in the offsets form at SegShuffle's defaults, which keep a block's shared
/// memory within the budget every device from sm_80 on allows: one item a thread and the block
/// shrunk to 64 threads (at 256 a block would need 177 KiB), on every layout shape.
#[test]
fn emulated_seg_shuffle_512_byte_values_at_the_defaults() {
    let Some(cxx) = compiler() else { return };
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    let text = seg_kernel_source_for::<Record512, u32>(shuffle, true)
        .unwrap()
        .text;
    for define in ["#define R_BLOCK 64\n", "#define R_ITEMS 1\n"] {
        assert!(
            text.contains(define),
            "SegShuffle's defaults for 512-byte values: {define}"
        );
    }
    let kernel = seg_shuffle_kernel::<Record512, u32>(&cxx, 64, 1, true, 0);
    emu::check_layouts::<Record512>(&kernel, &every_shape_in_tiles(kernel.tile, 5), 16);
}
