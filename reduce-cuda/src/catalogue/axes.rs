//! The axes family: reductions along the axes of row-major arrays (`AxisAlgorithm::Strips`,
//! kernels/axes.cu). The reduced axes, merged where adjacent, are taken one run at a time,
//! innermost first; each run is an array (B, K, C) reduced along K: a launch folds strips of
//! K for every (b, c), and launches over the strips follow until one value per (b, c) is left.
//! A thread folds a strip of one (b, c) where C > 1 (neighbouring threads, neighbouring
//! columns); rows (C = 1) of `AXES_ROWS_MIN` items or more, and 2, 4 or 8 columns side by side,
//! are folded by a group of lanes per strip (up to a warp, fewer for short rows), its lanes
//! reading neighbouring 64-byte runs as vectors (few columns with the order kept: runs of at
//! least `AXES_COLS_KEPT_ROWS` rows, up to 128 bytes, in kernels of 3 blocks per SM where a
//! lane's run and its column values pass `AXES_COLS_SHORT_BYTES`); rows of up to 16 items in
//! one strip by a thread each, several rows at a time. The portable mode
//! (`AxisConfig::portable`) has its own kernel: `axes_portable.rs`.

use super::algorithm::AxisAlgorithm;
use super::config::{invalid, AxisConfig};
use super::tuning::{
    AXES_COLS_KEPT_ROWS, AXES_COLS_ROW_BYTES, AXES_COLS_RUN_BYTES, AXES_COLS_SHORT_BYTES,
    AXES_LANE_BYTES, AXES_MIN_STRIP, AXES_ROWS_MIN, AXES_SHORT_BYTES, AXES_THREADS_PER_SM,
};
use crate::device::{kernel_signature, Entry, Kernel};
use crate::dispatch::Dispatch;
use crate::error::Result;
use crate::jit::{Family, Items, KernelSpec};
use reduce_core::axes::Axes;

