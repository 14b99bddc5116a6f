//! The portable reductions along axes (`AxisConfig::portable`, served by `Strips` and `Auto`;
//! kernels/axes_portable.cu): each result has the bits of `reduce_core::portable::fold` over
//! its own reduced sequence. A pass computes, for every result, the tree's nodes of a level
//! above its leaves (the first pass: runs of 64 bytes of monoid values; later passes: the nodes
//! of the pass before), until one node per result is left. Which level a pass stops at, the
//! block and the grid change the speed, never the bits.

use super::axes::Strips;
use super::config::{invalid, AxisConfig};
use super::shuffle::lane_items;
use super::tuning::{axes_rows_by_tree, AXES_ROWS_MIN};
use crate::device::{kernel_signature, Entry};
use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::{Family, Items, KernelSpec};
use reduce_core::axes::Axes;
use reduce_core::portable::run_len_for_size;

kernel_signature! {
    /// One pass: `results` results of `k` positions, leaves of the kernel's run (the first
    /// pass) or of one node, a thread's unit of `2^q_log` leaves, nodes of `2^y_log` units
    /// (`nodes` per result) into `out`; the
    /// kept and reduced dims as (extent, stride) pairs, innermost first, `nk` and `nr` used.
    pub(crate) struct AxesPortableArgs {
        r#in, n, results, k, y_log, q_log, yfast, nodes,
        nk, ke0, ks0, ke1, ks1, ke2, ks2, ke3, ks3,
        nr, re0, rs0, re1, rs1, re2, rs2, re3, rs3,
        out,
    }
}

const REDUCE_AXES_PORTABLE: Entry<AxesPortableArgs> = Entry::new("reduce_axes_portable");
const REDUCE_AXES_PORTABLE_WARPS: Entry<AxesPortableArgs> =
    Entry::new("reduce_axes_portable_warps");
const REDUCE_AXES_PORTABLE_UNITS: Entry<AxesPortableArgs> =
    Entry::new("reduce_axes_portable_units");
const REDUCE_AXES_PORTABLE_NODES: Entry<AxesPortableArgs> =
    Entry::new("reduce_axes_portable_nodes");

/// The largest block, and the shared memory its warps' nodes may take.
const MAX_BLOCK: u32 = 256;
const NODES_SMEM: usize = 32 * 1024;
/// The log2 of a warp's lanes: the most leaves of a row's node in the first pass.
const WARP_LOG: u32 = 5;
/// The most leaves a thread folds into its unit, and the bytes of their values it may hold.
const MAX_UNIT: u32 = 8;
const UNIT_BYTES: usize = 256;

/// The portable plan along axes with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortableAxes {
    name: &'static str,
    /// Threads per block: a power of two from 32 to 256 whose nodes fit `NODES_SMEM`.
    block: u32,
    /// Items per leaf of the first pass (64 bytes of monoid values, at least one).
    run: u32,
    /// 16-byte vectors that hold a first-pass leaf of input items (0: item by item).
    vecs: u32,
    /// The most leaves a thread folds into its unit (a power of two; fewer for large values).
    unit: u32,
}

/// The portable plan of `config` (algorithm `name`: `Strips` or `Auto`) for `items`.
pub(super) fn portable_axes(
    name: &'static str,
    config: AxisConfig,
    items: Items,
) -> Result<PortableAxes> {
    if let Some(strip) = config.min_strip {
        return Err(invalid(
            name,
            format!(
                "min_strip ({strip}) is a setting of the default mode: the portable mode folds \
                 whole runs of the tree"
            ),
        ));
    }
    let size = items.m_size.max(1);
    let run = run_len_for_size(size) as u32;
    let mut block = MAX_BLOCK;
    while block > 32 && block as usize * size > NODES_SMEM {
        block /= 2;
    }
    let (_, vecs) = lane_items(name, items.in_size, Some(run))
        .map_err(|_| invalid(name, "a run of input items does not fit a lane"))?;
    let unit = (UNIT_BYTES / size).clamp(1, MAX_UNIT as usize) as u32;
    Ok(PortableAxes {
        name,
        block,
        run,
        vecs,
        unit: 1 << unit.ilog2(),
    })
}

