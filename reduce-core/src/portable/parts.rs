//! The portable grouping split across parts (the shards of several GPUs): a part holding the
//! items `lo..hi` of the global sequence contributes its **head** (the items before its first
//! run boundary, which end a run that began in an earlier part, or all of its items when it
//! holds no boundary), the aligned **blocks** of whole runs after it (nodes of the tree:
//! `2^level` runs from run `index * 2^level`, as few as cover them), and its **tail** (the items
//! from its last run boundary on, which begin a run a later part may end). A block's value is
//! [`super::fold`] of its items alone — an aligned block of a power of two of runs is a subtree,
//! its runs cut where the global ones are — so each part can compute its blocks on its own
//! device, and [`combine`] joins the parts' summaries, in order, into [`super::fold`]'s bits
//! for the whole sequence, whatever the boundaries (inside a run, empty parts, parts inside
//! one run) — or, for parts that begin at another item, into the bits of the segment they
//! cover.

use crate::Monoid;
use std::ops::Range;

/// An aligned block of whole runs: node `index` of the tree's level `level` (its `2^level` runs
/// from run `index << level`), and its items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Its level: `2^level` runs.
    pub level: u32,
    /// Its index in that level.
    pub index: u64,
    /// Its items (global indices).
    pub items: Range<usize>,
}

/// The pieces of the part `lo..hi` for runs of `run` items: head items, blocks, tail items
/// (global item ranges; the head and the tail hold fewer than `run` items each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartPlan {
    /// The items before the part's first run boundary (all of them when it holds none).
    pub head: Range<usize>,
    /// The aligned blocks of whole runs between its first and last boundaries, in order.
    pub blocks: Vec<Block>,
    /// The items from its last run boundary on.
    pub tail: Range<usize>,
}

/// The pieces of the part holding the global items `lo..hi` (`lo <= hi`; an inverted range
/// plans as a part with no items), for runs of `run` items.
pub fn plan(lo: usize, hi: usize, run: usize) -> PartPlan {
    let run = run.max(1);
    // the first run boundary at or after lo (none past usize::MAX: then none inside)
    let first = lo.div_ceil(run).saturating_mul(run);
    if first >= hi {
        // No boundary inside, or only at its end: every item continues one run.
        return PartPlan {
            head: lo..hi,
            blocks: Vec::new(),
            tail: hi..hi,
        };
    }
    let last = hi / run * run; // the last run boundary at or before hi
    let mut blocks = Vec::new();
    let (mut r, end) = ((first / run) as u64, (last / run) as u64);
    while r < end {
        // The largest aligned block from run r that ends by `end`.
        let mut level = r.trailing_zeros().min(63);
        while (1u64 << level) > end - r {
            level -= 1;
        }
        let size = 1u64 << level;
        blocks.push(Block {
            level,
            index: r >> level,
            items: (r as usize) * run..((r + size) as usize) * run,
        });
        r += size;
    }
    PartPlan {
        head: lo..first,
        blocks,
        tail: last..hi,
    }
}

/// A part's contribution: its head items, its blocks' values and its tail items, from
/// [`plan`] (the head's and the tail's items as values, a block's value [`super::fold`] of its
/// items).
#[derive(Clone, Debug, PartialEq)]
pub struct Summary<M> {
    /// The part's first item's global index (where its head lies).
    pub lo: usize,
    /// The head's items.
    pub head: Vec<M>,
    /// (level, index, value) of each block, in order.
    pub blocks: Vec<(u32, u64, M)>,
    /// The global index of the tail's first item.
    pub tail_at: usize,
    /// The tail's items.
    pub tail: Vec<M>,
}

impl<M: Monoid> Summary<M> {
    /// The summary of the part `lo..hi` of `items` (the global sequence), computed on the CPU:
    /// what a device computes for its shard.
    ///
    /// # Panics
    /// When `lo..hi` is not a range of `items` (inverted, or past its end), or when `run` is not
    /// [`super::run_len`]`::<M>()` (its blocks are folded in the grouping, whose runs are those).
    pub fn of(items: &[M], lo: usize, hi: usize, run: usize) -> Summary<M> {
        assert_eq!(
            run,
            super::run_len::<M>(),
            "a summary's runs are the grouping's (portable::run_len)"
        );
        let p = plan(lo, hi, run);
        Summary {
            lo,
            head: items[p.head.clone()].to_vec(),
            blocks: (p.blocks.iter())
                .map(|b| (b.level, b.index, super::fold(&items[b.items.clone()])))
                .collect(),
            tail_at: p.tail.start,
            tail: items[p.tail].to_vec(),
        }
    }
}

