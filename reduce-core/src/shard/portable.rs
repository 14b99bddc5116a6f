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
//! ([`ShardCut::join`], by [`parts::combine`]). The same join, over the ranks that continue a
//! segment, completes the segments that cross shards ([`PortableCarry::join`]).
//!
//! These are the host side of `reduce-cuda`'s cluster: they take what [`pieces`],
//! [`ShardCut`] and [`super::SegmentPlan`] make, and panic on other arguments (each says how).

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

/// A non-empty shard cut into pieces, with the local segment (counted from the shard's first)
/// of each piece's first and last item (`ends`, non-decreasing) and the local segments each
/// piece reduces (`ranges`): piece k's run from its first item's to the later of its last
/// item's and the one before the next piece's first (the empty segments on their boundary are
/// the earlier piece's), the last piece's to the shard's segment count. Consecutive ranges
/// share a segment exactly where it crosses their boundary. A device reduces each block into
/// its range of the shard's local values, then [`ShardCut::join`] gives the host's part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardCut {
    /// The pieces, in order (from [`pieces`]).
    pub pieces: Vec<Piece>,
    /// The local segments of each piece's first and last item.
    pub ends: Vec<(usize, usize)>,
    /// The local segments each piece reduces.
    pub ranges: Vec<Range<usize>>,
    /// The shard's local segment count.
    pub count: usize,
}

impl ShardCut {
    /// The cut of a shard of `count` local segments into `pieces`, whose first and last items
    /// lie in the local segments `ends`.
    ///
    /// # Panics
    /// When `ends` is not one pair per piece, or not non-decreasing below `count`.
    pub fn new(pieces: Vec<Piece>, ends: Vec<(usize, usize)>, count: usize) -> ShardCut {
        assert_eq!(pieces.len(), ends.len(), "one pair of ends per piece");
        let flat = ends.iter().flat_map(|&(a, b)| [a, b]);
        assert!(
            flat.clone().zip(flat.skip(1)).all(|(a, b)| a <= b) && ends.iter().all(|e| e.1 < count),
            "the pieces' ends are non-decreasing local segments"
        );
        let ranges = (0..ends.len())
            .map(|k| {
                let end = match ends.get(k + 1) {
                    Some(&(next, _)) => (ends[k].1 + 1).max(next),
                    None => count,
                };
                ends[k].0..end
            })
            .collect();
        ShardCut {
            pieces,
            ends,
            ranges,
            count,
        }
    }

    /// The block pieces, with their indices among the pieces, in order.
    pub fn blocks(&self) -> impl Iterator<Item = (usize, &Piece)> {
        (self.pieces.iter().enumerate()).filter(|(_, p)| p.node.is_some())
    }

    /// The raw pieces, in order.
    pub fn raw(&self) -> impl Iterator<Item = &Piece> {
        self.pieces.iter().filter(|p| p.node.is_none())
    }

