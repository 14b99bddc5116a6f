//! Kernel text: parameters + prelude + monoid + shared helpers + one algorithm family's
//! template.
//!
//! Rust only stitches; the kernels are real `.cu` files under `reduce-cuda/kernels/`, written
//! against the abstract monoid `M`, `m_identity()`, `m_combine(l, r)`. Compile-time parameters
//! arrive as `#define`s at the top (sizes are run-time arguments, so they are not in the key).

use super::program::Program;
use reduce_core::CUDA_PRELUDE;

/// A kernel file: one algorithm family's template, or a header several of them include.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Family {
    Tb2,
    Tb4Warp,
    Matrix,
    DiffWarps,
    Shuffle,
    /// The portable plain reduction (`Config::portable`).
    Portable,
    SegTree,
    SegMatrix,
    SegShuffle,
    /// The portable segmented reduction (`SegConfig::portable`).
    SegPortable,
    SegMerge,
    /// The CSR form by head bits (`SegHeads`).
    SegHeads,
    /// The CSR form a block per segment, capped at a chunk (`SegBlocks`).
    SegBlocks,
    /// Reductions along the axes of arrays.
    Axes,
    /// The portable reductions along axes (`AxisConfig::portable`).
    AxesPortable,
    /// Scans, plain and segmented.
    Scan,
    /// The multi-GPU helpers (`cluster`).
    #[cfg(feature = "nccl")]
    Shard,
    /// The portable grouping's join of the ranks' summaries on the device (`cluster`).
    #[cfg(feature = "nccl")]
    ShardJoin,
}

impl Family {
    /// Every template (the tests read them all; `testing::check_compiles` finds a source's).
    pub const ALL: &[Family] = &[
        Family::Tb2,
        Family::Tb4Warp,
        Family::Matrix,
        Family::DiffWarps,
        Family::Shuffle,
        Family::Portable,
        Family::SegTree,
        Family::SegMatrix,
        Family::SegShuffle,
        Family::SegPortable,
        Family::SegMerge,
        Family::SegHeads,
        Family::SegBlocks,
        Family::Axes,
        Family::AxesPortable,
        Family::Scan,
        #[cfg(feature = "nccl")]
        Family::Shard,
        #[cfg(feature = "nccl")]
        Family::ShardJoin,
    ];

    /// The file name without its extension; the program is named `reduce_<name>.cu`.
    pub fn name(self) -> &'static str {
        self.file().0
    }

    /// (name, text) of the family's template.
    fn file(self) -> (&'static str, &'static str) {
        match self {
            Family::Tb2 => ("tb2", include_str!("../../kernels/tb2.cu")),
            Family::Tb4Warp => ("tb4_warp", include_str!("../../kernels/tb4_warp.cu")),
            Family::Matrix => ("matrix", include_str!("../../kernels/matrix.cu")),
            Family::DiffWarps => ("diff_warps", include_str!("../../kernels/diff_warps.cu")),
            Family::Shuffle => ("shuffle", include_str!("../../kernels/shuffle.cu")),
            Family::Portable => ("portable", include_str!("../../kernels/portable.cu")),
            Family::SegTree => ("seg_tree", include_str!("../../kernels/seg_tree.cu")),
            Family::SegMatrix => ("seg_matrix", include_str!("../../kernels/seg_matrix.cu")),
            Family::SegShuffle => ("seg_shuffle", include_str!("../../kernels/seg_shuffle.cu")),
            Family::SegPortable => (
                "seg_portable",
                include_str!("../../kernels/seg_portable.cu"),
            ),
            Family::SegMerge => ("seg_merge", include_str!("../../kernels/seg_merge.cu")),
            Family::SegHeads => ("seg_heads", include_str!("../../kernels/seg_heads.cu")),
            Family::SegBlocks => ("seg_blocks", include_str!("../../kernels/seg_blocks.cu")),
            Family::Axes => ("axes", include_str!("../../kernels/axes.cu")),
            Family::AxesPortable => (
                "axes_portable",
                include_str!("../../kernels/axes_portable.cu"),
            ),
            Family::Scan => ("scan", include_str!("../../kernels/scan.cu")),
            #[cfg(feature = "nccl")]
            Family::Shard => ("shard", include_str!("../../kernels/shard.cu")),
            #[cfg(feature = "nccl")]
            Family::ShardJoin => ("shard_join", include_str!("../../kernels/shard_join.cu")),
        }
    }

    /// The headers the template relies on, after `common.cuh`, in order.
    fn headers(self) -> &'static [Header] {
        match self {
            Family::SegTree | Family::SegMatrix | Family::SegMerge => &[SEG_COMMON],
            Family::Scan => &[SEG_COMMON],
            Family::SegShuffle => &[SEG_COMMON, SEG_TILE, PIPE],
            Family::Shuffle | Family::Portable => &[LANES],
            Family::SegPortable | Family::SegHeads | Family::SegBlocks => &[SEG_COMMON, LANES],
            _ => &[],
        }
    }

    /// The parts after the template that build on its definitions, in order.
    fn trailers(self) -> &'static [Header] {
        match self {
            Family::Scan => &[PIPE, SCAN_AHEAD],
            _ => &[],
        }
    }

    /// The full texts of the template and its headers, for the tests that read the kernels'
    /// signatures.
    #[cfg(test)]
    pub fn texts(self) -> Vec<(&'static str, &'static str)> {
        let mut texts = vec![COMMON, ITEMS];
        texts.extend(self.headers());
        texts.push(self.file());
        texts.extend(self.trailers());
        texts
    }
}

