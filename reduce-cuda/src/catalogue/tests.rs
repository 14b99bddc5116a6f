//! The catalogue's rules: defaults, `Auto`'s choices, the checks of every parameter, and the
//! kernels' signatures against the kernel files.

use super::shuffle::{lane_items, seg_static_smem, STATIC_SMEM_LIMIT};
use super::tuning::{MERGE_SMEM_BUDGET, SEG_PIPE_BLOCKS_PER_SM};
use super::*;
use crate::jit::Family;

/// The value of the compile-time parameter `name` of `spec`.
fn define(spec: &KernelSpec, name: &str) -> u32 {
    spec.defines
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{spec:?} has no {name}"))
        .1
}

fn items(size: usize) -> Items {
    Items {
        in_size: size,
        m_size: size,
        m_align: 4,
        lifted: false,
        commutative: false,
    }
}

fn plain_spec(config: impl Into<Config>, size: usize) -> Result<KernelSpec> {
    Ok(plain_plan(config.into(), items(size), 0)?
        .kernels()
        .remove(0))
}

/// The portable lane holds whole runs, a power of two of them, at most 256 items: one message
/// says so for every item size.
#[test]
fn portable_items_per_thread_are_whole_runs() {
    let portable = Config::default().portable();
    // 1-byte values: runs of 64, so 64, 128 and 256 items a lane.
    for k in [64, 128, 256] {
        assert!(plain_spec(portable.items_per_thread(k), 1).is_ok(), "{k}");
    }
    for k in [32, 96, 512, 1024] {
        let e = plain_spec(portable.items_per_thread(k), 1).unwrap_err();
        assert!(e.to_string().contains("power of two up to 4"), "{k}: {e}");
    }
    // 4-byte values: runs of 16, up to 16 of them.
    assert!(plain_spec(portable.items_per_thread(256), 4).is_ok());
    let e = plain_spec(portable.items_per_thread(512), 4).unwrap_err();
    assert!(e.to_string().contains("power of two up to 16"), "{e}");
    // 3-byte values: runs of 21, at most 12 in 256 items, so 8.
    assert!(plain_spec(portable.items_per_thread(168), 3).is_ok());
    let e = plain_spec(portable.items_per_thread(252), 3).unwrap_err();
    assert!(e.to_string().contains("power of two up to 8"), "{e}");
}

/// Shuffle's static rings shrink for large items (the tile group, then the block) where the
/// caller left the defaults, down to one warp's three values (16 KiB values fit); explicit
/// parameters that do not fit are an error.
#[test]
fn shuffle_defaults_shrink_for_large_items() {
    let shuffle = Config::new(Algorithm::Shuffle);
    for size in [4, 72, 256, 512, 1024, 1400, 2048, 4096, 16_000] {
        let spec = plain_spec(shuffle, size).unwrap();
        let (block, group) = (define(&spec, "R_BLOCK"), define(&spec, "R_GROUP"));
        let warps = block as usize / 32;
        let smem = (2 * group as usize * warps + warps) * size + 64;
        assert!(
            smem <= STATIC_SMEM_LIMIT,
            "{size}: {block} threads, group {group}"
        );
        if size <= 256 {
            assert_eq!(
                (block, group),
                (tuning::SHUFFLE_BLOCK, tuning::SHUFFLE_GROUP),
                "{size}"
            );
        }
    }
    assert!(plain_spec(shuffle.tile_group(4).block(512), 512).is_err());
    assert!(plain_spec(shuffle.block(512), 1400).is_err());
    assert!(plain_spec(shuffle, 4096).is_ok());
    assert!(plain_spec(shuffle, 17_000).is_err());
}

#[test]
fn shuffle_lanes_fill_whole_vectors() {
    let lane = |size, requested| lane_items("Shuffle", size, requested).unwrap();
    assert_eq!(lane(4, None), (16, 4));
    assert_eq!(lane(8, None), (8, 4));
    assert_eq!(lane(16, None), (4, 4));
    assert_eq!(lane(12, None), (8, 6));
    assert_eq!(lane(72, None), (2, 9));
    assert_eq!(lane(1, None), (64, 4));
    assert_eq!(lane(4, Some(3)), (3, 0));
}

#[test]
fn bad_parameters_are_named() {
    let error = |config: Config| plain_spec(config, 4).unwrap_err().to_string();
    let e = error(Config::new(Algorithm::Tb2).block(96));
    assert!(e.contains("power of two"), "{e}");
    let e = error(Config::new(Algorithm::Matrix).block(100));
    assert!(e.contains("multiple of 32"), "{e}");
    let e = error(Config::new(Algorithm::Tb4Warp).block(512));
    assert!(e.contains("past 256"), "{e}");
    let e = error(Config::new(Algorithm::DiffWarps).producers(0));
    assert!(e.contains("producers 0"), "{e}");
    let e = error(Config::new(Algorithm::Matrix).grid(10));
    assert!(e.contains("multi-pass"), "{e}");
    assert!(plain_spec(Config::new(Algorithm::Shuffle).items_per_thread(0), 4).is_err());
}

fn shape(wide: bool, offsets_form: bool, lifted: bool) -> SegShape {
    SegShape {
        items: Items {
            in_size: 4,
            m_size: 8,
            m_align: 4,
            lifted,
            commutative: false,
        },
        offsets_form,
        wide,
        item_shift: 0,
        plain_index: false,
    }
}

fn sized(shape: SegShape, in_size: usize, m_size: usize) -> SegShape {
    SegShape {
        items: Items {
            in_size,
            m_size,
            ..shape.items
        },
        ..shape
    }
}

/// The portable segmented kernel carries the offsets' check (`R_CHECK_OFFSETS`) in validated
/// calls' kernels of the offsets form only: trusted calls' kernels keep their registers for the
/// fold, and a validated call's kernel must check (docs/decisions/0090-portable-offsets-check.md).
#[test]
fn portable_offsets_check_is_in_validated_offsets_kernels_only() {
    for offsets_form in [true, false] {
        for trusted in [true, false] {
            let mut config = SegConfig::default().portable();
            if trusted {
                config = config.trusted();
            }
            let plan = seg_plan(config, shape(false, offsets_form, false), 1 << 20, 1000).unwrap();
            for spec in plan.variants() {
                assert_eq!(
                    define(&spec, "R_CHECK_OFFSETS"),
                    (offsets_form && !trusted) as u32,
                    "offsets form {offsets_form}, trusted {trusted}"
                );
            }
        }
    }
}

