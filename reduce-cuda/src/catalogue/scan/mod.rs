//! The scans family (kernels/scan.cu). `ScanAlgorithm::LookBack`: one launch of one block per
//! tile, tiles handed out in order by a counter and chained by decoupled look-back with a fixed
//! grouping (the kernel's head says why the bits never depend on timing).
//! `ScanAlgorithm::ReduceThenScan`: the same tiles and grouping in four launches (the tiles'
//! aggregates, the groups' folds, the chain of the groups, the outputs), the same bits.
//! `ScanAlgorithm::LookAhead` (kernels/scan_ahead.cu): the same tiles, grouping and bits in a
//! persistent grid of warp-specialised blocks (sm_90, items and
//! outputs at a 16-byte boundary; else it runs as LookBack; by offsets, after a launch that
//! marks the heads in a bitmap). Plain scans, and segmented ones whose segment starts come from
//! CSR offsets or from keys.

use super::algorithm::ScanAlgorithm;
use super::caps::capped_module;
use super::config::{check_block, invalid, ScanConfig};
use super::tuning::{scan_ahead_items, scan_ahead_look_backs, scan_items, scan_may_cap};
use super::tuning::{scan_offsets_few_by_look_back, scan_offsets_look_back};
use super::tuning::{SCAN_AHEAD_LEAD, SCAN_AHEAD_SMEM, SCAN_AHEAD_STAGES};
use super::tuning::{SCAN_BLOCK, SCAN_WORD_PARTS};
use super::tuning::{SCAN_STAGE_MAX, SCAN_STATIC_STAGE_MAX};
use crate::device::Module;
use crate::device::{kernel_signature, Entry};
use crate::dispatch::{Dispatch, Loader};
use crate::error::Result;
use crate::jit::{Family, Items, JitReport, KernelSpec};
use reduce_core::portable;
use std::sync::Arc;

mod launch;

kernel_signature! {
    /// The scan of the `n` items at `in` into `out` (prefixes before each item when
    /// `exclusive`); segment starts from `layout` (offsets: `segments + 1` entries; keys: `n`);
    /// `states` (zeroed, 16-byte aligned: the tile counter, an entry per tile and per group of
    /// 32 tiles),
    /// `aggregates` (a value per tile and per group) and `inclusives` (a value per group)
    /// chain the tiles.
    pub(crate) struct ScanArgs {
        r#in, n, out, exclusive, layout, segments, states, aggregates, inclusives
    }
}

kernel_signature! {
    /// LookAhead by offsets, before `scan_ahead`: the bit of every item that one of the
    /// `segments + 1` offsets names, in `marks` (zeroed, a bit an item of the `n`).
    pub(crate) struct ScanMarksArgs { offsets, segments, n, marks }
}

