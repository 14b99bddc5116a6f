//! SegShuffle's (and SegPipeline's) kernel logic without a GPU: the generated CUDA text runs on
//! the CPU under `tests/emu/cuda_emu.hpp` (every CUDA thread a fiber, barriers and warp
//! collectives as real rendezvous, poisoned dynamic shared memory, bulk copies that land only
//! when waited for, AddressSanitizer on every access, fibers in three thread orders), block by
//! block, and must equal the sequential fold bit for bit on every
//! layout — segments inside one thread, across threads, tiles and blocks, empty segments before,
//! between and after the items, tiles inside one segment — for 8- and 16-byte monoids and for
//! lifted items, with u32 and u64 layouts. The offsets check fused into a validated launch must
//! report the CPU check's first error (u64 entries past the u32 range included), and bad
//! layouts (a trusted call's garbage) must finish without touching memory out of bounds, and
//! SegPipeline with one of its waits taken out must fail in every order. The
//! monoids of unusual shapes (`reduce_tests::monoids::small`, `wide`) run on every layout shape
//! scaled to a tile. Timing and the memory model stay the GPU tests' to check.
//!
//! Needs a host C++ compiler with AddressSanitizer (`$CXX`, else `c++`); without one the tests
//! say so and skip, and fail under `REDUCE_REQUIRE_EMULATOR=1` (CI), which has one.

use reduce_core::layout::check_offsets;
use reduce_core::{fold_by_owner, fold_segments, Lift, Monoid};
use reduce_core::{LayoutError, SegIndex};
use reduce_cuda::testing::{
    seg_dynamic_smem, seg_dynamic_smem_at, seg_dynamic_smem_lifted, seg_dynamic_smem_lifted_at,
    seg_kernel_variants_at, seg_kernel_variants_for, seg_kernel_variants_lifted,
    seg_kernel_variants_lifted_at,
};
use reduce_cuda::{SegAlgorithm, SegConfig};
use reduce_tests::emu::{
    self, bytes_of, compiler, seg_shuffle_kernel, values_from, Case, Emulated, Order, CHECK_EARLY,
    CHECK_FUSED, CHECK_NONE,
};
use reduce_tests::layouts::{every_shape_in_tiles, filling, offsets_of, owners_of};
use reduce_tests::monoids::lang::ArgMax;
use reduce_tests::monoids::small::{Grid16, Nib8, Tri8};
use reduce_tests::monoids::wide::UtAff20;
use reduce_tests::{Affine, Mat2, Random, TestRng};
use std::fmt::Debug;

/// SegShuffle with `threads` per block and `items` per thread.
fn seg_shuffle(threads: u32, items: u32) -> SegConfig {
    SegConfig::new(SegAlgorithm::SegShuffle)
        .block(threads)
        .items_per_thread(items)
}

