//! The portable scans: the grouping of the GPU's look-back scan (reduce-cuda's
//! `kernels/scan.cu`, whose head states it) with its tile fixed by the monoid's size, so that a
//! float scan has the same bits on the CPU and on any GPU.
//!
//! # The grouping
//!
//! The items are cut into tiles of [`SCAN_BLOCK`] threads × [`scan_items`] items at fixed
//! positions, tiles into groups of 32. Thread `k` of a tile folds its items left to right into
//! its aggregate; the 32 lanes of a warp, then the warps of the tile, scan their aggregates with
//! Kogge-Stone steps (step `o`: lane `L` takes (lane `L − o`) ⊕ (lane `L`)), the last one being
//! the tile's aggregate `a(t)`. Within a group, `w(t) = a(32g) ⊕ … ⊕ a(t − 1)` folded left to
//! right; the group's aggregate `A(g)` is that fold over all its tiles; the groups chain
//! `I(g) = I(g − 1) ⊕ A(g)`. A tile's prefix is `I(g − 1) ⊕ w(t)`, a thread's is that ⊕ the warps
//! before its warp ⊕ the lanes before its lane, and its outputs continue from it item by item:
//! `y = prefix ⊕ x` (an inclusive output; an exclusive one is the prefix before the item). Where
//! nothing precedes (the very first thread), the prefix is the identity; a thread without items
//! (past the end of the last tile) has the identity for an aggregate.
//!
//! Segmented scans run the same grouping over pairs (head, x), where `head` says a segment
//! starts at the item: `(f₁, v₁) · (f₂, v₂) = (f₁ ∨ f₂, f₂ ? v₂ : v₁ ⊕ v₂)`, and at a head an output
//! starts again from the identity: `y = identity ⊕ x`. For an exactly associative monoid every
//! output is [`crate::scan`]'s; for floats these are the bits. The tile follows the monoid's
//! size only (a lifted input: the lifted values'), never the input type, the device or timing.

use crate::layout::{check_keys, check_offsets, LayoutError, SegIndex};
use crate::{Monoid, Scan};

/// Threads per tile of the portable scans.
pub const SCAN_BLOCK: usize = 256;

