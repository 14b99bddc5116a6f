//! The plain reductions' kernels on the emulator: Shuffle's (kernels/shuffle.cu), the portable
//! one (kernels/portable.cu) and the paper's Tb2 with the runtime's passes (kernels/tb2.cu), all
//! through `plain_main.cpp`.

use super::{bytes_of, emulated_text, values_from, Build, Order};
use reduce_cuda::KernelSource;

const PLAIN_MAIN_CPP: &str = include_str!("../../emu/plain_main.cpp");

/// A plain reduction (Shuffle's kernels/shuffle.cu, the portable kernels/portable.cu, or Tb2's
/// kernels/tb2.cu) compiled for the emulator.
pub struct EmulatedPlain {
    build: Build,
    m_size: usize,
    smem: u64,
}

/// The plain kernel of `source` (a Shuffle, `Config::portable` or Tb2 translation unit), tagged
/// `tag`, its blocks given `smem` bytes of dynamic shared memory (Tb2's data block, as
/// `reduce_cuda::testing::dynamic_smem` says; 0 for the others).
pub fn plain_kernel(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    m_size: usize,
    smem: usize,
) -> EmulatedPlain {
    let tag = format!("plain_{tag}");
    let main = ("plain_main.cpp", PLAIN_MAIN_CPP);
    let build = Build::compile(cxx, &emulated_text(source), main, &tag);
    EmulatedPlain {
        build,
        m_size,
        smem: smem as u64,
    }
}

impl EmulatedPlain {
    /// Runs the launches (items' bytes, item count, grid; Tb2 sizes its passes' grids itself)
    /// in one process, the fibers of each block in `order`; per launch the root's bytes.
    pub fn run(&self, cases: &[(Vec<u8>, u64, u64)], order: Order) -> Vec<Vec<u8>> {
        let mut input = Vec::new();
        for (items, n, grid) in cases {
            for h in [*n, *grid, self.smem] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(items);
        }
        let bytes = self.build.execute(input, order);
        let step = 8 + self.m_size;
        assert_eq!(bytes.len(), cases.len() * step, "one result per launch");
        bytes
            .chunks_exact(step)
            .map(|r| {
                let ok = u64::from_le_bytes(r[..8].try_into().unwrap());
                assert_eq!(ok, 1, "a deadlock, or the ticket was not left at 0");
                r[8..].to_vec()
            })
            .collect()
    }
}

/// Runs each input through `source`'s plain kernel (Shuffle's or the portable one), tagged
/// `tag`, on grids of 1, 3 and 7 blocks, the fibers in every order, and checks each root
/// against `expected` with `same`.
pub fn check_plain<X: reduce_cuda::DeviceCopy, M: Copy + std::fmt::Debug>(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    inputs: &[Vec<X>],
    expected: impl Fn(&[X]) -> M,
    same: impl Fn(&M, &M) -> bool,
) {
    let kernel = plain_kernel(cxx, source, tag, std::mem::size_of::<M>(), 0);
    let mut cases = Vec::new();
    for xs in inputs {
        for grid in [1u64, 3, 7] {
            cases.push((bytes_of(xs), xs.len() as u64, grid));
        }
    }
    for order in Order::ALL {
        for ((bytes, n, grid), got) in cases.iter().zip(kernel.run(&cases, order)) {
            let want = expected(&values_from::<X>(bytes));
            let got: M = values_from(&got)[0];
            assert!(
                same(&got, &want),
                "{tag}: n = {n}, grid {grid}, fibers {order:?}: {got:?} != {want:?}"
            );
        }
    }
}
