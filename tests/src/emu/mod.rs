//! The CPU emulator of the kernels (tests/emu): a kernel's generated CUDA text compiled by the
//! host C++ compiler against `cuda_emu.hpp` and a host side (`*_main.cpp`: every CUDA thread a
//! fiber, barriers and warp collectives as real rendezvous, poisoned dynamic shared memory,
//! AddressSanitizer on every access), launched block by block on cases written to a file. One
//! module per family: `plain` (Shuffle's and the portable kernel), `segmented` (SegShuffle's,
//! SegPipeline's — the same kernel fed by a producer warp's bulk copies —, SegMerge's, whose
//! main reads the same cases, and the portable one's), `heads` (SegHeads' and SegBlocks'),
//! `tree` (the paper's Tb2Seg and Tb4WarpSeg), `scan`, `axes` (the default and the portable
//! mode's passes); here, what they share: the compiler, a built kernel and its runs, the fibers'
//! orders.
//!
//! The C++ files are compiled into the test binary and written beside each kernel it builds, so
//! that the binary runs wherever it is copied (the GPU machine has no source checkout).

mod axes;
mod heads;
#[cfg(feature = "nccl")]
mod join;
mod plain;
mod scan;
mod segmented;
mod tree;

pub use axes::{axes_kernel, axes_portable_kernel, check_on_grids, EmulatedPasses, PassesCase};
pub use heads::{seg_blocks_kernel, seg_heads_kernel, EmulatedHeads, HeadsCase};
#[cfg(feature = "nccl")]
pub use join::{join_kernel, EmulatedJoin, Joined};
pub use plain::{check_plain, plain_kernel, EmulatedPlain};
pub use scan::{scan_kernel, scan_kernel_edited, scan_kernel_with, EmulatedScan, ScanCase};
pub use segmented::{
    check_filling, check_flags, check_garbage_offsets, check_garbage_owners, check_layouts,
    check_lifted_argmax, seg_kernel_edited, seg_portable_kernel, seg_shuffle_kernel, Case,
    Emulated, EmulatedSegPortable, SegPortableCase, CHECK_EARLY, CHECK_FUSED, CHECK_NONE,
};
pub use tree::{seg_tree_kernel, EmulatedTree};

use crate::env_flag;
use reduce_cuda::KernelSource;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The emulator's CUDA subset (`#include`d before the kernel text).
const CUDA_EMU_HPP: &str = include_str!("../../emu/cuda_emu.hpp");