kernel_signature! {
    /// Every (b, strip s, c) of the (B, K, C) array at `in`: the fold of its strip of K into
    /// `out[(b * strips + s) * C + c]`.
    pub(crate) struct AxesArgs { r#in, batches, k, c, strip, strips, out }
}
kernel_signature! {
    /// Every (row b, strip s) of the rows at `in`, a group of `group` lanes each, its lanes
    /// folding `per_lane` items at a time: the fold of its strip into `out[b * strips + s]`.
    pub(crate) struct AxesRowsArgs { r#in, rows, k, strip, strips, per_lane, group, out }
}
kernel_signature! {
    /// The rows schedule over rows of `cols` items (2, 4 or 8 columns folded side by side):
    /// the folds of strip s of batch b into `out[(b * strips + s) * cols + c]`.
    pub(crate) struct AxesColsArgs { r#in, rows, k, strip, strips, per_lane, group, cols, out }
}
kernel_signature! {
    /// Every row of `k` items (at most 16, in `AXES_SHORT_BYTES`) at `in`, a thread each: its
    /// fold into `out[row]`.
    pub(crate) struct AxesShortArgs { r#in, rows, k, out }
}
kernel_signature! {
    /// `out[0 .. count]` = the identity.
    pub(crate) struct AxesFillArgs { out, count }
}

/// The first launch: the call's items (lifted ones too).
const REDUCE_AXES: Entry<AxesArgs> = Entry::new("reduce_axes");
/// Later launches: monoid values.
const REDUCE_AXES_VALUES: Entry<AxesArgs> = Entry::new("reduce_axes_values");
const REDUCE_AXES_ROWS: Entry<AxesRowsArgs> = Entry::new("reduce_axes_rows");
const REDUCE_AXES_ROWS_VALUES: Entry<AxesRowsArgs> = Entry::new("reduce_axes_rows_values");
const REDUCE_AXES_COLS: Entry<AxesColsArgs> = Entry::new("reduce_axes_cols");
const REDUCE_AXES_COLS_VALUES: Entry<AxesColsArgs> = Entry::new("reduce_axes_cols_values");
const REDUCE_AXES_COLS_LONG: Entry<AxesColsArgs> = Entry::new("reduce_axes_cols_long");
const REDUCE_AXES_COLS_LONG_VALUES: Entry<AxesColsArgs> =
    Entry::new("reduce_axes_cols_long_values");
const REDUCE_AXES_SHORT: Entry<AxesShortArgs> = Entry::new("reduce_axes_short");
const REDUCE_AXES_SHORT_VALUES: Entry<AxesShortArgs> = Entry::new("reduce_axes_short_values");
const AXES_FILL_IDENTITY: Entry<AxesFillArgs> = Entry::new("axes_fill_identity");

/// `Strips` with every parameter fixed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Strips {
    name: &'static str,
    min_strip: u64,
    /// The rows schedule folds each lane's runs of a strip by itself (commutative monoids,
    /// `Auto`): the order of the items is not kept.
    order_free: bool,
}

/// The default mode's plan of `config` (algorithm `name`) for `items`.
pub(super) fn strips(name: &'static str, config: AxisConfig, items: Items) -> Result<Strips> {
    let min_strip = config.min_strip.unwrap_or(AXES_MIN_STRIP);
    if min_strip < 2 {
        return Err(invalid(
            name,
            format!("min_strip {min_strip} must be at least 2 (each pass must shorten K)"),
        ));
    }
    Ok(Strips {
        name,
        min_strip: min_strip as u64,
        order_free: items.commutative && config.algorithm == AxisAlgorithm::Auto,
    })
}

/// One launch: the (B, K, C) array it reads, its strips, and whether it reads the call's items.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Launch {
    batches: u64,
    k: u64,
    c: u64,
    strip: u64,
    strips: u64,
    first: bool,
    /// The bytes of each item it reads (the call's items, or monoid values).
    size: u64,
    /// (lanes per group, rows per lane and tile): a group of lanes per (b, strip), for rows
    /// (C = 1) and few columns (C of 2, 4, 8 side by side); else a thread per (b, strip, c), or
    /// per short row.
    rows: Option<(u64, u64)>,
    /// Few columns whose lane run and column values take more than `AXES_COLS_SHORT_BYTES`:
    /// the kernels capped for 3 blocks per SM (`reduce_axes_cols_long`).
    long_runs: bool,
}

impl Launch {
    /// The values it writes.
    fn outputs(&self) -> u64 {
        self.batches * self.strips * self.c
    }

    /// The threads it runs.
    fn threads(&self) -> u64 {
        match (self.rows, self.short_rows_per_thread()) {
            (Some((group, _)), _) => (self.batches * self.strips * group).next_multiple_of(32),
            (None, Some(per_thread)) => self.outputs().div_ceil(per_thread),
            (None, None) => self.outputs(),
        }
    }

    /// Short rows (the kernel's `r_axes_short`: one strip of C = 1, at most 16 items in
    /// `AXES_SHORT_BYTES`, a thread per row): the rows each thread takes at a time.
    fn short_rows_per_thread(&self) -> Option<u64> {
        let kmax = self.k.next_power_of_two();
        let short = self.c == 1 && self.strips == 1 && kmax <= 16;
        (short && kmax * self.size <= AXES_SHORT_BYTES)
            .then(|| (AXES_SHORT_BYTES / (kmax * self.size)).max(1))
    }
}

impl Strips {
    /// `Strips` folding every strip of at most `min_strip` items whole, in order (never the
    /// order-free rows): for K up to that and one reduced run, each result is the left fold of
    /// its items.
    pub(super) fn in_order(name: &'static str, min_strip: u64) -> Strips {
        Strips {
            name,
            // at least 2, as `strips` requires: each pass must shorten K
            min_strip: min_strip.max(2),
            order_free: false,
        }
    }

    /// The kernels of the family.
    pub fn kernels(&self) -> KernelSpec {
        KernelSpec::new(
            Family::Axes,
            &[
                ("R_ORDER_FREE", self.order_free as u32),
                ("R_AXES_KEPT_ROWS", AXES_COLS_KEPT_ROWS as u32),
                ("R_AXES_COLS_SHORT_BYTES", AXES_COLS_SHORT_BYTES as u32),
            ],
        )
    }

    /// The launches of `axes` on a device that keeps `threads` threads busy, in order, for
    /// items of `in_size` bytes lifted into `m_size`-byte values.
    fn launches(&self, axes: &Axes, threads: u64, in_size: u64, m_size: u64) -> Vec<Launch> {
        // Sizes divide the bytes a lane or thread takes: a zero-sized type counts as one byte.
        let (in_size, m_size) = (in_size.max(1), m_size.max(1));
        let mut dims: Vec<(u64, bool)> = axes.runs().iter().map(|&(e, r)| (e as u64, r)).collect();
        let mut passes = Vec::new();
        while let Some(p) = dims.iter().rposition(|&(_, reduced)| reduced) {
            let before: u64 = dims[..p].iter().map(|&(e, _)| e).product();
            let after: u64 = dims[p + 1..].iter().map(|&(e, _)| e).product();
            passes.push((before, dims[p].0, after));
            dims.remove(p);
        }
        if passes.is_empty() {
            // No axis longer than 1 to reduce: each item is its own result (through the lift).
            passes.push((axes.results as u64, 1, 1));
        }
        let mut launches: Vec<Launch> = Vec::new();
        for (b, mut k, c) in passes {
            loop {
                let first = launches.is_empty();
                let size = if first { in_size } else { m_size };
                // few columns: rows of c items folded side by side (in order with at least
                // AXES_COLS_KEPT_ROWS rows a lane's run, to pay for a shuffle tree per column
                // and tile; the kernel's R_AXES_RUN_ROWS)
                let base_rows = (AXES_LANE_BYTES / (size * c)).max(1);
                let per_lane = if !self.order_free && c > 1 {
                    base_rows.max(AXES_COLS_KEPT_ROWS)
                } else {
                    base_rows
                };
                let few = matches!(c, 2 | 4 | 8)
                    && c * size <= AXES_COLS_ROW_BYTES
                    && per_lane * c * size <= AXES_COLS_RUN_BYTES;
                let (strip, rows) = if (c == 1 || few) && k >= AXES_ROWS_MIN {
                    // a group of lanes per strip of whole tiles: as many lanes as a row's runs
                    // need, up to a warp
                    let group = k.div_ceil(per_lane).next_power_of_two().min(32);
                    let tile = group * per_lane;
                    let tiles = k.div_ceil(tile);
                    let wanted = (threads / group).div_ceil(b).clamp(1, tiles);
                    (tiles.div_ceil(wanted) * tile, Some((group, per_lane)))
                } else {
                    let wanted = threads.div_ceil(b * c).clamp(1, k);
                    (k.div_ceil(wanted).max(self.min_strip.min(k)), None)
                };
                let strips = k.div_ceil(strip);
                launches.push(Launch {
                    batches: b,
                    k,
                    c,
                    strip,
                    strips,
                    first,
                    size,
                    rows,
                    long_runs: per_lane * c * size + c * m_size > AXES_COLS_SHORT_BYTES,
                });
                if strips == 1 {
                    break;
                }
                k = strips;
            }
        }
        launches
    }

    /// Queues the reduction of the items at `input` (the array `axes` describes, with at least
    /// one result) into `out`.
    pub fn launch(&self, d: &mut Dispatch, input: u64, axes: &Axes, out: u64) -> Result<()> {
        let module = d.module(&self.kernels())?.0;
        if axes.reduced_len == 0 {
            let kernel = d.device.helper_kernel(&module, AXES_FILL_IDENTITY)?;
            let count = axes.results as u64;
            return d.launch_over(&kernel, count, AxesFillArgs { out, count });
        }
        let threads = d.device.info.multiprocessors as u64 * AXES_THREADS_PER_SM;
        let items = d.items();
        let size = items.m_size as u64;
        let launches = self.launches(axes, threads, items.in_size as u64, size);
        // Two regions the launches between the first and the last write in turn.
        let middle = &launches[..launches.len() - 1];
        let largest = middle.iter().map(|l| l.outputs() * size).max().unwrap_or(0);
        let regions = match middle.is_empty() {
            true => Vec::new(),
            false => d.carve(&[largest as usize, largest as usize])?,
        };
        let spec = self.kernels();
        let strips = self.pair(d, &spec, [REDUCE_AXES, REDUCE_AXES_VALUES])?;
        let rows = self.pair(d, &spec, [REDUCE_AXES_ROWS, REDUCE_AXES_ROWS_VALUES])?;
        let cols = self.pair(d, &spec, [REDUCE_AXES_COLS, REDUCE_AXES_COLS_VALUES])?;
        let long = [REDUCE_AXES_COLS_LONG, REDUCE_AXES_COLS_LONG_VALUES];
        let cols_long = self.pair(d, &spec, long)?;
        let short = self.pair(d, &spec, [REDUCE_AXES_SHORT, REDUCE_AXES_SHORT_VALUES])?;
        let mut from = input;
        for (i, launch) in launches.iter().enumerate() {
            let to = match i + 1 == launches.len() {
                true => out,
                false => regions[i % 2],
            };
            let (threads, values) = (launch.threads(), !launch.first as usize);
            match launch.call(from, to) {
                Call::Strips(args) => d.launch_over(&strips[values], threads, args),
                Call::Rows(args) => d.launch_over(&rows[values], threads, args),
                Call::Cols(args) => d.launch_over(&cols[values], threads, args),
                Call::ColsLong(args) => d.launch_over(&cols_long[values], threads, args),
                Call::Short(args) => d.launch_over(&short[values], threads, args),
            }?;
            from = to;
        }
        Ok(())
    }

    /// The kernels of one schedule: for the call's items, and for monoid values.
    fn pair<A>(
        &self,
        d: &Dispatch,
        spec: &KernelSpec,
        entries: [Entry<A>; 2],
    ) -> Result<[Kernel<A>; 2]> {
        let [first, values] = entries;
        Ok([
            d.kernel(spec, first, 256, 0, self.name)?,
            d.kernel(spec, values, 256, 0, self.name)?,
        ])
    }

    /// The launches of `axes` on a device that keeps `threads` threads busy, for items of
    /// `in_size` bytes lifted into `m_size`-byte values (at least one result, a reduced extent
    /// above 0): per launch its entry point (0, 1: strips of the call's items, of values; 2,
    /// 3: rows; 4, 5: few columns; 6, 7: short rows; 8, 9: few columns of long runs), the
    /// threads it runs, the values it writes, then its arguments between `in` and `out`.
    pub(crate) fn launch_records(
        &self,
        axes: &Axes,
        threads: u64,
        in_size: u64,
        m_size: u64,
    ) -> Vec<Vec<u64>> {
        use crate::device::KernelArgs;
        (self.launches(axes, threads, in_size, m_size).iter())
            .map(|l| {
                let (kind, args) = match l.call(0, 0) {
                    Call::Strips(a) => (0, a.values()),
                    Call::Rows(a) => (1, a.values()),
                    Call::Cols(a) => (2, a.values()),
                    Call::Short(a) => (3, a.values()),
                    Call::ColsLong(a) => (4, a.values()),
                };
                let entry = 2 * kind + !l.first as u64;
                [entry, l.threads(), l.outputs()]
                    .into_iter()
                    .chain(args[1..args.len() - 1].iter().copied())
                    .collect()
            })
            .collect()
    }
}

/// A launch's kernel and arguments: which schedule, through its signature.
enum Call {
    Strips(AxesArgs),
    Rows(AxesRowsArgs),
    Cols(AxesColsArgs),
    /// Few columns with long runs (`Launch::long_runs`).
    ColsLong(AxesColsArgs),
    Short(AxesShortArgs),
}

impl Launch {
    /// The schedule and the arguments of this launch from the items at `from` into `to`.
    fn call(&self, from: u64, to: u64) -> Call {
        match self.rows {
            None if self.short_rows_per_thread().is_some() => Call::Short(AxesShortArgs {
                r#in: from,
                rows: self.batches,
                k: self.k,
                out: to,
            }),
            Some((group, per_lane)) if self.c > 1 => {
                let args = AxesColsArgs {
                    r#in: from,
                    rows: self.batches,
                    k: self.k,
                    strip: self.strip,
                    strips: self.strips,
                    per_lane,
                    group,
                    cols: self.c,
                    out: to,
                };
                match self.long_runs {
                    true => Call::ColsLong(args),
                    false => Call::Cols(args),
                }
            }
            Some((group, per_lane)) => Call::Rows(AxesRowsArgs {
                r#in: from,
                rows: self.batches,
                k: self.k,
                strip: self.strip,
                strips: self.strips,
                per_lane,
                group,
                out: to,
            }),
            None => Call::Strips(AxesArgs {
                r#in: from,
                batches: self.batches,
                k: self.k,
                c: self.c,
                strip: self.strip,
                strips: self.strips,
                out: to,
            }),
        }
    }
}

#[cfg(test)]
pub(super) fn signatures() -> Vec<(&'static str, &'static [&'static str])> {
    use crate::device::KernelArgs;
    vec![
        (REDUCE_AXES.name, AxesArgs::PARAMS),
        (REDUCE_AXES_VALUES.name, AxesArgs::PARAMS),
        (REDUCE_AXES_ROWS.name, AxesRowsArgs::PARAMS),
        (REDUCE_AXES_ROWS_VALUES.name, AxesRowsArgs::PARAMS),
        (REDUCE_AXES_COLS.name, AxesColsArgs::PARAMS),
        (REDUCE_AXES_COLS_VALUES.name, AxesColsArgs::PARAMS),
        (REDUCE_AXES_COLS_LONG.name, AxesColsArgs::PARAMS),
        (REDUCE_AXES_COLS_LONG_VALUES.name, AxesColsArgs::PARAMS),
        (REDUCE_AXES_SHORT.name, AxesShortArgs::PARAMS),
        (REDUCE_AXES_SHORT_VALUES.name, AxesShortArgs::PARAMS),
        (AXES_FILL_IDENTITY.name, AxesFillArgs::PARAMS),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const ITEMS: Items = Items {
        m_size: 8,
        in_size: 8,
        m_align: 4,
        lifted: false,
        commutative: false,
    };

    fn launches(shape: &[usize], axes: &[usize], threads: u64) -> Vec<Launch> {
        let n = shape.iter().product();
        let plan = strips("Strips", AxisConfig::default(), ITEMS).unwrap();
        plan.launches(&Axes::new(n, shape, axes).unwrap(), threads, 8, 8)
    }

    #[test]
    fn runs_become_passes_innermost_first_and_strips_shrink_to_one() {
        // columns of a tall matrix: enough (b, c) for every thread, one launch
        let l = launches(&[1000, 4096], &[0], 1024);
        assert_eq!(l.len(), 1);
        assert_eq!(
            (l[0].batches, l[0].k, l[0].c, l[0].strips),
            (1, 1000, 4096, 1)
        );
        // one long row: strips, then strips of strips, down to one; a warp per strip, each
        // strip whole tiles of 32 lanes' runs
        let l = launches(&[1 << 20], &[0], 4096);
        assert!(l.len() > 1 && l[0].first && !l[1].first);
        assert_eq!(l[0].rows, Some((32, 8))); // 64 bytes of 8-byte items
        assert_eq!(l[0].strip % (32 * 8), 0);
        // rows of 64 8-byte items: groups of 8 lanes; of 1000: a warp, the last tile partial
        assert_eq!(launches(&[50, 64], &[1], 1 << 20)[0].rows, Some((8, 8)));
        let l = launches(&[5, 1000], &[1], 1 << 20);
        assert_eq!((l[0].rows, l[0].strips), (Some((32, 8)), 4));
        assert_eq!(l.last().unwrap().strips, 1);
        for w in l.windows(2) {
            assert_eq!(w[1].k, w[0].strips);
        }
        // two reduced runs: the inner one (axis 2) first, then axis 0 of (A, B)
        let l = launches(&[5, 6, 7], &[0, 2], 1);
        assert_eq!(
            l.iter().map(|l| (l.batches, l.k, l.c)).collect::<Vec<_>>(),
            [(30, 7, 1), (1, 5, 6)]
        );
        // rows of 7: a thread each
        assert!(l.iter().all(|l| l.rows.is_none()));
        // nothing to reduce: a copy
        let l = launches(&[3, 4], &[], 1);
        assert_eq!((l[0].batches, l[0].k, l[0].c, l[0].strips), (12, 1, 1, 1));
    }

    #[test]
    fn short_rows_take_a_thread_each_several_at_a_time() {
        // rows of 1 (a copy through the lift), 3 and 16 four-byte items: 16, 4 and 1 per thread
        for (k, per_thread) in [(1, 16), (3, 4), (16, 1)] {
            let plan = strips("Strips", AxisConfig::default(), ITEMS).unwrap();
            let l = plan.launches(
                &Axes::new(1000 * k, &[1000, k], &[1]).unwrap(),
                1 << 20,
                4,
                4,
            );
            assert_eq!(l.len(), 1);
            assert_eq!(l[0].short_rows_per_thread(), Some(per_thread));
            assert_eq!(l[0].threads(), 1000u64.div_ceil(per_thread));
        }
        // 8-byte items: up to 8 of them; columns and longer rows are not short
        assert_eq!(
            launches(&[1000, 8], &[1], 1 << 20)[0].short_rows_per_thread(),
            Some(1)
        );
        assert_eq!(
            launches(&[1000, 9], &[1], 1 << 20)[0].short_rows_per_thread(),
            None
        );
        assert_eq!(
            launches(&[8, 1000], &[0], 1 << 20)[0].short_rows_per_thread(),
            None
        );
    }

    #[test]
    fn few_columns_go_to_the_rows_schedule_side_by_side() {
        // 8-byte items, order kept: 4 rows a lane's run (the shuffle trees cost less than the
        // loads save), up to 128 bytes: columns of 2 (64 bytes, `reduce_axes_cols`) and 4 (128
        // bytes, `reduce_axes_cols_long`), not 8; order-free (a commutative monoid under
        // `Auto`): 2, 4 and 8 (rows of at most 64 bytes, runs of 64); 3 and 16 columns, and too
        // short a K, by strips
        let l = launches(&[1000, 2], &[0], 1 << 10);
        assert_eq!((l[0].c, l[0].rows.map(|r| r.1)), (2, Some(4)));
        assert_eq!(l[0].threads(), l[0].strips * l[0].rows.unwrap().0);
        assert!(matches!(l[0].call(0, 0), Call::Cols(_)));
        let l = launches(&[1000, 4], &[0], 1 << 10);
        assert_eq!((l[0].c, l[0].rows.map(|r| r.1)), (4, Some(4)));
        assert!(matches!(l[0].call(0, 0), Call::ColsLong(_)));
        assert_eq!(launches(&[1000, 8], &[0], 1 << 10)[0].rows, None);
        let items = Items {
            commutative: true,
            ..ITEMS
        };
        let plan = strips("Strips", AxisConfig::default(), items).unwrap();
        // (a lane's run and its 8 column values pass 96 bytes with 8 columns: the long kernels)
        for (c, per_lane, long) in [(2, 4, false), (4, 2, false), (8, 1, true)] {
            let axes = Axes::new(1000 * c, &[1000, c], &[0]).unwrap();
            let l = plan.launches(&axes, 1 << 10, 8, 8);
            assert_eq!((l[0].c, l[0].rows.map(|r| r.1)), (c as u64, Some(per_lane)));
            assert_eq!(matches!(l[0].call(0, 0), Call::ColsLong(_)), long);
        }
        assert_eq!(launches(&[1000, 3], &[0], 1 << 10)[0].rows, None);
        assert_eq!(launches(&[1000, 16], &[0], 1 << 10)[0].rows, None);
        assert_eq!(launches(&[63, 2], &[0], 1 << 10)[0].rows, None);
    }

    #[test]
    fn a_strip_shorter_than_two_is_refused() {
        assert!(strips("Strips", AxisConfig::default().min_strip(1), ITEMS).is_err());
    }
}
