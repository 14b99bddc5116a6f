//! The CPU backend: rayon-parallel reductions that keep the left-to-right order.
//!
//! Order invariant: the input is cut into contiguous chunks; each chunk is folded left to right;
//! the chunk results are combined left to right. For segmented reductions a chunk yields one
//! partial per segment piece it holds, and the pieces of a segment are combined in chunk order.
//! The results are therefore exactly those of [`crate::fold`] for any associative monoid.
//!
//! Each call has a fallible twin (`try_reduce`, ...) that returns an index out of bounds in the
//! monoid's translated code as an error, as the GPU does, where the plain call panics as Rust
//! does (`crate::fault`). The scans are in `scan.rs`.

use crate::axes::Axes;
use crate::fault::{guarded, CpuError, IndexFault};
use crate::layout::{offsets_layout, owner_layout, LayoutError, SegIndex};
use crate::portable::segment;
use crate::{fold, DeviceCopy, Lift, Monoid};
use rayon::prelude::*;

mod scan;

/// Items per parallel task; below this a task costs more than it saves.
const MIN_CHUNK: usize = 1 << 14;

/// The CPU backend: the default when no GPU is present.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpu;

impl Cpu {
    /// A CPU backend on rayon's threads: the global pool, or the pool of an enclosing
    /// `ThreadPool::install` ([`Cpu::threads`]).
    pub fn new() -> Self {
        Cpu
    }

    /// The threads its calls run on: those of the rayon pool the caller is in (the global one,
    /// or the pool of an enclosing `ThreadPool::install`).
    pub fn threads(&self) -> usize {
        rayon::current_num_threads()
    }

    fn chunk_len(&self, n: usize) -> usize {
        let tasks = self.threads() * 4;
        n.div_ceil(tasks.max(1)).max(MIN_CHUNK)
    }

    /// The fold of all items, in parallel; equal to [`fold`] for any associative monoid.
    pub fn reduce<M: Monoid>(&self, items: &[M]) -> M {
        unchecked(self.plain(false, items))
    }

    /// [`Cpu::reduce`], with an index out of bounds in the monoid's translated code an error
    /// (as on the GPU) instead of a panic.
    pub fn try_reduce<M: Monoid>(&self, items: &[M]) -> Result<M, IndexFault> {
        self.plain(true, items)
    }

    fn plain<M: Monoid>(&self, checked: bool, items: &[M]) -> Result<M, IndexFault> {
        if items.len() <= MIN_CHUNK {
            return guarded::<M, _>(checked, || fold(items));
        }
        let partials = items
            .par_chunks(self.chunk_len(items.len()))
            .map(|chunk| guarded::<M, _>(checked, || fold(chunk)))
            .collect::<Result<Vec<M>, _>>()?;
        guarded::<M, _>(checked, || fold(&partials))
    }

    /// The fold of `lift(x, i)` over the items `x` (`i` the item's index), in parallel, without
    /// storing the lifted values: equal to [`fold`] of the lifted items.
    pub fn reduce_lifted<M: Lift<X>, X: DeviceCopy>(&self, items: &[X]) -> M {
        unchecked(self.lifted(false, items))
    }