/// How every emulated kernel is compiled: C++17, AddressSanitizer, and the arithmetic of CUDA
/// (wrapping signed overflow, no type-based aliasing, no fused multiply-add). What a GPU does
/// not forgive is made to fail here too: a misaligned access (a `uint4` off a 16-byte boundary
/// faults on the device) and a shift by the type's width or more abort (UBSan, not recovered);
/// local variables start as a pattern, not as the zeros of fresh stack pages, so a local read
/// before it is written is not the identity of a sum by chance. The compiles are most of the
/// emulated tests' time: `-Og` runs the kernels as fast as `-O1` under AddressSanitizer and
/// compiles them in half the time; `-g1` keeps the line tables that the sanitizers' reports
/// name lines by (rebuild a kept kernel with `-g` to debug it).
const CXX_FLAGS: [&str; 10] = [
    "-std=c++17",
    "-Og",
    "-g1",
    "-w",
    "-fsanitize=address,alignment,shift-exponent",
    "-fno-sanitize-recover=all",
    "-ftrivial-auto-var-init=pattern",
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

/// The emulator's header, precompiled with [`CXX_FLAGS`] by `cxx` (the header and the standard
/// headers it includes were a fifth of every kernel's compile): `cuda_emu.hpp`, and
/// `cuda_emu.hpp.gch` beside it, in a directory of the system's temporary directory named after
/// the header, the flags and the compiler, which every test process compiling the same shares
/// (made under a name of this process's and renamed into place: a process finds it whole or not
/// at all). Kernels are compiled with `-include` of it; a compiler that cannot use the
/// precompiled file parses the header's text instead.
fn precompiled_header(cxx: &str) -> PathBuf {
    static HEADER: OnceLock<PathBuf> = OnceLock::new();
    HEADER
        .get_or_init(|| {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            (CUDA_EMU_HPP, CXX_FLAGS, cxx).hash(&mut hasher);
            let name = format!("reduce-emu-header-{:016x}", hasher.finish());
            let dir = std::env::temp_dir().join(name);
            let header = dir.join("cuda_emu.hpp");
            if !dir.join("cuda_emu.hpp.gch").exists() {
                let staging = scratch_dir("header");
                let text = staging.join("cuda_emu.hpp");
                std::fs::write(&text, CUDA_EMU_HPP).unwrap();
                let out = Command::new(cxx)
                    .args(CXX_FLAGS)
                    .args(["-x", "c++-header"])
                    .arg(&text)
                    .arg("-o")
                    .arg(staging.join("cuda_emu.hpp.gch"))
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{cxx} failed to precompile the emulator's header:\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                // another process may have put it in place meanwhile: then use theirs
                if std::fs::rename(&staging, &dir).is_err() {
                    let _ = std::fs::remove_dir_all(&staging);
                }
            }
            header
        })
        .clone()
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

/// The host shims the prelude needs outside NVRTC (a driver's first lines).
const PRELUDE_SHIMS: &str = r#"#include <cstdio>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __noinline__
template <typename T> T atomicCAS(T* p, T compare, T value) { T old = *p; if (old == compare) *p = value; return old; }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
"#;

/// A C++ driver of the prelude's helpers — the host shims, `hook` (defines the prelude reads,
/// such as `R_ON_FAULT`), `CUDA_PRELUDE`, then `body` (its `main`) — compiled by `cxx` as NVRTC
/// compiles the prelude for the bits (IEEE arithmetic, no contraction into FMAs) and run on
/// `input` (its stdin): its stdout. For the tests that compare the helpers with Rust, case by
/// case.
pub fn run_prelude_driver(cxx: &str, tag: &str, hook: &str, body: &str, input: String) -> String {
    let dir = scratch_dir(tag);
    std::fs::write(dir.join("prelude.cuh"), reduce_core::CUDA_PRELUDE).unwrap();
    let source = format!("{PRELUDE_SHIMS}{hook}\n#include \"prelude.cuh\"\n{body}");
    std::fs::write(dir.join("driver.cpp"), source).unwrap();
    let exe = dir.join("driver");
    let built = Command::new(cxx)
        .args(["-std=c++17", "-O2", "-w", "-ffp-contract=off"])
        .args(["-fno-strict-aliasing", "-fwrapv"])
        .arg(dir.join("driver.cpp"))
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let mut child = Command::new(&exe)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8(output.stdout).unwrap()
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

/// An emulated kernel: its binary, in a directory of its own (the C++ text, the binary, the last
/// cases and results). Removed when dropped, but kept for debugging when `REDUCE_EMU_KEEP=1`:
/// rerun the binary there by hand (`./kernel cases results eager`).
struct Build {
    exe: PathBuf,
    dir: PathBuf,
}

impl Build {
    /// Writes the emulator, the kernel `text` and the host side `main` (file name, text) into a new
    /// directory tagged `tag`, and compiles them (with the [`precompiled_header`]; the copy of
    /// the header beside the kernel is for rebuilding it by hand).
    fn compile(cxx: &str, text: &str, main: (&str, &str), tag: &str) -> Build {
        let dir = scratch_dir(tag);
        std::fs::write(dir.join("cuda_emu.hpp"), CUDA_EMU_HPP).unwrap();
        std::fs::write(dir.join(main.0), main.1).unwrap();
        let cpp = dir.join("kernel.cpp");
        let program = format!(
            "#include \"cuda_emu.hpp\"\n{}\n#include \"{}\"\n",
            fresh_static_shared(text),
            main.0
        );
        std::fs::write(&cpp, program).unwrap();
        let exe = dir.join("kernel");
        let out = Command::new(cxx)
            .args(CXX_FLAGS)
            .arg("-include")
            .arg(precompiled_header(cxx))
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
        Build { exe, dir }
    }

    /// Runs the kernel on the cases `input` (written into its directory), the fibers of each
    /// block in `order`; the results' bytes. Panics if the kernel fails.
    fn execute(&self, input: Vec<u8>, order: Order) -> Vec<u8> {
        self.try_execute(input, order)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Build::execute`], or how the kernel failed (the emulator's or AddressSanitizer's
    /// report).
    fn try_execute(&self, input: Vec<u8>, order: Order) -> Result<Vec<u8>, String> {
        let (cases_path, results_path) = (self.dir.join("cases"), self.dir.join("results"));
        std::fs::write(&cases_path, input).unwrap();
        let out = Command::new(&self.exe)
            .arg(&cases_path)
            .arg(&results_path)
            .arg(order.arg())
            .env(
                "ASAN_OPTIONS",
                "detect_leaks=0:detect_stack_use_after_return=0",
            )
            .output()
            .unwrap();
        if !out.status.success() {
            return Err(format!(
                "the emulated kernel failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(std::fs::read(&results_path).unwrap())
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        if !env_flag("REDUCE_EMU_KEEP") {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
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
                let decl = decl.trim_start_matches("__align__(16) ");
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

/// A kernel's text with every static `__shared__` declaration followed by
/// `emu_shared_fresh(&name, sizeof(name));` for each variable it declares, so that each block
/// starts with its static shared memory poisoned, as a GPU's holds whatever came before
/// (`tests/emu/cuda_emu.hpp`). A declaration is a line that starts with `__shared__`, up to the
/// `;` outside braces (a `union { … } name;` spans lines); its names are the last identifier
/// before any `[` of each top-level comma-separated declarator.
fn fresh_static_shared(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4096);
    let mut rest = text;
    while let Some(at) = next_declaration(rest) {
        let (before, decl) = rest.split_at(at);
        out.push_str(before);
        let end = statement_end(decl);
        let (statement, after) = decl.split_at(end + 1);
        out.push_str(statement);
        for name in declared_names(&statement["__shared__".len()..end]) {
            out.push_str(&format!(" emu_shared_fresh(&{name}, sizeof({name}));"));
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The byte offset of the next line of `text` that starts (after spaces) with `__shared__ `
/// (a static declaration: `extern __shared__` lines start with `extern`).
fn next_declaration(text: &str) -> Option<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let code = line.trim_start();
        if code.starts_with("__shared__ ") {
            return Some(at + (line.len() - code.len()));
        }
        at += line.len();
    }
    None
}

/// The offset of the `;` that ends the declaration `decl` starts with (outside braces; `//`
/// comments skipped).
fn statement_end(decl: &str) -> usize {
    let (mut depth, mut comment) = (0i32, false);
    let bytes = decl.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'\n' => comment = false,
            _ if comment => {}
            b'/' if bytes.get(i + 1) == Some(&b'/') => comment = true,
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b';' if depth == 0 => return i,
            _ => {}
        }
    }
    panic!("a __shared__ declaration without its `;`: {decl:.200}")
}

/// The variables a declaration (its text after `__shared__`, before the `;`) declares.
fn declared_names(decl: &str) -> Vec<String> {
    // Drop comments and braced bodies, then split the declarators at top-level commas.
    let mut flat = String::new();
    let mut depth = 0;
    for line in decl.lines() {
        let code = line.split("//").next().unwrap_or("");
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ if depth == 0 => flat.push(c),
                _ => {}
            }
        }
        flat.push(' ');
    }
    // Commas inside brackets, parentheses or (outside those) template arguments do not split.
    let mut parts = vec![String::new()];
    let (mut nest, mut angle) = (0, 0);
    for c in flat.chars() {
        match c {
            '[' | '(' => nest += 1,
            ']' | ')' => nest -= 1,
            '<' if nest == 0 => angle += 1,
            '>' if nest == 0 => angle -= 1,
            ',' if nest == 0 && angle == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().expect("one part at least").push(c);
    }
    (parts.iter())
        .map(|part| {
            let head = part.split('[').next().unwrap_or("").trim_end();
            let name = &head[head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1)..];
            assert!(!name.is_empty(), "no variable in `__shared__{decl}`");
            name.to_string()
        })
        .collect()
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

/// A segmented launch's results, as its host side writes them per case: the status it handed
/// out, whether it ended well (a deadlock, or the ticket or status word not reset, are errors),
/// and the segments' bytes (`len` of them per case).
fn segmented_results(
    bytes: &[u8],
    lens: impl Iterator<Item = usize>,
) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let mut at = 0;
    lens.map(|len| {
        let (status, ok) = (word(at), word(at + 8));
        if ok != 1 {
            return Err(
                "a deadlock, the ticket not reset, or the status handed out differs \
                        from the status word"
                    .to_string(),
            );
        }
        at += 16 + len;
        Ok((status, bytes[at - len..at].to_vec()))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::fresh_static_shared;

    #[test]
    fn every_static_shared_variable_is_made_fresh() {
        let text = "\
__device__ void f() {
    __shared__ M s_ring[2][R_FLUSH * R_NODE_TILES];  // a ring, [x]
    extern __shared__ uint4 s_dynamic[];
    // __shared__ in a comment
    __shared__ unsigned int s_flag, s_first;
    __shared__ union {
        r_seg group[R_WARP];  // first; {
        M ring[R_LB_SLOTS];
    } s_lb;
    __shared__ unsigned long long s_full[R_PIPE], s_empty[f(1, 2)];
    __shared__ r_array<int, 4> s_arrays[2], s_shifted[R_N >> 1];
}
";
        let got = fresh_static_shared(text);
        let names = [
            "s_ring",
            "s_flag",
            "s_first",
            "s_lb",
            "s_full",
            "s_empty",
            "s_arrays",
            "s_shifted",
        ];
        for name in names {
            let call = format!("emu_shared_fresh(&{name}, sizeof({name}));");
            assert_eq!(got.matches(&call).count(), 1, "{name} in:\n{got}");
        }
        assert_eq!(got.matches("emu_shared_fresh").count(), 8, "{got}");
        assert!(got.contains("s_ring[2][R_FLUSH * R_NODE_TILES]; emu_shared_fresh(&s_ring"));
        assert!(got.contains("} s_lb; emu_shared_fresh(&s_lb, sizeof(s_lb));"));
        assert!(!got.contains("emu_shared_fresh(&s_dynamic"));
    }
}