/// The entry point a pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PassKernel {
    /// The pass before's nodes (leaves of one).
    Nodes = 0,
    /// The call's items, a leaf per thread, tiles of the block.
    Items = 1,
    /// The call's items, units of leaves per thread (columns).
    Units = 2,
    /// The call's items, a leaf per thread, tiles of a warp (long rows).
    Warps = 3,
}

/// One launch of the portable axes kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PortablePass {
    /// Its entry point: one of the first pass's (the call's items, leaves of a run), else the
    /// nodes of the pass before (leaves of one).
    pub entry: PassKernel,
    pub results: u64,
    /// Positions per result.
    pub k: u64,
    /// Units per node: `2^y_log`.
    pub y_log: u32,
    /// Leaves per unit (a thread's): `2^q_log`.
    pub q_log: u32,
    /// Whether a block's threads take neighbouring leaves of a result (rows) rather than
    /// neighbouring results (columns).
    pub yfast: bool,
    /// Nodes per result it writes.
    pub nodes: u64,
    /// (extent, stride) of the kept dims, innermost first.
    pub kept: [(u64, u64); 4],
    pub nk: u32,
    /// (extent, stride) of the reduced dims, innermost first.
    pub reduced: [(u64, u64); 4],
    pub nr: u32,
}

impl PortablePass {
    fn args(&self, input: u64, n: u64, out: u64) -> AxesPortableArgs {
        let (k, r) = (self.kept, self.reduced);
        AxesPortableArgs {
            r#in: input,
            n,
            results: self.results,
            k: self.k,
            y_log: self.y_log as u64,
            q_log: self.q_log as u64,
            yfast: self.yfast as u64,
            nodes: self.nodes,
            nk: self.nk as u64,
            ke0: k[0].0,
            ks0: k[0].1,
            ke1: k[1].0,
            ks1: k[1].1,
            ke2: k[2].0,
            ks2: k[2].1,
            ke3: k[3].0,
            ks3: k[3].1,
            nr: self.nr as u64,
            re0: r[0].0,
            rs0: r[0].1,
            re1: r[1].0,
            rs1: r[1].1,
            re2: r[2].0,
            rs2: r[2].1,
            re3: r[3].0,
            rs3: r[3].1,
            out,
        }
    }

    /// The blocks it keeps busy: a block's worth of results side by side, one node each (a
    /// block of warps that take their own tiles covers as many).
    fn tiles(&self, block: u32) -> u64 {
        let x = (block >> self.y_log).max(1) as u64;
        self.results.div_ceil(x) * self.nodes
    }
}

/// Kept and reduced runs alternate (`Axes::runs`), so an array of `MAX_DIMS` dimensions has at
/// most `MAX_DIMS.div_ceil(2)` of each: [`dims4`] holds them all.
const _: () = assert!(reduce_core::axes::MAX_DIMS.div_ceil(2) <= 4);

/// Up to four (extent, stride) dims, innermost first, and how many.
fn dims4(dims: &[(u64, u64)]) -> ([(u64, u64); 4], u32) {
    let mut d = [(1, 0); 4];
    for (slot, &dim) in d.iter_mut().zip(dims) {
        *slot = dim;
    }
    (d, dims.len() as u32)
}

/// Of an array's (extent, reduced) runs (`Axes::runs`): whether the innermost is reduced (rows),
/// and how many runs are.
fn row_shape(runs: &[(usize, bool)]) -> (bool, usize) {
    let rows = runs.last().is_some_and(|&(_, reduced)| reduced);
    (rows, runs.iter().filter(|&&(_, reduced)| reduced).count())
}

/// The log2 of the smallest power of two at least `n` (0 for 0).
fn log2_ceil(n: u64) -> u32 {
    n.max(1).next_power_of_two().trailing_zeros()
}

impl PortableAxes {
    /// The kernels of the family.
    pub fn kernels(&self) -> KernelSpec {
        KernelSpec::new(
            Family::AxesPortable,
            &[
                ("R_BLOCK", self.block),
                ("R_RUN", self.run),
                ("R_VECS", self.vecs),
                ("R_UNIT", self.unit),
            ],
        )
    }

