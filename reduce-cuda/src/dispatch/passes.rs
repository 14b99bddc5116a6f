//! The multi-pass loop of the kernels that reduce one data block per CUDA block (`Tb2`,
//! `Tb4Warp`, `Matrix`, and the second pass of the persistent matrix algorithms): each pass
//! folds every data block of `tile` consecutive values into one value, in order, so the values
//! a pass leaves are in the order of the items, until a pass leaves one.

use super::Dispatch;
use crate::device::{kernel_signature, Kernel};
use crate::error::Result;

kernel_signature! {
    /// One pass: data block `b` of the `n` values at `in` becomes `out[b]`.
    pub(crate) struct PassArgs { r#in, n, out }
}

/// Bytes of the two regions the passes over `len` values alternate between.
pub(crate) fn pass_regions(len: u64, tile: u64, size: usize) -> [usize; 2] {
    let first = len.div_ceil(tile).max(1);
    let second = first.div_ceil(tile).max(1);
    [first as usize * size, second as usize * size]
}

impl Dispatch<'_> {
    /// Calls `pass(dispatch, index, len, blocks)` for each pass over `len` values, `tile` per
    /// block, in order, until a pass has one block: pass `index` reduces `len` values into
    /// `blocks`, which the next pass reduces.
    pub fn pass_loop(
        &mut self,
        len: u64,
        tile: u64,
        mut pass: impl FnMut(&mut Self, usize, u64, u64) -> Result<()>,
    ) -> Result<()> {
        let (mut len, mut index) = (len, 0);
        loop {
            let blocks = len.div_ceil(tile).max(1);
            pass(self, index, len, blocks)?;
            if blocks == 1 {
                return Ok(());
            }
            (len, index) = (blocks, index + 1);
        }
    }

    /// The reduction of the `n` values at `input` by passes of `kernel` (data blocks of `tile`
    /// values) into `out`, or, without one, into scratch memory; returns the result's address.
    pub fn multi_pass(
        &mut self,
        kernel: &Kernel<PassArgs>,
        tile: u64,
        input: u64,
        n: u64,
        out: Option<u64>,
    ) -> Result<u64> {
        let size = self.items().m_size;
        let [a, b] = pass_regions(n, tile, size);
        let regions = self.carve(&[a, b, size])?;
        let out = out.unwrap_or(regions[2]);
        self.passes(kernel, tile, input, n, [regions[0], regions[1]], out)?;
        Ok(out)
    }

    /// Runs passes of `kernel` (data blocks of `tile` values) over the `n` values at `input`
    /// until one value is left, written to `out`; the passes in between alternate between the
    /// two `regions` (sized by [`pass_regions`]).
    pub fn passes(
        &mut self,
        kernel: &Kernel<PassArgs>,
        tile: u64,
        input: u64,
        n: u64,
        regions: [u64; 2],
        out: u64,
    ) -> Result<()> {
        self.pass_loop(n, tile, |d, index, len, blocks| {
            let src = if index == 0 {
                input
            } else {
                regions[(index - 1) % 2]
            };
            let dst = if blocks == 1 { out } else { regions[index % 2] };
            d.launch(
                kernel,
                blocks,
                PassArgs {
                    r#in: src,
                    n: len,
                    out: dst,
                },
            )
        })
    }
}
