//! Reductions along axes on the emulator, launch after launch: the default mode's passes
//! (kernels/axes.cu) and the portable mode's (kernels/axes_portable.cu).

use super::{values_from, Build, Order};
use reduce_cuda::KernelSource;

const AXES_PORTABLE_MAIN_CPP: &str = include_str!("../../emu/axes_portable_main.cpp");
const AXES_MAIN_CPP: &str = include_str!("../../emu/axes_main.cpp");

/// A reduction along axes compiled for the emulator, run launch after launch: the portable
/// mode's passes (kernels/axes_portable.cu) or the default mode's (kernels/axes.cu).
pub struct EmulatedPasses {
    build: Build,
    m_size: usize,
    /// The words of one launch's record in the input.
    record: usize,
}

/// One reduction along axes: the items' bytes and count, their offset from a 16-byte boundary,
/// the most blocks a launch runs on, the launches (records of
/// `reduce_cuda::testing::axes_portable_passes` or `axes_strips_launches`, as the kernel's
/// main reads them) and the values the last one writes.
pub struct PassesCase {
    pub n: u64,
    pub items: Vec<u8>,
    pub shift: u64,
    pub grid: u64,
    pub passes: Vec<Vec<u64>>,
    pub outputs: u64,
}

/// The portable axes kernels of `source` (`reduce_cuda::testing::axes_portable_source`),
/// tagged `tag`; a pass's record: its entry and 25 arguments.
pub fn axes_portable_kernel(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    m_size: usize,
) -> EmulatedPasses {
    let main = ("axes_portable_main.cpp", AXES_PORTABLE_MAIN_CPP);
    EmulatedPasses::build(
        cxx,
        source,
        main,
        &format!("axes_portable_{tag}"),
        m_size,
        26,
    )
}

/// The default mode's axes kernels of `source` (`reduce_cuda::testing::axes_strips_source`),
/// tagged `tag`; a launch's record: its entry, threads, outputs and arguments, padded to 10.
pub fn axes_kernel(cxx: &str, source: &KernelSource, tag: &str, m_size: usize) -> EmulatedPasses {
    let main = ("axes_main.cpp", AXES_MAIN_CPP);
    EmulatedPasses::build(cxx, source, main, &format!("axes_{tag}"), m_size, 10)
}

impl EmulatedPasses {
    fn build(
        cxx: &str,
        source: &KernelSource,
        main: (&str, &str),
        tag: &str,
        m_size: usize,
        record: usize,
    ) -> Self {
        let build = Build::compile(cxx, &source.text, main, tag);
        EmulatedPasses {
            build,
            m_size,
            record,
        }
    }

    /// Runs the cases in one process, the fibers of each block in `order`; per case the last
    /// launch's values' bytes.
    pub fn run(&self, cases: &[PassesCase], order: Order) -> Vec<Vec<u8>> {
        let mut input = Vec::new();
        for c in cases {
            for h in [c.n, c.shift, c.grid, c.passes.len() as u64] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            for pass in &c.passes {
                assert_eq!(
                    pass.len(),
                    self.record,
                    "a launch's record, as the main reads it"
                );
                pass.iter()
                    .for_each(|v| input.extend_from_slice(&v.to_le_bytes()));
            }
            input.extend_from_slice(&c.items);
        }
        let bytes = self.build.execute(input, order);
        let mut at = 0;
        cases
            .iter()
            .map(|c| {
                let len = c.outputs as usize * self.m_size;
                let ok = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
                assert_eq!(ok, 1, "a deadlock");
                at += 8 + len;
                bytes[at - len..at].to_vec()
            })
            .collect()
    }
}

/// Runs each case (its label, the case whose `grid` is set here, the values it must give) on
/// grids of 1, 3 and 7 blocks with the fibers of every block in every order, and holds every
/// output against its values.
pub fn check_on_grids<M: Copy + std::fmt::Debug + PartialEq>(
    kernel: &EmulatedPasses,
    tag: &str,
    cases: Vec<(String, PassesCase, Vec<M>)>,
) {
    let mut runs = Vec::new();
    let mut wanted = Vec::new();
    for (label, case, want) in cases {
        for grid in [1u64, 3, 7] {
            runs.push(PassesCase {
                grid,
                items: case.items.clone(),
                passes: case.passes.clone(),
                ..case
            });
            wanted.push((format!("{label}, grid {grid}"), want.clone()));
        }
    }
    for order in Order::ALL {
        for (got, (label, want)) in kernel.run(&runs, order).iter().zip(&wanted) {
            let got: Vec<M> = values_from(got);
            assert_eq!(&got, want, "{tag}: {label}, fibers {order:?}");
        }
    }
}