/// The tree's nodes as they complete, left to right: a node merges with the one before it
/// where they are siblings, and rises alone where its left sibling lies wholly before the
/// sequence's first run (`first`: absent); what is left at the end lies on the right edge.
struct Nodes<M> {
    first: u64,
    stack: Vec<(u32, u64, M)>,
}

impl<M: Monoid> Nodes<M> {
    fn push(&mut self, mut level: u32, mut index: u64, mut value: M) {
        while index % 2 == 1 {
            match self.stack.last() {
                Some(&(l, i, left)) if l == level && i + 1 == index => {
                    self.stack.pop();
                    value = M::combine(left, value);
                }
                // The left sibling covers runs (index - 1) << level .. index << level.
                _ if (index << level) <= self.first => {}
                _ => break,
            }
            (level, index) = (level + 1, index / 2);
        }
        self.stack.push((level, index, value));
    }

    /// The root: the right edge's nodes, each the left sibling of everything after it.
    fn root(mut self) -> M {
        let mut acc = match self.stack.pop() {
            Some((_, _, v)) => v,
            None => return M::identity(),
        };
        while let Some((_, _, left)) = self.stack.pop() {
            acc = M::combine(left, acc);
        }
        acc
    }
}

impl<M> Summary<M> {
    /// Whether every piece of the summary lies within the items `0..n` for runs of `run` items:
    /// its head and tail, and its blocks (each of whole runs, the last one possibly short). What
    /// [`combine`] needs of a summary another process sent: a bad one is refused, never folded
    /// into shifts past 64 bits and indices past `usize`.
    pub fn within(&self, n: usize, run: usize) -> bool {
        let runs = n.div_ceil(run.max(1)) as u64;
        let ends_by = |at: usize, len: usize| at.checked_add(len).is_some_and(|end| end <= n);
        ends_by(self.lo, self.head.len())
            && ends_by(self.tail_at, self.tail.len())
            && self.blocks.iter().all(|&(level, index, _)| {
                let end = index
                    .checked_add(1)
                    .and_then(|e| e.checked_mul(1u64.checked_shl(level)?));
                end.is_some_and(|end| end <= runs)
            })
    }
}