/// Shuffle's and SegShuffle's kernels are specialised for the items' offset from a 16-byte
/// boundary (vector loads at any offset: one kernel text per offset); SegMerge copies items
/// that are not aligned with plain loads.
#[test]
fn kernels_are_specialised_for_the_items_offset() {
    let plain = |at| {
        plain_plan(Algorithm::Shuffle.into(), items(4), at)
            .unwrap()
            .kernels()[0]
            .clone()
    };
    assert_eq!(define(&plain(0), "R_ITEM_SHIFT"), 0);
    assert_eq!(define(&plain(4), "R_ITEM_SHIFT"), 4);
    assert_eq!(define(&plain(0x1000c), "R_ITEM_SHIFT"), 12);
    assert_eq!(define(&plain(4), "R_VECS"), define(&plain(0), "R_VECS"));
    // Item by item (runs that fill no whole vectors): nothing to specialise.
    let three = plain_plan(
        Config::new(Algorithm::Shuffle).items_per_thread(3),
        items(4),
        4,
    )
    .unwrap();
    assert_eq!(define(&three.kernels()[0], "R_ITEM_SHIFT"), 0);
    let seg = |algorithm, shift| {
        let shape = SegShape {
            item_shift: shift,
            ..shape(false, true, false)
        };
        seg_plan(SegConfig::new(algorithm), shape, 0, 0)
            .unwrap()
            .variants()[0]
            .clone()
    };
    assert_eq!(define(&seg(SegAlgorithm::SegShuffle, 8), "R_ITEM_SHIFT"), 8);
    assert_eq!(define(&seg(SegAlgorithm::SegShuffle, 0), "R_ITEM_SHIFT"), 0);
    assert_eq!(define(&seg(SegAlgorithm::SegMerge, 8), "R_PLAIN_ITEMS"), 1);
    assert_eq!(define(&seg(SegAlgorithm::SegMerge, 0), "R_PLAIN_ITEMS"), 0);
}

