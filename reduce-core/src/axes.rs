//! Reductions along the axes of a row-major array: the shape and axes checks, the map from
//! (result, reduced position) to the item's flat index, and the sequential reference
//! [`fold_axes`].
//!
//! Order: result `o` (the kept coordinates, row-major) is the fold of the items at the reduced
//! coordinates taken in row-major order over the reduced axes in the array's axis order (the
//! last reduced axis fastest), whatever order `axes` lists them in.

use crate::layout::LayoutError;
use crate::Monoid;

/// The most dimensions an array may have.
pub const MAX_DIMS: usize = 8;

/// A checked (shape, axes) pair: the kept and the reduced extents with their strides in the
/// input, each in the array's axis order (used by the backends; [`fold_axes`] is the
/// reference).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Axes {
    /// (extent, stride) of each kept axis.
    pub kept: Vec<(usize, usize)>,
    /// (extent, stride) of each reduced axis.
    pub reduced: Vec<(usize, usize)>,
    /// The number of results.
    pub results: usize,
    /// The number of items each result folds.
    pub reduced_len: usize,
    /// (extent, reduced) of every axis, in axis order.
    pub dims: Vec<(usize, bool)>,
}

/// The product of `extents`: 0 if one is 0, else `None` past `usize::MAX`.
fn product_of(mut extents: impl Iterator<Item = usize> + Clone) -> Option<usize> {
    match extents.clone().any(|e| e == 0) {
        true => Some(0),
        false => extents.try_fold(1usize, |p, e| p.checked_mul(e)),
    }
}

impl Axes {
    /// Checks `shape` against `items` items and `axes` against `shape`.
    pub fn new(items: usize, shape: &[usize], axes: &[usize]) -> Result<Axes, LayoutError> {
        let dims = shape.len();
        if dims > MAX_DIMS {
            return Err(LayoutError::TooManyDims {
                dims,
                max: MAX_DIMS,
            });
        }
        let mut reduce = [false; MAX_DIMS];
        for &axis in axes {
            if axis >= dims {
                return Err(LayoutError::AxisOutOfRange { axis, dims });
            }
            if std::mem::replace(&mut reduce[axis], true) {
                return Err(LayoutError::AxisRepeated { axis });
            }
        }
        let product = product_of(shape.iter().copied()).ok_or(LayoutError::ShapeOverflow)?;
        if product != items {
            return Err(LayoutError::ShapeMismatch { product, items });
        }
        let (mut kept, mut reduced) = (Vec::new(), Vec::new());
        let mut stride = 1usize;
        for axis in (0..dims).rev() {
            let side = if reduce[axis] {
                &mut reduced
            } else {
                &mut kept
            };
            side.push((shape[axis], stride));
            stride = stride.saturating_mul(shape[axis]); // only an empty array saturates
        }
        kept.reverse();
        reduced.reverse();
        // An empty array may have as many results (or reduced items) as extents that overflow.
        let results = product_of(kept.iter().map(|&(e, _)| e)).ok_or(LayoutError::ShapeOverflow)?;
        let reduced_len = match results {
            0 => 0,
            _ => product_of(reduced.iter().map(|&(e, _)| e)).ok_or(LayoutError::ShapeOverflow)?,
        };
        Ok(Axes {
            kept,
            reduced,
            results,
            reduced_len,
            dims: shape.iter().zip(reduce).map(|(&e, r)| (e, r)).collect(),
        })
    }

    /// [`Axes::new`] for the items `xs` (see [`Axes::sized`]) on the host, with room there for
    /// the results (an empty array's kept extents may ask for more than memory holds: then
    /// [`LayoutError::HostMemory`], not an abort in the allocator).
    pub fn of<M>(xs: &[M], shape: &[usize], axes: &[usize]) -> Result<Axes, LayoutError> {
        let a = Axes::sized::<M>(xs.len(), shape, axes)?;
        crate::layout::host_room::<M>("result count", a.results, a.results)?;
        Ok(a)
    }

    /// [`Axes::new`] for `items` items whose results — values of `M`, one per position of the
    /// kept axes — must fit one allocation (`isize::MAX` bytes): an empty array with a reduced
    /// extent of 0 has as many as its kept extents say. The check every backend makes first,
    /// so that each refuses such a shape with the same [`LayoutError::TooLarge`].
    pub fn sized<M>(items: usize, shape: &[usize], axes: &[usize]) -> Result<Axes, LayoutError> {
        let a = Axes::new(items, shape, axes)?;
        let limit = isize::MAX as usize / std::mem::size_of::<M>().max(1);
        if a.results > limit {
            return Err(LayoutError::TooLarge {
                what: "result count",
                value: a.results,
                limit: limit as u64,
                why: "one allocation of the results",
            });
        }
        Ok(a)
    }

    /// The fold of reduced positions `run` (not empty: the identity) of the result whose first
    /// item is at `base`, from its first item on: one item is itself, a copy.
    pub fn fold_run<M: Monoid>(&self, xs: &[M], base: usize, run: std::ops::Range<usize>) -> M {
        run.map(|r| xs[self.at(base, r)])
            .reduce(M::combine)
            .unwrap_or_else(M::identity)
    }