/// The portable value of the items the parts' summaries cover, in order and contiguously, for
/// runs of `run` items: [`super::fold`]'s for a sequence from item 0, and for one from any other
/// item the value [`super::fold_segments`] gives the segment they cover (its runs and tree at
/// their global positions).
pub fn combine<M: Monoid>(parts: &[Summary<M>], run: usize) -> M {
    let run = run.max(1);
    let first = parts.first().map_or(0, |p| (p.lo / run) as u64);
    let mut nodes = Nodes {
        first,
        stack: Vec::new(),
    };
    // The run being folded from raw items: (its index, the fold of its items so far).
    let mut pending: Option<(u64, M)> = None;
    let feed = |nodes: &mut Nodes<M>, pending: &mut Option<(u64, M)>, at: usize, xs: &[M]| {
        for (k, &x) in xs.iter().enumerate() {
            let r = ((at + k) / run) as u64;
            *pending = match pending.take() {
                Some((p, acc)) if p == r => Some((p, M::combine(acc, x))),
                Some((p, acc)) => {
                    nodes.push(0, p, acc);
                    Some((r, x))
                }
                None => Some((r, x)),
            };
        }
    };
    for part in parts {
        feed(&mut nodes, &mut pending, part.lo, &part.head);
        if !part.blocks.is_empty() || !part.tail.is_empty() {
            // The head ended its run (the part holds a boundary).
            if let Some((p, acc)) = pending.take() {
                nodes.push(0, p, acc);
            }
        }
        for &(level, index, value) in &part.blocks {
            nodes.push(level, index, value);
        }
        feed(&mut nodes, &mut pending, part.tail_at, &part.tail);
    }
    if let Some((p, acc)) = pending {
        nodes.push(0, p, acc);
    }
    nodes.root()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::portable::tests::floats_seeded as floats;

    #[test]
    fn summaries_past_the_items_are_not_within_them() {
        let items = floats(1000, 3);
        for (lo, hi) in [(0, 1000), (5, 700), (17, 30), (999, 1000), (40, 40)] {
            let s = Summary::of(&items, lo, hi, 16);
            assert!(s.within(1000, 16), "{lo}..{hi}");
            assert!(!s.within(hi - 1, 16), "{lo}..{hi} within {}", hi - 1);
        }
        let s = Summary::of(&items, 0, 1000, 16);
        let bad = |f: &dyn Fn(&mut Summary<_>)| {
            let mut t = s.clone();
            f(&mut t);
            t.within(1000, 16)
        };
        assert!(!bad(&|t| t.lo = usize::MAX));
        assert!(!bad(&|t| t.tail_at = usize::MAX - 1));
        assert!(!bad(&|t| t.blocks[0].0 = 64));
        assert!(!bad(&|t| t.blocks[0].1 = u64::MAX));
        assert!(!bad(&|t| t.blocks[0] = (63, 1, t.blocks[0].2)));
        assert!(!bad(&|t| t.blocks[0] = (0, 63, t.blocks[0].2)));
        assert!(bad(&|t| t.blocks[0] = (0, 62, t.blocks[0].2)));
    }

    #[test]
    fn a_part_near_the_end_of_usize_has_no_boundary_past_it() {
        let p = plan(usize::MAX - 1, usize::MAX, 16);
        assert_eq!((p.head, p.blocks.len()), (usize::MAX - 1..usize::MAX, 0));
    }

    #[test]
    fn a_part_is_head_blocks_and_tail() {
        // runs of 16: items 5..100 = head 5..16, runs 1 (1 run), 2..4 (2 runs), 4 (1 run)... up
        // to run 6 (96), tail 96..100
        let p = plan(5, 100, 16);
        assert_eq!((p.head, p.tail), (5..16, 96..100));
        let shape: Vec<(u32, u64)> = p.blocks.iter().map(|b| (b.level, b.index)).collect();
        assert_eq!(shape, [(0, 1), (1, 1), (1, 2)]);
        assert_eq!(p.blocks[2].items, 64..96);
        // inside one run, and ending on a boundary
        assert_eq!(plan(17, 30, 16).head, 17..30);
        assert_eq!(plan(17, 32, 16).blocks, Vec::new());
        assert_eq!(plan(0, 1 << 20, 16).blocks.len(), 1);
        assert_eq!(plan(7, 7, 16).head, 7..7);
    }

    /// Every way of cutting a few sequences into parts gives fold's bits.
    #[test]
    fn parts_combine_to_the_whole_fold() {
        let run = 16;
        for n in [0usize, 1, 15, 16, 17, 100, 1000, 4099, 70_001] {
            let xs = floats(n, n as u64 + 3);
            let want = crate::portable::fold(&xs).0.to_bits();
            let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
            for parts in [1usize, 2, 3, 4, 7, 16] {
                for _ in 0..20 {
                    // random cuts, some inside runs, some empty parts
                    let mut cuts: Vec<usize> = (0..parts - 1)
                        .map(|_| {
                            state ^= state << 13;
                            state ^= state >> 7;
                            state ^= state << 17;
                            (state as usize) % (n + 1)
                        })
                        .collect();
                    cuts.sort_unstable();
                    let bounds: Vec<usize> = std::iter::once(0).chain(cuts).chain([n]).collect();
                    let summaries: Vec<_> = bounds
                        .windows(2)
                        .map(|w| Summary::of(&xs, w[0], w[1], run))
                        .collect();
                    let got = combine(&summaries, run).0.to_bits();
                    assert_eq!(got, want, "n = {n}, bounds {bounds:?}");
                }
            }
        }
    }

    /// Parts that begin anywhere: the segment they cover, as `fold_segments` gives it.
    #[test]
    fn parts_combine_to_a_segment_from_any_item() {
        let run = 16;
        let xs = floats(5000, 11);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state as usize) % bound
        };
        for _ in 0..400 {
            let (a, b) = (next(5001), next(5001));
            let (lo, hi) = (a.min(b), a.max(b));
            let want = crate::portable::fold_segments(&xs, &[0, lo as u64, hi as u64, 5000])
                .unwrap()[1]
                .0
                .to_bits();
            let parts = 1 + next(5);
            let mut cuts: Vec<usize> = (0..parts - 1).map(|_| lo + next(hi - lo + 1)).collect();
            cuts.sort_unstable();
            let bounds: Vec<usize> = std::iter::once(lo).chain(cuts).chain([hi]).collect();
            let summaries: Vec<_> = bounds
                .windows(2)
                .map(|w| Summary::of(&xs, w[0], w[1], run))
                .collect();
            let got = combine(&summaries, run).0.to_bits();
            assert_eq!(got, want, "items {lo}..{hi}, bounds {bounds:?}");
        }
    }

    #[test]
    fn an_exact_monoid_keeps_the_order() {
        use crate::test_monoids::Affine;
        let xs: Vec<Affine> = (0..5000u32)
            .map(|i| Affine(i.wrapping_mul(2654435761) | 1, i))
            .collect();
        let run = crate::portable::run_len::<Affine>();
        for bounds in [
            vec![0, 5000],
            vec![0, 3, 3, 4999, 5000],
            vec![0, 2500, 2501, 5000],
        ] {
            let summaries: Vec<_> = bounds
                .windows(2)
                .map(|w| Summary::of(&xs, w[0], w[1], run))
                .collect();
            assert_eq!(combine(&summaries, run), crate::fold(&xs));
        }
    }
}