    /// [`Cpu::reduce_lifted`], with an index out of bounds in the monoid's or the lift's
    /// translated code an error instead of a panic.
    pub fn try_reduce_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &[X],
    ) -> Result<M, IndexFault> {
        self.lifted(true, items)
    }

    fn lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        checked: bool,
        items: &[X],
    ) -> Result<M, IndexFault> {
        let fold_from = |start: usize, chunk: &[X]| {
            guarded::<M, _>(checked, || {
                chunk
                    .iter()
                    .enumerate()
                    .fold(M::identity(), |acc, (i, &x)| {
                        M::combine(acc, M::lift(x, (start + i) as u64))
                    })
            })
        };
        if items.len() <= MIN_CHUNK {
            return fold_from(0, items);
        }
        let chunk = self.chunk_len(items.len());
        let partials = items
            .par_chunks(chunk)
            .enumerate()
            .map(|(c, xs)| fold_from(c * chunk, xs))
            .collect::<Result<Vec<M>, _>>()?;
        guarded::<M, _>(checked, || fold(&partials))
    }

    /// `lift(x, i)` of every item `x` (`i` its index), in parallel: the lifted values
    /// themselves. A lifted input's segmented reduction, reduction along axes or scan is that
    /// of these values (its portable one too: the items lifted first).
    pub fn lift<M: Lift<X>, X: DeviceCopy>(&self, items: &[X]) -> Vec<M> {
        unchecked(self.lift_all(false, items))
    }

    /// [`Cpu::lift`], with an index out of bounds in the lift's translated code an error
    /// instead of a panic.
    pub fn try_lift<M: Lift<X>, X: DeviceCopy>(&self, items: &[X]) -> Result<Vec<M>, IndexFault> {
        self.lift_all(true, items)
    }

    fn lift_all<M: Lift<X>, X: DeviceCopy>(
        &self,
        checked: bool,
        items: &[X],
    ) -> Result<Vec<M>, IndexFault> {
        let chunk = self.chunk_len(items.len());
        let mut out = vec![M::identity(); items.len()];
        (out.par_chunks_mut(chunk).zip(items.par_chunks(chunk)))
            .enumerate()
            .try_for_each(|(c, (out, xs))| {
                guarded::<M, _>(checked, || {
                    for (i, (o, &x)) in out.iter_mut().zip(xs).enumerate() {
                        *o = M::lift(x, (c * chunk + i) as u64);
                    }
                })
            })?;
        Ok(out)
    }

    /// The fold of all items in the portable grouping, in parallel: the bits of
    /// [`crate::portable::fold`] (for floats too), which a GPU's portable mode
    /// (`Config::portable` in reduce-cuda) gives as well.
    pub fn reduce_portable<M: Monoid>(&self, items: &[M]) -> M {
        unchecked(self.portable(false, items.len(), |lo, hi| segment(items, lo, hi)))
    }

    /// [`Cpu::reduce_portable`], with an index out of bounds in the monoid's translated code an
    /// error instead of a panic.
    pub fn try_reduce_portable<M: Monoid>(&self, items: &[M]) -> Result<M, IndexFault> {
        self.portable(true, items.len(), |lo, hi| segment(items, lo, hi))
    }

    /// The portable fold of `lift(x, i)` over the items `x` (`i` the item's index): the items
    /// lifted first, then [`Cpu::reduce_portable`]'s grouping of the lifted values.
    pub fn reduce_lifted_portable<M: Lift<X>, X: DeviceCopy>(&self, items: &[X]) -> M {
        unchecked(self.portable(false, items.len(), lifted_root(items)))
    }

    /// [`Cpu::reduce_lifted_portable`], with an index out of bounds in the monoid's or the
    /// lift's translated code an error instead of a panic.
    pub fn try_reduce_lifted_portable<M: Lift<X>, X: DeviceCopy>(
        &self,
        items: &[X],
    ) -> Result<M, IndexFault> {
        self.portable(true, items.len(), lifted_root(items))
    }

    /// The portable fold of `n` items whose aligned chunks have the roots `chunk_root(lo, hi)`.
    fn portable<M: Monoid>(
        &self,
        checked: bool,
        n: usize,
        chunk_root: impl Fn(usize, usize) -> M + Sync,
    ) -> Result<M, IndexFault> {
        let tasks = rayon::current_num_threads() * 4;
        crate::portable::par_fold(n, tasks, chunk_root, |f| guarded::<M, _>(checked, f))
    }

    /// One value per CSR segment (see [`crate::fold_segments`]), in parallel.
    pub fn reduce_segments<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
    ) -> Result<Vec<M>, LayoutError> {
        let segments = offsets_layout::<M, I>(offsets, items.len())?;
        Ok(unchecked(self.segmented(false, items, offsets, segments)))
    }

    /// [`Cpu::reduce_segments`], with an index out of bounds in the monoid's translated code an
    /// error instead of a panic.
    pub fn try_reduce_segments<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
    ) -> Result<Vec<M>, CpuError> {
        let segments = offsets_layout::<M, I>(offsets, items.len())?;
        Ok(self.segmented(true, items, offsets, segments)?)
    }

    /// The segmented reduction of a checked layout of `segments` segments.
    fn segmented<M: Monoid, I: SegIndex>(
        &self,
        checked: bool,
        items: &[M],
        offsets: &[I],
        segments: usize,
    ) -> Result<Vec<M>, IndexFault> {
        let chunk = self.chunk_len(items.len());
        let pieces = (0..items.len().div_ceil(chunk))
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = (c * chunk, ((c + 1) * chunk).min(items.len()));
                // The segment holding item `lo`: the last s with offsets[s] <= lo.
                let at = |s: usize| offsets[s].to_u64() as usize;
                let mut s = offsets.partition_point(|&o| o.to_u64() as usize <= lo) - 1;
                guarded::<M, _>(checked, || {
                    let mut out = Vec::new();
                    while s < segments && at(s) < hi {
                        let start = at(s).max(lo);
                        let end = at(s + 1).min(hi);
                        if start < end {
                            out.push((s, fold(&items[start..end])));
                        }
                        s += 1;
                    }
                    out
                })
            })
            .collect::<Result<Vec<Vec<(usize, M)>>, _>>()?;
        guarded::<M, _>(checked, || {
            let mut result = vec![M::identity(); segments];
            for (s, partial) in pieces.into_iter().flatten() {
                result[s] = M::combine(result[s], partial);
            }
            result
        })
    }

    /// One value per CSR segment in the portable grouping, in parallel over segments (and a
    /// long segment over its parts): the bits
    /// of [`crate::portable::fold_segments`], which a GPU's `SegConfig::portable` gives as well.
    pub fn reduce_segments_portable<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
    ) -> Result<Vec<M>, LayoutError> {
        let segments = offsets_layout::<M, I>(offsets, items.len())?;
        Ok(unchecked(segmented_portable(
            false, items, offsets, segments,
        )))
    }

    /// [`Cpu::reduce_segments_portable`], with an index out of bounds in the monoid's
    /// translated code an error instead of a panic.
    pub fn try_reduce_segments_portable<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        offsets: &[I],
    ) -> Result<Vec<M>, CpuError> {
        let segments = offsets_layout::<M, I>(offsets, items.len())?;
        Ok(segmented_portable(true, items, offsets, segments)?)
    }

    /// One value per owner in the portable grouping (the bits of
    /// [`crate::portable::fold_by_owner`]), in parallel over segments.
    pub fn reduce_by_owner_portable<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        owner: &[I],
        num_segments: usize,
    ) -> Result<Vec<M>, LayoutError> {
        let offsets = owner_layout::<M, I>(owner, items.len(), num_segments)?;
        self.reduce_segments_portable(items, &offsets)
    }

    /// [`Cpu::reduce_by_owner_portable`], with an index out of bounds in the monoid's
    /// translated code an error instead of a panic.
    pub fn try_reduce_by_owner_portable<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        owner: &[I],
        num_segments: usize,
    ) -> Result<Vec<M>, CpuError> {
        let offsets = owner_layout::<M, I>(owner, items.len(), num_segments)?;
        self.try_reduce_segments_portable(items, &offsets)
    }

    /// One value per owner (see [`crate::fold_by_owner`]), in parallel.
    pub fn reduce_by_owner<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        owner: &[I],
        num_segments: usize,
    ) -> Result<Vec<M>, LayoutError> {
        let offsets = owner_layout::<M, I>(owner, items.len(), num_segments)?;
        self.reduce_segments(items, &offsets)
    }

    /// [`Cpu::reduce_by_owner`], with an index out of bounds in the monoid's translated code an
    /// error instead of a panic.
    pub fn try_reduce_by_owner<M: Monoid, I: SegIndex>(
        &self,
        items: &[M],
        owner: &[I],
        num_segments: usize,
    ) -> Result<Vec<M>, CpuError> {
        let offsets = owner_layout::<M, I>(owner, items.len(), num_segments)?;
        self.try_reduce_segments(items, &offsets)
    }
}