/// Every layout of [`filling`] at sizes around the tile, several grids, against the fold of the
/// lifted items, with the fibers in every order.
fn check_layouts<X: Copy, M: Monoid + PartialEq + Debug>(
    kernel: &Emulated,
    random_items: impl Fn(usize, u64) -> Vec<X>,
    lift: impl Fn(X, u64) -> M,
    seed: u64,
) {
    let tile = kernel.tile;
    let mut rng = TestRng::new(seed);
    let (mut cases, mut expected, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for n in [
        1,
        2,
        31,
        tile - 1,
        tile,
        tile + 1,
        3 * tile + 7,
        9 * tile + 13,
    ] {
        for (name, lengths) in filling(n, tile, &mut rng) {
            let items = random_items(n as usize, rng.next_u64());
            let lifted: Vec<M> = items
                .iter()
                .enumerate()
                .map(|(i, &x)| lift(x, i as u64))
                .collect();
            let tiles = n.div_ceil(tile);
            for grid in [1, 2, 3, tiles] {
                if grid > tiles || (grid > 1 && rng.range(0, 1) == 0) {
                    continue;
                }
                let (index, want) = if kernel.offsets_form {
                    let offsets = offsets_of(&lengths);
                    let want = fold_segments(&lifted, &offsets).unwrap();
                    (offsets, want)
                } else {
                    let owners = owners_of(&lengths);
                    let want = fold_by_owner(&lifted, &owners, lengths.len()).unwrap();
                    (owners, want)
                };
                let index = index.into_iter().map(u64::from).collect();
                cases.push(Case {
                    n,
                    items: bytes_of(&items),
                    index,
                    segments: lengths.len() as u64,
                    grid,
                    // Trusted, fused check and (offsets form) early check in turn: a valid
                    // layout is never reported.
                    check: cases.len() as u64 % if kernel.offsets_form { 3 } else { 2 },
                });
                expected.push(want);
                names.push(format!("{name}, n = {n}, grid = {grid}"));
            }
        }
    }
    let (threads, per_thread) = (kernel.threads, kernel.tile / kernel.threads);
    for order in Order::ALL {
        let results = kernel.run(&cases, order);
        for ((name, want), (status, bytes)) in names.iter().zip(&expected).zip(&results) {
            let got: Vec<M> = values_from(bytes);
            if let Some(s) = (0..want.len()).find(|&s| got[s] != want[s]) {
                panic!(
                    "{name} (block {threads}, {per_thread} items per thread, fibers {order:?}): \
                     segment {s} of {} is {:?}, the fold is {:?}",
                    want.len(),
                    got[s],
                    want[s]
                );
            }
            assert_eq!(*status, u64::MAX, "{name}: a valid layout reported bad");
        }
    }
    eprintln!(
        "SegShuffle ({}, {}, {} bytes, block {threads}, {per_thread} items per thread): {} launches \
         equal to the fold, fibers in every order",
        if kernel.offsets_form { "offsets" } else { "owners" },
        if kernel.wide { "u64" } else { "u32" },
        kernel.m_size,
        cases.len()
    );
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
    check_layouts(&kernel, M::random_vec, |x: M, _| x, seed);
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
    check_layouts(&kernel, M::random_vec, |x: M, _| x, seed);
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
            check_layouts(&kernel, random, <ArgMax as Lift<f32>>::lift, 8);
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
    check_layouts(&kernel, Affine::random_vec, |x: Affine, _| x, 31);
    // 16-byte items 8 bytes past a boundary: every run spans one more vector.
    let config = seg_shuffle(64, 4);
    let source = seg_kernel_variants_at::<Mat2, u32>(config, false, 8)
        .unwrap()
        .remove(0);
    let smem = seg_dynamic_smem::<Mat2>(config, false).unwrap();
    let kernel = Emulated::build(&cxx, source, "mat2_at8", config, false, false, 16, smem);
    check_layouts(&kernel, Mat2::random_vec, |x: Mat2, _| x, 32);
    let config = seg_shuffle(64, 16);
    let source = seg_kernel_variants_lifted_at::<ArgMax, f32, u32>(config, true, 12)
        .unwrap()
        .remove(0);
    let smem = seg_dynamic_smem_lifted::<ArgMax, f32, u32>(config, true).unwrap();
    let kernel = Emulated::build(&cxx, source, "argmax_at12", config, true, false, 8, smem);
    let random = |n: usize, seed: u64| -> Vec<f32> {
        let mut rng = TestRng::new(seed);
        (0..n).map(|_| rng.range(0, 40) as f32 - 20.0).collect()
    };
    check_layouts(&kernel, random, <ArgMax as Lift<f32>>::lift, 33);
}

/// Runs `kernel` (Affine, offsets form) on trusted garbage layouts, the fibers in every order:
/// any result, but every launch finishes and stays in bounds (AddressSanitizer aborts the
/// process on an out-of-bounds access). Entries spread up to a quarter of the items, the items,
/// u32::MAX, and with `far` (u64 layouts) past the u32 range; half of them sorted (but not from
/// 0 to n).
fn check_garbage_offsets(kernel: &Emulated, far: bool, seed: u64) {
    let spreads = if far { 4 } else { 3 };
    let mut rng = TestRng::new(seed);
    let mut cases = Vec::new();
    for n in [1u64, 100, 1024, 5000] {
        for _ in 0..6 {
            let segments = rng.range(1, 2 * n);
            let spread = [n / 4 + 1, n + 1, u32::MAX as u64, u64::MAX - 1]
                [rng.range(0, spreads - 1) as usize];
            let mut index: Vec<u64> = (0..=segments).map(|_| rng.range(0, spread)).collect();
            if rng.range(0, 1) == 0 {
                index.sort_unstable();
            }
            cases.push(Case {
                n,
                items: bytes_of(&Affine::random_vec(n as usize, rng.next_u64())),
                index,
                segments,
                grid: rng.range(1, n.div_ceil(kernel.tile).min(4)),
                check: CHECK_NONE,
            });
        }
    }
    for order in Order::ALL {
        assert_eq!(kernel.run(&cases, order).len(), cases.len());
    }
}

/// A trusted call with a garbage layout: any result, but it finishes and stays in bounds;
/// u32 and u64 offsets, the u64 ones also far past the u32 range.
#[test]
fn seg_shuffle_garbage_offsets_stay_in_bounds() {
    let Some(cxx) = compiler() else { return };
    for wide in [false, true] {
        check_garbage_offsets(&affine_offsets_kernel(&cxx, wide, 64, 16), wide, 6);
    }
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
        for order in Order::ALL {
            let results = kernel.run(&cases, order);
            for (k, ((status, _), &want)) in results.iter().zip(&bad).enumerate() {
                assert_eq!(
                    *status != u64::MAX,
                    want,
                    "wide {wide}, case {k} (status {status:#x}): offsets {:?}",
                    cases[k].index
                );
            }
        }
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
    pipeline_kernel_edited::<M, I>(cxx, config, offsets_form, shift, "", |_| {})
}

/// [`pipeline_kernel`] with its text changed by `edit` first (`tag` names the change).
fn pipeline_kernel_edited<M: reduce_core::CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: SegConfig,
    offsets_form: bool,
    shift: u64,
    tag: &str,
    edit: impl FnOnce(&mut String),
) -> Emulated {
    let mut source = seg_kernel_variants_at::<M, I>(config, offsets_form, shift)
        .unwrap()
        .remove(0);
    assert!(source.text.contains("#define R_PIPE "));
    edit(&mut source.text);
    let smem = seg_dynamic_smem_at::<M, I>(config, offsets_form, shift).unwrap();
    let tag = format!("pipe{tag}_{}_at{shift}", M::CUDA_NAME);
    let size = std::mem::size_of::<M>();
    Emulated::build(cxx, source, &tag, config, offsets_form, I::WIDE, size, smem)
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
        check_layouts(
            &kernel,
            Affine::random_vec,
            |x: Affine, _| x,
            40 + stages as u64,
        );
    }
    let config = seg_pipeline(64, 16, 2);
    let kernel = pipeline_kernel::<Affine, u32>(&cxx, config, true, 4);
    check_layouts(&kernel, Affine::random_vec, |x: Affine, _| x, 44);
    let kernel = pipeline_kernel::<Affine, u64>(&cxx, config, true, 8);
    check_layouts(&kernel, Affine::random_vec, |x: Affine, _| x, 45);
    let config = seg_pipeline(64, 4, 2);
    let kernel = pipeline_kernel::<Mat2, u32>(&cxx, config, false, 8);
    check_layouts(&kernel, Mat2::random_vec, |x: Mat2, _| x, 46);
    let kernel = pipeline_kernel::<Mat2, u64>(&cxx, config, false, 0);
    check_layouts(&kernel, Mat2::random_vec, |x: Mat2, _| x, 47);
    // Lifted: f32 items 12 bytes past a boundary into 8-byte (value, index) pairs.
    let config = seg_pipeline(64, 16, 2);
    let source = seg_kernel_variants_lifted_at::<ArgMax, f32, u32>(config, true, 12)
        .unwrap()
        .remove(0);
    let smem = seg_dynamic_smem_lifted_at::<ArgMax, f32, u32>(config, true, 12).unwrap();
    let kernel = Emulated::build(
        &cxx,
        source,
        "pipe_argmax_at12",
        config,
        true,
        false,
        8,
        smem,
    );
    let random = |n: usize, seed: u64| -> Vec<f32> {
        let mut rng = TestRng::new(seed);
        (0..n).map(|_| rng.range(0, 40) as f32 - 20.0).collect()
    };
    check_layouts(&kernel, random, <ArgMax as Lift<f32>>::lift, 48);
    // Monoids of unusual shapes: 3-byte values (no whole vectors at 4 items per thread).
    let config = seg_pipeline(64, 4, 2);
    let kernel = pipeline_kernel::<Tri8, u32>(&cxx, config, true, 0);
    emu::check_layouts::<Tri8>(&kernel, &every_shape_in_tiles(kernel.tile, 5), 49);
}

/// The emulator catches a pipeline that does not wait: SegPipeline's kernel with the threads
/// reading a stage before they wait for its bulk copy (they read the poison the copy left), or
/// with the producer not waiting for a stage to be free (it refills a stage the threads may
/// still read), gives wrong segments or fails (the emulator's report), in every fiber order,
/// where the kernel as it is gives the fold. This is what makes `seg_pipeline_is_the_fold` a
/// test of the waits and not only of the fold.
#[test]
fn seg_pipeline_without_its_waits_fails() {
    let Some(cxx) = compiler() else { return };
    let wait = "const unsigned char* base = r_stage_wait(s_stages, s_full, k);";
    let release = "r_stage_release(s_empty, k);";
    let free_wait = "if (k >= R_PIPE) r_mbar_wait(&empty[k % R_PIPE], (k / R_PIPE - 1) & 1u);";
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
        let kernel = pipeline_kernel_edited::<Affine, u64>(&cxx, config, true, 0, tag, |text| {
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
    check_garbage_offsets(&kernel, false, 7);
}