kernel_signature! {
    /// ReduceThenScan's first pass: each tile's aggregate (segmented: whether a segment starts
    /// in it) into `values` (`flags`).
    pub(crate) struct ScanReduceArgs { r#in, n, layout, segments, flags, values }
}
kernel_signature! {
    /// ReduceThenScan's middle passes over the `flags` and `values` of the tiles of `n` items
    /// (a slot per tile, then per group of 32 tiles): each group's folds of its tiles (a warp
    /// per group), then the chain of the groups (one block).
    pub(crate) struct ScanGroupsArgs { n, flags, values }
}
kernel_signature! {
    /// ReduceThenScan's last pass: the tiles' outputs from their prefixes.
    pub(crate) struct ScanApplyArgs { r#in, n, out, exclusive, layout, segments, flags, values }
}

const SCAN_TILES: Entry<ScanArgs> = Entry::new("scan_tiles");
const SCAN_REDUCE: Entry<ScanReduceArgs> = Entry::new("scan_reduce");
const SCAN_GROUPS: Entry<ScanGroupsArgs> = Entry::new("scan_groups");
const SCAN_CHAIN: Entry<ScanGroupsArgs> = Entry::new("scan_chain");
const SCAN_APPLY: Entry<ScanApplyArgs> = Entry::new("scan_apply");
const SCAN_AHEAD: Entry<ScanArgs> = Entry::new("scan_ahead");
const SCAN_MARKS: Entry<ScanMarksArgs> = Entry::new("scan_marks");
/// The offsets a thread of `scan_marks` takes (the kernels' `R_MARKS_RUN`).
const SCAN_MARKS_RUN: u64 = 8;

/// Where a segmented scan's segments start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Segments {
    /// A plain scan.
    None,
    /// CSR offsets (`segments + 1` entries).
    Offsets,
    /// One key per item: a segment is a run of equal keys.
    Keys,
}

/// A scan with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScanPlan {
    name: &'static str,
    /// ReduceThenScan's four launches instead of LookBack's one.
    passes: bool,
    block: u32,
    items: u32,
    segments: Segments,
    /// u64 offsets or keys.
    wide: bool,
    /// The 16-byte parts of a tile's entry (its state and value, kernels/scan.cu's THE
    /// ENTRIES), 0 for states and values apart.
    word_parts: u32,
    /// The bytes of a tile's items its warps stage in shared memory (0: none), and whether they
    /// are the launch's dynamic shared memory ([`stage_bytes`]).
    stage: (u32, bool),
    /// LookAhead's stages ([`ahead_stages`]; 0: LookBack's or ReduceThenScan's kernels).
    ahead: u32,
    /// `Auto`'s LookAhead by offsets of values of more than 8 bytes
    /// ([`scan_offsets_few_by_look_back`]): LookBack's kernel where the segments are fewer than
    /// the whole tiles ([`scan_offsets_look_back`]).
    sparse_look_back: bool,
    /// The sizes of an input item and of a value.
    in_size: usize,
    m_size: usize,
    /// LookAhead's persistent grid, where the configuration sets it.
    grid: Option<u32>,
}

/// LookAhead's dynamic shared memory for `stages` stages of tiles of `block` threads of `items`
/// input items of `in_size` bytes and values of `m_size`, plain or `segmented`: a stage the
/// tile's bytes rounded to 128 (kernels/pipe.cuh's `R_PIPE_STAGE_BYTES`); and for each of the
/// [`SCAN_AHEAD_LEAD`] + 1 tiles between their reduction and their outputs, a value per thread
/// and segmented a bit of heads per item (kernels/scan_ahead.cu's `R_AHEAD_SMEM`).
fn ahead_smem(
    stages: u32,
    block: u32,
    items: u32,
    in_size: usize,
    m_size: usize,
    segmented: bool,
) -> usize {
    let tile = block as usize * items as usize;
    let heads = if segmented { tile / 8 } else { 0 };
    let stage = (tile * in_size).div_ceil(128) * 128;
    let held = block as usize * m_size + heads;
    stages as usize * stage + (SCAN_AHEAD_LEAD as usize + 1) * held
}

/// LookAhead's stages for a scan of such tiles (by key with keys of `key_bytes`): as many as fit
/// [`SCAN_AHEAD_SMEM`] with what the tiles between reduction and outputs hold ([`ahead_smem`]),
/// at most [`SCAN_AHEAD_STAGES`]; by key, with room for a tile's keys beside them, down to
/// [`SCAN_AHEAD_LEAD`] + 2 stages: the keys the compute warps load through the round land in
/// L1, which the shared memory's carveout takes from (f32 sums by u32 key on an H200, one
/// measurement build capped at either: 0.81–0.83 of the copy roof with five stages, 0.76–0.77
/// with six, docs/decisions/0072-scan-look-ahead-by-offsets.md). 0 where fewer than the lead
/// and two more fit (a tile loading while the lead's are written), where the entries are not one word
/// ([`word_parts`]) or where the block with its producer and look-back warps ([`ahead_threads`])
/// would pass 1024 threads: those run as LookBack.
fn ahead_stages(
    block: u32,
    items: u32,
    items_of: Items,
    segments: Segments,
    key_bytes: usize,
) -> u32 {
    let segmented = segments != Segments::None;
    let (in_size, m_size) = (items_of.in_size, items_of.m_size);
    let fits = |room: usize| {
        (0..=SCAN_AHEAD_STAGES)
            .take_while(|&k| {
                ahead_smem(k, block, items, in_size, m_size, segmented) + room <= SCAN_AHEAD_SMEM
            })
            .last()
            .unwrap_or(0)
    };
    let keys = match segments {
        Segments::Keys => block as usize * items as usize * key_bytes,
        _ => 0,
    };
    let fit = fits(keys).max(fits(0).min(SCAN_AHEAD_LEAD + 2));
    let threads = ahead_threads(block, items_of.m_size, segments);
    if word_parts(items_of.m_size) == 0 || threads > 1024 || fit < SCAN_AHEAD_LEAD + 2 {
        0
    } else {
        fit
    }
}

