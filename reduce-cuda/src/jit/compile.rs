//! NVRTC: generated CUDA C++ to a CUBIN for the device's own compute capability.
//!
//! Compiling straight to SASS (`--gpu-architecture=sm_XY`) means no PTX JIT at load time and
//! no mismatch between the toolkit's PTX version and the driver's.

use super::codegen::KernelSource;
use crate::error::{CompileFailure, Error, Result};
use cudarc::nvrtc::{result as nvrtc, sys};
use std::ffi::CString;

/// Whether `libnvrtc` can be loaded (checked before any NVRTC call, which would panic).
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to dlopen the library.
    unsafe { sys::is_culib_present() }
}

/// NVRTC entry points that old versions lack (CUBIN output came with NVRTC 11.1): cudarc
/// panics on a missing one at its first call, so [`nvrtc_version`] looks them up first.
const NEWER_NVRTC_SYMBOLS: [&str; 2] = ["nvrtcGetCUBINSize", "nvrtcGetCUBIN"];

/// The NVRTC version as (major, minor), or [`Error::NvrtcMissing`], or
/// [`Error::LibraryTooOld`] where it lacks an entry point the library calls.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    if !nvrtc_available() {
        return Err(Error::NvrtcMissing);
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the library is present; the pointers are valid for the call.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcVersion", e))?;
    // SAFETY: as above; symbols are only looked up, never called.
    let lib = unsafe { sys::culib() };
    let missing: Vec<&str> = (NEWER_NVRTC_SYMBOLS.iter().copied())
        .filter(|name| unsafe { lib.get::<unsafe extern "C" fn()>(name.as_bytes()) }.is_err())
        .collect();
    if !missing.is_empty() {
        return Err(Error::LibraryTooOld {
            library: "NVRTC",
            version: format!("{major}.{minor}"),
            missing: missing.join(", "),
        });
    }
    Ok((major, minor))
}

/// The options every kernel is compiled with for `arch` (e.g. `sm_90`).
///
/// `--fmad=false`: no contraction of `a*b+c` into an FMA, so float monoids give the same bits
/// as their Rust `combine` on the CPU.
/// With `REDUCE_CUDA_LINEINFO=1`, `-lineinfo` is added (for profilers; part of the cache key).
pub fn options(arch: &str) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={arch}"),
        "--fmad=false".into(),
        "-std=c++17".into(),
    ];
    if std::env::var("REDUCE_CUDA_LINEINFO").is_ok_and(|v| v == "1") {
        options.push("-lineinfo".into());
    }
    options
}

/// Compiles `source` to a CUBIN for `arch` (`sm_90`, ...).
pub fn compile_cubin(source: &KernelSource, arch: &str) -> Result<Vec<u8>> {
    try_compile(source, arch)?.map_err(|failure| Error::Compile(Box::new(failure)))
}

/// Compiles `source` for `arch`: the CUBIN, or why NVRTC rejected the source (inner error: the
/// same text and options are rejected every time), or an error of NVRTC itself (outer: a
/// missing library, a failing call; the next attempt may succeed).
pub(crate) fn try_compile(
    source: &KernelSource,
    arch: &str,
) -> Result<std::result::Result<Vec<u8>, CompileFailure>> {
    try_compile_with(source, options(arch))
}