    /// The host's part, from what the device gave: each block's values of the segments of its
    /// first and last item (`staged`: two per block, in block order — what its slots `ends[k]`
    /// held after the block's own reduction), and each raw piece's items with the local segment
    /// of each (`raw`, in raw-piece order). Each segment's parts are, in order, its raw head
    /// items, its nodes at the blocks it touches and its raw tail items: a [`Summary`] of them
    /// is its portion of the shard, and [`parts::combine`] of it its value when the shard holds
    /// all of it.
    ///
    /// # Panics
    /// When `staged` or `raw` does not match the pieces.
    pub fn join<M: Monoid>(
        &self,
        staged: &[M],
        raw: Vec<(Vec<M>, Vec<usize>)>,
        run: usize,
    ) -> ShardJoin<M> {
        assert_eq!(
            staged.len(),
            2 * self.blocks().count(),
            "two values per block"
        );
        assert_eq!(raw.len(), self.raw().count(), "one entry per raw piece");
        let mut join = Joining {
            run,
            writes: Vec::new(),
            first: None,
            open: None,
        };
        let (mut staged, mut raw) = (staged.chunks(2), raw.into_iter());
        for (k, piece) in self.pieces.iter().enumerate() {
            match piece.node {
                None => {
                    let (items, segments) = raw.next().expect("counted");
                    assert_eq!(items.len(), piece.items.len(), "a raw piece's items");
                    assert_eq!(segments.len(), items.len(), "a segment per item");
                    // Its empty segments are the host's too.
                    let mut with_items = segments.iter().copied().peekable();
                    for s in self.ranges[k].clone() {
                        while with_items.next_if(|&x| x < s).is_some() {}
                        if with_items.peek() != Some(&s) {
                            join.writes.push((s, M::identity()));
                        }
                    }
                    let mut at = 0;
                    while at < items.len() {
                        let s = segments[at];
                        let len = segments[at..].iter().take_while(|&&x| x == s).count();
                        let part = Part::Items {
                            at: piece.items.start + at,
                            items: items[at..at + len].to_vec(),
                        };
                        join.add(s, part);
                        at += len;
                    }
                }
                Some((level, index)) => {
                    let pair = staged.next().expect("counted");
                    let node = |value| Part::Node {
                        at: piece.items.start,
                        level,
                        index,
                        value,
                    };
                    let (first, last) = self.ends[k];
                    join.add(first, node(pair[0]));
                    if last != first {
                        join.add(last, node(pair[1]));
                    }
                }
            }
        }
        join.finish()
    }
}

/// The pieces of the shard `lo..hi` for runs of `run` items, cut with `local_segment(i)` (the
/// local segment of global item `i`) and `count` local segments: the cut of a shard whose
/// layout the host has.
pub fn cut_on_host(
    lo: usize,
    hi: usize,
    run: usize,
    count: usize,
    local_segment: impl Fn(usize) -> usize,
) -> ShardCut {
    let pieces = pieces(lo, hi, run);
    let ends = (pieces.iter())
        .map(|p| (local_segment(p.items.start), local_segment(p.items.end - 1)))
        .collect();
    ShardCut::new(pieces, ends, count)
}

/// The CSR offsets a piece is reduced with — its local `segments`, rebased to its first item
/// and clipped to its items — from the shard's local offsets (`local`, from
/// [`super::SegmentPlan::local_offsets`]: relative to the shard's first item, global `lo`).
///
/// # Panics
/// When `segments` or `items` lie outside the shard.
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

/// The local segment of the shard's global item `i`, from the shard's local offsets (`local`,
/// relative to its first item, global `lo`).
///
/// # Panics
/// When `i` lies before the shard or `local` is empty.
pub fn local_segment(local: &[u32], lo: usize, i: usize) -> usize {
    segment_of(local, i - lo)
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

/// The host's part of a shard's portable segmented reduction ([`ShardCut::join`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ShardJoin<M> {
    /// The local segments whose values the host makes, ascending, with their values: those of
    /// the raw pieces and those that cross pieces. Every other segment's value is its block's.
    pub writes: Vec<(usize, M)>,
    /// The shard's carry.
    pub carry: PortableCarry<M>,
}

impl<M: Copy> ShardJoin<M> {
    /// The writes as runs of consecutive segments: (first segment, values).
    pub fn runs(&self) -> Vec<(usize, Vec<M>)> {
        let mut runs: Vec<(usize, Vec<M>)> = Vec::new();
        for &(s, v) in &self.writes {
            match runs.last_mut() {
                Some((start, values)) if *start + values.len() == s => values.push(v),
                _ => runs.push((s, vec![v])),
            }
        }
        runs
    }
}

/// A segment's part in one piece: raw items at a global index, or its node at a block (whose
/// first item is `at`).
enum Part<M> {
    Items {
        at: usize,
        items: Vec<M>,
    },
    Node {
        at: usize,
        level: u32,
        index: u64,
        value: M,
    },
}