/// LookAhead's look-back warps for values of `m_size` bytes and `segments`
/// ([`scan_ahead_look_backs`]).
fn ahead_look_backs(m_size: usize, segments: Segments) -> u32 {
    scan_ahead_look_backs(m_size, segments == Segments::Offsets)
}

/// LookAhead's threads a block: the tile's `block`, the producer warp and the look-back warps
/// ([`ahead_look_backs`]).
fn ahead_threads(block: u32, m_size: usize, segments: Segments) -> u32 {
    block + 32 * (1 + ahead_look_backs(m_size, segments))
}

/// The stage of a tile of `block` threads of `items` input items of `in_size` bytes (values of
/// `m_size`), and whether it is the launch's dynamic shared memory: all of the items, where a
/// thread's run is whole 16-byte vectors, the stage takes at most [`SCAN_STAGE_MAX`] bytes, and
/// with the kernel's own shared memory (the look-back's and the warps' 32 values each, the
/// marks) it fits the 64 KiB a block may take on every device from sm_75; else none. Static up to
/// [`SCAN_STATIC_STAGE_MAX`] where it fits, with the kernel's own, the 48 KiB of static shared
/// memory; dynamic past either.
fn stage_bytes(block: u32, items: u32, in_size: usize, m_size: usize) -> (u32, bool) {
    const KIB: usize = 1024;
    let bytes = block as usize * items as usize * in_size;
    let own = 64 * (m_size + 4) + 4 * KIB;
    let whole = (items as usize * in_size).is_multiple_of(16);
    if !whole || bytes > SCAN_STAGE_MAX || bytes + own > 64 * KIB {
        return (0, false);
    }
    let dynamic = bytes > SCAN_STATIC_STAGE_MAX || bytes + own > 48 * KIB;
    (bytes as u32, dynamic)
}

/// Whether LookBack's look-back keeps its 32 values (the group's aggregates, then the ring of
/// the nearest entries) in static shared memory (kernels/scan.cu's `R_LB_SHARED`): where they fit
/// its 48 KiB beside the block's own values (a value a warp and the prefix, each with its flag,
/// bounded by 16 bytes) and 4 KiB of the rest. Past it (values past about 1 KiB at 256 threads)
/// lane 0 reads them from global memory: the same folds in the same order, the same bits.
fn look_back_shared(block: u32, m_size: usize) -> bool {
    let seg = m_size + 16;
    (32 + block as usize / 32 + 1) * seg + 4 * 1024 <= 48 * 1024
}

/// The 16-byte parts of an entry for values of `m_size` bytes: 12 bytes of the value in each
/// (one part up to 4 bytes), at most [`SCAN_WORD_PARTS`]; 0 past them.
fn word_parts(m_size: usize) -> u32 {
    let parts = m_size.div_ceil(12).max(1);
    if parts <= SCAN_WORD_PARTS {
        parts as u32
    } else {
        0
    }
}