    /// The items at reduced positions `run` of the result whose first item is at `base`, in
    /// order.
    pub fn gather<M: Copy>(&self, xs: &[M], base: usize, run: std::ops::Range<usize>) -> Vec<M> {
        run.map(|r| xs[self.at(base, r)]).collect()
    }

    /// The (extent, reduced) runs of the array in axis order: adjacent axes of the same kind
    /// merged, axes of extent 1 left out (neither changes the order of any fold).
    pub fn runs(&self) -> Vec<(usize, bool)> {
        let mut runs: Vec<(usize, bool)> = Vec::new();
        for &(extent, reduced) in self.dims.iter().filter(|&&(e, _)| e != 1) {
            match runs.last_mut() {
                // Only an empty array (a 0 extent) has a product past usize: saturated, its
                // runs hold no item.
                Some((e, r)) if *r == reduced => *e = e.saturating_mul(extent),
                _ => runs.push((extent, reduced)),
            }
        }
        runs
    }

    /// The flat index of the first item of result `o`.
    pub fn base(&self, o: usize) -> usize {
        flat(&self.kept, o)
    }

    /// The flat index of the `r`-th item (row-major over the reduced axes) of the result whose
    /// first item is at `base`.
    pub fn at(&self, base: usize, r: usize) -> usize {
        base + flat(&self.reduced, r)
    }
}

/// The offset of the `i`-th position, row-major over `dims` ((extent, stride), last fastest).
/// Wrapping: only an empty array's strides saturate ([`Axes::new`]), and its offsets index no
/// item.
fn flat(dims: &[(usize, usize)], mut i: usize) -> usize {
    let mut offset = 0usize;
    for &(extent, stride) in dims.iter().rev() {
        offset = offset.wrapping_add((i % extent).wrapping_mul(stride));
        i /= extent;
    }
    offset
}