impl<M: Monoid> Part<M> {
    /// A summary holding only this part. A node's summary starts at its block's first item:
    /// where in the block the segment starts does not change the tree above the block.
    fn start(self) -> Summary<M> {
        match self {
            Part::Items { at, items } => Summary {
                lo: at,
                tail_at: at + items.len(),
                head: items,
                blocks: Vec::new(),
                tail: Vec::new(),
            },
            Part::Node {
                at,
                level,
                index,
                value,
            } => Summary {
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
            Part::Items { at, items } => {
                debug_assert!(summary.tail.is_empty());
                summary.tail_at = at;
                summary.tail = items;
            }
            Part::Node {
                level,
                index,
                value,
                ..
            } => summary.blocks.push((level, index, value)),
        }
    }
}

/// The segment whose parts are being gathered: its summary, and whether the host makes its
/// value (it lies in a raw piece or crosses pieces).
struct Open<M> {
    segment: usize,
    summary: Summary<M>,
    hosted: bool,
}

/// [`ShardCut::join`] as it goes: the segments' parts in order.
struct Joining<M> {
    run: usize,
    writes: Vec<(usize, M)>,
    first: Option<Summary<M>>,
    open: Option<Open<M>>,
}

impl<M: Monoid> Joining<M> {
    /// Segment `s`'s next part: it continues the open segment or starts the next one.
    fn add(&mut self, s: usize, part: Part<M>) {
        match &mut self.open {
            Some(open) if open.segment == s => {
                part.append_to(&mut open.summary);
                open.hosted = true;
            }
            _ => {
                self.close();
                let hosted = matches!(part, Part::Items { .. });
                self.open = Some(Open {
                    segment: s,
                    summary: part.start(),
                    hosted,
                });
            }
        }
    }

    /// Ends the open segment: its value where the host makes it, its summary where it is the
    /// shard's first; returns the summary.
    fn close(&mut self) -> Option<Summary<M>> {
        let open = self.open.take()?;
        if open.hosted {
            let value = combine(std::slice::from_ref(&open.summary), self.run);
            self.writes.push((open.segment, value));
        }
        if open.segment == 0 {
            self.first = Some(open.summary.clone());
        }
        Some(open.summary)
    }

    fn finish(mut self) -> ShardJoin<M> {
        let last = self.close().expect("a non-empty shard has parts");
        self.writes.sort_by_key(|&(s, _)| s);
        ShardJoin {
            writes: self.writes,
            carry: PortableCarry {
                first: self.first.expect("segment 0 holds the shard's first item"),
                last,
            },
        }
    }
}

/// The portable segmented plan of one non-empty shard `items` (global items from `lo`) of
/// `count` local segments on the CPU, as a device runs it: cut with `local_segment(i)` (the
/// local segment of global item `i`), each block reduced by `reduce_block(piece, segments)` (one
/// value per local segment of `segments`, what the device's portable kernel gives) into its
/// range of the local values, then the host's join written over them. Returns the shard's local
/// values and its carry.
pub(super) fn shard_on_cpu<M: Monoid>(
    items: &[M],
    lo: usize,
    count: usize,
    local_segment: impl Fn(usize) -> usize,
    reduce_block: impl Fn(&Piece, Range<usize>) -> Vec<M>,
) -> (Vec<M>, PortableCarry<M>) {
    let run = crate::portable::run_len::<M>();
    let cut = &cut_on_host(lo, lo + items.len(), run, count, &local_segment);
    // The device's output; every slot must be written, by a block or by the host.
    let mut local: Vec<Option<M>> = vec![None; cut.count];
    let mut staged = Vec::new();
    for (k, piece) in cut.blocks() {
        let block = reduce_block(piece, cut.ranges[k].clone());
        // Later blocks write over a segment they share.
        for (slot, &v) in local[cut.ranges[k].clone()].iter_mut().zip(&block) {
            *slot = Some(v);
        }
        let base = cut.ranges[k].start;
        staged.extend([block[cut.ends[k].0 - base], block[cut.ends[k].1 - base]]);
    }
    let raw = (cut.raw())
        .map(|p| {
            let items = items[p.items.start - lo..p.items.end - lo].to_vec();
            (items, p.items.clone().map(&local_segment).collect())
        })
        .collect();
    let join = cut.join(&staged, raw, run);
    for (start, values) in join.runs() {
        for (slot, v) in local[start..].iter_mut().zip(values) {
            *slot = Some(v);
        }
    }
    let local = (local.into_iter())
        .map(|v| v.expect("every local segment is written"))
        .collect();
    (local, join.carry)
}
