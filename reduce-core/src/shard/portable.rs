//! The portable grouping of segmented reductions over shards: every segment's bits are
//! [`crate::portable::fold_segments`]'s, whatever the shard boundaries.
//!
//! A shard's own segmented reduction would cut its runs and number its tree from the shard's
//! first item, so a shard is cut into **pieces** at the places the global tree splits
//! ([`parts::plan`]): its head and tail items (fewer than a run each, read back as they are)
//! and the aligned blocks of whole runs between them. A block is a subtree of the global tree:
//! reduced alone with its own layout (the segments it touches, clipped to it), a segment inside
//! it gets its global bits, and a segment that goes on past either end of it gets its node at
//! the block. So a device reduces each block with the portable kernel and its output is final
//! for every segment inside one block; the segments that cross pieces, or lie in the head or
//! tail, are joined on the host from the blocks' first and last values and the raw items
//! ([`join_shard`], by [`parts::combine`]). The same join, over the ranks that continue a
//! segment, completes the segments that cross shards ([`PortableCarry::join`]).

use super::plan::segment_of;
use crate::portable::parts::{self, combine, Summary};
use crate::Monoid;
use std::ops::Range;

/// One piece of a shard: raw items, or an aligned block of whole runs (a node of the tree).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Its items (global indices).
    pub items: Range<usize>,
    /// The node it is, `(level, index)`, or `None` for the shard's head or tail items.
    pub node: Option<(u32, u64)>,
}

/// The non-empty pieces of the shard `lo..hi` in order, for runs of `run` items: its head
/// items, its aligned blocks, its tail items ([`parts::plan`]).
pub fn pieces(lo: usize, hi: usize, run: usize) -> Vec<Piece> {
    let p = parts::plan(lo, hi, run);
    let raw = |items: Range<usize>| Piece { items, node: None };
    std::iter::once(raw(p.head))
        .chain(p.blocks.into_iter().map(|b| Piece {
            items: b.items,
            node: Some((b.level, b.index)),
        }))
        .chain([raw(p.tail)])
        .filter(|piece| !piece.items.is_empty())
        .collect()
}

/// The local segments each piece reduces, from the local segment of each piece's first and
/// last item (`ends[k]`, ids from the shard's first segment, non-decreasing) and the shard's
/// local segment count: piece k's segments run from its first item's to the later of its last
/// item's and the one before the next piece's first (the empty segments on their boundary are
/// the earlier piece's); the last piece's run to `count`. Consecutive ranges share a segment
/// exactly where it crosses their boundary.
pub fn piece_segments(ends: &[(usize, usize)], count: usize) -> Vec<Range<usize>> {
    (0..ends.len())
        .map(|k| {
            let end = match ends.get(k + 1) {
                Some(&(next, _)) => (ends[k].1 + 1).max(next),
                None => count,
            };
            ends[k].0..end
        })
        .collect()
}

/// The CSR offsets a piece is reduced with — its local `segments`, rebased to its first item
/// and clipped to its items — from the shard's local offsets (`local`, from
/// [`SegmentPlan::local_offsets`]: relative to the shard's first item, global `lo`).
pub fn piece_offsets(
    local: &[u32],
    lo: usize,
    segments: Range<usize>,
    items: Range<usize>,
) -> Vec<u32> {
    let (a, e) = ((items.start - lo) as u32, (items.end - lo) as u32);
    local[segments.start..=segments.end]
        .iter()
        .map(|&o| o.clamp(a, e) - a)
        .collect()
}

/// The local segment of each piece's first and last item, from the shard's local offsets
/// (`local`, relative to its first item, global `lo`).
pub fn piece_ends(local: &[u32], lo: usize, pieces: &[Piece]) -> Vec<(usize, usize)> {
    let of = |i: usize| segment_of(local, i - lo);
    pieces
        .iter()
        .map(|p| (of(p.items.start), of(p.items.end - 1)))
        .collect()
}

/// The local segment of each of the global `items`, from the shard's local offsets (`local`,
/// relative to its first item, global `lo`).
pub fn item_segments(local: &[u32], lo: usize, items: Range<usize>) -> Vec<usize> {
    items.map(|i| segment_of(local, i - lo)).collect()
}

