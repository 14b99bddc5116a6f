//! The portable grouping: the reference that defines the bits of a reduction whose result must
//! be the same on the CPU, on any GPU and on any number of GPUs — for floats too, where the
//! grouping decides the bits. It depends only on the number of items, the layout and the size
//! of the monoid's type: never on a device, its SM count, a grid, an algorithm's tuning,
//! timing, or how many GPUs hold the data.
//!
//! # The definition
//!
//! - **Runs.** The items are cut into runs of [`run_len`]`::<M>()` consecutive items (64 bytes
//!   of `M` values, at least one item) at fixed global positions: run `r` holds the items
//!   `r · L .. (r + 1) · L`.
//! - **Pieces.** A segment (for a plain reduction: all the items) meets some runs; each such
//!   run holds one piece of it, whose value is the left fold of the piece's items starting from
//!   its first item (`x_a ⊕ x_a+1 ⊕ … ⊕ x_b`; no identity in front).
//! - **Tree.** The pieces are combined by a fixed binary tree over the global run indices: at
//!   each level, node `j` combines nodes `2j` (left) and `2j + 1` (right) of the level below; a
//!   node with one child present takes that child's value. The value of the root is the
//!   segment's. A segment with no items is the identity.
//!
//! So a plain reduction is the segment of all items, and a segment's value is the same whichever
//! form describes it ([`fold_segments`] or [`fold_by_owner`]) and whatever the other segments
//! are. Every combine is (earlier items) ⊕ (later items): for an exactly associative monoid the
//! value is [`crate::fold`]'s; for floats it is the bits this grouping gives.
//!
//! Along the axes of an array ([`fold_axes`]), each result is [`fold`] of its own reduced
//! sequence (the items of its reduced coordinates, row-major): runs and tree are cut from that
//! sequence's first item.
//!
//! The tree splits at any run boundary into O(log n) subtrees per part — what lets several GPUs
//! each reduce a part and still give these bits ([`parts`]: a part's head and tail items and
//! aligned blocks of whole runs, joined in order). A lifted input is lifted first: its grouping is
//! the one of the lifted values (the run length follows the monoid, not the input type).

pub mod parts;
pub mod record;
mod scan;
pub use scan::{scan, scan_by_key, scan_grouped, scan_items, scan_segments, SCAN_BLOCK};

use crate::axes::Axes;
use crate::fold::{per_owner, per_segment};
use crate::layout::{LayoutError, SegIndex};
use crate::Monoid;

/// Bytes of `M` values in a run.
const RUN_BYTES: usize = 64;

/// The items in a run for monoid `M`: 64 bytes of values, at least one.
pub fn run_len<M>() -> usize {
    run_len_for_size(std::mem::size_of::<M>())
}

/// The items in a run of values of `bytes` bytes each (what [`run_len`] gives their type).
pub fn run_len_for_size(bytes: usize) -> usize {
    (RUN_BYTES / bytes.max(1)).max(1)
}

/// The fold of all items in the portable grouping (see the module's definition).
///
/// ```
/// use reduce_core::{portable, Sum};
/// let xs: Vec<Sum<u32>> = (1..=100).map(Sum).collect();
/// assert_eq!(portable::fold(&xs), reduce_core::fold(&xs)); // integers: any grouping agrees
/// assert_eq!(portable::fold::<Sum<f32>>(&[]), Sum(0.0));
/// ```
pub fn fold<M: Monoid>(items: &[M]) -> M {
    segment(items, 0, items.len())
}

/// One value per CSR segment (the layout of [`crate::fold_segments`]), each in the portable
/// grouping at its global position.
///
/// ```
/// use reduce_core::{portable, Sum};
/// let xs = [Sum(1.5f32), Sum(2.0), Sum(-0.25)];
/// assert_eq!(
///     portable::fold_segments(&xs, &[0u32, 2, 2, 3]).unwrap(),
///     vec![Sum(3.5), Sum(0.0), Sum(-0.25)]
/// );
/// ```
pub fn fold_segments<M: Monoid, I: SegIndex>(
    items: &[M],
    offsets: &[I],
) -> Result<Vec<M>, LayoutError> {
    per_segment(items.len(), offsets, |start, end| {
        segment(items, start, end)
    })
}

