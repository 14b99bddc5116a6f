//! SegShuffle's kernel (and SegPipeline's, the same kernel fed by a producer warp's bulk copies:
//! kernels/seg_shuffle.cu) and the portable segmented one (kernels/seg_portable.cu) on the
//! emulator. `tests/emulated_kernels.rs` and `tests/emulated_seg_pipeline.rs` drive [`Emulated`]
//! case by case (the layout checks, lifted items); [`check_filling`] runs the layouts of
//! `filling` around a tile (lifted items too), [`check_garbage_offsets`] trusted garbage, and
//! [`seg_shuffle_kernel`] with [`check_layouts`] any padding-free monoid over a list of segment
//! lengths, against the sequential fold.

use super::{bytes_of, emulated_text, index_bytes, segmented_results, values_from, Build, Order};
use crate::layouts::{filling, offsets_of, owners_of};
use crate::monoids::lang::ArgMax;
use crate::{Affine, Random, TestRng};
use reduce_core::Lift;
use reduce_core::{fold_by_owner, fold_segments, CudaMonoid, Monoid, SegIndex};
use reduce_cuda::testing::{
    seg_dynamic_smem, seg_dynamic_smem_at, seg_dynamic_smem_lifted_at, seg_kernel_source_for,
    seg_kernel_variants_at, seg_kernel_variants_for, seg_kernel_variants_lifted_at,
};
use reduce_cuda::{KernelSource, SegAlgorithm, SegConfig};
use std::fmt::Debug;

/// The host side of a SegShuffle or SegMerge launch (`#include`d after the kernel text).
const SEG_SHUFFLE_MAIN_CPP: &str = include_str!("../../emu/seg_shuffle_main.cpp");
const SEG_PORTABLE_MAIN_CPP: &str = include_str!("../../emu/seg_portable_main.cpp");

/// A SegShuffle launch compiled for the emulator (SegPipeline's too, and SegMerge's: the same
/// cases and results; `tile` is then a tile's path steps, items and segment ends).
pub struct Emulated {
    build: Build,
    /// The algorithm's name.
    pub name: &'static str,
    pub threads: u64,
    pub tile: u64,
    pub offsets_form: bool,
    pub m_size: usize,
    /// u64 layout entries (else u32).
    pub wide: bool,
    /// The launch's dynamic shared memory per block (what the library passes).
    pub smem: u64,
}

/// One launch's inputs: the items' bytes, the layout (offsets or owners), segments and grid,
/// and the layout check the launch makes.
pub struct Case {
    pub n: u64,
    pub items: Vec<u8>,
    /// Offsets or owners (written as the kernel's index type).
    pub index: Vec<u64>,
    pub segments: u64,
    pub grid: u64,
    /// The layout check (the kernel's `check`: CHECK_NONE, CHECK_FUSED or CHECK_EARLY).
    pub check: u64,
}

/// The kernel's layout checks (kernels/seg_common.cuh, `R_CHECK_*`).
pub const CHECK_NONE: u64 = 0;
pub const CHECK_FUSED: u64 = 1;
pub const CHECK_EARLY: u64 = 2;