    /// The passes over `axes` (at least one result), in order.
    pub fn passes(&self, axes: &Axes) -> Vec<PortablePass> {
        let block = self.block as u64;
        let block_log = log2_ceil(block);
        // The merged runs, innermost first, with their strides in the input.
        let (mut kept, mut reduced) = (Vec::new(), Vec::new());
        let mut stride = 1u64;
        let runs = axes.runs();
        for &(extent, is_reduced) in runs.iter().rev() {
            let side = if is_reduced { &mut reduced } else { &mut kept };
            side.push((extent as u64, stride));
            stride = stride.saturating_mul(extent as u64);
        }
        let (rows, _) = row_shape(&runs);
        let results = axes.results as u64;
        let k = axes.reduced_len as u64;
        let leaves = k.div_ceil(self.run as u64);
        // Rows: a warp's lanes on neighbouring leaves, one each, nodes of up to a warp's (each
        // warp on its own, no barrier). Columns: up to a block of neighbouring results side by
        // side, the rest of the block along the leaves, each thread a unit of up to `unit`
        // leaves (loads in flight, no barrier).
        let (y_log, q_log) = match rows {
            true => (log2_ceil(leaves).min(WARP_LOG), 0),
            false => {
                let inner = kept.first().map_or(1, |&(e, _)| e);
                let x_log = log2_ceil(inner).min(block_log);
                let y_log = log2_ceil(leaves).min(block_log - x_log);
                let q_log = log2_ceil(leaves.div_ceil(1 << y_log)).min(self.unit.ilog2());
                (y_log, q_log)
            }
        };
        let (kept4, nk) = dims4(&kept);
        let (reduced4, nr) = dims4(&reduced);
        let entry = match (rows, q_log > 0) {
            // Long rows: nodes of a warp's leaves, each warp on its own tiles.
            (true, _) if leaves > 1 << WARP_LOG => PassKernel::Warps,
            (_, true) => PassKernel::Units,
            _ => PassKernel::Items,
        };
        let mut pass = PortablePass {
            entry,
            results,
            k,
            y_log,
            q_log,
            yfast: rows,
            nodes: leaves.div_ceil(1 << (y_log + q_log)).max(1),
            kept: kept4,
            nk,
            reduced: reduced4,
            nr,
        };
        let mut passes = vec![pass];
        while pass.nodes > 1 {
            let k = pass.nodes;
            let y_log = log2_ceil(k).min(block_log);
            pass = PortablePass {
                entry: PassKernel::Nodes,
                results,
                k,
                y_log,
                q_log: 0,
                yfast: true,
                nodes: k.div_ceil(1 << y_log),
                kept: dims4(&[(results, k)]).0,
                nk: 1,
                reduced: dims4(&[(k, 1)]).0,
                nr: 1,
            };
            passes.push(pass);
        }
        passes
    }

    /// A copy with `block` threads per block (a power of two from 32 to 256): the tests' knob,
    /// which must change no bit.
    pub fn with_block(self, block: u32) -> Self {
        PortableAxes { block, ..self }
    }

    /// The passes' arguments over `axes` (at least one result), in order, with `in` and `out`
    /// left 0: each one's entry point, and its sizes (`n` the values it reads).
    pub fn pass_args(&self, axes: &Axes) -> Vec<(PassKernel, AxesPortableArgs)> {
        let mut n = axes.reduced_len as u64 * axes.results as u64;
        self.passes(axes)
            .iter()
            .map(|pass| {
                let args = pass.args(0, n, 0);
                n = pass.results * pass.nodes;
                (pass.entry, args)
            })
            .collect()
    }

    /// Whether `Auto` folds `axes` by this kernel's tree: rows of one reduced run, of a run or
    /// more and shorter than the strips' rows schedule (`tuning::axes_rows_by_tree`).
    pub fn suits_rows(&self, axes: &Axes) -> bool {
        let (rows, reduced_runs) = row_shape(&axes.runs());
        let k = axes.reduced_len as u64;
        rows && reduced_runs == 1 && axes_rows_by_tree(k, self.run)
    }