#[test]
fn auto_picks_from_cheap_statistics() {
    let auto = SegConfig::new(SegAlgorithm::Auto);
    let pick = |wide, offsets, n, s| resolve(auto, shape(wide, offsets, false), n, s).algorithm;
    assert_eq!(pick(false, false, 1000, 100), SegAlgorithm::SegShuffle);
    assert_eq!(pick(false, true, 1000, 1000), SegAlgorithm::SegShuffle);
    // More segments than items: SegShuffle in both forms (the owner form's blocks fill runs of
    // empty segments coalesced; the offsets form writes them from the offsets).
    assert_eq!(pick(false, false, 1000, 1001), SegAlgorithm::SegShuffle);
    assert_eq!(pick(false, true, 1000, 1001), SegAlgorithm::SegShuffle);
    // u64 layouts: SegShuffle up to 2^32 - 2 items; only SegMerge takes more than 2^32 items or
    // segments.
    assert_eq!(pick(true, false, 10, 1), SegAlgorithm::SegShuffle);
    assert_eq!(pick(true, true, 1000, 2000), SegAlgorithm::SegShuffle);
    let most = u32::MAX as usize;
    assert_eq!(pick(true, true, most - 1, 2), SegAlgorithm::SegShuffle);
    assert_eq!(pick(true, true, most, 2), SegAlgorithm::SegMerge);
    assert_eq!(pick(false, true, most, 2), SegAlgorithm::SegShuffle);
    assert_eq!(pick(true, false, 10, most + 1), SegAlgorithm::SegMerge);
    assert_eq!(pick(false, false, 1 << 33, 2), SegAlgorithm::SegMerge);
    // Long segments: SegShuffle in both forms.
    assert_eq!(pick(false, true, 1 << 20, 100), SegAlgorithm::SegShuffle);
    assert_eq!(pick(false, false, 1 << 20, 100), SegAlgorithm::SegShuffle);
    assert_eq!(pick(false, true, 1 << 20, 1000), SegAlgorithm::SegShuffle);
    // SegHeads: CSR offsets of 4- and 8-byte values in the bands of tuning::SEG_HEADS_BANDS,
    // with no knob set; SegShuffle otherwise. 4-byte values, u32 offsets: mean lengths 32 to
    // 4096 from 2^25 items.
    let f32_offsets = sized(shape(false, true, false), 4, 4);
    let f32_wide = sized(shape(true, true, false), 4, 4);
    let affine_offsets = sized(shape(false, true, false), 8, 8);
    let affine_wide = sized(shape(true, true, false), 8, 8);
    let lifted_offsets = sized(shape(false, true, true), 4, 8);
    let (heads, shuffle) = (SegAlgorithm::SegHeads, SegAlgorithm::SegShuffle);
    // (values and layout, n, segments, SegHeads' rule: SegHeads or SegShuffle)
    let cases = [
        ("f32 u32", f32_offsets, 1 << 26, 1 << 16, heads),
        ("f32 u32", f32_offsets, 1 << 25, 1 << 15, heads),
        ("f32 u32", f32_offsets, 1 << 28, 1 << 22, heads),
        ("f32 u32", f32_offsets, 1 << 28, 1 << 16, heads),
        ("f32 u32", f32_offsets, 1 << 28, 1 << 15, shuffle),
        ("f32 u32", f32_offsets, 1 << 28, 1 << 23, heads),
        ("f32 u32", f32_offsets, 1 << 28, 1 << 24, shuffle),
        ("f32 u32", f32_offsets, (1 << 25) - 1, 1 << 15, shuffle),
        (
            "f32 owners",
            sized(shape(false, false, false), 4, 4),
            1 << 26,
            1 << 16,
            shuffle,
        ),
        // u64 offsets: mean lengths 32 to 4096 from 2^24 items, to 8192 from 2^25.
        ("f32 u64", f32_wide, 1 << 26, 1 << 16, heads),
        ("f32 u64", f32_wide, 1 << 26, 1 << 21, heads),
        ("f32 u64", f32_wide, 1 << 26, 1 << 13, heads),
        ("f32 u64", f32_wide, 1 << 25, 1 << 12, heads),
        ("f32 u64", f32_wide, 1 << 26, 1 << 22, shuffle),
        ("f32 u64", f32_wide, 1 << 26, 1 << 12, shuffle),
        ("f32 u64", f32_wide, 1 << 24, 1 << 19, heads),
        ("f32 u64", f32_wide, 1 << 24, 1 << 14, heads),
        ("f32 u64", f32_wide, 1 << 24, 1 << 13, heads),
        ("f32 u64", f32_wide, 1 << 24, 1 << 12, heads),
        ("f32 u64", f32_wide, 1 << 24, (1 << 12) - 1, shuffle),
        ("f32 u64", f32_wide, (1 << 25) - 1, 1 << 12, shuffle),
        ("f32 u64", f32_wide, (1 << 24) - 1, 1 << 16, shuffle),
        // 8-byte values, u32 offsets: mean lengths 16 to 4096 from 2^24 items; u64 offsets
        // 16 to 4096 from 2^24 items and to 8192 from 2^25; 4-byte items lifted into 8-byte
        // values, u32 offsets, 32 to 4096 from 2^24 and to 8192 from 2^26; other sizes and
        // lifts: SegShuffle.
        ("8 B u32", affine_offsets, 1 << 26, 1 << 22, heads),
        ("8 B u32", affine_offsets, 1 << 26, 1 << 15, heads),
        ("8 B u32", affine_offsets, 1 << 24, 1 << 13, heads),
        ("8 B u32", affine_offsets, (1 << 24) - 1, 1 << 13, shuffle),
        ("8 B u32", affine_offsets, 1 << 26, 1 << 14, heads),
        ("8 B u32", affine_offsets, 1 << 26, (1 << 14) - 4, shuffle),
        ("8 B u32", affine_offsets, 1 << 26, 1 << 13, shuffle),
        ("8 B u32", affine_offsets, 1 << 26, 1 << 23, shuffle),
        ("8 B u64", affine_wide, 1 << 26, 1 << 16, heads),
        ("8 B u64", affine_wide, 1 << 26, 1 << 22, heads),
        ("8 B u64", affine_wide, 1 << 26, (1 << 22) + 1, shuffle),
        ("8 B u64", affine_wide, 1 << 25, 1 << 12, heads),
        ("8 B u64", affine_wide, 1 << 25, (1 << 12) - 1, shuffle),
        ("8 B u64", affine_wide, 1 << 24, 1 << 12, heads),
        ("8 B u64", affine_wide, 1 << 24, 1 << 11, shuffle),
        ("8 B u64", affine_wide, (1 << 24) - 1, 1 << 16, shuffle),
        ("4 B lifted to 8", lifted_offsets, 1 << 26, 1 << 16, heads),
        ("4 B lifted to 8", lifted_offsets, 1 << 26, 1 << 13, heads),
        (
            "4 B lifted to 8",
            lifted_offsets,
            1 << 26,
            (1 << 13) - 1,
            shuffle,
        ),
        ("4 B lifted to 8", lifted_offsets, 1 << 25, 1 << 12, shuffle),
        ("4 B lifted to 8", lifted_offsets, 1 << 24, 1 << 12, heads),
        ("4 B lifted to 8", lifted_offsets, 1 << 26, 1 << 21, heads),
        (
            "4 B lifted to 8",
            lifted_offsets,
            1 << 26,
            (1 << 21) + 1,
            shuffle,
        ),
        (
            "4 B lifted to 8",
            lifted_offsets,
            (1 << 24) - 1,
            1 << 15,
            shuffle,
        ),
        (
            "4 B lifted to 8, u64",
            sized(shape(true, true, true), 4, 8),
            1 << 26,
            1 << 16,
            shuffle,
        ),
        (
            "default items",
            shape(false, true, false),
            1 << 26,
            1 << 16,
            shuffle,
        ),
        (
            "8 B lifted",
            sized(shape(false, true, true), 8, 8),
            1 << 26,
            1 << 16,
            shuffle,
        ),
    ];
    // Of these, the calls a band of SegBlocks holds too, where `Auto` takes SegBlocks
    // (auto_takes_seg_blocks_for_long_segments has its own edges).
    let in_blocks_bands = [
        (lifted_offsets, 1 << 26, 1 << 16),
        (lifted_offsets, 1 << 26, 1 << 13),
        (lifted_offsets, 1 << 26, (1 << 13) - 1),
        (lifted_offsets, 1 << 25, 1 << 12),
    ];
    for (what, shape, n, s, want) in cases {
        let in_heads_band = tuning::seg_heads_wins(&auto, shape, n, s);
        assert_eq!(
            in_heads_band,
            want == heads,
            "{what}: n = {n}, S = {s}, SegHeads' band"
        );
        let want = if in_blocks_bands.contains(&(shape, n, s)) {
            SegAlgorithm::SegBlocks
        } else {
            want
        };
        assert_eq!(
            resolve(auto, shape, n, s).algorithm,
            want,
            "{what}: n = {n}, S = {s}"
        );
    }
    assert_eq!(
        resolve(auto.block(128), f32_offsets, 1 << 26, 1 << 16).algorithm,
        SegAlgorithm::SegShuffle
    );
    // A concrete choice is kept.
    let tb2 = SegConfig::new(SegAlgorithm::Tb2Seg);
    assert_eq!(
        resolve(tb2, shape(false, true, false), 1, 5).algorithm,
        SegAlgorithm::Tb2Seg
    );
    // Lifted items: the same choice; SegShuffle and SegMerge read them, the others refuse.
    let lifted = shape(false, true, true);
    assert_eq!(
        resolve(auto, lifted, 1 << 20, 1000).algorithm,
        SegAlgorithm::SegShuffle
    );
    assert_eq!(
        resolve(auto, lifted, 1000, 1001).algorithm,
        SegAlgorithm::SegShuffle
    );
    assert_eq!(
        resolve(auto, shape(false, false, true), 1000, 1001).algorithm,
        SegAlgorithm::SegShuffle
    );
    // Items per thread sized by the narrower lifted item unless segments are that short.
    assert_eq!(
        resolve(auto, lifted, 1 << 20, 1000).items_per_thread,
        Some(16)
    );
    assert_eq!(resolve(auto, lifted, 1000, 1001).items_per_thread, None);
    // ... at one item per segment too in the offsets form, not in the owner form.
    assert_eq!(resolve(auto, lifted, 1000, 1000).items_per_thread, Some(16));
    // ... in the owner form at most 12 (16 f32 items as 8-byte values spill there).
    let lifted_owner = shape(false, false, true);
    assert_eq!(
        resolve(auto, lifted_owner, 1 << 20, 1000).items_per_thread,
        Some(12)
    );
    assert_eq!(
        resolve(auto, lifted_owner, 1000, 1000).items_per_thread,
        None
    );
    let not_lifted = shape(false, true, false);
    assert_eq!(
        resolve(auto, not_lifted, 1 << 20, 1000).items_per_thread,
        None
    );
    // The owner form (8-byte values here: 8 by default) with segments averaging under 1.25
    // items: half as many; the offsets form, longer segments and 16-byte values keep theirs.
    let owner = shape(false, false, false);
    assert_eq!(resolve(auto, owner, 1000, 801).items_per_thread, Some(4));
    assert_eq!(resolve(auto, owner, 1000, 800).items_per_thread, None);
    assert_eq!(resolve(auto, not_lifted, 1000, 2000).items_per_thread, None);
    let wide_values = sized(owner, 16, 16);
    assert_eq!(
        resolve(auto, wide_values, 1000, 2000).items_per_thread,
        None
    );
    // u64 owners: at most 12 per thread (f32: 16 -> 12; short segments' 8 and 8-byte items' 8
    // kept); the offsets form and a caller's choice are left alone.
    let f32_owner = sized(shape(true, false, false), 4, 4);
    let per_thread = |shape, n, s| resolve(auto, shape, n, s).items_per_thread;
    assert_eq!(per_thread(f32_owner, 1 << 20, 1000), Some(12));
    assert_eq!(per_thread(f32_owner, 1000, 2000), Some(8));
    let affine_owner = sized(f32_owner, 8, 8);
    assert_eq!(per_thread(affine_owner, 1 << 20, 1000), None);
    let f32_offsets = SegShape {
        offsets_form: true,
        ..f32_owner
    };
    assert_eq!(per_thread(f32_offsets, 1 << 20, 1000), None);
    let chosen = auto.items_per_thread(32);
    assert_eq!(
        resolve(chosen, f32_owner, 1 << 20, 1000).items_per_thread,
        Some(32)
    );
    for alg in SegAlgorithm::ALL {
        let readable = !alg.is_paper();
        assert_eq!(
            seg_plan(SegConfig::new(alg), lifted, 0, 0).is_ok(),
            readable,
            "{alg:?}"
        );
    }
}