/// [`try_compile`] with the given NVRTC options.
pub(crate) fn try_compile_with(
    source: &KernelSource,
    options: Vec<String>,
) -> Result<std::result::Result<Vec<u8>, CompileFailure>> {
    // The library and the symbols the calls below need (an NVRTC too old for CUBINs is an
    // error here, not a panic in cudarc).
    nvrtc_version()?;
    if let Some(o) = options.iter().find(|o| o.contains('\0')) {
        return Err(nvrtc_failure_text(
            "the options",
            format!("the option {o:?} holds a NUL byte"),
        ));
    }
    // A NUL byte can come only from a hand-written `cuda = "..."` body that bypassed the
    // derive (which refuses one): a compile error, not a panic.
    let c_string = |what: &str, s: String| {
        CString::new(s).map_err(|e| {
            nvrtc_failure_text(
                what,
                format!("{what} holds a NUL byte at {}", e.nul_position()),
            )
        })
    };
    let text = c_string("the kernel text", source.text.clone())?;
    let name = c_string("the program name", source.program_name())?;
    let program = nvrtc::create_program(&text, Some(&name))
        .map_err(|e| nvrtc_failure("nvrtcCreateProgram", e))?;
    // SAFETY: `program` is valid until destroyed below; `text` and `name` outlive it.
    let outcome = unsafe { nvrtc::compile_program(program, &options) };
    let result = match outcome {
        Ok(()) => cubin_of(program).map(Ok),
        Err(e) => {
            // SAFETY: as above.
            let log = unsafe { nvrtc::get_program_log(program) }
                .map(|chars| c_chars_to_string(&chars))
                .unwrap_or_else(|e| format!("(the log could not be read: {e:?})"));
            if e.0 == sys::nvrtcResult::NVRTC_ERROR_COMPILATION {
                Ok(Err(compile_failure(source, log, options)))
            } else {
                // Not the text's fault (an option this NVRTC refuses, such as an architecture
                // newer than it knows): the code, the options and NVRTC's log name the cause.
                let call = "nvrtcCompileProgram";
                let mut failure = failure_of(call, format!("{call} failed: {:?}\n{log}", e.0));
                failure.options = options;
                Err(Error::Compile(failure))
            }
        }
    };
    // SAFETY: destroyed exactly once.
    let _ = unsafe { nvrtc::destroy_program(program) };
    result
}

fn cubin_of(program: sys::nvrtcProgram) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: `program` compiled successfully; the pointers are valid for the calls.
    unsafe { sys::nvrtcGetCUBINSize(program, &mut size) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcGetCUBINSize", e))?;
    if size == 0 {
        // A virtual `compute_XX` target yields PTX only.
        return Err(nvrtc_failure(
            "nvrtcGetCUBIN (empty CUBIN: virtual architecture?)",
            nvrtc::NvrtcError(sys::nvrtcResult::NVRTC_ERROR_INVALID_OPTION),
        ));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` holds `size` bytes.
    unsafe { sys::nvrtcGetCUBIN(program, cubin.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcGetCUBIN", e))?;
    Ok(cubin)
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn nvrtc_failure(call: &str, e: nvrtc::NvrtcError) -> Error {
    nvrtc_failure_text(call, format!("{call} failed: {:?}", e.0))
}

fn nvrtc_failure_text(call: &str, log: String) -> Error {
    Error::Compile(failure_of(call, log))
}

/// A failure of NVRTC call `call` (no line of the text to blame), with `log`.
fn failure_of(call: &str, log: String) -> Box<CompileFailure> {
    Box::new(CompileFailure {
        program: call.to_string(),
        log,
        line: None,
        source_line: None,
        section: None,
        options: Vec::new(),
    })
}

/// Why a compilation failed, pointing at the first line the log blames.
fn compile_failure(source: &KernelSource, log: String, options: Vec<String>) -> CompileFailure {
    let line = first_error_line(&log, &source.program_name());
    let source_line = line.and_then(|l| {
        let index = l.checked_sub(1)?;
        source.text.lines().nth(index).map(str::to_string)
    });
    let section = line.and_then(|l| source.section_of(l).map(str::to_string));
    CompileFailure {
        program: source.program_name(),
        log,
        line,
        source_line,
        section,
        options,
    }
}

/// NVRTC writes `name(LINE): error: ...`; returns the first such LINE.
fn first_error_line(log: &str, program: &str) -> Option<usize> {
    let prefix = format!("{program}(");
    log.lines().filter(|l| l.contains("error")).find_map(|l| {
        let rest = &l[l.find(&prefix)? + prefix.len()..];
        rest[..rest.find(')')?].parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_error_line() {
        let log = "reduce_x.cu(12): warning: meh\nreduce_x.cu(40): error: identifier \"q\" is undefined\nreduce_x.cu(41): error: other";
        assert_eq!(first_error_line(log, "reduce_x.cu"), Some(40));
        assert_eq!(first_error_line("no lines", "reduce_x.cu"), None);
    }
}