impl Cpu {
    /// One value per position of the kept axes of `xs`, a row-major array of `shape` (see
    /// [`crate::fold_axes`]), in parallel: many results at once, or each long one in ordered
    /// chunks.
    pub fn reduce_axes<M: Monoid>(
        &self,
        xs: &[M],
        shape: &[usize],
        axes: &[usize],
    ) -> Result<Vec<M>, LayoutError> {
        let a = Axes::of(xs, shape, axes)?;
        Ok(unchecked(self.along(false, xs, &a)))
    }

    /// [`Cpu::reduce_axes`], with an index out of bounds in the monoid's translated code an
    /// error instead of a panic.
    pub fn try_reduce_axes<M: Monoid>(
        &self,
        xs: &[M],
        shape: &[usize],
        axes: &[usize],
    ) -> Result<Vec<M>, CpuError> {
        let a = Axes::of(xs, shape, axes)?;
        Ok(self.along(true, xs, &a)?)
    }

    /// One value per position of the kept axes in the portable grouping, in parallel: the bits
    /// of [`crate::portable::fold_axes`], which a GPU's `AxisConfig::portable` gives as well.
    pub fn reduce_axes_portable<M: Monoid>(
        &self,
        xs: &[M],
        shape: &[usize],
        axes: &[usize],
    ) -> Result<Vec<M>, LayoutError> {
        let a = Axes::of(xs, shape, axes)?;
        Ok(unchecked(self.along_portable(false, xs, &a)))
    }

