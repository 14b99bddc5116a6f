//! The host side: the same translated text compiled by a host C++ compiler, with a shim for the
//! few CUDA built-ins the prelude uses. It runs the translation's arithmetic (wrapping, shifts,
//! casts, literals, control flow, indices) without a GPU; device-only behaviour (NVRTC, the
//! device's float instructions) is the GPU run's to check.

use crate::{Program, Run};
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIM: &str = r#"// fuzz-derive batch (host shim for the CUDA prelude)
#include <cmath>
#include <cstring>
#define __device__
#define __forceinline__ inline
#define __noinline__
template <typename T> T atomicCAS(T* p, T compare, T value) {
    T old = *p;
    if (old == compare) *p = value;
    return old;
}
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
static unsigned int r_fuzz_fault;
#define R_ON_FAULT(kind, i, n) (r_fuzz_fault = 1u)
"#;

fn entry(name: &str) -> String {
    format!(
        "extern \"C\" void fuzz_{name}(const void* a, const void* b, void* out, unsigned int n, \
         unsigned char* faults) {{\n    \
         for (unsigned int t = 0; t <= n; ++t) {{\n        \
         r_fuzz_fault = 0;\n        \
         {name}::M x, y;\n        \
         if (t < n) {{\n            \
         std::memcpy(&x, (const char*)a + t * sizeof(x), sizeof(x));\n            \
         std::memcpy(&y, (const char*)b + t * sizeof(y), sizeof(y));\n        \
         }}\n        \
         const {name}::M v = t < n ? {name}::m_combine(x, y) : {name}::m_identity();\n        \
         std::memcpy((char*)out + t * sizeof(v), &v, sizeof(v));\n        \
         faults[t] = (unsigned char)r_fuzz_fault;\n    \
         }}\n}}\n"
    )
}

/// The host C++ compiler: `$CXX`, else `c++`, if it runs.
pub fn compiler() -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    Command::new(&cxx)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|_| cxx)
}

/// A batch compiled into a shared library.
pub struct Library {
    lib: libloading::Library,
}

/// Compiles a batch with the host compiler into `dir`.
pub fn compile(cxx: &str, programs: &[&Program], dir: &Path, tag: &str) -> Result<Library, String> {
    let text = crate::batch_text(programs, SHIM, entry);
    let cpp: PathBuf = dir.join(format!("batch-{tag}.cpp"));
    let so: PathBuf = dir.join(format!("batch-{tag}.so"));
    std::fs::write(&cpp, text).map_err(|e| e.to_string())?;
    let out = Command::new(cxx)
        .args(["-std=c++17", "-O1", "-shared", "-fPIC", "-w"])
        // no contraction into FMAs, as NVRTC's --fmad=false; no strict-aliasing games
        .args(["-ffp-contract=off", "-fno-strict-aliasing", "-fwrapv"])
        .arg(&cpp)
        .arg("-o")
        .arg(&so)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "{cxx} failed on {}:\n{}",
            cpp.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    // SAFETY: a library we just built from our own text; its initializers do nothing.
    let lib = unsafe { libloading::Library::new(&so) }.map_err(|e| e.to_string())?;
    Ok(Library { lib })
}

type Entry = unsafe extern "C" fn(*const u8, *const u8, *mut u8, u32, *mut u8);

impl Library {
    /// Runs the batch: per program, the `n + 1` values (identity last) and fault flags.
    pub fn run(
        &self,
        programs: &[&Program],
        data: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Vec<Run>, String> {
        let mut out = Vec::new();
        for (p, (a, b)) in programs.iter().zip(data) {
            let n = a.len() / p.size;
            let name = format!("fuzz_{}", p.name);
            // SAFETY: the symbol is the entry we generated, with this signature.
            let f: libloading::Symbol<Entry> =
                unsafe { self.lib.get(name.as_bytes()) }.map_err(|e| e.to_string())?;
            let mut values = vec![0u8; (n + 1) * p.size];
            let mut faults = vec![0u8; n + 1];
            // SAFETY: a and b hold n values of the program's M; out n + 1; faults n + 1 bytes.
            unsafe {
                f(
                    a.as_ptr(),
                    b.as_ptr(),
                    values.as_mut_ptr(),
                    n as u32,
                    faults.as_mut_ptr(),
                )
            };
            out.push(Run { values, faults });
        }
        Ok(out)
    }
}