/// One value per owner (the layout of [`crate::fold_by_owner`]), each the value
/// [`fold_segments`] gives the same segment.
pub fn fold_by_owner<M: Monoid, I: SegIndex>(
    items: &[M],
    owner: &[I],
    num_segments: usize,
) -> Result<Vec<M>, LayoutError> {
    per_owner(items, owner, num_segments, fold_segments)
}

/// Folds `xs`, a row-major array of `shape`, along `axes` (the layout of [`crate::fold_axes`],
/// with its errors): each result is [`fold`] of the items of its reduced coordinates taken
/// row-major — its runs and tree cut from the first of them, wherever the result lies.
///
/// ```
/// use reduce_core::{portable, Sum};
/// let xs: Vec<Sum<f32>> = (0..6).map(|i| Sum(i as f32)).collect();
/// let columns = portable::fold_axes(&xs, &[2, 3], &[0]).unwrap();
/// assert_eq!(columns, [Sum(3.0), Sum(5.0), Sum(7.0)]);
/// assert_eq!(portable::fold_axes(&xs, &[2, 3], &[1]).unwrap()[1], portable::fold(&xs[3..]));
/// ```
pub fn fold_axes<M: Monoid>(
    xs: &[M],
    shape: &[usize],
    axes: &[usize],
) -> Result<Vec<M>, LayoutError> {
    let a = Axes::of(xs, shape, axes)?;
    Ok((0..a.results)
        .map(|o| fold(&a.gather(xs, a.base(o), 0..a.reduced_len)))
        .collect())
}

/// The portable fold of `n` items in parallel on rayon's pool: aligned chunks of a power of two
/// of runs are subtrees of the tree, so their roots — `chunk_root(lo, hi)` for the items
/// `lo..hi`, which is [`segment`] of them (a lifted input lifts them first) — combined by the
/// same tree one level up, give [`fold`]'s bits. `guard` runs each task (the CPU backend's fault
/// capture); its error ends the fold.
pub(crate) fn par_fold<M, E, F, G>(n: usize, tasks: usize, chunk_root: F, guard: G) -> Result<M, E>
where
    M: Monoid,
    E: Send,
    F: Fn(usize, usize) -> M + Sync,
    G: Fn(&dyn Fn() -> M) -> Result<M, E> + Sync,
{
    use rayon::prelude::*;
    let len = run_len::<M>();
    let runs = n.div_ceil(len);
    // Runs per chunk: a power of two, at least 1024 runs, about `tasks` chunks.
    let chunk_runs = runs.div_ceil(tasks.max(1)).max(1024).next_power_of_two();
    let chunk = chunk_runs * len;
    let roots = (0..n.div_ceil(chunk))
        .into_par_iter()
        .map(|c| {
            let (lo, hi) = (c * chunk, ((c + 1) * chunk).min(n));
            guard(&|| chunk_root(lo, hi))
        })
        .collect::<Result<Vec<M>, E>>()?;
    guard(&|| tree(0, roots.clone()))
}

/// The value of the segment `items[start..end]` (at its global position: the runs are cut from
/// index 0 of `items`).
pub(crate) fn segment<M: Monoid>(items: &[M], start: usize, end: usize) -> M {
    if start >= end {
        return M::identity();
    }
    let len = run_len::<M>();
    // The pieces, with their global run indices (consecutive).
    let first_run = start / len;
    let pieces: Vec<M> = (first_run..=(end - 1) / len)
        .map(|r| {
            let piece = &items[(r * len).max(start)..((r + 1) * len).min(end)];
            piece[1..]
                .iter()
                .fold(piece[0], |acc, &x| M::combine(acc, x))
        })
        .collect();
    tree(first_run, pieces)
}