    /// [`Cpu::reduce_axes_portable`], with an index out of bounds in the monoid's translated
    /// code an error instead of a panic.
    pub fn try_reduce_axes_portable<M: Monoid>(
        &self,
        xs: &[M],
        shape: &[usize],
        axes: &[usize],
    ) -> Result<Vec<M>, CpuError> {
        let a = Axes::of(xs, shape, axes)?;
        Ok(self.along_portable(true, xs, &a)?)
    }

    /// Many results: one task per result; few long ones: each in aligned chunks of its runs
    /// ([`crate::portable::par_fold`]), the chunk's items gathered and folded as a sequence of
    /// their own (an aligned chunk's tree does not depend on where it starts).
    fn along_portable<M: Monoid>(
        &self,
        checked: bool,
        xs: &[M],
        a: &Axes,
    ) -> Result<Vec<M>, IndexFault> {
        let root = |base: usize, lo: usize, hi: usize| {
            let items = a.gather(xs, base, lo..hi);
            segment(&items, 0, items.len())
        };
        let tasks = rayon::current_num_threads() * 4;
        if a.results >= tasks || a.reduced_len <= MIN_CHUNK {
            return (0..a.results)
                .into_par_iter()
                .with_min_len((MIN_CHUNK / a.reduced_len.max(1)).max(1))
                .map(|o| guarded::<M, _>(checked, || root(a.base(o), 0, a.reduced_len)))
                .collect();
        }
        (0..a.results)
            .map(|o| {
                let base = a.base(o);
                crate::portable::par_fold(
                    a.reduced_len,
                    tasks,
                    |lo, hi| root(base, lo, hi),
                    |f| guarded::<M, _>(checked, f),
                )
            })
            .collect()
    }

