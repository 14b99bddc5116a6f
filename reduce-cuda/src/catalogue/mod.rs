//! The algorithm catalogue: the public algorithm names and configurations, and for each
//! configuration a plan — every parameter fixed and validated, the kernel text to compile, and
//! the launches that run it.
//!
//! One module per algorithm family, the plain and segmented members side by side: its
//! parameters and their checks, its shared memory, its kernel specs, its kernels' typed
//! arguments and its launches. `tuning.rs` holds every default and every `Auto` rule;
//! `config.rs` the configurations and the checks the families share.
//!
//! | family | plain | segmented | kernels |
//! |---|---|---|---|
//! | `tree.rs` | `Tb2`, `Tb4Warp` | `Tb2Seg`, `Tb4WarpSeg` | tb2.cu, tb4_warp.cu, seg_tree.cu |
//! | `matrix.rs` | `Matrix`, `PersistentMatrix`, `DiffWarps` | `MatrixSeg`, `PersistentMatrixSeg`, `DiffWarps16Seg` | matrix.cu, diff_warps.cu, seg_matrix.cu |
//! | `shuffle.rs` | `Shuffle` | `SegShuffle`, `SegPipeline` | shuffle.cu (+ lanes.cuh), seg_shuffle.cu (+ seg_tile.cuh, pipe.cuh) |
//! | `portable.rs` | `Shuffle`, `Auto` with `Config::portable` | `SegShuffle`, `Auto` with `SegConfig::portable` | portable.cu (+ lanes.cuh), seg_portable.cu (+ seg_common.cuh, lanes.cuh) |
//! | `merge.rs` | | `SegMerge` | seg_merge.cu |
//! | `heads.rs` | | `SegHeads` | seg_heads.cu (+ seg_common.cuh, lanes.cuh) |
//! | `blocks.rs` | | `SegBlocks` | seg_blocks.cu (+ seg_common.cuh, lanes.cuh) |
//! | `axes.rs` | along axes: `Strips` | | axes.cu |
//! | `axes_portable.rs` | along axes: `Strips`, `Auto` with `AxisConfig::portable` | | axes_portable.cu |
//! | `scan/` | scans: `LookBack`, `ReduceThenScan`, `LookAhead` | offsets, keys (all three) | scan.cu, then pipe.cuh and scan_ahead.cu |
//!
//! `caps.rs` is the rule by which a kernel is compiled with its registers capped for more resident
//! blocks (the scans' `scan_tiles`, SegHeads' fold). `paper.rs` is the procedure the paper's
//! five segmented algorithms share (identity-filled output, owners, passes of (value, owner)
//! pairs). To add an algorithm: a variant in [`Algorithm`] or [`SegAlgorithm`] (and its `ALL`
//! and `name`), its family module (a plan implementing [`PlainPlan`] or [`SegPlan`], and
//! [`signatures`] of its kernels), and one arm in [`plain_plan`] or [`seg_plan`].

mod algorithm;
pub(crate) mod axes;
pub(crate) mod axes_portable;
mod blocks;
mod caps;
mod config;
mod heads;
mod matrix;
mod merge;
mod paper;
mod plan;
mod portable;
mod scan;
mod shuffle;
mod tree;
pub(crate) mod tuning;

pub use algorithm::{Algorithm, AxisAlgorithm, ScanAlgorithm, SegAlgorithm};
pub use config::{AxisConfig, Config, ScanConfig, SegConfig};
pub(crate) use scan::{scan_plan, ScanPlan, Segments};

pub(crate) use plan::{PlainPlan, SegPlan, SegShape};

use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::{Items, KernelSpec};
use config::{invalid, refuse};
use reduce_core::axes::Axes;

/// A plan of the reductions along axes: the default mode's strips (`Auto` with the portable
/// kernel's tree for rows, which keeps the order too, and the plain reduction for one result),
/// or the portable passes (the plain portable reduction for one result).
#[derive(Clone, Copy, Debug)]
pub(crate) enum AxisPlan {
    Strips(axes::Strips),
    Auto(axes::Strips, axes_portable::PortableAxes),
    Portable(axes_portable::PortableAxes),
}

/// The plan of `config` for `items` (every check happens here, before anything is compiled).
pub(crate) fn axis_plan(config: AxisConfig, items: Items) -> Result<AxisPlan> {
    let name = match config.algorithm {
        AxisAlgorithm::Auto => AxisAlgorithm::Strips,
        other => other,
    }
    .name();
    if config.portable {
        return Ok(AxisPlan::Portable(axes_portable::portable_axes(
            name, config, items,
        )?));
    }
    let strips = axes::strips(name, config, items)?;
    Ok(match config.algorithm {
        AxisAlgorithm::Auto => {
            let tree = AxisConfig::default().portable();
            AxisPlan::Auto(strips, axes_portable::portable_axes(name, tree, items)?)
        }
        _ => AxisPlan::Strips(strips),
    })
}

