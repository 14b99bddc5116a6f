//! The CSR-only kernels on the emulator, one call format for both: SegHeads' three launches
//! (kernels/seg_heads.cu, driven by `tests/emulated_seg_heads.rs`) and SegBlocks' one
//! (kernels/seg_blocks.cu, `tests/emulated_seg_blocks.rs`).

use super::{emulated_text, index_bytes, segmented_results, Build, Order};
use reduce_cuda::KernelSource;

/// The host side of a SegHeads call (`#include`d after the kernel text).
const SEG_HEADS_MAIN_CPP: &str = include_str!("../../emu/seg_heads_main.cpp");
/// The host side of a SegBlocks call.
const SEG_BLOCKS_MAIN_CPP: &str = include_str!("../../emu/seg_blocks_main.cpp");

/// A SegHeads or SegBlocks kernel compiled for the emulator.
pub struct EmulatedHeads {
    build: Build,
    m_size: usize,
    wide: bool,
    /// Whether its calls may take owners (SegHeads').
    owners: bool,
}

/// One call: the items' bytes and count, the offsets (written as the kernel's index type), the
/// marks' grid and whether the call checks the layout. With `owners` (SegHeads only) the call
/// takes those instead, over `offsets.len() - 1` segments, as the runtime takes the owner form:
/// checked by `seg_validate_owner` when validated, then turned into offsets by
/// `seg_owner_to_offsets`.
pub struct HeadsCase {
    pub n: u64,
    pub items: Vec<u8>,
    pub offsets: Vec<u64>,
    pub owners: Option<Vec<u64>>,
    pub grid: u64,
    pub validate: bool,
}

/// The SegHeads kernel of `source` for offsets of u64 entries when `wide`, values of `m_size`
/// bytes, tagged `tag`.
pub fn seg_heads_kernel(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    m_size: usize,
    wide: bool,
) -> EmulatedHeads {
    assert!(source.text.contains("reduce_seg_heads_fold("));
    let main = ("seg_heads_main.cpp", SEG_HEADS_MAIN_CPP);
    let build = Build::compile(
        cxx,
        &emulated_text(source),
        main,
        &format!("seg_heads_{tag}"),
    );
    EmulatedHeads {
        build,
        m_size,
        wide,
        owners: true,
    }
}

/// The SegBlocks kernel of `source` with chunks of `chunk_runs` lane runs (the runtime's are
/// far longer than a test's layouts), otherwise as [`seg_heads_kernel`]. Its cases' `grid` is
/// the launch's blocks (units past it are taken a grid apart); `validate` runs its fused check
/// and `seg_hand_status` behind it.
pub fn seg_blocks_kernel(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    m_size: usize,
    wide: bool,
    chunk_runs: u32,
) -> EmulatedHeads {
    let text = emulated_text(source);
    let chunk = text
        .lines()
        .find(|line| line.starts_with("#define R_CHUNK_RUNS "))
        .expect("a SegBlocks kernel")
        .to_string();
    let text = text.replace(&chunk, &format!("#define R_CHUNK_RUNS {chunk_runs}"));
    let main = ("seg_blocks_main.cpp", SEG_BLOCKS_MAIN_CPP);
    let build = Build::compile(cxx, &text, main, &format!("seg_blocks_{tag}"));
    EmulatedHeads {
        build,
        m_size,
        wide,
        owners: false,
    }
}

impl EmulatedHeads {
    /// Runs the calls in one process, the fibers of each block in `order`; per call the status
    /// handed out (all ones: the layout passed; only meaningful when validated) and the
    /// segments' bytes.
    pub fn run(&self, cases: &[HeadsCase], order: Order) -> Vec<(u64, Vec<u8>)> {
        let mut input = Vec::new();
        for c in cases {
            assert!(
                self.owners || c.owners.is_none(),
                "SegBlocks takes offsets only"
            );
            let segments = c.offsets.len() as u64 - 1;
            let flags = c.validate as u64 | (c.owners.is_some() as u64) << 1;
            for h in [c.n, segments, c.grid, flags] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            let layout = c.owners.as_ref().unwrap_or(&c.offsets);
            input.extend_from_slice(&index_bytes(layout, self.wide));
        }
        let bytes = self.build.execute(input, order);
        let lens = cases.iter().map(|c| (c.offsets.len() - 1) * self.m_size);
        segmented_results(&bytes, lens).unwrap_or_else(|e| panic!("{e}"))
    }
}