/// SegShuffle's registers are capped for 4 blocks of 256 threads per SM, for 3 where a thread
/// of the offsets form holds more than 64 bytes of values (lifted f32 items as 8-byte values
/// under `Auto`, or a caller's larger `items_per_thread`); SegPipeline keeps its own.
#[test]
fn seg_shuffle_caps_registers_by_the_values_a_thread_holds() {
    let blocks = |config: SegConfig, shape, n, s| {
        define(
            &seg_plan(config, shape, n, s).unwrap().variants()[0],
            "R_MIN_BLOCKS",
        )
    };
    let auto = SegConfig::new(SegAlgorithm::Auto);
    let lifted = shape(false, true, true);
    assert_eq!(blocks(auto, lifted, 1 << 20, 1000), 3);
    // More segments than items: 8 items of 8 bytes, 4 blocks.
    assert_eq!(blocks(auto, lifted, 1000, 1001), 4);
    // The owner form: 12 items, 4 blocks.
    assert_eq!(blocks(auto, shape(false, false, true), 1 << 20, 1000), 4);
    let f32_offsets = sized(shape(false, true, false), 4, 4);
    assert_eq!(blocks(auto, f32_offsets, 1 << 20, 1000), 4);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    assert_eq!(blocks(shuffle.items_per_thread(16), f32_offsets, 0, 0), 4);
    assert_eq!(blocks(shuffle.items_per_thread(20), f32_offsets, 0, 0), 3);
    assert_eq!(
        blocks(shuffle.block(128).items_per_thread(32), f32_offsets, 0, 0),
        6
    );
    let pipeline = SegConfig::new(SegAlgorithm::SegPipeline);
    assert_eq!(blocks(pipeline, lifted, 0, 0), SEG_PIPE_BLOCKS_PER_SM);
}

/// A second kernel exactly for SegShuffle with u32 offsets (without the marks' first offsets
/// loaded ahead: R_MARKS_AHEAD 0) and for SegBlocks with its register budget (the kernel left to
/// ptxas: R_MIN_BLOCKS 0), lifted items or not; it differs from the first in that define alone.
#[test]
fn fallback_kernels_differ_from_the_first_in_one_define() {
    for alg in SegAlgorithm::ALL {
        for wide in [false, true] {
            for offsets_form in [false, true] {
                for lifted in [false, true] {
                    let shape = shape(wide, offsets_form, lifted);
                    let Ok(plan) = seg_plan(SegConfig::new(alg), shape, 0, 0) else {
                        continue;
                    };
                    let fallback = match alg {
                        SegAlgorithm::SegShuffle | SegAlgorithm::SegPipeline if !wide => {
                            Some("R_MARKS_AHEAD")
                        }
                        SegAlgorithm::SegBlocks => Some("R_MIN_BLOCKS"),
                        _ => None,
                    }
                    .filter(|_| offsets_form);
                    let variants = plan.variants();
                    assert_eq!(variants.len() == 2, fallback.is_some(), "{alg:?} {shape:?}");
                    let [first, second] = &variants[..] else {
                        continue;
                    };
                    let differ: Vec<_> = first
                        .defines
                        .iter()
                        .zip(&second.defines)
                        .filter(|(a, b)| a != b)
                        .collect();
                    let name = fallback.unwrap();
                    assert!(
                        matches!(differ[..], [((a, on), (b, 0))] if *a == name && *b == name && *on > 0),
                        "{alg:?} {shape:?}: {differ:?}"
                    );
                    assert_eq!(first.defines.len(), second.defines.len());
                }
            }
        }
    }
}

#[test]
fn seg_merge_defaults_shrink_for_large_items() {
    let shape = |size| sized(shape(false, true, false), size, size);
    let merge = SegConfig::new(SegAlgorithm::SegMerge);
    for size in [1, 4, 8, 12, 72, 256] {
        let plan = seg_plan(merge, shape(size), 0, 0).unwrap();
        let spec = plan.variants().remove(0);
        assert!(plan.dynamic_smem() <= MERGE_SMEM_BUDGET, "{size}: {spec:?}");
        assert!(
            define(&spec, "R_BLOCK").is_power_of_two()
                && define(&spec, "R_STEPS").is_power_of_two()
        );
    }
    // Explicit parameters are kept, and checked.
    assert!(seg_plan(merge.items_per_thread(3), shape(4), 0, 0).is_err());
    assert!(seg_plan(merge.block(96), shape(4), 0, 0).is_err());
    assert!(seg_plan(merge.stages(9), shape(4), 0, 0).is_err());
}

/// SegShuffle keeps its block scan's values (and the owner form its output stage) in static
/// shared memory: the stage shrinks for large values, and values that leave no room are a clear
/// error for SegShuffle and another algorithm for `Auto`. (224-byte values overflowed the owner
/// form's 48 KiB before, and NVRTC failed for `Auto`.)
#[test]
fn seg_shuffle_fits_static_shared_memory_or_auto_takes_another() {
    let shape = |size, offsets_form| SegShape {
        offsets_form,
        ..sized(shape(false, false, false), size, size)
    };
    let auto = SegConfig::new(SegAlgorithm::Auto);
    let shuffle = SegConfig::new(SegAlgorithm::SegShuffle);
    for offsets_form in [false, true] {
        for size in [4, 8, 72, 216, 224, 256, 512] {
            let s = shape(size, offsets_form);
            assert_eq!(
                resolve(auto, s, 1000, 10).algorithm,
                SegAlgorithm::SegShuffle
            );
            let spec = seg_plan(shuffle, s, 0, 0).unwrap().variants().remove(0);
            let stage = if offsets_form {
                0
            } else {
                2 * (define(&spec, "R_STAGE") as usize + 1) * size
            };
            assert!(
                seg_static_smem(s, define(&spec, "R_BLOCK")) + stage <= STATIC_SMEM_LIMIT,
                "{size} bytes, offsets form {offsets_form}: {spec:?}"
            );
        }
        // Past SegShuffle's static arrays and SegMerge's (about 700 bytes): SegHeads by
        // offsets, Tb2Seg by u32 owners, SegHeads by u64 owners (turned into offsets) and by
        // u32 owners past Tb2Seg's data block.
        let huge = shape(1024, offsets_form);
        let want = match offsets_form {
            true => SegAlgorithm::SegHeads,
            false => SegAlgorithm::Tb2Seg,
        };
        let got = resolve(auto, huge, 1000, 10);
        assert_eq!(got.algorithm, want);
        if !offsets_form {
            assert_eq!(
                got.block,
                Some(32),
                "Tb2Seg's data block of 66 values fits 99 KiB"
            );
        }
        let wide = SegShape { wide: true, ..huge };
        assert_eq!(
            resolve(auto, wide, 1000, 10).algorithm,
            SegAlgorithm::SegHeads
        );
        let past_tb2 = resolve(auto, shape(2048, offsets_form), 1000, 10).algorithm;
        assert_eq!(past_tb2, SegAlgorithm::SegHeads);
        let err = seg_plan(shuffle, huge, 0, 0)
            .err()
            .expect("too large")
            .to_string();
        assert!(err.contains("use Auto"), "{err}");
    }
    // The default stage of small values is unchanged: a tile, at most 16 KiB.
    let spec = seg_plan(shuffle, shape(8, false), 0, 0)
        .unwrap()
        .variants()
        .remove(0);
    let tile = define(&spec, "R_BLOCK") * define(&spec, "R_ITEMS");
    assert_eq!(define(&spec, "R_STAGE"), tile);
}

