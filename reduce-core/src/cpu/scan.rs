//! The CPU backend's scans: rayon-parallel, equal to the references of `crate::scan` for any
//! associative monoid.
//!
//! Order invariant: the input is cut into contiguous chunks. (1) Each chunk folds, left to
//! right, its items from its last segment start (or from its beginning when none starts in
//! it). (2) The carry into each chunk — the fold of the items of its first segment that lie in
//! earlier chunks — is the previous chunk's fold, combined after the previous chunk's own carry
//! when no segment starts there, in chunk order. (3) Each chunk scans its items left to right
//! from its carry, restarting at every segment start. Every output is thus the left fold of its
//! segment's items up to it, grouped as (earlier chunks) ⊕ (this chunk's items).

use super::{unchecked, Cpu, MIN_CHUNK};
use crate::fault::{guarded, CpuError, IndexFault};
use crate::layout::{check_keys, check_offsets, LayoutError, SegIndex};
use crate::scan::Scan;
use crate::{fold, Monoid};
use rayon::prelude::*;

/// Where segments start.
#[derive(Clone, Copy)]
enum Starts<'a, I> {
    /// Nowhere but at 0: a plain scan.
    None,
    /// At every CSR offset (checked).
    Offsets(&'a [I]),
    /// Wherever the key differs from the one before.
    Keys(&'a [I]),
}

impl<'a, I: SegIndex> Starts<'a, I> {
    /// The last segment start in `lo..hi`, if any (position 0 does not count for `None`: the
    /// carry into the first chunk is the identity anyway).
    fn last_in(&self, lo: usize, hi: usize) -> Option<usize> {
        match *self {
            Starts::None => None,
            Starts::Offsets(offsets) => {
                let after = offsets.partition_point(|o| (o.to_u64() as usize) < hi);
                let at = offsets[after.checked_sub(1)?].to_u64() as usize;
                (at >= lo).then_some(at)
            }
            Starts::Keys(keys) => (lo.max(1)..hi).rev().find(|&i| keys[i] != keys[i - 1]),
        }
    }

    /// A cursor that says, for positions `lo, lo + 1, ...` in turn, whether a segment starts
    /// there.
    fn from(self, lo: usize) -> impl FnMut(usize) -> bool + 'a {
        let mut next = match self {
            Starts::Offsets(offsets) => offsets.partition_point(|o| (o.to_u64() as usize) < lo),
            _ => 0,
        };
        move |i| match self {
            Starts::None => false,
            Starts::Offsets(offsets) => {
                // Empty segments share their start with the next one: skip them all.
                let mut starts = false;
                while next < offsets.len() && offsets[next].to_u64() as usize == i {
                    starts = true;
                    next += 1;
                }
                starts
            }
            Starts::Keys(keys) => i > 0 && keys[i] != keys[i - 1],
        }
    }
}

impl Cpu {
    /// The portable scan (`crate::portable::scan`: the GPU's portable grouping, the same bits),
    /// with an index out of bounds in the monoid's translated code an error instead of a
    /// panic. Sequential: the reference itself.
    pub fn try_scan_portable<M: Monoid>(&self, xs: &[M], kind: Scan) -> Result<Vec<M>, IndexFault> {
        guarded::<M, _>(true, || crate::portable::scan(xs, kind))
    }

    /// The portable scan of each CSR segment (`crate::portable::scan_segments`), faults as
    /// errors. Sequential.
    pub fn try_scan_segments_portable<M: Monoid, I: SegIndex>(
        &self,
        xs: &[M],
        offsets: &[I],
        kind: Scan,
    ) -> Result<Vec<M>, CpuError> {
        Ok(guarded::<M, _>(true, || {
            crate::portable::scan_segments(xs, offsets, kind)
        })??)
    }