    fn along<M: Monoid>(&self, checked: bool, xs: &[M], a: &Axes) -> Result<Vec<M>, IndexFault> {
        // The fold of reduced positions lo..hi of the result whose first item is at `base`.
        let run = |base: usize, lo: usize, hi: usize| {
            guarded::<M, _>(checked, || a.fold_run(xs, base, lo..hi))
        };
        let tasks = rayon::current_num_threads() * 4;
        if a.results >= tasks || a.reduced_len <= MIN_CHUNK {
            return (0..a.results)
                .into_par_iter()
                .with_min_len((MIN_CHUNK / a.reduced_len.max(1)).max(1))
                .map(|o| run(a.base(o), 0, a.reduced_len))
                .collect();
        }
        let chunk = self.chunk_len(a.reduced_len);
        (0..a.results)
            .map(|o| {
                let base = a.base(o);
                let partials = (0..a.reduced_len.div_ceil(chunk))
                    .into_par_iter()
                    .map(|c| run(base, c * chunk, ((c + 1) * chunk).min(a.reduced_len)))
                    .collect::<Result<Vec<M>, _>>()?;
                guarded::<M, _>(checked, || {
                    partials
                        .into_iter()
                        .reduce(M::combine)
                        .unwrap_or_else(M::identity)
                })
            })
            .collect()
    }
}

/// The portable root of the items `lo..hi` of `items` lifted (with their global indices), for
/// [`Cpu::portable`]: the chunk's lifted values, then their tree.
fn lifted_root<M: Lift<X>, X: DeviceCopy>(items: &[X]) -> impl Fn(usize, usize) -> M + Sync + '_ {
    move |lo, hi| {
        let xs: Vec<M> = (lo..hi).map(|i| M::lift(items[i], i as u64)).collect();
        segment(&xs, 0, xs.len())
    }
}

/// The portable value of every segment of a checked CSR layout, segments in parallel (each
/// one's tree is [`segment`]'s, at its global position).
fn segmented_portable<M: Monoid, I: SegIndex>(
    checked: bool,
    items: &[M],
    offsets: &[I],
    segments: usize,
) -> Result<Vec<M>, IndexFault> {
    let at = |s: usize| offsets[s].to_u64() as usize;
    let tasks = rayon::current_num_threads() * 4;
    (0..segments)
        .into_par_iter()
        .map(
            |s| match at(s + 1).saturating_sub(at(s)) >= tasks * MIN_CHUNK {
                true => long_segment_portable(checked, items, at(s), at(s + 1), tasks),
                false => guarded::<M, _>(checked, || segment(items, at(s), at(s + 1))),
            },
        )
        .collect()
}

/// The portable value of the long segment `items[start..end]`, in parallel: the segment cut into
/// about `tasks` parts at aligned boundaries of runs, each part's summary (its head and tail
/// items, its aligned blocks of runs folded) computed on its own, the summaries joined in order
/// (`portable::parts`: the bits of one [`segment`]).
fn long_segment_portable<M: Monoid>(
    checked: bool,
    items: &[M],
    start: usize,
    end: usize,
    tasks: usize,
) -> Result<M, IndexFault> {
    use crate::portable::parts::{combine, Summary};
    let run = crate::portable::run_len::<M>();
    // Parts of a power of two of runs, so that each is one block of the tree where it is whole.
    let part = (end - start)
        .div_ceil(tasks.max(1))
        .div_ceil(run)
        .next_power_of_two()
        * run;
    let cuts: Vec<usize> = std::iter::once(start)
        .chain(
            (start / part + 1..)
                .map(|k| k * part)
                .take_while(|&c| c < end),
        )
        .chain(std::iter::once(end))
        .collect();
    let summaries = cuts
        .par_windows(2)
        .map(|w| guarded::<M, _>(checked, || Summary::of(items, w[0], w[1], run)))
        .collect::<Result<Vec<_>, _>>()?;
    guarded::<M, _>(checked, || combine(&summaries, run))
}

/// The value of a call made with `checked` off, where a fault panics inside the call instead of
/// returning.
fn unchecked<T>(result: Result<T, IndexFault>) -> T {
    result.unwrap_or_else(|fault| unreachable!("an unchecked call returned {fault}"))
}