/// The root of the fixed tree over consecutive nodes `first, first + 1, …` of one level.
fn tree<M: Monoid>(mut first: usize, mut nodes: Vec<M>) -> M {
    while nodes.len() > 1 {
        let mut up = Vec::with_capacity(nodes.len() / 2 + 1);
        let mut i = 0;
        if first % 2 == 1 {
            // The first node's left sibling is absent.
            up.push(nodes[0]);
            i = 1;
        }
        while i < nodes.len() {
            up.push(match nodes.get(i + 1) {
                Some(&right) => M::combine(nodes[i], right),
                None => nodes[i],
            });
            i += 2;
        }
        first /= 2;
        nodes = up;
    }
    nodes.pop().unwrap_or_else(M::identity)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::test_monoids::Affine;
    use crate::Sum;

    fn floats(n: usize) -> Vec<Sum<f32>> {
        floats_seeded(n, 0x2545_f491_4f6c_dd1d)
    }

    /// `n` f32 of wide exponents and both signs (xorshift from `seed`): sums whose bits depend
    /// on the grouping.
    pub(crate) fn floats_seeded(n: usize, seed: u64) -> Vec<Sum<f32>> {
        let mut state = seed | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Wide exponents, both signs: a sum whose bits depend on the grouping.
                Sum(f32::from_bits((state as u32 & 0x8fff_ffff) | 0x3000_0000))
            })
            .collect()
    }

    #[test]
    fn run_length_follows_the_monoid_size() {
        assert_eq!(run_len::<Sum<f32>>(), 16);
        assert_eq!(run_len::<Affine>(), 8);
        assert_eq!(run_len::<[u64; 16]>(), 1);
        assert_eq!(run_len::<()>(), 64);
    }

    #[test]
    fn exact_monoids_get_the_sequential_fold() {
        for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 1000, 4097] {
            let xs: Vec<Affine> = (0..n as u32)
                .map(|i| Affine(i.wrapping_mul(2654435761) | 1, i))
                .collect();
            assert_eq!(fold(&xs), crate::fold(&xs), "n = {n}");
        }
    }

    /// The tree by hand: 16-item runs of f32, three runs: (r0 ⊕ r1) ⊕ r2; a segment from item
    /// 20 to 40 has pieces in runs 1 and 2: r1' ⊕ r2'; a segment inside run 3 folds in order.
    #[test]
    fn floats_follow_the_definition() {
        let xs = floats(70);
        let seq = |a: usize, b: usize| {
            xs[a + 1..b]
                .iter()
                .fold(xs[a], |acc, &x| Sum::combine(acc, x))
        };
        let c = Sum::<f32>::combine;
        assert_eq!(
            fold(&xs[..33]).0.to_bits(),
            c(c(seq(0, 16), seq(16, 32)), seq(32, 33)).0.to_bits()
        );
        // Runs 0..=4 of 70 items: ((r0 r1) (r2 r3)) r4.
        let whole = c(
            c(c(seq(0, 16), seq(16, 32)), c(seq(32, 48), seq(48, 64))),
            seq(64, 70),
        );
        assert_eq!(fold(&xs).0.to_bits(), whole.0.to_bits());
        let segs = fold_segments(&xs, &[0u32, 20, 40, 50, 52, 70]).unwrap();
        let expected = [
            c(seq(0, 16), seq(16, 20)),
            c(seq(20, 32), seq(32, 40)),
            c(seq(40, 48), seq(48, 50)),
            seq(50, 52),
            // Runs 3 and 4 are not siblings: each rises alone until their subtrees are.
            c(seq(52, 64), seq(64, 70)),
        ];
        for (got, want) in segs.iter().zip(expected) {
            assert_eq!(got.0.to_bits(), want.0.to_bits());
        }
    }

    /// A segment's value depends on its position and items only, and both forms agree.
    #[test]
    fn a_segment_is_the_same_in_every_layout() {
        let xs = floats(5000);
        let offsets = [0u64, 3, 700, 700, 2049, 4999, 5000];
        let by_offsets = fold_segments(&xs, &offsets).unwrap();
        let mut owner = Vec::new();
        for (s, w) in offsets.windows(2).enumerate() {
            owner.extend(std::iter::repeat_n(s as u32, (w[1] - w[0]) as usize));
        }
        let by_owner = fold_by_owner(&xs, &owner, offsets.len() - 1).unwrap();
        let bits = |v: &[Sum<f32>]| v.iter().map(|x| x.0.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&by_offsets), bits(&by_owner));
        // The segment 700..2049 alone in another layout: the same bits.
        let other = fold_segments(&xs, &[0u32, 650, 700, 2049, 5000]).unwrap();
        assert_eq!(other[2].0.to_bits(), by_offsets[3].0.to_bits());
        // The whole input is one segment.
        assert_eq!(
            fold(&xs).0.to_bits(),
            fold_segments(&xs, &[0u32, 5000]).unwrap()[0].0.to_bits()
        );
        assert_eq!(by_offsets[2], Sum(0.0)); // empty
    }
}