/// The `extern "C" __global__` entry points of a kernel text: name, and each parameter's name
/// and type.
fn kernel_signatures(text: &str) -> Vec<(String, Vec<(String, String)>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("extern \"C\" __global__") {
        let decl = &rest[at..];
        let open = decl.find('(').expect("a parameter list");
        // `__launch_bounds__(...)` comes before the name: the list is the one after the name.
        let head = &decl[..open];
        let (name_end, params_at) = if head.trim_end().ends_with("__launch_bounds__") {
            let close = decl[open..].find(')').unwrap() + open;
            let next = decl[close..].find('(').unwrap() + close;
            (next, next)
        } else {
            (open, open)
        };
        let name = decl[..name_end]
            .split_whitespace()
            .last()
            .unwrap()
            .to_string();
        let close = decl[params_at..].find(')').unwrap() + params_at;
        let params = decl[params_at + 1..close]
            .split(',')
            .map(|p| {
                let p = p.trim();
                let cut = p
                    .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap();
                (p[cut + 1..].to_string(), p[..cut + 1].trim().to_string())
            })
            .collect();
        found.push((name, params));
        rest = &decl[close..];
    }
    found
}

/// Every kernel entry point in the kernel files is declared with a typed signature whose fields
/// are its parameters, in order; every declared entry point exists; every parameter is 64 bits
/// wide (a pointer or `r_size`), as the launches pass them.
#[test]
fn every_kernel_signature_matches_its_declaration() {
    #[allow(unused_mut)]
    let mut declared: Vec<(&str, &[&str])> = signatures();
    #[cfg(feature = "nccl")]
    declared.extend(crate::cluster::signatures());
    let mut in_files = std::collections::BTreeMap::new();
    for family in Family::ALL {
        for (file, text) in family.texts() {
            for (name, params) in kernel_signatures(text) {
                in_files.insert(name, (file, params));
            }
        }
    }
    assert!(in_files.len() >= 17, "{in_files:?}");
    for (name, (file, params)) in &in_files {
        let Some((_, fields)) = declared.iter().find(|(entry, _)| entry == name) else {
            panic!("{file}: kernel {name} has no declared signature");
        };
        let fields: Vec<&str> = fields.iter().map(|f| f.trim_start_matches("r#")).collect();
        let names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, fields, "{file}: the parameters of {name}");
        for (param, ty) in params {
            assert!(
                ty.contains('*') || ty.ends_with("r_size"),
                "{file}: {name}'s {param} is `{ty}`, not a pointer or r_size"
            );
        }
    }
    for (entry, _) in &declared {
        assert!(
            in_files.contains_key(*entry),
            "{entry} is in no kernel file"
        );
    }
}

/// SegPipeline: SegShuffle's kernel with the tile pipeline (`R_PIPE` stages, a producer warp
/// beside the block, the stages in dynamic shared memory before the offsets form's arrays, each
/// a tile of input items after their offset from a 16-byte boundary, rounded to 128 bytes);
/// stages 1 to 8, and a stage count for any other algorithm but SegMerge is refused.
#[test]
fn seg_pipeline_is_seg_shuffle_with_stages() {
    let plan = |config: SegConfig, shape: SegShape| seg_plan(config, shape, 0, 0);
    let offsets = shape(false, true, false);
    let pipeline = SegConfig::new(SegAlgorithm::SegPipeline);
    let base = plan(SegAlgorithm::SegShuffle.into(), offsets).unwrap();
    for stages in [1, 2, 8] {
        let p = plan(pipeline.stages(stages), offsets).unwrap();
        assert_eq!(define(&p.variants()[0], "R_PIPE"), stages);
        // 4-byte items lifted into 8-byte values: 256 x 8 items of 4 bytes a stage.
        assert_eq!(
            p.dynamic_smem(),
            base.dynamic_smem() + stages as usize * 8 * 1024
        );
    }
    assert_eq!(define(&base.variants()[0], "R_PIPE"), 0);
    // Items 4 bytes past a boundary: the stage holds them there, one more 128-byte line.
    let shifted = SegShape {
        item_shift: 4,
        ..offsets
    };
    let p = plan(pipeline.stages(1), shifted).unwrap();
    assert_eq!(define(&p.variants()[0], "R_ITEM_SHIFT"), 4);
    assert_eq!(p.dynamic_smem(), base.dynamic_smem() + 8 * 1024 + 128);
    // The owner form's dynamic shared memory is the stages alone.
    let owner = plan(pipeline, shape(false, false, false)).unwrap();
    assert_eq!(
        owner.dynamic_smem(),
        tuning::SEG_PIPE_STAGES as usize * 8 * 1024
    );
    // Large values: the defaults shrink (stages, then threads) into the budget.
    for size in [4, 8, 72, 128, 256, 512] {
        for offsets_form in [true, false] {
            let shape = sized(shape(false, offsets_form, false), size, size);
            let p = plan(pipeline, shape).unwrap();
            let smem = p.dynamic_smem() + seg_static_smem(shape, 256);
            assert!(smem <= tuning::SEG_PIPE_SMEM_BUDGET, "{size} bytes: {smem}");
            assert!(define(&p.variants()[0], "R_PIPE") >= 1);
        }
    }
    for stages in [0, 9] {
        let e = plan(pipeline.stages(stages), offsets).err().unwrap();
        assert!(e.to_string().contains("between 1 and 8"), "{e}");
    }
    // The producer warp rides beside the block: at most 992 threads of it.
    let p = plan(pipeline.block(992), offsets).unwrap();
    assert_eq!(define(&p.variants()[0], "R_BLOCK"), 992);
    for form in [offsets, shape(false, false, false)] {
        let e = plan(pipeline.block(1024), form).err().unwrap();
        assert!(e.to_string().contains("1056 threads"), "{e}");
    }
    assert!(plan(SegAlgorithm::SegShuffle.into(), offsets).is_ok());
    assert!(plan(
        SegConfig::new(SegAlgorithm::SegShuffle).block(1024),
        offsets
    )
    .is_ok());
    let e = plan(SegConfig::new(SegAlgorithm::SegShuffle).stages(2), offsets)
        .err()
        .unwrap();
    assert!(e.to_string().contains("stages"), "{e}");
}