/// A kernel header: its name and text.
type Header = (&'static str, &'static str);

/// The shared warp/block helpers.
const COMMON: Header = ("common.cuh", include_str!("../../kernels/common.cuh"));
/// Input items as monoid values (after the input items' section: it calls `m_lift`).
const ITEMS: Header = ("items.cuh", include_str!("../../kernels/items.cuh"));
/// A lane's run of input items, loaded as vectors (Shuffle, the portable kernels, SegHeads,
/// SegBlocks).
const LANES: Header = ("lanes.cuh", include_str!("../../kernels/lanes.cuh"));
/// The helpers of the segmented families (segmented scan, validation, identity fill).
const SEG_COMMON: Header = (
    "seg_common.cuh",
    include_str!("../../kernels/seg_common.cuh"),
);
/// SegShuffle's tile: its items' loads and the offsets form's marks.
const SEG_TILE: Header = ("seg_tile.cuh", include_str!("../../kernels/seg_tile.cuh"));

/// The tile pipeline: bulk copies into shared-memory stages by a producer warp (`R_PIPE`).
const PIPE: Header = ("pipe.cuh", include_str!("../../kernels/pipe.cuh"));

/// The scans' LookAhead kernel, after kernels/scan.cu and the tile pipeline.
const SCAN_AHEAD: Header = ("scan_ahead.cu", include_str!("../../kernels/scan_ahead.cu"));

/// Which template, with which compile-time parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KernelSpec {
    pub family: Family,
    pub defines: Vec<(&'static str, u32)>,
}

impl KernelSpec {
    pub fn new(family: Family, defines: &[(&'static str, u32)]) -> Self {
        KernelSpec {
            family,
            defines: defines.to_vec(),
        }
    }
}

/// A complete CUDA C++ translation unit, with the line where each part starts.
#[derive(Clone, Debug)]
pub struct KernelSource {
    /// The family (`matrix`, `shuffle`, ...); the program is named `reduce_<family>.cu`.
    pub family: String,
    /// The text NVRTC compiles.
    pub text: String,
    /// (first line, 1-based; what the part is) for each part.
    pub sections: Vec<(usize, String)>,
}

impl KernelSource {
    /// The file name NVRTC reports errors against.
    pub fn program_name(&self) -> String {
        format!("reduce_{}.cu", self.family)
    }

    /// Which part of the text holds `line` (1-based).
    pub fn section_of(&self, line: usize) -> Option<&str> {
        self.sections
            .iter()
            .rev()
            .find(|(start, _)| *start <= line)
            .map(|(_, name)| name.as_str())
    }
}

/// The kernel text of `spec` for `program` (a monoid, and the items it reads).
pub(crate) fn assemble(spec: &KernelSpec, program: &dyn Program) -> KernelSource {
    let family = spec.family.name();
    let mut source = KernelSource {
        family: family.to_string(),
        text: String::new(),
        sections: Vec::new(),
    };
    let params: Vec<String> = spec
        .defines
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut header = format!(
        "// Generated by reduce-cuda: kernel family `{family}` for monoid `{}`.\n// Compile-time parameters: {}\n",
        program.monoid_name(),
        if params.is_empty() { "none".to_string() } else { params.join(", ") }
    );
    for (name, value) in &spec.defines {
        header.push_str(&format!("#define {name} {value}\n"));
    }
    push(&mut source, "parameters", &header);
    push(
        &mut source,
        "prelude (reduce_core::CUDA_PRELUDE)",
        CUDA_PRELUDE,
    );
    push(
        &mut source,
        &format!("monoid {}", program.monoid_name()),
        &program.monoid_text(),
    );
    push(&mut source, &format!("kernels/{}", COMMON.0), COMMON.1);
    push(&mut source, "input items", program.input_items());
    push(&mut source, &format!("kernels/{}", ITEMS.0), ITEMS.1);
    for (name, text) in spec.family.headers() {
        push(&mut source, &format!("kernels/{name}"), text);
    }
    push(
        &mut source,
        &format!("kernels/{family}.cu"),
        spec.family.file().1,
    );
    for (name, text) in spec.family.trailers() {
        push(&mut source, &format!("kernels/{name}"), text);
    }
    source
}

fn push(source: &mut KernelSource, name: &str, part: &str) {
    let banner = format!("\n// ======== {name} ========\n");
    if !source.text.is_empty() {
        source.text.push_str(&banner);
    }
    let first_line = source.text.lines().count() + 1;
    source.sections.push((first_line, name.to_string()));
    source.text.push_str(part);
    if !part.ends_with('\n') {
        source.text.push('\n');
    }
}
