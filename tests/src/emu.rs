//! The CPU emulator of SegShuffle's kernel, and of SegPipeline's, which is the same kernel fed
//! by a producer warp's bulk copies (tests/emu): the generated CUDA text compiled by the host C++
//! compiler against `cuda_emu.hpp` and `seg_shuffle_main.cpp` (every CUDA thread a
//! fiber, barriers and warp collectives as real rendezvous, poisoned dynamic shared memory,
//! AddressSanitizer on every access), launched block by block on cases written to a file.
//! `tests/emulated_kernels.rs` drives [`Emulated`] case by case (the layout checks, garbage
//! layouts, lifted items); [`seg_shuffle_kernel`] and [`check_layouts`] run any padding-free
//! monoid over a list of segment lengths against the sequential fold.
//!
//! Both C++ files are compiled into the test binary and written beside each kernel it builds, so
//! that the binary runs wherever it is copied (the GPU machine has no source checkout).

use crate::layouts::{offsets_of, owners_of};
use crate::{env_flag, Random, TestRng};
use reduce_core::{fold_segments, CudaMonoid, SegIndex};
use reduce_cuda::testing::{
    scan_kernel_source, seg_dynamic_smem, seg_kernel_source_for, seg_kernel_variants_for,
};
use reduce_cuda::{KernelSource, SegAlgorithm, SegConfig};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The emulator's CUDA subset (`#include`d before the kernel text).
const CUDA_EMU_HPP: &str = include_str!("../emu/cuda_emu.hpp");
/// The host side of a launch (`#include`d after the kernel text).
const SEG_SHUFFLE_MAIN_CPP: &str = include_str!("../emu/seg_shuffle_main.cpp");
/// The host side of a scan launch.
const SCAN_MAIN_CPP: &str = include_str!("../emu/scan_main.cpp");
const PLAIN_MAIN_CPP: &str = include_str!("../emu/plain_main.cpp");
const SEG_PORTABLE_MAIN_CPP: &str = include_str!("../emu/seg_portable_main.cpp");
const AXES_PORTABLE_MAIN_CPP: &str = include_str!("../emu/axes_portable_main.cpp");
const AXES_MAIN_CPP: &str = include_str!("../emu/axes_main.cpp");

/// How every emulated kernel is compiled: C++17, AddressSanitizer, and the arithmetic of CUDA
/// (wrapping signed overflow, no type-based aliasing, no fused multiply-add).
const CXX_FLAGS: [&str; 8] = [
    "-std=c++17",
    "-O1",
    "-g",
    "-w",
    "-fsanitize=address",
    "-fwrapv",
    "-fno-strict-aliasing",
    "-ffp-contract=off",
];

/// The host C++ compiler (`$CXX`, else `c++`) if it builds and runs a program with the
/// emulator's flags (AddressSanitizer included), else `None` after saying why. Panics instead
/// when `REDUCE_REQUIRE_EMULATOR=1` (CI sets it). Probed once per test binary.
pub fn compiler() -> Option<String> {
    static PROBE: OnceLock<Result<String, String>> = OnceLock::new();
    match PROBE.get_or_init(probe_compiler) {
        Ok(cxx) => Some(cxx.clone()),
        Err(why) if env_flag("REDUCE_REQUIRE_EMULATOR") => {
            panic!("REDUCE_REQUIRE_EMULATOR=1 but {why}")
        }
        Err(why) => {
            eprintln!(
                "emulated kernel test skipped (set REDUCE_REQUIRE_EMULATOR=1 to make this a \
                 failure): {why}"
            );
            None
        }
    }
}