/// Items per thread of the portable scans for values of `bytes` bytes: twice a run's 64 bytes'
/// worth rounded up to whole 16-byte vectors (16 items of 12 bytes, 8 of 24), at most 32: the
/// GPU scans' default.
pub fn scan_items(bytes: usize) -> usize {
    let size = bytes.max(1);
    let granule = 16 / gcd(size, 16); // items per whole number of vectors
    (2 * 64usize.div_ceil(size).div_ceil(granule).max(1) * granule).min(32)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The portable scan of `xs` (see the module's grouping).
///
/// ```
/// use reduce_core::{portable, Scan, Sum};
/// let xs: Vec<Sum<u32>> = (1..=5000).map(Sum).collect();
/// assert_eq!(portable::scan(&xs, Scan::Exclusive), reduce_core::scan(&xs, Scan::Exclusive));
/// ```
pub fn scan<M: Monoid>(xs: &[M], kind: Scan) -> Vec<M> {
    let per = scan_items(std::mem::size_of::<M>());
    scan_grouped(xs, &[], SCAN_BLOCK, per, kind)
}

/// The portable scan of each segment of a CSR layout (the layout of [`crate::scan_segments`]).
pub fn scan_segments<M: Monoid, I: SegIndex>(
    xs: &[M],
    offsets: &[I],
    kind: Scan,
) -> Result<Vec<M>, LayoutError> {
    check_offsets(offsets, xs.len())?;
    let mut heads = vec![false; xs.len()];
    for &o in offsets {
        if let Some(h) = heads.get_mut(o.to_u64() as usize) {
            *h = true;
        }
    }
    let per = scan_items(std::mem::size_of::<M>());
    Ok(scan_grouped(xs, &heads, SCAN_BLOCK, per, kind))
}

/// The portable scan of each run of equal keys (the layout of [`crate::scan_by_key`]).
pub fn scan_by_key<M: Monoid, K: SegIndex>(
    xs: &[M],
    keys: &[K],
    kind: Scan,
) -> Result<Vec<M>, LayoutError> {
    check_keys(xs.len(), keys.len())?;
    let heads: Vec<bool> = (0..keys.len())
        .map(|i| i == 0 || keys[i] != keys[i - 1])
        .collect();
    let per = scan_items(std::mem::size_of::<M>());
    Ok(scan_grouped(xs, &heads, SCAN_BLOCK, per, kind))
}

/// The look-back scan's grouping with tiles of `block` threads × `per` items, over `xs` with the
/// segment starts `heads` (empty: none). The portable scans fix the tile; tests of the GPU's
/// other tiles compare with this directly.
#[doc(hidden)]
pub fn scan_grouped<M: Monoid>(
    xs: &[M],
    heads: &[bool],
    block: usize,
    per: usize,
    kind: Scan,
) -> Vec<M> {
    assert!(
        block > 0 && per > 0,
        "a tile of {block} threads x {per} items holds no item"
    );
    // A warp's scan of its lanes and warp 0's of the warps: 32 values each at most.
    assert!(
        block <= 32 * 32,
        "a tile of {block} threads: a GPU block holds at most 1024"
    );
    #[derive(Clone, Copy)]
    struct Pair<M> {
        head: bool,
        v: M,
    }
    let op = |a: Pair<M>, b: Pair<M>| Pair {
        head: a.head | b.head,
        v: if b.head { b.v } else { M::combine(a.v, b.v) },
    };
    let empty = Pair {
        head: false,
        v: M::identity(),
    };
    let item = |i: usize| Pair {
        head: heads.get(i).copied().unwrap_or(false),
        v: xs[i],
    };
    // Kogge-Stone inclusive scan of up to 32 values.
    let ks = |v: &mut [Pair<M>]| {
        let mut o = 1;
        while o < 32 {
            let before = v.to_vec();
            for l in o..v.len() {
                v[l] = op(before[l - o], before[l]);
            }
            o *= 2;
        }
    };
    // The left fold of the values, from the first (none for none).
    let serial = |v: &[Pair<M>]| {
        let (&first, rest) = v.split_first()?;
        Some(rest.iter().fold(first, |a, &b| op(a, b)))
    };
    let join = |a: Option<Pair<M>>, b: Option<Pair<M>>| match (a, b) {
        (Some(a), Some(b)) => Some(op(a, b)),
        (a, b) => a.or(b),
    };
    let tile = block * per;
    let tiles = xs.len().div_ceil(tile);
    // Per tile: the lanes' and the warps' inclusive values, and its aggregate.
    let mut scans = Vec::with_capacity(tiles);
    let mut aggregates = Vec::with_capacity(tiles);
    for t in 0..tiles {
        let mut lanes: Vec<Pair<M>> = (0..block)
            .map(|k| {
                let lo = (t * tile + k * per).min(xs.len());
                let hi = (lo + per).min(xs.len()).min((t + 1) * tile);
                let run: Vec<Pair<M>> = (lo..hi).map(item).collect();
                serial(&run).unwrap_or(empty)
            })
            .collect();
        for warp in lanes.chunks_mut(32) {
            ks(warp);
        }
        let mut warps: Vec<Pair<M>> = lanes.chunks(32).map(|w| w[w.len() - 1]).collect();
        ks(&mut warps);
        aggregates.push(*warps.last().unwrap());
        scans.push((lanes, warps));
    }
    let mut out = Vec::with_capacity(xs.len());
    let mut inclusive: Option<Pair<M>> = None; // I(g - 1)
    for (g, group) in aggregates.chunks(32).enumerate() {
        for i in 0..group.len() {
            let t = 32 * g + i;
            let prefix = join(inclusive, serial(&group[..i]));
            let (lanes, warps) = &scans[t];
            for k in 0..block {
                let lo = t * tile + k * per;
                if lo >= xs.len() {
                    break;
                }
                let (w, l) = (k / 32, k % 32);
                let mut pre = prefix;
                if w > 0 {
                    pre = join(pre, Some(warps[w - 1]));
                }
                if l > 0 {
                    pre = join(pre, Some(lanes[k - 1]));
                }
                let mut acc = pre.map_or_else(M::identity, |p| p.v);
                let hi = (lo + per).min(xs.len());
                for (j, &x) in xs[lo..hi].iter().enumerate() {
                    let before = if item(lo + j).head {
                        M::identity()
                    } else {
                        acc
                    };
                    acc = M::combine(before, x);
                    out.push(match kind {
                        Scan::Inclusive => acc,
                        Scan::Exclusive => before,
                    });
                }
            }
        }
        inclusive = join(inclusive, serial(group));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_monoids::{affine_items as items, Affine};
    use crate::Sum;

    /// The grouping of a tile of 1024 threads is the sequential scan's for an exact monoid; a
    /// tile past 32 warps, which no GPU block is, is refused rather than scanned wrongly.
    #[test]
    fn tiles_of_up_to_32_warps() {
        let xs = vec![Sum(1u32); 4096];
        let got = scan_grouped(&xs, &[], 1024, 1, Scan::Inclusive);
        assert_eq!(got, crate::scan(&xs, Scan::Inclusive));
        let past = std::panic::catch_unwind(|| scan_grouped(&xs, &[], 2048, 1, Scan::Inclusive));
        assert!(past.is_err());
    }

    /// Exactly associative monoids: the portable scans are the sequential ones, for every
    /// layout, across tiles and groups of tiles.
    #[test]
    fn exact_monoids_get_the_sequential_scans() {
        let n = 32 * SCAN_BLOCK * scan_items(8) + 3 * SCAN_BLOCK + 5;
        let xs = items(n as u32);
        let offsets: Vec<u64> = [0, 0, 1, 7, 4000, 4000, 70_000, n as u64 - 2, n as u64].to_vec();
        let keys: Vec<u32> = (0..n as u32).map(|i| (i / 5000) % 3).collect();
        for kind in [Scan::Inclusive, Scan::Exclusive] {
            assert_eq!(scan(&xs, kind), crate::scan(&xs, kind));
            assert_eq!(
                scan_segments(&xs, &offsets, kind).unwrap(),
                crate::scan_segments(&xs, &offsets, kind).unwrap()
            );
            assert_eq!(
                scan_by_key(&xs, &keys, kind).unwrap(),
                crate::scan_by_key(&xs, &keys, kind).unwrap()
            );
        }
        assert!(scan::<Affine>(&[], Scan::Inclusive).is_empty());
    }

    #[test]
    fn tile_sizes_follow_the_gpu_defaults() {
        assert_eq!(scan_items(4), 32);
        assert_eq!(scan_items(8), 16);
        assert_eq!(scan_items(12), 16);
        assert_eq!(scan_items(16), 8);
        assert_eq!(scan_items(1), 32);
        assert_eq!(scan_items(512), 2);
    }

    /// Floats: the bits follow the grouping, not the sequence (a sum of mixed magnitudes
    /// differs from the sequential scan somewhere), and the layouts agree on a segment's
    /// outputs only up to the grouping.
    #[test]
    fn float_scans_follow_the_grouping() {
        let xs: Vec<Sum<f32>> = (0..100_000u32)
            .map(|i| Sum(((i.wrapping_mul(2654435761) >> 8) as f32 - 8e6) * 1e-3))
            .collect();
        let ours = scan(&xs, Scan::Inclusive);
        let seq = crate::scan(&xs, Scan::Inclusive);
        assert!(ours
            .iter()
            .zip(&seq)
            .any(|(a, b)| a.0.to_bits() != b.0.to_bits()));
        // A single segment is the plain scan.
        let one = scan_segments(&xs, &[0u32, xs.len() as u32], Scan::Inclusive).unwrap();
        assert_eq!(one, ours);
    }
}