/// Folds `xs`, a row-major array of `shape`, along `axes` (any order, none repeated): one
/// result per position of the kept axes, row-major, each the fold in order over the reduced
/// coordinates taken row-major (the last reduced axis fastest), from its first item on (one
/// item is its own result, a copy). A reduced extent of 0 gives the identity, a kept extent of
/// 0 no result; no axes copies the items; `shape = []` is one item. THE reference for
/// reductions along axes. More results than one allocation holds (an empty array's) are
/// [`LayoutError::TooLarge`], more than the host's memory holds [`LayoutError::HostMemory`].
///
/// ```
/// use reduce_core::{fold_axes, Sum};
/// // a 2 x 3 matrix
/// let xs: Vec<Sum<u32>> = [1, 2, 3, 4, 5, 6].map(Sum).to_vec();
/// assert_eq!(fold_axes(&xs, &[2, 3], &[1]).unwrap(), [Sum(6), Sum(15)]); // rows
/// assert_eq!(fold_axes(&xs, &[2, 3], &[0]).unwrap(), [Sum(5), Sum(7), Sum(9)]); // columns
/// assert_eq!(fold_axes(&xs, &[2, 3], &[1, 0]).unwrap(), [Sum(21)]);
/// assert!(fold_axes(&xs, &[3, 3], &[0]).is_err()); // 9 items in the shape, 6 given
/// ```
pub fn fold_axes<M: Monoid>(
    xs: &[M],
    shape: &[usize],
    axes: &[usize],
) -> Result<Vec<M>, LayoutError> {
    let a = Axes::of(xs, shape, axes)?;
    Ok((0..a.results)
        .map(|o| a.fold_run(xs, a.base(o), 0..a.reduced_len))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold;

    /// A non-commutative monoid: concatenation of short sequences, as a bit string.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Seq(u64, u32);

    impl Monoid for Seq {
        fn identity() -> Self {
            Seq(0, 0)
        }
        fn combine(a: Self, b: Self) -> Self {
            Seq(a.0.wrapping_shl(b.1).wrapping_add(b.0), a.1 + b.1)
        }
    }

    /// The reference written the other way: the axes moved last (a transpose), then each
    /// result's run folded.
    fn by_transpose(xs: &[Seq], shape: &[usize], axes: &[usize]) -> Vec<Seq> {
        let mut reduced: Vec<usize> = axes.to_vec();
        reduced.sort_unstable();
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !reduced.contains(a)).collect();
        let order: Vec<usize> = kept.iter().chain(&reduced).copied().collect();
        let mut strides = vec![1; shape.len()];
        for a in (0..shape.len().saturating_sub(1)).rev() {
            strides[a] = strides[a + 1] * shape[a + 1];
        }
        let len: usize = reduced.iter().map(|&a| shape[a]).product();
        let mut moved = Vec::with_capacity(xs.len());
        let total: usize = shape.iter().product();
        for mut i in 0..total {
            // i row-major over `order`
            let mut flat = 0;
            for &a in order.iter().rev() {
                flat += (i % shape[a]) * strides[a];
                i /= shape[a];
            }
            moved.push(xs[flat]);
        }
        let results: usize = kept.iter().map(|&a| shape[a]).product();
        (0..results)
            .map(|o| fold(&moved[o * len..(o + 1) * len]))
            .collect()
    }

    fn items(n: usize) -> Vec<Seq> {
        (0..n).map(|i| Seq(i as u64 % 2, 1)).collect()
    }

    #[test]
    fn every_axis_set_of_small_shapes_is_the_transposed_fold() {
        let shapes: &[&[usize]] = &[
            &[],
            &[5],
            &[0],
            &[3, 4],
            &[1, 7],
            &[4, 0],
            &[2, 3, 4],
            &[3, 1, 2, 5],
            &[2, 2, 2, 2, 2],
        ];
        for shape in shapes {
            let n: usize = shape.iter().product();
            let xs: Vec<Seq> = (0..n).map(|i| Seq(i as u64 * 7 % 5, 3)).collect();
            for mask in 0..1usize << shape.len() {
                let axes: Vec<usize> = (0..shape.len()).filter(|a| mask >> a & 1 == 1).collect();
                let want = by_transpose(&xs, shape, &axes);
                assert_eq!(
                    fold_axes(&xs, shape, &axes).unwrap(),
                    want,
                    "{shape:?} {axes:?}"
                );
                let reversed: Vec<usize> = axes.iter().rev().copied().collect();
                assert_eq!(fold_axes(&xs, shape, &reversed).unwrap(), want);
            }
        }
    }

    #[test]
    fn runs_merge_adjacent_axes_and_drop_extents_of_one() {
        let runs = |shape: &[usize], axes: &[usize]| {
            let n = shape.iter().product();
            Axes::new(n, shape, axes).unwrap().runs()
        };
        assert_eq!(runs(&[2, 3, 4], &[1, 2]), [(2, false), (12, true)]);
        assert_eq!(runs(&[2, 1, 3, 4], &[0, 2]), [(6, true), (4, false)]);
        assert_eq!(
            runs(&[5, 6, 7], &[0, 2]),
            [(5, true), (6, false), (7, true)]
        );
        assert_eq!(runs(&[1, 1], &[0]), []);
        assert_eq!(runs(&[], &[]), []);
    }

    #[test]
    fn edge_shapes() {
        let xs = items(6);
        // no axes: a copy; shape []: one item
        assert_eq!(fold_axes(&xs, &[2, 3], &[]).unwrap(), xs);
        assert_eq!(fold_axes(&xs[..1], &[], &[]).unwrap(), &xs[..1]);
        // a reduced extent of 0: the identity per result; a kept one: no result
        assert_eq!(
            fold_axes::<Seq>(&[], &[3, 0], &[1]).unwrap(),
            [Seq::identity(); 3]
        );
        assert!(fold_axes::<Seq>(&[], &[0, 3], &[1]).unwrap().is_empty());
        assert_eq!(fold_axes(&xs, &[2, 3], &[0, 1]).unwrap(), [fold(&xs)]);
    }

    #[test]
    fn bad_shapes_and_axes_are_errors() {
        let xs = items(6);
        assert_eq!(
            fold_axes(&xs, &[2, 4], &[0]),
            Err(LayoutError::ShapeMismatch {
                product: 8,
                items: 6
            })
        );
        assert_eq!(
            fold_axes(&xs, &[2, 3], &[2]),
            Err(LayoutError::AxisOutOfRange { axis: 2, dims: 2 })
        );
        assert_eq!(
            fold_axes(&xs, &[2, 3], &[1, 1]),
            Err(LayoutError::AxisRepeated { axis: 1 })
        );
        assert_eq!(
            fold_axes(&xs, &[1; 9], &[]),
            Err(LayoutError::TooManyDims { dims: 9, max: 8 })
        );
        assert_eq!(
            fold_axes(&xs, &[usize::MAX, 2, 3], &[]),
            Err(LayoutError::ShapeOverflow)
        );
        // an empty array whose other extents overflow is still empty...
        assert!(fold_axes::<Seq>(&[], &[0, usize::MAX, 2], &[1, 2])
            .unwrap()
            .is_empty());
        // ... with every result the identity, even where a kept axis's stride saturates ...
        assert_eq!(
            fold_axes::<Seq>(&[], &[0, 3, 1 << 63], &[0, 2]).unwrap(),
            vec![Seq::identity(); 3]
        );
        let runs = Axes::new(0, &[0, usize::MAX, 2], &[1, 2]).unwrap().runs();
        assert_eq!(runs, vec![(0, false), (usize::MAX, true)]);
        // ... but not one with more results than a usize counts
        assert_eq!(
            fold_axes::<Seq>(&[], &[usize::MAX, 0, 2], &[1]),
            Err(LayoutError::ShapeOverflow)
        );
        for e in [
            fold_axes(&xs, &[2, 4], &[0]).unwrap_err(),
            fold_axes(&xs, &[1; 9], &[]).unwrap_err(),
        ] {
            assert!(!e.to_string().is_empty());
        }
    }
}