    /// The portable scan of each run of equal keys (`crate::portable::scan_by_key`), faults as
    /// errors. Sequential.
    pub fn try_scan_by_key_portable<M: Monoid, K: SegIndex>(
        &self,
        xs: &[M],
        keys: &[K],
        kind: Scan,
    ) -> Result<Vec<M>, CpuError> {
        Ok(guarded::<M, _>(true, || {
            crate::portable::scan_by_key(xs, keys, kind)
        })??)
    }
}

impl Cpu {
    /// The scan of `xs` (see [`crate::scan`]), in parallel.
    pub fn scan<M: Monoid>(&self, xs: &[M], kind: Scan) -> Vec<M> {
        unchecked(self.scanned::<M, u32>(false, xs, kind, Starts::None))
    }

    /// [`Cpu::scan`], with an index out of bounds in the monoid's translated code an error
    /// (as on the GPU) instead of a panic.
    pub fn try_scan<M: Monoid>(&self, xs: &[M], kind: Scan) -> Result<Vec<M>, IndexFault> {
        self.scanned::<M, u32>(true, xs, kind, Starts::None)
    }

    /// The scan of each CSR segment (see [`crate::scan_segments`]), in parallel.
    pub fn scan_segments<M: Monoid, I: SegIndex>(
        &self,
        xs: &[M],
        offsets: &[I],
        kind: Scan,
    ) -> Result<Vec<M>, LayoutError> {
        check_offsets(offsets, xs.len())?;
        Ok(unchecked(self.scanned(
            false,
            xs,
            kind,
            Starts::Offsets(offsets),
        )))
    }

    /// [`Cpu::scan_segments`], with an index out of bounds in the monoid's translated code an
    /// error instead of a panic.
    pub fn try_scan_segments<M: Monoid, I: SegIndex>(
        &self,
        xs: &[M],
        offsets: &[I],
        kind: Scan,
    ) -> Result<Vec<M>, CpuError> {
        check_offsets(offsets, xs.len())?;
        Ok(self.scanned(true, xs, kind, Starts::Offsets(offsets))?)
    }

    /// The scan of each run of equal keys (see [`crate::scan_by_key`]: keys are labels, not
    /// sorted segment ids as for [`Cpu::reduce_by_owner`]), in parallel.
    pub fn scan_by_key<M: Monoid, K: SegIndex>(
        &self,
        xs: &[M],
        keys: &[K],
        kind: Scan,
    ) -> Result<Vec<M>, LayoutError> {
        check_keys(xs.len(), keys.len())?;
        Ok(unchecked(self.scanned(false, xs, kind, Starts::Keys(keys))))
    }

    /// [`Cpu::scan_by_key`], with an index out of bounds in the monoid's translated code an
    /// error instead of a panic.
    pub fn try_scan_by_key<M: Monoid, K: SegIndex>(
        &self,
        xs: &[M],
        keys: &[K],
        kind: Scan,
    ) -> Result<Vec<M>, CpuError> {
        check_keys(xs.len(), keys.len())?;
        Ok(self.scanned(true, xs, kind, Starts::Keys(keys))?)
    }