/// The plan of `config` for `items` and segments of `form` (u64 entries if `wide`). Every check
/// happens here, before anything is compiled.
pub(crate) fn scan_plan(
    config: ScanConfig,
    items: Items,
    segments: Segments,
    wide: bool,
) -> Result<ScanPlan> {
    let algorithm = match config.algorithm {
        // LookAhead where it runs and is measured: scans of the monoid's own values (its plan
        // runs LookBack's kernel where it does not run; the same bits either way). Lifted items
        // write their outputs one by one there.
        ScanAlgorithm::Auto if items.in_size == items.m_size => ScanAlgorithm::LookAhead,
        ScanAlgorithm::Auto => ScanAlgorithm::LookBack,
        other => other,
    };
    let name = algorithm.name();
    let passes = algorithm == ScanAlgorithm::ReduceThenScan;
    match config.grid {
        Some(0) => return Err(invalid(name, "a grid of 0 blocks")),
        Some(_)
            if matches!(
                config.algorithm,
                ScanAlgorithm::LookBack | ScanAlgorithm::ReduceThenScan
            ) =>
        {
            return Err(invalid(
                name,
                "grid sets LookAhead's persistent grid; LookBack and ReduceThenScan launch a \
                 block per tile",
            ))
        }
        _ => {}
    }
    let sparse_look_back = config.algorithm == ScanAlgorithm::Auto
        && segments == Segments::Offsets
        && scan_offsets_few_by_look_back(items.m_size);
    let ahead = |block, per_thread| {
        if algorithm == ScanAlgorithm::LookAhead {
            ahead_stages(block, per_thread, items, segments, if wide { 8 } else { 4 })
        } else {
            0
        }
    };
    // The plan of a tile of `block` threads of `per_thread` items.
    let plan = |block, per_thread| ScanPlan {
        name,
        passes,
        block,
        items: per_thread,
        segments,
        wide,
        word_parts: word_parts(items.m_size),
        stage: stage_bytes(block, per_thread, items.in_size, items.m_size),
        ahead: ahead(block, per_thread),
        sparse_look_back,
        in_size: items.in_size,
        m_size: items.m_size,
        grid: config.grid,
    };
    if config.portable {
        // The tile decides the bits: the portable scans fix it by the monoid's size alone
        // (reduce_core::portable::scan's grouping), whatever the input type.
        if config.block.is_some() || config.items_per_thread.is_some() {
            return Err(invalid(
                name,
                "the portable scans' tile is fixed by the monoid's size (it decides the bits): \
                 leave block and items_per_thread unset",
            ));
        }
        return Ok(plan(
            portable::SCAN_BLOCK as u32,
            portable::scan_items(items.m_size) as u32,
        ));
    }
    let block = check_block(name, config.block.unwrap_or(SCAN_BLOCK))?;
    let per_thread = config.items_per_thread.unwrap_or_else(|| {
        // LookAhead's run of an odd number of vectors for the monoid's own values, by key and
        // where the default run leaves too few stages (a plan's tile never depends on the
        // device: where LookAhead does not run, its plan runs LookBack's kernel on the same tile).
        let default = scan_items(items.in_size, items.m_size);
        match scan_ahead_items(items.in_size) {
            Some(odd)
                if items.in_size == items.m_size
                    && (segments == Segments::Keys || ahead(block, default) == 0)
                    && ahead(block, odd) > 0 =>
            {
                odd
            }
            _ => default,
        }
    });
    if !(1..=32).contains(&per_thread) {
        return Err(invalid(
            name,
            format!("items_per_thread {per_thread} must be between 1 and 32"),
        ));
    }
    Ok(plan(block, per_thread))
}

impl ScanPlan {
    /// (threads per block, items per thread).
    pub fn shape(&self) -> (u32, u32) {
        (self.block, self.items)
    }

    /// The dynamic shared memory of a tile's kernels: its items' stages where they are dynamic
    /// ([`stage_bytes`]), else 0.
    pub fn dynamic_smem(&self) -> usize {
        if self.ahead > 0 {
            let segmented = self.segments != Segments::None;
            let (block, items, in_size) = (self.block, self.items, self.in_size);
            return ahead_smem(self.ahead, block, items, in_size, self.m_size, segmented);
        }
        match self.stage {
            (bytes, true) => bytes as usize,
            _ => 0,
        }
    }