/// The portable segmented plan: its tile is the run length times the block (a power of two),
/// its default block shrinks for large values until its shared memory fits any device, an
/// explicit block stays (past the static limit it is an error; past the dynamic, the device
/// refuses it at launch), and the knobs that do not apply are refused.
#[test]
fn portable_segmented_plans_fit_and_refuse() {
    let portable = SegConfig::default().portable();
    for offsets_form in [true, false] {
        for size in [1, 4, 8, 72, 512, 1024] {
            let shape = sized(shape(false, offsets_form, false), size, size);
            let plan = seg_plan(portable, shape, 1 << 20, 1000).unwrap();
            let spec = plan.variants().remove(0);
            let (block, run) = (define(&spec, "R_BLOCK"), define(&spec, "R_RUN"));
            assert!(block.is_power_of_two() && block >= 32, "{size}: {block}");
            assert_eq!(run, (64 / size).max(1) as u32, "{size}");
            assert_eq!(define(&spec, "R_ITEMS"), run);
            assert!(plan.dynamic_smem() <= 160 * 1024, "{size}");
        }
        // 1024 threads of f32 runs by offsets: 128 KiB of runs and marks, past what every
        // device allows but not past an H100's: the plan keeps the caller's block.
        let f32s = sized(shape(false, offsets_form, false), 4, 4);
        let plan = seg_plan(portable.block(1024), f32s, 1 << 20, 1000).unwrap();
        assert_eq!(define(&plan.variants().remove(0), "R_BLOCK"), 1024);
        assert!(!offsets_form || plan.dynamic_smem() > tuning::ANY_DEVICE_BLOCK_SMEM);
        let big = sized(shape(false, offsets_form, false), 1024, 1024);
        assert!(seg_plan(portable.block(1024), big, 1 << 20, 1000).is_err());
    }
    let shape = shape(true, true, true);
    for refused in [
        portable.block(96),
        portable.items_per_thread(8),
        portable.stages(2),
        SegConfig::new(SegAlgorithm::SegMerge).portable(),
        SegConfig::new(SegAlgorithm::Tb2Seg).portable(),
    ] {
        assert!(seg_plan(refused, shape, 100, 10).is_err(), "{refused:?}");
    }
    let spec = seg_plan(portable, shape, 100, 10)
        .unwrap()
        .variants()
        .remove(0);
    assert_eq!(spec.family, Family::SegPortable);
    assert_eq!(tuning::seg_portable_group(16_384, 396), 8);
    assert_eq!(tuning::seg_portable_group(1000, 396), 1);
}

/// `Gpu::prepare_segmented` compiles, for `Auto`, SegBlocks' and SegHeads' kernels too where a
/// band holds the shape (CSR offsets, no knob, the sizes of a band), SegShuffle's alone
/// elsewhere; a concrete algorithm and the portable mode their own.
#[test]
fn prepared_plans_include_seg_heads_where_a_band_holds_the_shape() {
    let families = |config: SegConfig, shape: SegShape| -> Vec<Family> {
        seg_plans_to_prepare(config, shape)
            .unwrap()
            .iter()
            .map(|plan| plan.variants()[0].family)
            .collect()
    };
    let auto = SegConfig::default();
    let (shuffle, heads) = (Family::SegShuffle, Family::SegHeads);
    let blocks = Family::SegBlocks;
    let f32_offsets = sized(shape(false, true, false), 4, 4);
    let f32_wide = sized(shape(true, true, false), 4, 4);
    let lifted = sized(shape(false, true, true), 4, 8);
    // SegBlocks at each of its four blocks, validated or trusted, for lifted items; values read
    // as they are have SegHeads' bands only.
    for config in [auto, auto.trusted()] {
        assert_eq!(
            families(config, lifted),
            [shuffle, blocks, blocks, blocks, blocks, heads]
        );
        for shape in [f32_offsets, f32_wide] {
            assert_eq!(families(config, shape), [shuffle, heads]);
        }
    }
    // No band: owners, other sizes, lifted by u64 offsets, a knob set, a concrete algorithm.
    assert_eq!(
        families(auto, sized(shape(false, false, false), 4, 4)),
        [shuffle]
    );
    assert_eq!(
        families(auto, sized(shape(false, true, false), 16, 16)),
        [shuffle]
    );
    assert_eq!(
        families(auto, sized(shape(true, true, true), 4, 8)),
        [shuffle]
    );
    assert_eq!(families(auto.block(128), f32_offsets), [shuffle]);
    let explicit = SegConfig::new(SegAlgorithm::SegShuffle);
    assert_eq!(families(explicit, f32_offsets), [shuffle]);
    assert_eq!(
        families(SegConfig::new(SegAlgorithm::SegHeads), f32_offsets),
        [heads]
    );
    assert_eq!(
        families(auto.portable(), f32_offsets),
        [Family::SegPortable]
    );
}

/// `Auto` takes SegBlocks for calls by CSR offsets of items lifted from 4 into 8 bytes in the
/// bands of `tuning::SEG_BLOCKS_BANDS` (from 2^26 items, and narrower from 30·2^20), trusted or
/// validated, with no knob set; values read as they are (f32, 8-byte values, u32 or u64
/// offsets, even where SegBlocks is fastest on segments of even lengths: heavy tails cost it
/// more), the owner form and other sizes keep SegShuffle or SegHeads.
#[test]
fn auto_takes_seg_blocks_for_long_segments() {
    let trusted = SegConfig::new(SegAlgorithm::Auto).trusted();
    let f32_offsets = sized(shape(false, true, false), 4, 4);
    let f32_wide = sized(shape(true, true, false), 4, 4);
    let affine_offsets = sized(shape(false, true, false), 8, 8);
    let affine_wide = sized(shape(true, true, false), 8, 8);
    let lifted_offsets = sized(shape(false, true, true), 4, 8);
    let lifted_wide = sized(shape(true, true, true), 4, 8);
    let f32_owners = sized(shape(false, false, false), 4, 4);
    let (blocks, heads) = (SegAlgorithm::SegBlocks, SegAlgorithm::SegHeads);
    let shuffle = SegAlgorithm::SegShuffle;
    let n = 1usize << 26;
    // (values and layout, n, segments, Auto's choice)
    let m = 30usize << 20;
    let cases = [
        ("f32 u32", f32_offsets, n, n / 1029, heads),
        ("f32 u32", f32_offsets, n, n / 16513, shuffle),
        ("f32 u32", f32_offsets, m, m / 4096, shuffle),
        ("f32 u64", f32_wide, n, n / 1029, heads),
        ("f32 u64", f32_wide, n, n / 33_026, shuffle),
        ("8 B u32", affine_offsets, n, n / 514, heads),
        ("8 B u32", affine_offsets, n, n / 8058, shuffle),
        ("8 B u64", affine_wide, n, n / 4083, heads),
        ("8 B u64", affine_wide, n, n / 47_900, shuffle),
        ("4 B lifted to 8", lifted_offsets, n, n / 1_082_401, blocks),
        ("4 B lifted to 8", lifted_offsets, n, n / 1029, blocks),
        ("4 B lifted to 8", lifted_offsets, n, n / 999, heads),
        ("4 B lifted to 8", lifted_offsets, n, n / 514, heads),
        ("4 B lifted to 8", lifted_offsets, 32 << 21, 32, blocks),
        ("4 B lifted to 8", lifted_offsets, n, 1, blocks),
        ("4 B lifted to 8", lifted_offsets, m, 1, blocks),
        ("4 B lifted to 8", lifted_offsets, m, m / 4000, blocks),
        ("4 B lifted to 8", lifted_offsets, m, m / 2048, heads),
        ("4 B lifted to 8", lifted_offsets, m - 1, m / 4000, heads),
        ("4 B lifted to 8, u64", lifted_wide, n, n / 4096, shuffle),
        ("f32 owners", f32_owners, n, n / 4096, shuffle),
    ];
    for (what, shape, n, segments, want) in cases {
        let got = resolve(trusted, shape, n, segments).algorithm;
        assert_eq!(got, want, "{what}: {n} items, {segments} segments, trusted");
        let validated = resolve(SegConfig::new(SegAlgorithm::Auto), shape, n, segments);
        assert_eq!(
            validated.algorithm, want,
            "{what}: {n} items, {segments} segments"
        );
    }
    // A knob set: no band.
    assert_eq!(
        resolve(trusted, lifted_offsets, n, n / 4096).algorithm,
        blocks
    );
    let knob = trusted.block(256);
    assert_eq!(
        resolve(knob, lifted_offsets, n, n / 4096).algorithm,
        shuffle
    );
}