    /// Whether every result of `axes` is one leaf of one reduced run, short of the rows
    /// schedule: its value is then the left fold of its items, which `Strips` folding whole
    /// strips in order computes with the same bits — faster than this kernel's thread per
    /// result where that leaf is short, and than its thread per leaf down columns (rows of a
    /// whole leaf go faster here: 16-byte loads, a warp per 32 rows).
    fn one_leaf(&self, axes: &Axes) -> bool {
        let k = axes.reduced_len as u64;
        let (rows, reduced_runs) = row_shape(&axes.runs());
        let short = k < self.run as u64 || (k == self.run as u64 && !rows);
        short && k < AXES_ROWS_MIN && reduced_runs <= 1
    }

    /// Queues the reduction of the items at `input` (the array `axes` describes, with at least
    /// one result) into `out`.
    pub fn launch(&self, d: &mut Dispatch, input: u64, axes: &Axes, out: u64) -> Result<()> {
        if self.one_leaf(axes) {
            return Strips::in_order(self.name, self.run as u64).launch(d, input, axes, out);
        }
        let spec = self.kernels();
        let items = d.kernel(&spec, REDUCE_AXES_PORTABLE, self.block, 0, self.name)?;
        let warps = d.kernel(&spec, REDUCE_AXES_PORTABLE_WARPS, self.block, 0, self.name)?;
        let units = d.kernel(&spec, REDUCE_AXES_PORTABLE_UNITS, self.block, 0, self.name)?;
        let nodes = d.kernel(&spec, REDUCE_AXES_PORTABLE_NODES, self.block, 0, self.name)?;
        let passes = self.passes(axes);
        let size = d.items().m_size as u64;
        // Two regions the passes between the first and the last write in turn.
        let middle = &passes[..passes.len() - 1];
        let largest = middle.iter().map(|p| p.results * p.nodes * size).max();
        let regions = match largest {
            Some(bytes) => d.carve(&[bytes as usize, bytes as usize])?,
            None => Vec::new(),
        };
        let mut from = input;
        for (i, (pass, (_, args))) in passes.iter().zip(self.pass_args(axes)).enumerate() {
            let to = match i + 1 == passes.len() {
                true => out,
                false => regions[i % 2],
            };
            let kernel = match pass.entry {
                PassKernel::Items => &items,
                PassKernel::Warps => &warps,
                PassKernel::Units => &units,
                PassKernel::Nodes => &nodes,
            };
            let grid = pass
                .tiles(self.block)
                .clamp(1, d.persistent_grid(kernel, None)?);
            let args = AxesPortableArgs {
                r#in: from,
                out: to,
                ..args
            };
            d.launch(kernel, grid, args)?;
            from = to;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (REDUCE_AXES_PORTABLE.name, AxesPortableArgs::PARAMS),
        (REDUCE_AXES_PORTABLE_WARPS.name, AxesPortableArgs::PARAMS),
        (REDUCE_AXES_PORTABLE_UNITS.name, AxesPortableArgs::PARAMS),
        (REDUCE_AXES_PORTABLE_NODES.name, AxesPortableArgs::PARAMS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(m_size: usize) -> PortableAxes {
        let items = Items {
            m_size,
            in_size: m_size,
            m_align: 4,
            lifted: false,
            commutative: false,
        };
        portable_axes("Strips", AxisConfig::default().portable(), items).unwrap()
    }

    fn passes(shape: &[usize], axes: &[usize], m_size: usize) -> Vec<PortablePass> {
        let n = shape.iter().product();
        plan(m_size).passes(&Axes::new(n, shape, axes).unwrap())
    }

    #[test]
    fn passes_climb_the_tree_until_one_node_per_result() {
        // one row of 2^20 f32: 2^16 runs, nodes of a warp's 32 runs, then of 256 nodes, then
        // the last 8: one left
        let p = passes(&[1 << 20], &[0], 4);
        assert_eq!(p.len(), 3);
        assert_eq!(
            (p[0].entry, p[1].entry),
            (PassKernel::Warps, PassKernel::Nodes)
        );
        assert!(p[0].yfast);
        assert_eq!((p[0].y_log, p[0].q_log, p[0].nodes), (5, 0, 2048));
        assert_eq!((p[1].k, p[1].y_log, p[1].nodes), (2048, 8, 8));
        assert_eq!((p[2].k, p[2].y_log, p[2].nodes), (8, 3, 1));
        // rows of 64 f32: 4 runs, one pass, 64 rows per block
        let p = passes(&[1000, 64], &[1], 4);
        assert_eq!((p.len(), p[0].entry), (1, PassKernel::Items));
        assert_eq!((p[0].y_log, p[0].nodes), (2, 1));
        // columns of a (4096, 1000) matrix: a block of results side by side, 8 runs per thread
        let p = passes(&[4096, 1000], &[0], 4);
        assert!(!p[0].yfast && p[0].entry == PassKernel::Units);
        assert_eq!((p[0].y_log, p[0].q_log, p[0].nodes), (0, 3, 32));
        assert_eq!(p[0].kept[0], (1000, 1));
        assert_eq!(p[0].reduced[0], (4096, 1000));
        assert_eq!(p[1].kept[0], (1000, 32));
        // two long columns: two results side by side, 128 threads along each
        let p = passes(&[1 << 20, 2], &[0], 4);
        assert_eq!((p[0].y_log, p[0].q_log), (7, 3));
        // two reduced runs around a kept one: (5, 6, 7) along 0 and 2
        let p = passes(&[5, 6, 7], &[0, 2], 8);
        assert_eq!(p[0].nr, 2);
        assert_eq!(&p[0].reduced[..2], &[(7, 1), (5, 42)]);
        assert_eq!((p[0].nk, p[0].kept[0]), (1, (6, 7)));
        // nothing to reduce: one leaf of one item per result
        let p = passes(&[3, 4], &[], 4);
        assert_eq!((p.len(), p[0].k, p[0].nr, p[0].nodes), (1, 1, 0, 1));
        // a reduced extent of 0: one pass writing the identity
        let p = passes(&[3, 0], &[1], 4);
        assert_eq!((p.len(), p[0].k, p[0].nodes), (1, 0, 1));
    }

    #[test]
    fn auto_takes_rows_of_one_reduced_run() {
        let suits = |shape: &[usize], axes: &[usize]| {
            let n = shape.iter().product();
            plan(4).suits_rows(&Axes::new(n, shape, axes).unwrap())
        };
        // from a run (16 f32) up to the strips' rows schedule (64 items)
        assert!(suits(&[1000, 16], &[1]) && suits(&[3, 5, 63], &[2]));
        assert!(!suits(&[1000, 15], &[1]) && !suits(&[7, 64], &[1]));
        assert!(!suits(&[7, 1 << 20], &[1]) && !suits(&[64, 1000], &[0]));
        assert!(!suits(&[4, 32, 32], &[0, 2]));
    }

    #[test]
    fn min_strip_is_refused() {
        let items = Items {
            m_size: 4,
            in_size: 4,
            m_align: 4,
            lifted: false,
            commutative: false,
        };
        let config = AxisConfig::default().portable().min_strip(16);
        let err = portable_axes("Strips", config, items).unwrap_err();
        assert!(err.to_string().contains("min_strip"), "{err}");
    }

    #[test]
    fn one_leaf_per_result_goes_to_strips_in_order() {
        let one_leaf = |shape: &[usize], axes: &[usize]| {
            let n = shape.iter().product();
            plan(4).one_leaf(&Axes::new(n, shape, axes).unwrap())
        };
        assert!(one_leaf(&[1000, 15], &[1]) && one_leaf(&[16, 1000], &[0]));
        assert!(one_leaf(&[5, 1, 7], &[1]) && one_leaf(&[3, 4], &[]));
        // rows of a whole leaf or more run here
        assert!(!one_leaf(&[1000, 16], &[1]) && !one_leaf(&[1000, 17], &[1]));
        // two reduced runs: Strips would fold them run by run
        assert!(!one_leaf(&[2, 3, 2], &[0, 2]));
    }

    #[test]
    fn large_values_get_smaller_blocks_and_units() {
        assert_eq!((plan(4).block, plan(4).unit), (256, 8));
        assert_eq!((plan(48).block, plan(48).unit), (256, 4));
        assert_eq!((plan(256).block, plan(256).unit), (128, 1));
        assert_eq!(plan(4096).block, 32);
    }
}