/// Compiles and runs an empty program with [`CXX_FLAGS`]; the compiler, or why it cannot be
/// used.
fn probe_compiler() -> Result<String, String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let dir = scratch_dir("probe");
    let (cpp, exe) = (dir.join("probe.cpp"), dir.join("probe"));
    std::fs::write(&cpp, "int main() { return 0; }\n").unwrap();
    let built = Command::new(&cxx)
        .args(CXX_FLAGS)
        .arg(&cpp)
        .arg("-o")
        .arg(&exe)
        .output();
    let outcome = match built {
        Err(e) => Err(format!("no host C++ compiler ({cxx}: {e})")),
        Ok(out) if !out.status.success() => Err(format!(
            "the host C++ compiler ({cxx}) cannot build with {}:\n{}",
            CXX_FLAGS.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )),
        Ok(_) => match Command::new(&exe).output() {
            Ok(out) if out.status.success() => Ok(cxx),
            Ok(out) => Err(format!(
                "a program built by {cxx} with AddressSanitizer does not run here ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )),
            Err(e) => Err(format!("a program built by {cxx} does not start here: {e}")),
        },
    };
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

/// A new, empty directory of this process under the system's temporary directory.
fn scratch_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("reduce-emu-{}-{k}-{tag}", std::process::id());
    let dir = std::env::temp_dir().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub use crate::bytes_of;

/// Values of a padding-free `Copy` type from their bytes.
pub fn values_from<T: Copy>(bytes: &[u8]) -> Vec<T> {
    bytes
        .chunks_exact(std::mem::size_of::<T>())
        // SAFETY: the types the emulator tests use are plain data: any bytes are a value.
        .map(|c| unsafe { std::ptr::read_unaligned(c.as_ptr().cast::<T>()) })
        .collect()
}

/// A SegShuffle launch compiled for the emulator.
pub struct Emulated {
    exe: PathBuf,
    dir: PathBuf,
    pub threads: u64,
    pub tile: u64,
    pub offsets_form: bool,
    pub m_size: usize,
    /// u64 layout entries (else u32).
    pub wide: bool,
    /// The launch's dynamic shared memory per block (what the library passes).
    pub smem: u64,
}

/// One launch's inputs: the items' bytes, the layout (offsets or owners), segments and grid,
/// and the layout check the launch makes.
pub struct Case {
    pub n: u64,
    pub items: Vec<u8>,
    /// Offsets or owners (written as the kernel's index type).
    pub index: Vec<u64>,
    pub segments: u64,
    pub grid: u64,
    /// The layout check (the kernel's `check`: CHECK_NONE, CHECK_FUSED or CHECK_EARLY).
    pub check: u64,
}

/// The kernel's layout checks (kernels/seg_common.cuh, `R_CHECK_*`).
pub const CHECK_NONE: u64 = 0;
pub const CHECK_FUSED: u64 = 1;
pub const CHECK_EARLY: u64 = 2;

/// The order the emulator runs a block's fibers in (tests/emu/cuda_emu.hpp).
#[derive(Clone, Copy, Debug)]
pub enum Order {
    /// Round the block in increasing thread order, each fiber up to its next wait.
    Increasing,
    /// The same in decreasing thread order.
    Decreasing,
    /// The first runnable fiber after every switch: warps run ahead of later warps between
    /// block barriers.
    WarpsAhead,
}

impl Order {
    pub const ALL: [Order; 3] = [Order::Increasing, Order::Decreasing, Order::WarpsAhead];

    pub fn arg(self) -> &'static str {
        match self {
            Order::Increasing => "forward",
            Order::Decreasing => "reverse",
            Order::WarpsAhead => "eager",
        }
    }
}

impl Emulated {
    #[allow(clippy::too_many_arguments)]
    pub fn build(
        cxx: &str,
        source: KernelSource,
        tag: &str,
        config: SegConfig,
        offsets_form: bool,
        wide: bool,
        m_size: usize,
        smem: usize,
    ) -> Emulated {
        let (threads, items) = (config.block.unwrap(), config.items_per_thread.unwrap());
        let text = emulated_text(&source);
        let tag = format!(
            "seg_shuffle_{tag}_b{threads}_k{items}_{}{}",
            if offsets_form { "offsets" } else { "owner" },
            if wide { "_u64" } else { "" }
        );
        let (exe, dir) = compile(
            cxx,
            &text,
            ("seg_shuffle_main.cpp", SEG_SHUFFLE_MAIN_CPP),
            &tag,
        );
        Emulated {
            exe,
            dir,
            threads: threads as u64,
            tile: threads as u64 * items as u64,
            offsets_form,
            m_size,
            wide,
            smem: smem as u64,
        }
    }

    /// Runs the cases in one process, the fibers of each block in `order`; per case (status,
    /// the segments' bytes).
    pub fn run(&self, cases: &[Case], order: Order) -> Vec<(u64, Vec<u8>)> {
        let mut input = Vec::new();
        for c in cases {
            let estimate = (c.segments * self.tile).div_ceil(c.n.max(1));
            for h in [
                c.n,
                c.segments,
                c.index.len() as u64,
                c.grid,
                estimate,
                self.smem,
                c.check,
            ] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            input.extend_from_slice(&index_bytes(&c.index, self.wide));
        }
        let bytes = execute(&self.exe, &self.dir, input, order);
        let lens = cases.iter().map(|c| c.segments as usize * self.m_size);
        segmented_results(&bytes, lens)
    }
}

/// A segmented launch's results, as its host side writes them per case: the status it handed
/// out, whether it ended well (a deadlock, or the ticket or status word not reset, fail here),
/// and the segments' bytes (`len` of them per case).
fn segmented_results(bytes: &[u8], lens: impl Iterator<Item = usize>) -> Vec<(u64, Vec<u8>)> {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let mut at = 0;
    lens.map(|len| {
        let (status, ok) = (word(at), word(at + 8));
        assert_eq!(
            ok, 1,
            "a deadlock, the ticket not reset, or the status handed out differs from the status word"
        );
        at += 16 + len;
        (status, bytes[at - len..at].to_vec())
    })
    .collect()
}

/// A kernel's text for the emulator: `extern __shared__ T name[];` -> the emulator's dynamic
/// shared memory; a prefetch (a cache hint, no value changes) -> an empty statement.
fn emulated_text(source: &KernelSource) -> String {
    source
        .text
        .lines()
        .map(|line| {
            let code = line.trim();
            if let Some(decl) = code.strip_prefix("extern __shared__ ") {
                let decl = decl.trim_end_matches("[];");
                let (ty, name) = decl.rsplit_once(' ').unwrap();
                format!("{ty}* {name} = reinterpret_cast<{ty}*>(emu_dynamic_smem());\n")
            } else if code.starts_with("asm volatile(\"prefetch.") {
                ";\n".to_string()
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

/// Keeps each emulated kernel's directory (its C++ text, binary and last cases) for debugging
/// when `REDUCE_EMU_KEEP=1`: rerun the binary there by hand (`./kernel cases results eager`).
impl Drop for Emulated {
    fn drop(&mut self) {
        if !env_flag("REDUCE_EMU_KEEP") {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// SegShuffle for `M` with `threads` x `items` per block, layouts of index type `I`; `variant`
/// picks among `seg_kernel_variants_for` (u32 offsets have two).
pub fn seg_shuffle_kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    threads: u32,
    items: u32,
    offsets_form: bool,
    variant: usize,
) -> Emulated {
    let config = SegConfig::new(SegAlgorithm::SegShuffle)
        .block(threads)
        .items_per_thread(items);
    let source: KernelSource = if variant == 0 {
        seg_kernel_source_for::<M, I>(config, offsets_form).unwrap()
    } else {
        seg_kernel_variants_for::<M, I>(config, offsets_form)
            .unwrap()
            .swap_remove(variant)
    };
    let smem = seg_dynamic_smem::<M>(config, offsets_form).unwrap();
    let tag = format!("{}_v{variant}", M::CUDA_NAME);
    let size = std::mem::size_of::<M>();
    Emulated::build(cxx, source, &tag, config, offsets_form, I::WIDE, size, smem)
}

/// Every layout of `layouts` (none may be without items or segments: the runtime does
/// not launch for those), grids 1, 2, 3 and one block per tile, the three layout checks
/// in turn, fibers in every order: each segment equals the fold, and no valid layout is
/// reported bad.
pub fn check_layouts<M: CudaMonoid + Random>(
    kernel: &Emulated,
    layouts: &[(String, Vec<u64>)],
    seed: u64,
) {
    let mut rng = TestRng::new(seed);
    let (mut cases, mut expected, mut names) = (Vec::new(), Vec::new(), Vec::new());
    for (name, lengths) in layouts {
        let offsets = offsets_of(lengths);
        let n = *offsets.last().unwrap();
        assert!(
            n > 0 && !lengths.is_empty(),
            "{name}: not launched by the runtime"
        );
        let items = M::random_vec(n as usize, rng.next_u64());
        let want = fold_segments(&items, &offsets).unwrap();
        let index = if kernel.offsets_form {
            offsets
        } else {
            owners_of(lengths)
        };
        let tiles = n.div_ceil(kernel.tile);
        for grid in [1, 2, 3, tiles] {
            if grid > tiles {
                continue;
            }
            let checks = if kernel.offsets_form { 3 } else { 2 };
            cases.push(Case {
                n,
                items: bytes_of(&items),
                index: index.clone(),
                segments: lengths.len() as u64,
                grid,
                check: [CHECK_NONE, CHECK_FUSED, CHECK_EARLY][cases.len() % checks],
            });
            expected.push(want.clone());
            names.push(format!("{name}, grid {grid}"));
        }
    }
    for order in Order::ALL {
        let results = kernel.run(&cases, order);
        for ((name, want), (status, bytes)) in names.iter().zip(&expected).zip(&results) {
            let got: Vec<M> = values_from(bytes);
            let first_bad = got.len().min(want.len());
            let first_bad = (0..first_bad)
                .find(|&s| got[s] != want[s])
                .unwrap_or(first_bad);
            assert!(
                got == *want,
                "{} emulated ({}, {}, tile {}, fibers {order:?}): {name}: segment {first_bad} \
                 of {} (got {} values) differs from the fold",
                M::CUDA_NAME,
                if kernel.offsets_form {
                    "offsets"
                } else {
                    "owner"
                },
                if kernel.wide { "u64" } else { "u32" },
                kernel.tile,
                want.len(),
                got.len()
            );
            assert_eq!(*status, u64::MAX, "{name}: a valid layout reported bad");
        }
    }
    eprintln!(
        "{}: {} emulated launches equal to the fold, fibers in every order",
        M::CUDA_NAME,
        cases.len()
    );
}

/// The bytes of layout entries as the kernel reads them: u64, or u32 (each must fit).
fn index_bytes(index: &[u64], wide: bool) -> Vec<u8> {
    if wide {
        return bytes_of(index);
    }
    let narrow: Vec<u32> = index.iter().map(|&v| v as u32).collect();
    assert!(narrow.iter().zip(index).all(|(&a, &b)| a as u64 == b));
    bytes_of(&narrow)
}

/// Writes the emulator, the kernel `text` and the host side `main` (file name, text) into a new
/// directory tagged `tag`, and compiles them; the binary and the directory.
fn compile(cxx: &str, text: &str, main: (&str, &str), tag: &str) -> (PathBuf, PathBuf) {
    let dir = scratch_dir(tag);
    std::fs::write(dir.join("cuda_emu.hpp"), CUDA_EMU_HPP).unwrap();
    std::fs::write(dir.join(main.0), main.1).unwrap();
    let cpp = dir.join("kernel.cpp");
    let program = format!(
        "#include \"cuda_emu.hpp\"\n{text}\n#include \"{}\"\n",
        main.0
    );
    std::fs::write(&cpp, program).unwrap();
    let exe = dir.join("kernel");
    let out = Command::new(cxx)
        .args(CXX_FLAGS)
        .arg(&cpp)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cxx} failed on {}:\n{}",
        cpp.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    (exe, dir)
}

/// Runs the emulated kernel `exe` on the cases `input` (written into `dir`), the fibers of each
/// block in `order`; the results' bytes.
fn execute(exe: &Path, dir: &Path, input: Vec<u8>, order: Order) -> Vec<u8> {
    let (cases_path, results_path) = (dir.join("cases"), dir.join("results"));
    std::fs::write(&cases_path, input).unwrap();
    let out = Command::new(exe)
        .arg(&cases_path)
        .arg(&results_path)
        .arg(order.arg())
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=0:detect_stack_use_after_return=0",
        )
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the emulated kernel failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&results_path).unwrap()
}

/// A scan kernel (kernels/scan.cu) compiled for the emulator: one block per tile, run in order.
pub struct EmulatedScan {
    exe: PathBuf,
    dir: PathBuf,
    /// Items per tile.
    pub tile: u64,
    /// u64 offsets or keys (else u32).
    pub wide: bool,
    m_size: usize,
}

/// One scan launch: the items' bytes, whether exclusive, the offsets or keys (none: plain).
pub struct ScanCase {
    pub n: u64,
    pub exclusive: bool,
    pub items: Vec<u8>,
    pub index: Vec<u64>,
}

/// The scan kernel of `config` for `M` over `I` layouts: plain (`None`), by offsets
/// (`Some(true)`) or by keys (`Some(false)`).
pub fn scan_kernel<M: CudaMonoid, I: SegIndex>(
    cxx: &str,
    config: reduce_cuda::ScanConfig,
    offsets: Option<bool>,
) -> EmulatedScan {
    let (source, (threads, items)) = scan_kernel_source::<M, I>(config, offsets).unwrap();
    let form = match offsets {
        None => "plain",
        Some(true) => "offsets",
        Some(false) => "keys",
    };
    let tag = format!(
        "scan_{}_b{threads}_k{items}_{form}_{}",
        M::CUDA_NAME,
        I::WIDE as u8
    );
    let (exe, dir) = compile(cxx, &source.text, ("scan_main.cpp", SCAN_MAIN_CPP), &tag);
    EmulatedScan {
        exe,
        dir,
        tile: threads as u64 * items as u64,
        wide: I::WIDE,
        m_size: std::mem::size_of::<M>(),
    }
}

impl EmulatedScan {
    /// Runs the cases in one process, the fibers of each block in `order`; per case the
    /// outputs' bytes.
    pub fn run(&self, cases: &[ScanCase], order: Order) -> Vec<Vec<u8>> {
        let mut input = Vec::new();
        for c in cases {
            for h in [c.n, c.exclusive as u64, c.index.len() as u64] {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            input.extend_from_slice(&index_bytes(&c.index, self.wide));
        }
        let bytes = execute(&self.exe, &self.dir, input, order);
        let mut at = 0;
        cases
            .iter()
            .map(|c| {
                let ok = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
                assert_eq!(
                    ok, 1,
                    "a deadlock, or the tile counter did not reach the tile count"
                );
                at += 8;
                let len = c.n as usize * self.m_size;
                at += len;
                bytes[at - len..at].to_vec()
            })
            .collect()
    }
}

impl Drop for EmulatedScan {
    fn drop(&mut self) {
        if !env_flag("REDUCE_EMU_KEEP") {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A plain reduction (Shuffle's kernels/shuffle.cu, or the portable kernels/portable.cu)
/// compiled for the emulator.
pub struct EmulatedPlain {
    exe: PathBuf,
    dir: PathBuf,
    m_size: usize,
}

/// The plain kernel of `source` (a Shuffle or a `Config::portable` translation unit), tagged
/// `tag`.
pub fn plain_kernel(cxx: &str, source: &KernelSource, tag: &str, m_size: usize) -> EmulatedPlain {
    let tag = format!("plain_{tag}");
    let (exe, dir) = compile(cxx, &source.text, ("plain_main.cpp", PLAIN_MAIN_CPP), &tag);
    EmulatedPlain { exe, dir, m_size }
}

impl EmulatedPlain {
    /// Runs the launches (items' bytes, item count, grid) in one process, the fibers of each
    /// block in `order`; per launch the root's bytes.
    pub fn run(&self, cases: &[(Vec<u8>, u64, u64)], order: Order) -> Vec<Vec<u8>> {
        let mut input = Vec::new();
        for (items, n, grid) in cases {
            input.extend_from_slice(&n.to_le_bytes());
            input.extend_from_slice(&grid.to_le_bytes());
            input.extend_from_slice(items);
        }
        let bytes = execute(&self.exe, &self.dir, input, order);
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
pub fn check_plain<X: Copy, M: Copy + std::fmt::Debug>(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    inputs: &[Vec<X>],
    expected: impl Fn(&[X]) -> M,
    same: impl Fn(&M, &M) -> bool,
) {
    let kernel = plain_kernel(cxx, source, tag, std::mem::size_of::<M>());
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

impl Drop for EmulatedPlain {
    fn drop(&mut self) {
        if !env_flag("REDUCE_EMU_KEEP") {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A portable segmented reduction (kernels/seg_portable.cu) compiled for the emulator.
pub struct EmulatedSegPortable {
    exe: PathBuf,
    dir: PathBuf,
    m_size: usize,
    wide: bool,
    /// The launch's dynamic shared memory per block (what the library passes).
    smem: u64,
    /// Items per tile (threads x run).
    pub tile: u64,
}

/// One portable segmented launch: the items' bytes and count, the layout (offsets or owners,
/// written as the kernel's index type), segments, grid, tiles per node, and whether the owners
/// are checked.
pub struct SegPortableCase {
    pub n: u64,
    pub items: Vec<u8>,
    pub index: Vec<u64>,
    pub segments: u64,
    pub grid: u64,
    pub group: u64,
    pub check: bool,
}

/// The portable segmented kernel of `source` (a `SegConfig::portable` translation unit) for
/// layouts of u64 entries when `wide`, with `smem` bytes of dynamic shared memory and tiles of
/// `tile` items, tagged `tag`.
pub fn seg_portable_kernel(
    cxx: &str,
    source: &KernelSource,
    tag: &str,
    m_size: usize,
    wide: bool,
    smem: usize,
    tile: u64,
) -> EmulatedSegPortable {
    let tag = format!("seg_portable_{tag}");
    let main = ("seg_portable_main.cpp", SEG_PORTABLE_MAIN_CPP);
    let (exe, dir) = compile(cxx, &emulated_text(source), main, &tag);
    EmulatedSegPortable {
        exe,
        dir,
        m_size,
        wide,
        smem: smem as u64,
        tile,
    }
}

impl EmulatedSegPortable {
    /// Runs the launches in one process, the fibers of each block in `order`; per launch the
    /// status it handed out and the segments' bytes.
    pub fn run(&self, cases: &[SegPortableCase], order: Order) -> Vec<(u64, Vec<u8>)> {
        let mut input = Vec::new();
        for c in cases {
            let header = [
                c.n,
                c.segments,
                c.index.len() as u64,
                c.grid,
                c.group,
                self.smem,
                c.check as u64,
            ];
            for h in header {
                input.extend_from_slice(&h.to_le_bytes());
            }
            input.extend_from_slice(&c.items);
            input.extend_from_slice(&index_bytes(&c.index, self.wide));
        }
        let bytes = execute(&self.exe, &self.dir, input, order);
        let lens = cases.iter().map(|c| c.segments as usize * self.m_size);
        segmented_results(&bytes, lens)
    }
}

impl Drop for EmulatedSegPortable {
    fn drop(&mut self) {
        if !env_flag("REDUCE_EMU_KEEP") {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// A reduction along axes compiled for the emulator, run launch after launch: the portable
/// mode's passes (kernels/axes_portable.cu) or the default mode's (kernels/axes.cu).
pub struct EmulatedPasses {
    exe: PathBuf,
    dir: PathBuf,
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
        let (exe, dir) = compile(cxx, &source.text, main, tag);
        EmulatedPasses {
            exe,
            dir,
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
        let bytes = execute(&self.exe, &self.dir, input, order);
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

impl Drop for EmulatedPasses {
    fn drop(&mut self) {
        if !env_flag("REDUCE_EMU_KEEP") {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
