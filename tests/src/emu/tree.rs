//! The paper's left-storing segmented trees on the emulator (kernels/seg_tree.cu: Tb2Seg and
//! Tb4WarpSeg, driven by `tests/emulated_trees.rs`): the owner form's passes as the runtime
//! runs them (`tests/emu/seg_tree_main.cpp`).

use super::{bytes_of, emulated_text, segmented_results, Build, Order};
use reduce_core::CudaMonoid;
use reduce_cuda::testing::{seg_dynamic_smem, seg_kernel_source_for};
use reduce_cuda::{DeviceCopy, SegAlgorithm, SegConfig};

/// The host side of a Tb2Seg or Tb4WarpSeg call (`#include`d after the kernel text).
const SEG_TREE_MAIN_CPP: &str = include_str!("../../emu/seg_tree_main.cpp");

/// Tb2Seg's or Tb4WarpSeg's kernel compiled for the emulator, owners of u32.
pub struct EmulatedTree {
    build: Build,
    kind: u64,
    smem: u64,
    m_size: usize,
}

/// `algorithm` (Tb2Seg or Tb4WarpSeg) with `block` threads for monoid `M`, owner form, its text
/// changed by `edit` first (a test's mutation; `tag` names it).
pub fn seg_tree_kernel<M: CudaMonoid>(
    cxx: &str,
    algorithm: SegAlgorithm,
    block: u32,
    tag: &str,
    edit: impl FnOnce(&mut String),
) -> EmulatedTree {
    let kind = match algorithm {
        SegAlgorithm::Tb2Seg => 0,
        SegAlgorithm::Tb4WarpSeg => 1,
        other => panic!("{other} is not a left-storing tree"),
    };
    let config = SegConfig::new(algorithm).block(block);
    let mut source = seg_kernel_source_for::<M, u32>(config, false).unwrap();
    edit(&mut source.text);
    let smem = seg_dynamic_smem::<M>(config, false).unwrap() as u64;
    let tag = format!("seg_tree_{algorithm}{tag}_{}_b{block}", M::CUDA_NAME);
    let main = ("seg_tree_main.cpp", SEG_TREE_MAIN_CPP);
    EmulatedTree {
        build: Build::compile(cxx, &emulated_text(&source), main, &tag),
        kind,
        smem,
        m_size: std::mem::size_of::<M>(),
    }
}

impl EmulatedTree {
    /// Runs the calls (items, owners, segments) in one process, the fibers of each block in
    /// `order`; per call the segments' bytes.
    pub fn run<M: DeviceCopy>(
        &self,
        cases: &[(Vec<M>, Vec<u32>, u64)],
        order: Order,
    ) -> Vec<Vec<u8>> {
        let mut input = Vec::new();
        for (items, owners, segments) in cases {
            assert_eq!(items.len(), owners.len());
            for h in [items.len() as u64, *segments, self.smem, self.kind] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&bytes_of(items));
            input.extend_from_slice(&bytes_of(owners));
        }
        let bytes = self.build.execute(input, order);
        let lens = cases.iter().map(|c| c.2 as usize * self.m_size);
        let results = segmented_results(&bytes, lens).unwrap_or_else(|e| panic!("{e}"));
        results.into_iter().map(|(_, values)| values).collect()
    }
}
