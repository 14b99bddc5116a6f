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
        let (block, per_thread) = (
            portable::SCAN_BLOCK as u32,
            portable::scan_items(items.m_size) as u32,
        );
        return Ok(ScanPlan {
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
        });
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
    Ok(ScanPlan {
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
    })
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

    /// Queues the scan of the `n > 0` items at `input` into `out` (which may be `input`), with
    /// segment starts from `layout` (its address, and the segment count of offsets).
    pub fn launch(
        &self,
        d: &mut Dispatch,
        input: u64,
        n: u64,
        out: u64,
        exclusive: bool,
        layout: (u64, u64),
    ) -> Result<()> {
        let tiles = n.div_ceil(self.tile());
        if tiles > i32::MAX as u64 {
            return Err(invalid(
                self.name,
                format!("{n} items are {tiles} tiles, past the grid's 2^31 - 1 blocks"),
            ));
        }
        let m_size = d.items().m_size;
        let look_back = ScanPlan { ahead: 0, ..*self };
        let info = &d.device.info;
        if self.ahead > 0
            && (info.compute_capability.0 < 9
                || !input.is_multiple_of(16)
                || !out.is_multiple_of(16))
        {
            // No bulk copies here, or items or outputs off a 16-byte boundary (the outputs
            // would go one by one): LookBack's kernel, the same tiles and bits.
            return look_back.launch(d, input, n, out, exclusive, layout);
        }
        if self.ahead > 0
            && self.sparse_look_back
            && scan_offsets_look_back(layout.1, n, self.tile())
        {
            // Fewer segments than tiles: LookBack's kernel, the same tiles and bits.
            return look_back.launch(d, input, n, out, exclusive, layout);
        }
        let (layout, segments) = layout;
        if self.passes {
            // ReduceThenScan's four launches (kernels/scan.cu's REDUCE-THEN-SCAN): a flag and
            // a value per tile and per group of 32 tiles, each written before it is read.
            let groups = tiles.div_ceil(32);
            let slots = (tiles + groups) as usize;
            let regions = d.carve(&[slots * 4, slots * m_size])?;
            let (flags, values) = (regions[0], regions[1]);
            let spec = self.kernels();
            let reduce = d.kernel(
                &spec,
                SCAN_REDUCE,
                self.block,
                self.dynamic_smem(),
                self.name,
            )?;
            let group_folds = d.kernel(&spec, SCAN_GROUPS, self.block, 0, self.name)?;
            let chain = d.kernel(&spec, SCAN_CHAIN, self.block, 0, self.name)?;
            let apply = d.kernel(
                &spec,
                SCAN_APPLY,
                self.block,
                self.dynamic_smem(),
                self.name,
            )?;
            let args = ScanReduceArgs {
                r#in: input,
                n,
                layout,
                segments,
                flags,
                values,
            };
            d.launch(&reduce, tiles, args)?;
            let args = ScanGroupsArgs { n, flags, values };
            let warps = (self.block / 32) as u64;
            d.launch(&group_folds, groups.div_ceil(warps), args)?;
            d.launch(&chain, 1, args)?;
            let args = ScanApplyArgs {
                r#in: input,
                n,
                out,
                exclusive: exclusive as u64,
                layout,
                segments,
                flags,
                values,
            };
            return d.launch(&apply, tiles, args);
        }
        // The tile counter (16 bytes), then an entry per tile and per group of 32 tiles (a word
        // of 16-byte parts, or a 4-byte state); the tiles' and the groups' aggregates; the
        // groups' inclusive values (kernels/scan.cu, r_tile_prefix).
        // LookAhead by offsets: a bitmap of heads, a bit an item.
        let (tiles, groups) = (tiles as usize, tiles.div_ceil(32) as usize);
        let entry_bytes = (16 * self.word_parts as usize).max(4);
        let state_bytes = 16 + (tiles + groups) * entry_bytes;
        let marks_bytes = match (self.ahead > 0, self.segments) {
            (true, Segments::Offsets) => n.div_ceil(32) as usize * 4,
            _ => 0,
        };
        let module = self.module(d.loader())?.0;
        if self.ahead > 0
            && module.entry(SCAN_AHEAD.name)?.static_smem + self.dynamic_smem()
                > d.device.info.max_shared_per_block
        {
            // Its stages do not fit a block here: LookBack's kernel.
            return look_back.launch(d, input, n, out, exclusive, (layout, segments));
        }
        // The states and the bitmap (on a 256-byte boundary of its own, as the carve's regions
        // lie) must start at zero: they lie in the scratch's words that are zero between calls,
        // and are zeroed again behind the kernels — a fill queued after the launches runs while
        // the host returns, where one queued before them would hold the first kernel back by a
        // launch's host time.
        let marks_at = state_bytes.next_multiple_of(256);
        let zero_bytes = marks_at + marks_bytes;
        let zeroed = d.zeroed(zero_bytes.div_ceil(4))?;
        let regions = d.carve(&[(tiles + groups) * m_size, groups * m_size])?;
        let launched = self.launch_tiles(
            d,
            &module,
            ScanArgs {
                r#in: input,
                n,
                out,
                exclusive: exclusive as u64,
                layout,
                segments,
                states: zeroed,
                aggregates: regions[0],
                inclusives: regions[1],
            },
            tiles as u64,
            (marks_bytes > 0).then_some(zeroed + marks_at as u64),
        );
        let cleared = d.clear_zeroed(zero_bytes);
        launched.and(cleared)
    }

    /// The single-pass kernel over `tiles` tiles with `args` (`states` zero); by offsets with
    /// LookAhead, first the heads' bitmap at `marks` (zero) from the offsets in `args.layout`,
    /// which the kernel then reads instead.
    fn launch_tiles(
        &self,
        d: &mut Dispatch,
        module: &Arc<Module>,
        mut args: ScanArgs,
        tiles: u64,
        marks: Option<u64>,
    ) -> Result<()> {
        if let Some(marks) = marks {
            let kernel = d
                .device
                .kernel(module, SCAN_MARKS, self.block, 0, self.name)?;
            let runs = (args.segments + 1).div_ceil(self.block as u64 * SCAN_MARKS_RUN);
            let marks_args = ScanMarksArgs {
                offsets: args.layout,
                segments: args.segments,
                n: args.n,
                marks,
            };
            d.launch(&kernel, runs, marks_args)?;
            args.layout = marks;
        }
        let (entry, threads) = if self.ahead > 0 {
            (
                SCAN_AHEAD,
                ahead_threads(self.block, self.m_size, self.segments),
            )
        } else {
            (SCAN_TILES, self.block)
        };
        let kernel = d
            .device
            .kernel(module, entry, threads, self.dynamic_smem(), self.name)?;
        // LookAhead: a persistent grid, as many blocks as are resident at once or as the
        // configuration asks (never more than the tiles); its blocks take their tiles from the
        // counter in order, so a block waits only on tiles that running blocks hold: any grid
        // finishes, with the same bits.
        let grid = if self.ahead > 0 {
            let blocks = match self.grid {
                Some(blocks) => blocks as u64,
                None => d.device.resident_blocks(&kernel)?,
            };
            blocks.clamp(1, tiles)
        } else {
            tiles
        };
        d.launch(&kernel, grid, args)
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
mod tests {
    use super::*;

    const F32: Items = Items {
        m_size: 4,
        in_size: 4,
        lifted: false,
        commutative: false,
    };

    /// The monoid's own values of `bytes` bytes, ordered.
    fn values(bytes: usize) -> Items {
        Items {
            m_size: bytes,
            in_size: bytes,
            ..F32
        }
    }

    #[test]
    fn defaults_and_checks() {
        let plan = scan_plan(ScanConfig::default(), F32, Segments::None, false).unwrap();
        assert_eq!((plan.block, plan.items, plan.tile()), (256, 32, 8192));
        let bad = ScanConfig::default().items_per_thread(33);
        assert!(scan_plan(bad, F32, Segments::Keys, false).is_err());
        let bad = ScanConfig::default().block(48);
        assert!(scan_plan(bad, F32, Segments::None, false).is_err());
        // a 1-byte monoid: at most 32 items (the segment starts of a thread are one word)
        let byte = values(1);
        let plan = scan_plan(ScanConfig::default(), byte, Segments::None, false).unwrap();
        assert_eq!(plan.items, 32);
        // the grid: LookAhead's (and Auto's, in either mode), never 0, not for a block per tile
        for config in [
            ScanConfig::new(ScanAlgorithm::LookAhead),
            ScanConfig::default(),
            ScanConfig::default().portable(),
        ] {
            let plan = scan_plan(config.grid(7), F32, Segments::Keys, false).unwrap();
            assert_eq!(plan.grid, Some(7));
            assert!(scan_plan(config.grid(0), F32, Segments::None, false).is_err());
        }
        let lifted = Items { in_size: 2, ..F32 };
        let plan = scan_plan(ScanConfig::default().grid(7), lifted, Segments::None, false);
        assert_eq!(plan.unwrap().ahead, 0); // Auto runs LookBack there: the grid is not used
        for algorithm in [ScanAlgorithm::LookBack, ScanAlgorithm::ReduceThenScan] {
            let config = ScanConfig::new(algorithm).grid(7);
            assert!(scan_plan(config, F32, Segments::None, false).is_err());
        }
    }

    /// LookBack's default tiles' items are staged: 32 KiB of f32 statically; 48 KiB of 12-byte items
    /// (256 threads of 16) in dynamic shared memory, lifted from 4-byte items: 16 KiB static. A
    /// tile past `SCAN_STAGE_MAX` is not staged.
    #[test]
    fn stages() {
        let look_back = || ScanConfig::new(ScanAlgorithm::LookBack);
        let stage = |items: Items, config: ScanConfig| {
            let plan = scan_plan(config, items, Segments::None, false).unwrap();
            (plan.stage.0, plan.dynamic_smem(), plan.capped(0).defines)
        };
        let twelve = values(12);
        let lifted = Items {
            in_size: 4,
            ..twelve
        };
        let (bytes, dynamic, defines) = stage(F32, look_back());
        assert_eq!((bytes, dynamic), (32 * 1024, 0));
        assert!(defines.contains(&("R_STAGE_BYTES", 32 * 1024)));
        assert!(defines.contains(&("R_STAGE_DYNAMIC", 0)));
        let (bytes, dynamic, defines) = stage(twelve, look_back());
        assert_eq!((bytes, dynamic), (48 * 1024, 48 * 1024));
        assert!(defines.contains(&("R_STAGE_DYNAMIC", 1)));
        assert_eq!(stage(twelve, look_back().portable()).1, 48 * 1024);
        assert_eq!(stage(lifted, look_back()).0, 16 * 1024);
        let wide = look_back().block(512);
        assert_eq!(stage(F32, wide).0, 0);
        assert_eq!(stage(F32, wide).1, 0);
        // runs of 3 x 12 bytes are not whole vectors; 12-byte items lifted into 512-byte values
        // leave no room beside the look-back's 32 values
        assert_eq!(stage(twelve, look_back().items_per_thread(3)).0, 0);
        let large = Items {
            m_size: 512,
            ..twelve
        };
        let sixteen = look_back().items_per_thread(16);
        assert_eq!(stage(twelve, sixteen).0, 48 * 1024);
        assert_eq!(stage(large, sixteen).0, 0);
        // 16 KiB of 32-byte items beside 512-byte values: past 48 KiB with the kernel's own, so
        // dynamic
        let beside = Items {
            in_size: 32,
            m_size: 512,
            ..F32
        };
        let two = look_back().items_per_thread(2);
        assert_eq!(stage(beside, two).0, 16 * 1024);
        assert_eq!(stage(beside, two).1, 16 * 1024);
    }

    /// The uncapped spec leaves `R_MIN_BLOCKS` at 0; the keys form is never capped where a
    /// thread's keys pass 64 bytes (f32 values: 32 u32 keys; 8-byte values with u64 keys), nor
    /// is ReduceThenScan.
    #[test]
    fn register_caps() {
        let plan = scan_plan(
            ScanConfig::new(ScanAlgorithm::LookBack),
            F32,
            Segments::Offsets,
            false,
        )
        .unwrap();
        let min_blocks = |spec: KernelSpec| {
            spec.defines
                .iter()
                .find(|(name, _)| *name == "R_MIN_BLOCKS")
                .map(|d| d.1)
        };
        assert_eq!(min_blocks(plan.kernels()), Some(0));
        assert_eq!(min_blocks(plan.capped(6)), Some(6));
        let eight = values(8);
        let may_cap = |items: Items, segments: Segments, wide: bool| {
            scan_plan(
                ScanConfig::new(ScanAlgorithm::LookBack),
                items,
                segments,
                wide,
            )
            .unwrap()
            .may_cap()
        };
        assert!(!may_cap(F32, Segments::Keys, false));
        assert!(may_cap(eight, Segments::Keys, false));
        assert!(!may_cap(eight, Segments::Keys, true));
        assert!(may_cap(F32, Segments::Offsets, true));
        assert!(may_cap(F32, Segments::None, false));
        let passes = ScanConfig::new(ScanAlgorithm::ReduceThenScan);
        let plan = scan_plan(passes, F32, Segments::None, false).unwrap();
        assert!(!plan.may_cap());
    }

    /// `Auto`'s scans are LookAhead's: six stages of the default tile, and a value per thread
    /// (segmented, and a bit of heads per item) for each of the lead's tiles and one more, no
    /// register cap; where fewer than the lead and two more fit, for lifted items (`Auto`),
    /// where the block and its warps pass 1024 threads and for values of more than 48 bytes,
    /// no stages (LookBack's kernel).
    #[test]
    fn look_ahead_stages() {
        let ahead = |items: Items, config: ScanConfig, segments: Segments, wide: bool| {
            let plan = scan_plan(config, items, segments, wide).unwrap();
            (plan.ahead, plan.dynamic_smem(), plan.may_cap())
        };
        let plain = |items: Items, config: ScanConfig| ahead(items, config, Segments::None, false);
        let auto = ScanConfig::default();
        assert_eq!(plain(F32, auto), (6, 6 * 32 * 1024 + 4 * 256 * 4, false));
        let held = 4 * (256 * 4 + 1024); // values and heads of the lead's tiles and one more
        for wide in [false, true] {
            // 200 KiB: the most that fits
            let by_offsets = (6, 6 * 32 * 1024 + held, false);
            assert_eq!(ahead(F32, auto, Segments::Offsets, wide), by_offsets);
            // by key, tiles of 28 f32 a thread (seven vectors): five stages and 28 KiB of u32
            // keys fit; 56 KiB of u64 keys leave four, too few: five all the same
            let held = 4 * (256 * 4 + 256 * 28 / 8);
            let by_key = (5, 5 * 28 * 1024 + held, false);
            assert_eq!(ahead(F32, auto, Segments::Keys, wide), by_key);
        }
        let eight = values(8);
        // 8-byte values: six stages plain, five segmented (a tile's heads and values past 200 KiB)
        assert_eq!(plain(eight, auto).0, 6);
        assert_eq!(ahead(eight, auto, Segments::Offsets, false).0, 5);
        // Auto by offsets runs LookBack's kernel for fewer offsets than tiles where the values
        // are larger than 8 bytes; LookAhead asked for by name never does
        let sparse = |config: ScanConfig, items: Items, segments: Segments| {
            scan_plan(config, items, segments, false)
                .unwrap()
                .sparse_look_back
        };
        let sixteen = values(16);
        let twelve = values(12);
        assert!(sparse(auto, sixteen, Segments::Offsets));
        assert!(sparse(auto, twelve, Segments::Offsets));
        assert!(!sparse(auto, F32, Segments::Offsets));
        assert!(!sparse(auto, eight, Segments::Offsets));
        assert!(!sparse(auto, sixteen, Segments::Keys));
        assert!(!sparse(
            ScanConfig::new(ScanAlgorithm::LookAhead),
            sixteen,
            Segments::Offsets
        ));
        // fewer segments than whole tiles; under one tile, never
        assert!(scan_offsets_look_back(1, 2 * 8192, 8192));
        assert!(!scan_offsets_look_back(2, 2 * 8192, 8192));
        assert!(!scan_offsets_look_back(0, 8191, 8192));
        let explicit = ScanConfig::new(ScanAlgorithm::LookAhead);
        let two = explicit.items_per_thread(2);
        assert_eq!(plain(F32, two.block(1024)).0, 0);
        assert_eq!(plain(F32, two.block(960)).0, 6);
        // 960 threads of 32 f32: 120 KiB a tile, one stage fits
        assert_eq!(plain(F32, explicit.block(960)).0, 0);
        let large = values(72);
        assert_eq!(plain(large, auto).0, 0);
        // 48 KiB tiles of 16 12-byte items a thread: three stages fit, too few; runs of 12
        // (nine vectors) take five
        let twelve = values(12);
        assert_eq!(plain(twelve, explicit.items_per_thread(16)).0, 0);
        let plan = scan_plan(auto, twelve, Segments::None, false).unwrap();
        assert_eq!((plan.items, plan.ahead), (12, 5));
        // 32 KiB tiles of 16-byte values: five fit
        let sixteen = values(16);
        assert_eq!(plain(sixteen, auto).0, 5);
        // lifted items: Auto runs LookBack
        let lifted = Items { in_size: 8, ..F32 };
        assert_eq!(plain(lifted, auto).0, 0);
        assert_eq!(plain(lifted, explicit).0, 6);
        let spec = scan_plan(auto, F32, Segments::None, false)
            .unwrap()
            .kernels();
        for define in [("R_PIPE", 6), ("R_LEAD", SCAN_AHEAD_LEAD), ("R_VECS", 8)] {
            assert!(spec.defines.contains(&define), "{define:?}");
        }
    }

    /// LookAhead's look-back warps: one for 4-byte values plain and by key, two for 8- and 12-byte
    /// values and by offsets, three for 16 bytes and more; the block's threads count them, and
    /// past 1024 the plan runs LookBack.
    #[test]
    fn look_ahead_look_backs() {
        let plan = |m_size: usize, config: ScanConfig, segments: Segments| {
            let values = Items {
                m_size,
                in_size: m_size,
                ..F32
            };
            let plan = scan_plan(config, values, segments, false).unwrap();
            let spec = plan.kernels();
            let lookers = spec
                .defines
                .iter()
                .find(|(name, _)| *name == "R_AHEAD_LOOKERS")
                .map(|&(_, v)| v);
            (plan.ahead > 0, lookers)
        };
        let auto = ScanConfig::default();
        assert_eq!(plan(4, auto, Segments::None), (true, Some(1)));
        assert_eq!(plan(4, auto, Segments::Keys), (true, Some(1)));
        assert_eq!(plan(4, auto, Segments::Offsets), (true, Some(2)));
        for (m_size, lookers) in [(8, 2), (12, 2), (16, 3)] {
            for segments in [Segments::None, Segments::Keys, Segments::Offsets] {
                let want = (true, Some(lookers));
                assert_eq!(plan(m_size, auto, segments), want, "{m_size}");
            }
        }
        assert_eq!(ahead_threads(256, 4, Segments::None), 320);
        assert_eq!(ahead_threads(256, 8, Segments::None), 352);
        assert_eq!(ahead_threads(256, 4, Segments::Offsets), 352);
        assert_eq!(ahead_threads(256, 16, Segments::Keys), 384);
        // 960 threads of one 8-byte value: one stage of 7.5 KiB would fit, but 960 + 96 threads
        // do not; f32 with its one look-back warp does (1024)
        let one = ScanConfig::new(ScanAlgorithm::LookAhead).items_per_thread(1);
        assert!(!plan(8, one.block(960), Segments::None).0);
        assert!(plan(4, one.block(960), Segments::None).0);
        assert!(plan(8, one.block(928), Segments::None).0);
        // 16-byte values: three look-back warps, 896 + 128 threads
        assert!(plan(16, one.block(896), Segments::None).0);
        assert!(!plan(16, one.block(928), Segments::None).0);
    }

    /// LookAhead's runs of an odd number of vectors: by key, and where the default run leaves
    /// too few stages; never for LookBack, the portable tile or items asked for.
    #[test]
    fn look_ahead_odd_vector_runs() {
        let odd: Vec<Option<u32>> = [4, 8, 12, 16, 24, 36, 1, 2, 3, 20, 32]
            .map(scan_ahead_items)
            .to_vec();
        assert_eq!(odd[..6], [28, 14, 12, 7, 6, 4].map(Some));
        assert_eq!(odd[6..], [None; 5]);
        let items = |config: ScanConfig, segments: Segments| {
            scan_plan(config, F32, segments, false).unwrap().items
        };
        let auto = ScanConfig::default();
        assert_eq!(items(auto, Segments::Keys), 28);
        assert_eq!(
            items(ScanConfig::new(ScanAlgorithm::LookAhead), Segments::Keys),
            28
        );
        assert_eq!(items(auto, Segments::None), 32);
        assert_eq!(items(auto, Segments::Offsets), 32);
        assert_eq!(
            items(ScanConfig::new(ScanAlgorithm::LookBack), Segments::Keys),
            32
        );
        assert_eq!(items(auto.items_per_thread(32), Segments::Keys), 32);
        assert_eq!(items(auto.portable(), Segments::Keys), 32);
        // where the odd run's stages do not fit either: the default (LookBack's kernel)
        assert_eq!(items(auto.block(960), Segments::Keys), 32);
        let spec = scan_plan(auto, F32, Segments::Keys, false)
            .unwrap()
            .kernels();
        assert!(spec.defines.contains(&("R_VECS", 7)));
        // 8- and 16-byte values by u32 key: 14 and 7 a thread, six stages of 28 KiB
        let plan = |m_size: usize, segments: Segments| {
            let values = Items {
                m_size,
                in_size: m_size,
                ..F32
            };
            let plan = scan_plan(auto, values, segments, false).unwrap();
            (plan.items, plan.ahead)
        };
        assert_eq!(plan(8, Segments::Keys), (14, 6));
        assert_eq!(plan(16, Segments::Keys), (7, 6));
        assert_eq!(plan(8, Segments::Offsets), (16, 5));
        // 1-byte values have no such run; lifted items keep the default (16 f32 lifted into
        // 8-byte values)
        assert_eq!(plan(1, Segments::Keys).0, 32);
        let lifted = Items {
            in_size: 4,
            m_size: 8,
            ..F32
        };
        let explicit = ScanConfig::new(ScanAlgorithm::LookAhead);
        assert_eq!(
            scan_plan(explicit, lifted, Segments::Keys, false)
                .unwrap()
                .items,
            16
        );
    }

    #[test]
    fn entries_in_16_byte_parts() {
        let parts: Vec<u32> = [1, 4, 8, 12, 13, 16, 24, 36, 48, 49, 72]
            .map(word_parts)
            .to_vec();
        assert_eq!(parts, [1, 1, 1, 1, 2, 2, 2, 3, 4, 0, 0]);
    }
}