/// SegBlocks' default block follows the mean segment length; a block asked for stays.
#[test]
fn seg_blocks_block_follows_the_mean_length() {
    use tuning::seg_blocks_block;
    // (items, segments, item bytes, block): one warp below a mean length of 1536 items of up to
    // 4 bytes, 512 of more; then 64, 128 and 256 threads by the mean length alone.
    let cases = [
        (1 << 26, (1 << 26) / 1024, 4, 32),
        (1535, 1, 4, 32),
        (1536, 1, 4, 64),
        (1535, 1, 1, 32),
        (511, 1, 8, 32),
        (512, 1, 8, 64),
        (511, 1, 16, 32),
        (1 << 26, (1 << 26) / 1024, 8, 64),
        (3071, 1, 4, 64),
        (3072, 1, 4, 128),
        (12_287, 1, 8, 128),
        (12_288, 1, 4, 256),
        (0, 0, 4, 256),
        (5, 10, 4, 32),
    ];
    for (n, segments, bytes, block) in cases {
        assert_eq!(
            seg_blocks_block(n, segments, bytes),
            block,
            "{n} items of {bytes} bytes in {segments} segments"
        );
    }
    let f32_offsets = sized(shape(false, true, false), 4, 4);
    let blocks = SegConfig::new(SegAlgorithm::SegBlocks);
    let block_of = |config: SegConfig, n, segments| {
        define(
            &seg_plan(config, f32_offsets, n, segments)
                .unwrap()
                .variants()[0],
            "R_BLOCK",
        )
    };
    assert_eq!(block_of(blocks, 1 << 26, 1 << 16), 32);
    assert_eq!(block_of(blocks, 1 << 26, 1 << 15), 64);
    assert_eq!(block_of(blocks, 1 << 26, 1 << 13), 128);
    assert_eq!(block_of(blocks, 1 << 26, 1 << 10), 256);
    assert_eq!(block_of(blocks.block(512), 1 << 26, 1 << 16), 512);
}

/// SegBlocks' registers are budgeted for 1536 resident threads below 256-thread blocks (one-warp
/// blocks: the SM's 32, 1024 threads) and 1280 from there, for values of up to 8 bytes: the
/// kernel's second launch bound, with the kernel left to ptxas as its fallback; no budget (a
/// bound of 1 is none) for large blocks and values.
#[test]
fn seg_blocks_budgets_registers_for_small_values() {
    let variants = |block: u32, shape| {
        seg_plan(
            SegConfig::new(SegAlgorithm::SegBlocks).block(block),
            shape,
            1 << 26,
            1 << 16,
        )
        .unwrap()
        .variants()
        .iter()
        .map(|spec| define(spec, "R_MIN_BLOCKS"))
        .collect::<Vec<_>>()
    };
    let f32_offsets = sized(shape(false, true, false), 4, 4);
    let affine_wide = sized(shape(true, true, false), 8, 8);
    let lifted = sized(shape(false, true, true), 4, 8);
    for shape in [f32_offsets, affine_wide, lifted] {
        assert_eq!(variants(32, shape), [32, 0]);
        assert_eq!(variants(64, shape), [24, 0]);
        assert_eq!(variants(128, shape), [12, 0]);
        assert_eq!(variants(160, shape), [9, 0]);
        assert_eq!(variants(256, shape), [5, 0]);
        assert_eq!(variants(512, shape), [2, 0]);
        assert_eq!(variants(1024, shape), [0]);
    }
    assert_eq!(variants(64, sized(shape(false, true, false), 12, 12)), [0]);
    assert_eq!(variants(256, sized(shape(false, true, false), 16, 16)), [0]);
}

#[test]
fn seg_heads_defaults_and_checks() {
    let heads = SegConfig::new(SegAlgorithm::SegHeads);
    let plan = |config: SegConfig, shape| seg_plan(config, shape, 0, 0);
    let items_of =
        |config: SegConfig, shape| define(&plan(config, shape).unwrap().variants()[0], "R_ITEMS");
    let items_and_block = |shape| {
        let spec = plan(heads, shape).unwrap().variants().remove(0);
        (define(&spec, "R_ITEMS"), define(&spec, "R_BLOCK"))
    };
    // Shuffle's 64 bytes of input items a thread, at most 32 (a thread's bits in two words).
    let f32s = sized(shape(false, true, false), 4, 4);
    assert_eq!(items_of(heads, f32s), 16);
    assert_eq!(plan(heads, f32s).unwrap().dynamic_smem(), 256 * 16 * 4);
    assert_eq!(items_of(heads, sized(shape(false, true, false), 1, 1)), 32);
    // Items lifted into wider values: the items a thread of 256 threads, in blocks of 128 (f32
    // into 8-byte values: 16 items).
    let f32_to_8 = sized(shape(false, true, true), 4, 8);
    assert_eq!(items_and_block(f32_to_8), (16, 128));
    // Lifted bytes into 32-byte values: the tile's values of 256 threads within 96 KiB, and with
    // the static arrays (2.5 KiB: the block scan's values a slot a warp and one) within 99 KiB,
    // in blocks of 128.
    let bytes_to_32 = sized(shape(false, true, true), 1, 32);
    assert_eq!(items_and_block(bytes_to_32), (12, 128));
    // Values past 512 bytes: one item a thread in blocks of one warp (1 KiB: 1.12x faster than
    // 64 threads on an H100; tuning::LARGE_VALUE_BYTES).
    let kib = |bytes| sized(shape(false, true, false), bytes, bytes);
    assert_eq!(items_and_block(kib(1024)), (1, 32));
    assert_eq!(items_and_block(kib(2048)), (1, 32));
    // 512-byte values: one item a thread, the default block halved to 128 threads.
    let records = sized(shape(false, true, false), 512, 512);
    assert_eq!(items_and_block(records), (1, 128));
    // Values whose static arrays alone pass 99 KiB: planned (the launch decides), no overflow.
    let huge = sized(shape(false, true, false), 4096, 4096);
    assert_eq!(
        define(&plan(heads, huge).unwrap().variants()[0], "R_BLOCK"),
        32
    );
    assert_eq!(items_of(heads.block(64), bytes_to_32), 32);
    // Knobs: items per thread up to 32, no grid (a block per tile).
    assert_eq!(items_of(heads.items_per_thread(5), f32s), 5);
    assert!(plan(heads.items_per_thread(33), f32s).is_err());
    assert!(plan(heads.grid(4), f32s).is_err());
    assert!(plan(heads.stages(2), f32s).is_err());
    // Asked for owners, Auto's plan (SegShuffle's kernel).
    let owners = plan(heads, sized(shape(false, false, false), 4, 4)).unwrap();
    assert_eq!(owners.variants()[0].family, Family::SegShuffle);
    // SegShuffle's limits: with u64 offsets fewer than 2^32 - 1 items.
    let wide = sized(shape(true, true, false), 4, 4);
    assert_eq!(
        plan(heads, wide).unwrap().limits(),
        Some((u32::MAX as u64 - 1, u32::MAX as u64))
    );
}