/// What a piece's reduction gives the host.
#[derive(Clone, Debug, PartialEq)]
pub enum PieceValues<M> {
    /// A raw piece's items and the local segment of each.
    Items {
        /// The items, in order.
        items: Vec<M>,
        /// The local segment of each item.
        segments: Vec<usize>,
    },
    /// A block's values of the segments of its first and last item (the same segment or not):
    /// each that segment's node at the block.
    Block {
        /// The value of the segment of its first item.
        first: M,
        /// The value of the segment of its last item.
        last: M,
    },
}

/// A non-empty shard's portion of its first and last segment, as summaries for
/// [`parts::combine`]: what it sends the other ranks for the join.
#[derive(Clone, Debug, PartialEq)]
pub struct PortableCarry<M> {
    /// The shard's part of its first segment.
    pub first: Summary<M>,
    /// The shard's part of its last segment.
    pub last: Summary<M>,
}

impl<M: Monoid> PortableCarry<M> {
    /// A segment's value from the carry of its owner (`own`, whose last segment it is) and
    /// those of the ranks that continue it, in rank order (their first segment).
    pub fn join(own: &PortableCarry<M>, next: &[&PortableCarry<M>], run: usize) -> M {
        let summaries: Vec<Summary<M>> = std::iter::once(own.last.clone())
            .chain(next.iter().map(|c| c.first.clone()))
            .collect();
        combine(&summaries, run)
    }
}

/// The host's part of a shard's portable segmented reduction ([`join_shard`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ShardJoin<M> {
    /// The local segments whose values the host makes, ascending, with their values: those of
    /// the raw pieces and those that cross pieces. Every other segment's value is its block's.
    pub writes: Vec<(usize, M)>,
    /// The shard's carry.
    pub carry: PortableCarry<M>,
}

/// The joins of a non-empty shard: `pieces` (from [`pieces`]), the local segments of each
/// one's first and last item (`ends`), what each piece's reduction gave (`values`), the shard's
/// local segment count and the run length. Each segment's parts are, in order, its raw head
/// items, its nodes at the blocks it touches and its raw tail items: a [`Summary`] of them is its
/// portion of the shard, and [`parts::combine`] of it its value when the shard holds all of it.
pub fn join_shard<M: Monoid>(
    pieces: &[Piece],
    ends: &[(usize, usize)],
    values: &[PieceValues<M>],
    count: usize,
    run: usize,
) -> ShardJoin<M> {
    let ranges = piece_segments(ends, count);
    let mut writes = Vec::new();
    let mut first = None;
    // The segment whose parts are being gathered, its summary, and whether the host makes
    // its value (it lies in a raw piece or crosses pieces).
    let mut open: Option<(usize, Summary<M>, bool)> = None;
    let mut close = |(s, summary, hosted): (usize, Summary<M>, bool),
                     writes: &mut Vec<(usize, M)>| {
        if hosted {
            writes.push((s, combine(std::slice::from_ref(&summary), run)));
        }
        if s == 0 {
            first = Some(summary.clone());
        }
        summary
    };
    for (k, piece) in pieces.iter().enumerate() {
        // This piece's parts: (segment, part), in order.
        let mut contributions: Vec<(usize, Part<M>)> = Vec::new();
        match &values[k] {
            PieceValues::Items { items, segments } => {
                let mut at = 0;
                while at < items.len() {
                    let s = segments[at];
                    let len = segments[at..].iter().take_while(|&&x| x == s).count();
                    let part = Part::Items(piece.items.start + at, items[at..at + len].to_vec());
                    contributions.push((s, part));
                    at += len;
                }
                // The empty segments of a raw piece are the host's too.
                let mut with_items = segments.iter().copied().peekable();
                for s in ranges[k].clone() {
                    while with_items.next_if(|&x| x < s).is_some() {}
                    if with_items.peek() != Some(&s) {
                        writes.push((s, M::identity()));
                    }
                }
            }
            PieceValues::Block { first, last } => {
                let (level, index) = piece.node.expect("a block piece is a node");
                let node = |value| Part::Node(piece.items.start, level, index, value);
                contributions.push((ends[k].0, node(*first)));
                if ends[k].1 != ends[k].0 {
                    contributions.push((ends[k].1, node(*last)));
                }
            }
        }
        for (s, part) in contributions {
            open = match open.take() {
                Some((o, mut summary, _)) if o == s => {
                    part.append_to(&mut summary);
                    Some((o, summary, true))
                }
                previous => {
                    if let Some(previous) = previous {
                        close(previous, &mut writes);
                    }
                    let hosted = matches!(part, Part::Items(..));
                    Some((s, part.start(), hosted))
                }
            };
        }
    }
    let last = close(open.expect("a non-empty shard has parts"), &mut writes);
    writes.sort_by_key(|&(s, _)| s);
    ShardJoin {
        writes,
        carry: PortableCarry {
            first: first.expect("segment 0 holds the shard's first item"),
            last,
        },
    }
}