    /// Items per tile.
    pub fn tile(&self) -> u64 {
        self.block as u64 * self.items as u64
    }

    /// The kernels of the plan, `scan_tiles`' registers uncapped.
    pub fn kernels(&self) -> KernelSpec {
        self.capped(0)
    }

    /// The module of the plan's kernels for `loader`'s program. A LookBack tile holds its SM
    /// slot while it waits for the tiles before it, so the tiles resident per SM are what hides
    /// the wait (docs/decisions/0063-scan-register-caps.md): where [`scan_may_cap`] allows,
    /// `scan_tiles`' registers are capped by [`capped_module`]'s rule.
    pub fn module(&self, loader: &Loader) -> Result<(Arc<Module>, JitReport)> {
        if !self.may_cap() {
            return loader.module(&self.kernels());
        }
        capped_module(
            loader,
            SCAN_TILES,
            self.block,
            self.dynamic_smem(),
            self.name,
            |cap| self.capped(cap),
        )
    }

    /// Whether `scan_tiles` may be capped (LookBack; in the keys form, by [`scan_may_cap`]).
    pub fn may_cap(&self) -> bool {
        let key_bytes = if self.wide { 8 } else { 4 };
        !self.passes
            && self.ahead == 0
            && scan_may_cap(self.segments == Segments::Keys, self.items, key_bytes)
    }

    /// The kernels of the plan, `scan_tiles`' registers capped for `min_blocks` resident blocks
    /// per SM (0: uncapped).
    pub fn capped(&self, min_blocks: u32) -> KernelSpec {
        let seg = match self.segments {
            Segments::None => 0,
            Segments::Offsets => 1,
            Segments::Keys => 2,
        };
        KernelSpec::new(
            Family::Scan,
            &[
                ("R_BLOCK", self.block),
                ("R_ITEMS", self.items),
                ("R_SEG", seg),
                ("R_IDX64", self.wide as u32),
                ("R_WORD_PARTS", self.word_parts),
                ("R_MIN_BLOCKS", min_blocks),
                ("R_STAGE_BYTES", self.stage.0),
                ("R_STAGE_DYNAMIC", self.stage.1 as u32),
                (
                    "R_LB_SHARED",
                    look_back_shared(self.block, self.m_size) as u32,
                ),
                ("R_PIPE", self.ahead),
                ("R_LEAD", if self.ahead > 0 { SCAN_AHEAD_LEAD } else { 0 }),
                (
                    "R_AHEAD_LOOKERS",
                    if self.ahead > 0 {
                        ahead_look_backs(self.m_size, self.segments)
                    } else {
                        0
                    },
                ),
                ("R_VECS", self.ahead_vecs()),
                ("R_ITEM_SHIFT", 0),
                ("R_MARKS_RUN", SCAN_MARKS_RUN as u32),
            ],
        )
    }

    /// LookAhead's 16-byte vectors of a thread's items (kernels/scan_ahead.cu's `R_VECS`): its
    /// run's bytes / 16 where they are whole vectors, else 0 (item by item); 0 for the others.
    fn ahead_vecs(&self) -> u32 {
        let run = self.items as usize * self.in_size;
        if self.ahead > 0 && run.is_multiple_of(16) {
            (run / 16) as u32
        } else {
            0
        }
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (SCAN_TILES.name, ScanArgs::PARAMS),
        (SCAN_REDUCE.name, ScanReduceArgs::PARAMS),
        (SCAN_GROUPS.name, ScanGroupsArgs::PARAMS),
        (SCAN_CHAIN.name, ScanGroupsArgs::PARAMS),
        (SCAN_APPLY.name, ScanApplyArgs::PARAMS),
        (SCAN_AHEAD.name, ScanArgs::PARAMS),
        (SCAN_MARKS.name, ScanMarksArgs::PARAMS),
    ]
}

#[cfg(test)]
mod tests;