    fn scanned<M: Monoid, I: SegIndex>(
        &self,
        checked: bool,
        xs: &[M],
        kind: Scan,
        starts: Starts<'_, I>,
    ) -> Result<Vec<M>, IndexFault> {
        let n = xs.len();
        let chunk = if n <= MIN_CHUNK {
            n.max(1)
        } else {
            self.chunk_len(n)
        };
        let chunks = n.div_ceil(chunk);
        let range = |c: usize| (c * chunk, ((c + 1) * chunk).min(n));
        // 1. Each chunk: whether a segment starts in it, and the fold from its last start.
        let tails = (0..chunks)
            .into_par_iter()
            .map(|c| {
                let (lo, hi) = range(c);
                let last = starts.last_in(lo, hi);
                let tail = guarded::<M, _>(checked, || fold(&xs[last.unwrap_or(lo)..hi]))?;
                Ok((last.is_some(), tail))
            })
            .collect::<Result<Vec<(bool, M)>, IndexFault>>()?;
        // 2. The carries, in chunk order.
        let carries = guarded::<M, _>(checked, || {
            let mut carry = M::identity();
            let mut carries = Vec::with_capacity(chunks);
            for &(restarts, tail) in &tails {
                carries.push(carry);
                carry = if restarts {
                    tail
                } else {
                    M::combine(carry, tail)
                };
            }
            carries
        })?;
        // 3. Each chunk from its carry.
        let mut out = vec![M::identity(); n];
        out.par_chunks_mut(chunk)
            .enumerate()
            .map(|(c, dst)| {
                let (lo, hi) = range(c);
                guarded::<M, _>(checked, || {
                    let mut starts_at = starts.from(lo);
                    let mut acc = carries[c];
                    for (i, slot) in (lo..hi).zip(dst.iter_mut()) {
                        if starts_at(i) {
                            acc = M::identity();
                        }
                        let next = M::combine(acc, xs[i]);
                        *slot = match kind {
                            Scan::Inclusive => next,
                            Scan::Exclusive => acc,
                        };
                        acc = next;
                    }
                })
            })
            .collect::<Result<Vec<()>, IndexFault>>()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::test_monoids::Affine;
    use crate::{scan, scan_by_key, scan_segments, Cpu, Scan};

    /// Sizes around the chunk size, segments that cross chunks, start on chunk boundaries, are
    /// empty or cover everything: bit for bit the references.
    #[test]
    fn parallel_scans_equal_the_references() {
        let cpu = Cpu::new();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [
            0usize,
            1,
            7,
            super::MIN_CHUNK,
            super::MIN_CHUNK + 1,
            200_003,
        ] {
            let xs: Vec<Affine> = (0..n)
                .map(|_| Affine(next() as u32 | 1, next() as u32))
                .collect();
            let chunk = cpu.chunk_len(n.max(1));
            let mut layouts: Vec<Vec<u64>> = vec![vec![0, n as u64]];
            // Random lengths with empty ones; and segments that start exactly at chunk starts.
            let mut offsets = vec![0u64];
            while (*offsets.last().unwrap() as usize) < n {
                let len = [0u64, 1, 5, 1000, 40_000][next() as usize % 5];
                offsets.push((offsets.last().unwrap() + len).min(n as u64));
            }
            layouts.push(offsets);
            layouts.push(
                (0..=n.div_ceil(chunk))
                    .map(|c| (c * chunk).min(n) as u64)
                    .collect(),
            );
            for offsets in &layouts {
                // Keys: one per segment, alternating between two labels.
                let mut keys = vec![0u32; n];
                for (s, w) in offsets.windows(2).enumerate() {
                    keys[w[0] as usize..w[1] as usize].fill(s as u32 % 2);
                }
                for kind in [Scan::Inclusive, Scan::Exclusive] {
                    assert_eq!(cpu.scan(&xs, kind), scan(&xs, kind), "n = {n}");
                    assert_eq!(
                        cpu.scan_segments(&xs, offsets, kind).unwrap(),
                        scan_segments(&xs, offsets, kind).unwrap(),
                        "n = {n}, offsets {:?}…",
                        &offsets[..offsets.len().min(8)]
                    );
                    assert_eq!(
                        cpu.scan_by_key(&xs, &keys, kind).unwrap(),
                        scan_by_key(&xs, &keys, kind).unwrap(),
                        "n = {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_layouts_are_the_references_errors() {
        let cpu = Cpu::new();
        let xs = vec![Affine(3, 1); 10];
        assert_eq!(
            cpu.scan_segments(&xs, &[0u32, 11], Scan::Inclusive),
            scan_segments(&xs, &[0u32, 11], Scan::Inclusive)
        );
        assert_eq!(
            cpu.scan_by_key(&xs, &[1u64; 9], Scan::Exclusive),
            scan_by_key(&xs, &[1u64; 9], Scan::Exclusive)
        );
        assert!(cpu
            .try_scan_by_key(&xs, &[1u64; 9], Scan::Exclusive)
            .is_err());
    }
}