impl Emulated {
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        cxx: &str,
        source: KernelSource,
        tag: &str,
        config: SegConfig,
        offsets_form: bool,
        wide: bool,
        m_size: usize,
        smem: usize,
    ) -> Emulated {
        let (threads, items) = (config.block.unwrap(), config.items_per_thread.unwrap());
        let text = emulated_text(&source);
        let tag = format!(
            "{}_{tag}_b{threads}_k{items}_{}{}",
            config.algorithm.name(),
            if offsets_form { "offsets" } else { "owner" },
            if wide { "_u64" } else { "" }
        );
        let main = ("seg_shuffle_main.cpp", SEG_SHUFFLE_MAIN_CPP);
        let build = Build::compile(cxx, &text, main, &tag);
        Emulated {
            build,
            name: config.algorithm.name(),
            threads: threads as u64,
            tile: threads as u64 * items as u64,
            offsets_form,
            m_size,
            wide,
            smem: smem as u64,
        }
    }

    /// Runs the cases in one process, the fibers of each block in `order`; per case (status,
    /// the segments' bytes). Panics if the kernel fails.
    pub fn run(&self, cases: &[Case], order: Order) -> Vec<(u64, Vec<u8>)> {
        self.try_run(cases, order).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Emulated::run`], or how the kernel failed (the emulator's or AddressSanitizer's report).
    pub fn try_run(&self, cases: &[Case], order: Order) -> Result<Vec<(u64, Vec<u8>)>, String> {
        let mut input = Vec::new();
        for c in cases {
            let estimate = (c.segments * self.tile).div_ceil(c.n.max(1));
            for h in [
                c.n,
                c.segments,
                c.index.len() as u64,
                c.grid,
                estimate,
                self.smem,
                c.check,
            ] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            input.extend_from_slice(&index_bytes(&c.index, self.wide));
        }
        let bytes = self.build.try_execute(input, order)?;
        let lens = cases.iter().map(|c| c.segments as usize * self.m_size);
        segmented_results(&bytes, lens)
    }
}

/// Runs `cases` on `kernel` in every fiber order: each case's status is a bad layout's (not all
/// ones) exactly where `bad` says; `what` names the cases in a failure.
pub fn check_flags(kernel: &Emulated, cases: &[Case], bad: &[bool], what: &str) {
    for order in Order::ALL {
        let results = kernel.run(cases, order);
        for (k, ((status, _), &want)) in results.iter().zip(bad).enumerate() {
            assert_eq!(
                *status != u64::MAX,
                want,
                "{what}, fibers {order:?}, case {k} (status {status:#x}): layout {:?}",
                cases[k].index
            );
        }
    }
}

/// `source` for items `shift` bytes past a 16-byte boundary: SegShuffle's and SegPipeline's
/// kernels are specialised for it (their text says where the emulator puts the items); SegMerge's
/// (whose R_PLAIN_ITEMS kernel reads them at any offset) gets the offset defined before its text.
fn items_at(mut source: KernelSource, shift: u64) -> KernelSource {
    if !source.text.contains("#define R_ITEM_SHIFT ") {
        source.text = format!("#define R_ITEM_SHIFT {shift}\n{}", source.text);
    }
    source
}

/// `config`'s kernel (SegShuffle, SegPipeline or SegMerge) for monoid `M`, layouts of index type
/// `I`, items `shift` bytes past a 16-byte boundary, its text changed by `edit` first (a test's
/// mutation; `tag` names it).
pub fn seg_kernel_edited<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: SegConfig,
    offsets_form: bool,
    shift: u64,
    tag: &str,
    edit: impl FnOnce(&mut String),
) -> Emulated {
    let source = seg_kernel_variants_at::<M, I>(config, offsets_form, shift)
        .unwrap()
        .remove(0);
    let mut source = items_at(source, shift);
    edit(&mut source.text);
    let smem = seg_dynamic_smem_at::<M, I>(config, offsets_form, shift).unwrap();
    let tag = format!("{tag}_{}_at{shift}", M::CUDA_NAME);
    let size = std::mem::size_of::<M>();
    Emulated::build(cxx, source, &tag, config, offsets_form, I::WIDE, size, smem)
}

/// SegShuffle for `M` with `threads` x `items` per block, layouts of index type `I`; `variant`
/// picks among `seg_kernel_variants_for` (u32 offsets have two).
pub fn seg_shuffle_kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    threads: u32,
    items: u32,
    offsets_form: bool,
    variant: usize,
) -> Emulated {
    let config = SegConfig::new(SegAlgorithm::SegShuffle)
        .block(threads)
        .items_per_thread(items);
    let source: KernelSource = if variant == 0 {
        seg_kernel_source_for::<M, I>(config, offsets_form).unwrap()
    } else {
        seg_kernel_variants_for::<M, I>(config, offsets_form)
            .unwrap()
            .swap_remove(variant)
    };
    let smem = seg_dynamic_smem::<M>(config, offsets_form).unwrap();
    let tag = format!("{}_v{variant}", M::CUDA_NAME);
    let size = std::mem::size_of::<M>();
    Emulated::build(cxx, source, &tag, config, offsets_form, I::WIDE, size, smem)
}

/// Every layout of `layouts` (none may be without items or segments: the runtime does
/// not launch for those), grids 1, 2, 3 and one block per tile, the three layout checks
/// in turn, fibers in every order: each segment equals the fold, and no valid layout is
/// reported bad.
pub fn check_layouts<M: CudaMonoid + Random>(
    kernel: &Emulated,
    layouts: &[(String, Vec<u64>)],
    seed: u64,
) {
    let mut rng = TestRng::new(seed);
    let (mut cases, mut expected, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (name, lengths) in layouts {
        let offsets = offsets_of(lengths);
        let n = *offsets.last().unwrap();
        assert!(
            n > 0 && !lengths.is_empty(),
            "{name}: not launched by the runtime"
        );
        let items = M::random_vec(n as usize, rng.next_u64());
        let want = fold_segments(&items, &offsets).unwrap();
        let index = if kernel.offsets_form {
            offsets
        } else {
            owners_of(lengths)
        };
        let tiles = n.div_ceil(kernel.tile);
        for grid in [1, 2, 3, tiles] {
            if grid > tiles {
                continue;
            }
            let checks = if kernel.offsets_form { 3 } else { 2 };
            cases.push(Case {
                n,
                items: bytes_of(&items),
                index: index.clone(),
                segments: lengths.len() as u64,
                grid,
                check: [CHECK_NONE, CHECK_FUSED, CHECK_EARLY][cases.len() % checks],
            });
            expected.push(want.clone());
            names.push(format!("{name}, grid {grid}"));
        }
    }
    for order in Order::ALL {
        let results = kernel.run(&cases, order);
        for ((name, want), (status, bytes)) in names.iter().zip(&expected).zip(&results) {
            let got: Vec<M> = values_from(bytes);
            let first_bad = got.len().min(want.len());
            let first_bad = (0..first_bad)
                .find(|&s| got[s] != want[s])
                .unwrap_or(first_bad);
            assert!(
                got == *want,
                "{} emulated ({}, {}, tile {}, fibers {order:?}): {name}: segment {first_bad} \
                 of {} (got {} values) differs from the fold",
                M::CUDA_NAME,
                if kernel.offsets_form {
                    "offsets"
                } else {
                    "owner"
                },
                if kernel.wide { "u64" } else { "u32" },
                kernel.tile,
                want.len(),
                got.len()
            );
            assert_eq!(*status, u64::MAX, "{name}: a valid layout reported bad");
        }
    }
    eprintln!(
        "{}: {} emulated launches equal to the fold, fibers in every order",
        M::CUDA_NAME,
        cases.len()
    );
}

/// Every layout of [`filling`] at sizes around the tile, several grids, against the fold of the
/// lifted items (`lift`: `|x, _| x` for the monoid's own values), the layout checks in turn,
/// with the fibers in every order.
pub fn check_filling<X: reduce_cuda::DeviceCopy, M: Monoid + PartialEq + Debug>(
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
            let lifted: Vec<M> = crate::lifted_by(&items, &lift);
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
        "{} ({}, {}, {} bytes, block {threads}, {per_thread} items per thread): {} launches \
         equal to the fold, fibers in every order",
        kernel.name,
        if kernel.offsets_form {
            "offsets"
        } else {
            "owners"
        },
        if kernel.wide { "u64" } else { "u32" },
        kernel.m_size,
        cases.len()
    );
}

/// `config`'s kernel (offsets form, u32 offsets) for ArgMax lifted from f32 items 12 bytes past a
/// 16-byte boundary into 8-byte (value, index) pairs, built as `tag`, through [`check_filling`]
/// on small whole logits (many ties: the first index must win).
pub fn check_lifted_argmax(cxx: &str, config: SegConfig, tag: &str, seed: u64) {
    let source = seg_kernel_variants_lifted_at::<ArgMax, f32, u32>(config, true, 12)
        .unwrap()
        .remove(0);
    let source = items_at(source, 12);
    let smem = seg_dynamic_smem_lifted_at::<ArgMax, f32, u32>(config, true, 12).unwrap();
    let kernel = Emulated::build(cxx, source, tag, config, true, false, 8, smem);
    let random = |n: usize, seed: u64| -> Vec<f32> {
        let mut rng = TestRng::new(seed);
        (0..n).map(|_| rng.range(0, 40) as f32 - 20.0).collect()
    };
    check_filling(&kernel, random, <ArgMax as Lift<f32>>::lift, seed);
}

/// Runs `kernel` (Affine, offsets form) on trusted garbage layouts, the fibers in every order:
/// any result, but every launch finishes and stays in bounds (AddressSanitizer aborts the
/// process on an out-of-bounds access). Entries spread up to a quarter of the items, the items,
/// u32::MAX, and with `far` (u64 layouts) past the u32 range; half of them sorted (but not from
/// 0 to n); and all 0.
pub fn check_garbage_offsets(kernel: &Emulated, far: bool, seed: u64) {
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
    // A zeroed buffer as the offsets: no segment holds any tile's last item, and the marks of
    // the first block's tiles read every entry (more than a batch of them).
    let n = 9 * kernel.tile + 5;
    for grid in [1, 3] {
        cases.push(Case {
            n,
            items: bytes_of(&Affine::random_vec(n as usize, rng.next_u64())),
            index: vec![0; 3 * n as usize + 1],
            segments: 3 * n,
            grid,
            check: CHECK_NONE,
        });
    }
    for order in Order::ALL {
        assert_eq!(kernel.run(&cases, order).len(), cases.len());
    }
}

/// An owner-form kernel with bad owners that ask each tile for long identity fills: tiles whose
/// owners jump between 0 and the last of 20–40 tiles' worth of segments, random owners, and a
/// block of four tiles whose two long fills (35 and 19 tiles of ids, 40 tiles of segments)
/// overlap. Fills past the free allowance take the launch's budget: every launch must finish in
/// bounds with the budget word left 0 (the driver's check) and report the first owner below the
/// one before it, and in the four tiles' case the second fill, past the budget, must not be made
/// (ids it alone would write keep the output's poison).
pub fn check_garbage_owners(kernel: &Emulated, seed: u64) {
    let t = kernel.tile;
    let mut rng = TestRng::new(seed);
    let mut cases = Vec::new();
    for n in [t * 5 + 3, t * 3] {
        let segments = rng.range(20 * t, 40 * t);
        let jumping: Vec<u64> = (0..n)
            .map(|i| {
                if (i / t).is_multiple_of(2) {
                    0
                } else {
                    segments - 1
                }
            })
            .collect();
        let random: Vec<u64> = (0..n).map(|_| rng.range(0, segments - 1)).collect();
        for index in [jumping, random] {
            cases.push(Case {
                n,
                items: bytes_of(&Affine::random_vec(n as usize, rng.next_u64())),
                index,
                segments,
                grid: rng.range(1, n.div_ceil(t)),
                check: CHECK_FUSED,
            });
        }
    }
    // One block: tile 1 fills [t, 36t) within the budget, tile 3 would fill [21t, 40t - 1)
    // past it (35t + 19t > 40t): ids from 38t on are then written by nobody.
    let segments = 40 * t;
    let owner_of_tile = [0, 36 * t, 20 * t, segments - 1];
    cases.push(Case {
        n: 4 * t,
        items: bytes_of(&Affine::random_vec(4 * t as usize, rng.next_u64())),
        index: (0..4 * t)
            .map(|i| owner_of_tile[(i / t) as usize])
            .collect(),
        segments,
        grid: 1,
        check: CHECK_FUSED,
    });
    let first_drop = |o: &[u64]| (1..o.len()).find(|&i| o[i] < o[i - 1]).unwrap() as u64;
    let poison = [0xa5u8; 8];
    for order in Order::ALL {
        let got = kernel.run(&cases, order);
        assert_eq!(got.len(), cases.len());
        for ((status, _), case) in got.iter().zip(&cases) {
            assert_eq!(
                *status,
                first_drop(&case.index),
                "fibers {order:?}: the first bad owner"
            );
        }
        let (_, out) = got.last().unwrap();
        let unwritten = (38 * t..segments - 1)
            .filter(|&s| out[8 * s as usize..8 * s as usize + 8] == poison)
            .count();
        assert_eq!(
            unwritten as u64,
            segments - 1 - 38 * t,
            "fibers {order:?}: a fill past the budget was made"
        );
    }
}

/// A portable segmented reduction (kernels/seg_portable.cu) compiled for the emulator.
pub struct EmulatedSegPortable {
    build: Build,
    m_size: usize,
    wide: bool,
    /// The launch's dynamic shared memory per block (what the library passes).
    smem: u64,
    /// Items per tile (threads x run).
    pub tile: u64,
}

/// One portable segmented launch: the items' bytes and count, the layout (offsets or owners,
/// written as the kernel's index type), segments, grid, tiles per node, and whether the owners
/// are checked.
pub struct SegPortableCase {
    pub n: u64,
    pub items: Vec<u8>,
    pub index: Vec<u64>,
    pub segments: u64,
    pub grid: u64,
    pub group: u64,
    pub check: bool,
}

/// The portable segmented kernel of `source` (a `SegConfig::portable` translation unit) for
/// layouts of u64 entries when `wide`, with `smem` bytes of dynamic shared memory and tiles of
/// `tile` items, tagged `tag`.
pub fn seg_portable_kernel(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    m_size: usize,
    wide: bool,
    smem: usize,
    tile: u64,
) -> EmulatedSegPortable {
    let tag = format!("seg_portable_{tag}");
    let main = ("seg_portable_main.cpp", SEG_PORTABLE_MAIN_CPP);
    let build = Build::compile(cxx, &emulated_text(source), main, &tag);
    EmulatedSegPortable {
        build,
        m_size,
        wide,
        smem: smem as u64,
        tile,
    }
}

impl EmulatedSegPortable {
    /// Runs the launches in one process, the fibers of each block in `order`; per launch the
    /// status it handed out and the segments' bytes.
    pub fn run(&self, cases: &[SegPortableCase], order: Order) -> Vec<(u64, Vec<u8>)> {
        let mut input = Vec::new();
        for c in cases {
            let header = [
                c.n,
                c.segments,
                c.index.len() as u64,
                c.grid,
                c.group,
                self.smem,
                c.check as u64,
            ];
            for h in header {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            input.extend_from_slice(&index_bytes(&c.index, self.wide));
        }
        let bytes = self.build.execute(input, order);
        let lens = cases.iter().map(|c| c.segments as usize * self.m_size);
        segmented_results(&bytes, lens).unwrap_or_else(|e| panic!("{e}"))
    }
}