/// A segment's part in one piece: raw items at a global index, or its node at a block (the
/// block's first item, level, index, value).
enum Part<M> {
    Items(usize, Vec<M>),
    Node(usize, u32, u64, M),
}

impl<M: Monoid> Part<M> {
    /// A summary holding only this part. A node's summary starts at its block's first item:
    /// where in the block the segment starts does not change the tree above the block.
    fn start(self) -> Summary<M> {
        match self {
            Part::Items(at, items) => Summary {
                lo: at,
                tail_at: at + items.len(),
                head: items,
                blocks: Vec::new(),
                tail: Vec::new(),
            },
            Part::Node(at, level, index, value) => Summary {
                lo: at,
                head: Vec::new(),
                blocks: vec![(level, index, value)],
                tail_at: at,
                tail: Vec::new(),
            },
        }
    }

    /// Appends this part to a summary of the parts before it (raw items after a node or after
    /// the head are the tail: a shard has one tail piece).
    fn append_to(self, summary: &mut Summary<M>) {
        match self {
            Part::Items(at, items) => {
                debug_assert!(summary.tail.is_empty());
                summary.tail_at = at;
                summary.tail = items;
            }
            Part::Node(_, level, index, value) => summary.blocks.push((level, index, value)),
        }
    }
}

/// The portable segmented plan of one non-empty shard on the CPU, given the local segment of
/// each of its items (`segment_of`, local ids) and a reduction of a block's items with its local
/// layout (`reduce_block(piece, segments)`: one value per local segment of `segments`, what the
/// device's portable kernel gives): the shard's local values and its carry.
pub(super) fn shard_on_cpu<M: Monoid>(
    items: &[M],
    lo: usize,
    count: usize,
    segment_of: impl Fn(usize) -> usize,
    reduce_block: impl Fn(&Piece, Range<usize>) -> Vec<M>,
) -> (Vec<M>, PortableCarry<M>) {
    let run = crate::portable::run_len::<M>();
    let pieces = pieces(lo, lo + items.len(), run);
    let ends: Vec<(usize, usize)> = (pieces.iter())
        .map(|p| (segment_of(p.items.start), segment_of(p.items.end - 1)))
        .collect();
    let ranges = piece_segments(&ends, count);
    // The device's output; every slot must be written, by a block or by the host.
    let mut local: Vec<Option<M>> = vec![None; count];
    let mut values = Vec::with_capacity(pieces.len());
    for (k, piece) in pieces.iter().enumerate() {
        let at = piece.items.start - lo..piece.items.end - lo;
        values.push(match piece.node {
            None => PieceValues::Items {
                items: items[at].to_vec(),
                segments: piece.items.clone().map(&segment_of).collect(),
            },
            Some(_) => {
                let block = reduce_block(piece, ranges[k].clone());
                // The device's output: later blocks write over a segment they share.
                for (slot, &v) in local[ranges[k].clone()].iter_mut().zip(&block) {
                    *slot = Some(v);
                }
                let base = ranges[k].start;
                PieceValues::Block {
                    first: block[ends[k].0 - base],
                    last: block[ends[k].1 - base],
                }
            }
        });
    }
    let join = join_shard(&pieces, &ends, &values, count, run);
    for (s, v) in join.writes {
        local[s] = Some(v);
    }
    let local = (local.into_iter())
        .map(|v| v.expect("every local segment is written"))
        .collect();
    (local, join.carry)
}