impl AxisPlan {
    /// The kernels the plan may launch.
    pub fn kernels(&self) -> Vec<KernelSpec> {
        match self {
            AxisPlan::Strips(p) => vec![p.kernels()],
            AxisPlan::Auto(s, t) => vec![s.kernels(), t.kernels()],
            AxisPlan::Portable(p) => vec![p.kernels()],
        }
    }

    /// Queues the reduction of the items at `input` (the array `axes` describes, with at least
    /// one result) into `out`.
    pub fn launch(&self, d: &mut Dispatch, input: u64, axes: &Axes, out: u64) -> Result<()> {
        match self {
            AxisPlan::Strips(p) => p.launch(d, input, axes, out),
            // One result (every axis longer than 1 reduced) is the fold of every item in flat
            // order: the plain reduction's (in the portable mode its bits are portable::fold's,
            // which portable::fold_axes gives one result).
            AxisPlan::Auto(..) | AxisPlan::Portable(_)
                if axes.results == 1 && axes.reduced_len > 0 =>
            {
                let config = match self {
                    AxisPlan::Portable(_) => Config::default().portable(),
                    _ => Config::default(),
                };
                let plan = plain_plan(config, d.items(), input)?;
                plan.launch(d, input, axes.reduced_len as u64, Some(out))
                    .map(drop)
            }
            AxisPlan::Auto(_, tree) if tree.suits_rows(axes) => tree.launch(d, input, axes, out),
            AxisPlan::Auto(strips, _) => strips.launch(d, input, axes, out),
            AxisPlan::Portable(p) => p.launch(d, input, axes, out),
        }
    }
}

/// The plan of `config` for `items` at device address `items_at` (Shuffle's kernel is
/// specialised for the items' offset from a 16-byte boundary). Every check of the
/// configuration happens here, before anything is compiled.
pub(crate) fn plain_plan(
    config: Config,
    items: Items,
    items_at: u64,
) -> Result<Box<dyn PlainPlan>> {
    let algorithm = config.algorithm;
    if items.lifted && !matches!(algorithm, Algorithm::Shuffle | Algorithm::Auto) {
        return Err(invalid(
            algorithm.name(),
            "lifted inputs (reduce_lifted) are read by Shuffle only: use Algorithm::Shuffle or \
             Algorithm::Auto",
        ));
    }
    let knobs = config.knobs();
    let ours = matches!(algorithm, Algorithm::Shuffle | Algorithm::Auto);
    if !ours {
        refuse(algorithm.name(), "tile_group", knobs.tile_group)?;
    }
    if config.portable {
        if !ours {
            return Err(invalid(
                algorithm.name(),
                "the portable grouping is offered by Shuffle and Auto; the paper's algorithms \
                 keep their own groupings",
            ));
        }
        return Ok(Box::new(portable::plain(
            algorithm.name(),
            &knobs,
            items,
            items_at,
        )?));
    }
    Ok(match algorithm {
        Algorithm::Tb2 | Algorithm::Tb4Warp => Box::new(tree::plain(algorithm, &knobs)?),
        Algorithm::Matrix | Algorithm::PersistentMatrix | Algorithm::DiffWarps => {
            Box::new(matrix::plain(algorithm, &knobs)?)
        }
        Algorithm::Shuffle => Box::new(shuffle::plain(&knobs, items, items_at, false)?),
        Algorithm::Auto => {
            let order_free = tuning::plain_order_free(items.commutative, knobs.tile_group);
            Box::new(shuffle::plain(&knobs, items, items_at, order_free)?)
        }
    })
}