/// `Auto`'s segmented plans (and the portable mode's) keep a block's shared memory — the
/// dynamic part and each family's model of its static arrays — within what every device from
/// sm_80 on allows, for every value size and lifted input below (`Auto` takes SegMerge here
/// only for values past SegShuffle's static limit that SegMerge's static arrays hold, 600 bytes
/// by offsets; its defaults cannot fit past about 420 bytes: the NVRTC test
/// `seg_merge_and_seg_heads_defaults_fit_every_device`; and SegHeads past both, by offsets and
/// for items lifted into 700-byte values by owners): a lifted input's items are
/// sized by the item only as far as that tile fits, and SegShuffle's default items and block
/// halve for large values. (16 f32 items a thread lifted into 112-byte values asked
/// for 500 KiB, and `Auto`'s launch failed on an H100.) Values of up to 64 bytes keep the
/// defaults of 256 threads and 64 bytes of items a thread.
#[test]
fn auto_segmented_plans_fit_every_device() {
    let budget = tuning::ANY_DEVICE_BLOCK_SMEM;
    let mut families = std::collections::BTreeSet::new();
    let sizes = [
        1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 68, 112, 128, 132, 200, 244, 256, 288, 300,
    ];
    for offsets_form in [true, false] {
        for in_size in [1, 2, 4, 8, 16] {
            for m_size in sizes.into_iter().chain([432, 512, 560, 600, 700]) {
                if m_size < in_size {
                    continue;
                }
                let s = sized(
                    shape(false, offsets_form, in_size < m_size),
                    in_size,
                    m_size,
                );
                for (n, segments) in [(1 << 20, 1 << 20), (1 << 20, 1000), (1 << 26, 1 << 20)] {
                    for config in [SegConfig::default(), SegConfig::default().portable()] {
                        let plan = seg_plan(config, s, n, segments).unwrap();
                        let spec = plan.variants().remove(0);
                        let block = define(&spec, "R_BLOCK");
                        let smem = plan.dynamic_smem()
                            + match spec.family {
                                Family::SegShuffle => seg_static_smem(s, block),
                                Family::SegHeads => {
                                    heads::static_smem(block, s.items.flagged_value_bytes())
                                }
                                Family::SegMerge => {
                                    merge::static_smem(block, define(&spec, "R_RING"), s)
                                }
                                Family::SegPortable => portable::seg_static_smem(s, block),
                                family => panic!("Auto planned {family:?}"),
                            };
                        families.insert(format!("{:?}", spec.family));
                        assert!(
                            smem <= budget,
                            "{in_size} -> {m_size} bytes, offsets form {offsets_form}, {n} \
                             items in {segments} segments, {config:?}: {smem} bytes ({spec:?})"
                        );
                    }
                }
            }
        }
    }
    // Every family Auto and the portable mode plan was counted with its own static model.
    assert_eq!(
        families.into_iter().collect::<Vec<_>>(),
        ["SegHeads", "SegMerge", "SegPortable", "SegShuffle"]
    );
    let auto_spec = |s| {
        let plan = seg_plan(SegConfig::default(), s, 1 << 20, 1000).unwrap();
        let spec = plan.variants().remove(0);
        assert_eq!(spec.family, Family::SegShuffle);
        (define(&spec, "R_BLOCK"), define(&spec, "R_ITEMS"))
    };
    for offsets_form in [true, false] {
        for size in sizes.into_iter().filter(|&s| s <= 64) {
            let s = sized(shape(false, offsets_form, false), size, size);
            assert_eq!(
                auto_spec(s),
                (256, tuning::shuffle_items(size)),
                "{size} bytes"
            );
        }
    }
    // Lifted f32 into 8 bytes keeps 16 items a thread; lifted bytes into u32, 32 (half the
    // 64 that the item asks for, twice the monoid's 16).
    assert_eq!(auto_spec(sized(shape(false, true, true), 4, 8)), (256, 16));
    assert_eq!(auto_spec(sized(shape(false, true, true), 1, 4)), (256, 32));
    // 132-byte values: fewer items a thread (whole vectors need 4), not fewer threads.
    assert_eq!(auto_spec(sized(shape(false, true, false), 132, 132)).0, 256);
}

/// Tb2's and Tb2Seg's slots lie an odd number of alignment units apart for values of 64 bytes or
/// more (kernels/common.cuh's `R_SLOT_PITCH`), a value apart below; segmented `Auto`'s Tb2Seg
/// block keeps the data block it had with slots a value apart at 128 bytes, 512 and 1 KiB.
#[test]
fn tree_slots_are_an_odd_number_of_units_apart() {
    let with = |m_size, m_align| Items {
        m_align,
        ..items(m_size)
    };
    for (size, align, pitch) in [
        (4, 4, 4),
        (16, 8, 16),
        (60, 4, 60),
        (64, 8, 72),
        (120, 8, 120),
        (1024, 8, 1032),
        (1024, 16, 1040),
        (1024, 64, 1088),
    ] {
        assert_eq!(tree::slot_pitch(&with(size, align)), pitch, "{size} bytes");
    }
    for (size, block) in [(128, 256), (512, 64), (1024, 32)] {
        let items = with(size, 8);
        let within = tree::tb2_seg_block_within(&items, tuning::ANY_DEVICE_BLOCK_SMEM);
        assert_eq!(within, Some(block), "{size} bytes");
    }
}