/// The plan of `config` for `shape` and a layout of `segments` segments over `n` items (`Auto`
/// chooses from them; 0 and 0 for the plan a launch of unknown size would use). Every check of
/// the configuration happens here, before anything is compiled.
pub(crate) fn seg_plan(
    config: SegConfig,
    shape: SegShape,
    n: usize,
    segments: usize,
) -> Result<Box<dyn SegPlan>> {
    if config.portable {
        let name = config.algorithm.name();
        if !matches!(
            config.algorithm,
            SegAlgorithm::SegShuffle | SegAlgorithm::Auto
        ) {
            return Err(invalid(
                name,
                "the portable grouping is offered by SegShuffle and Auto; the other algorithms \
                 keep their own groupings",
            ));
        }
        return Ok(Box::new(portable::segmented(
            name,
            &config.knobs(),
            shape,
            config.trusted,
        )?));
    }
    // SegHeads and SegBlocks take CSR offsets; the owner form runs what Auto runs.
    let config = match config.algorithm {
        SegAlgorithm::SegHeads | SegAlgorithm::SegBlocks if !shape.offsets_form => SegConfig {
            algorithm: SegAlgorithm::Auto,
            ..config
        },
        _ => config,
    };
    let config = resolve(config, shape, n, segments);
    let algorithm = config.algorithm;
    let name = algorithm.name();
    let knobs = config.knobs();
    let paper = algorithm.is_paper();
    if shape.items.lifted && paper {
        return Err(invalid(
            name,
            "lifted items are read by SegShuffle, SegPipeline, SegHeads, SegBlocks and SegMerge (and Auto) \
             only",
        ));
    }
    if !matches!(
        algorithm,
        SegAlgorithm::SegMerge | SegAlgorithm::SegPipeline
    ) {
        refuse(
            name,
            "stages (SegMerge's and SegPipeline's pipelines)",
            knobs.stages,
        )?;
    }
    if shape.wide && paper {
        return Err(invalid(
            name,
            "u64 offsets or owners are taken by SegShuffle, SegPipeline, SegHeads, SegBlocks and \
             SegMerge (and Auto) only",
        ));
    }
    Ok(match algorithm {
        SegAlgorithm::Tb2Seg | SegAlgorithm::Tb4WarpSeg => {
            Box::new(tree::segmented(algorithm, &knobs, shape)?)
        }
        SegAlgorithm::MatrixSeg
        | SegAlgorithm::PersistentMatrixSeg
        | SegAlgorithm::DiffWarps16Seg => Box::new(matrix::segmented(algorithm, &knobs, shape)?),
        SegAlgorithm::SegShuffle | SegAlgorithm::SegPipeline => {
            Box::new(shuffle::segmented(algorithm, &knobs, shape)?)
        }
        SegAlgorithm::SegMerge => Box::new(merge::plan(&knobs, shape)?),
        SegAlgorithm::SegHeads => Box::new(heads::plan(&knobs, shape)?),
        SegAlgorithm::SegBlocks => Box::new(blocks::plan(&knobs, shape, n, segments)?),
        SegAlgorithm::Auto => unreachable!("Auto is resolved above"),
    })
}

/// The plans `Gpu::prepare_segmented` compiles for `config` and `shape`: the plan of N = 0, and
/// for `Auto` SegBlocks' (at each of its blocks) and SegHeads' too where their bands hold calls
/// of this shape (so that a call inside a band does not compile on first use).
pub(crate) fn seg_plans_to_prepare(
    config: SegConfig,
    shape: SegShape,
) -> Result<Vec<Box<dyn SegPlan>>> {
    let mut plans = vec![seg_plan(config, shape, 0, 0)?];
    if config.algorithm == SegAlgorithm::Auto && !config.portable {
        // SegBlocks at each of its blocks (tuning::seg_blocks_block; a shape's bands may take
        // only some of them).
        if tuning::seg_blocks_may_win(&config, shape) {
            for block in tuning::SEG_BLOCKS_BLOCKS {
                let blocks = SegConfig {
                    algorithm: SegAlgorithm::SegBlocks,
                    block: Some(block),
                    ..config
                };
                plans.push(seg_plan(blocks, shape, 0, 0)?);
            }
        }
        if tuning::seg_heads_may_win(&config, shape) {
            let heads = SegConfig {
                algorithm: SegAlgorithm::SegHeads,
                ..config
            };
            plans.push(seg_plan(heads, shape, 0, 0)?);
        }
    }
    Ok(plans)
}

/// `config` with `Auto` resolved ([`tuning::resolve_segmented`], told what SegShuffle can take).
fn resolve(config: SegConfig, shape: SegShape, n: usize, segments: usize) -> SegConfig {
    let block = config.block.unwrap_or(tuning::SEG_SHUFFLE_BLOCK);
    let facts = tuning::SegShuffleFacts {
        fits: shuffle::seg_fits(shape, block),
        limits: shuffle::seg_limits(shape),
        tile_fits: &|items| shuffle::seg_tile_fits(shape, block, items),
        merge_fits: merge::plan(&config.knobs(), shape).is_ok_and(|m| m.static_fits()),
        tb2_block: tree::tb2_seg_block_within(&shape.items, tuning::ANY_DEVICE_BLOCK_SMEM),
    };
    tuning::resolve_segmented(config, shape, n, segments, facts)
}

/// (entry point, parameter names) of every kernel the families and the dispatch layer launch,
/// for the test that holds them against the kernel files.
#[cfg(test)]
pub(crate) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    [
        tree::signatures(),
        matrix::signatures(),
        shuffle::signatures(),
        portable::signatures(),
        merge::signatures(),
        heads::signatures(),
        blocks::signatures(),
        axes_portable::signatures(),
        axes::signatures(),
        scan::signatures(),
        crate::dispatch::segmented::signatures(),
    ]
    .concat()
}

#[cfg(test)]
mod tests;
