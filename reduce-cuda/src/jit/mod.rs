//! Kernels as text and as loaded modules: `codegen.rs` assembles the text of a
//! [`KernelSpec`] for a [`Program`] (a monoid and its items), `compile.rs` compiles it with
//! NVRTC, `cache.rs` keeps CUBINs on disk, and [`KernelCache`] keeps the loaded modules of one
//! context: in-process cache, then the disk cache, then NVRTC.
//!
//! The in-process key is (monoid type, item type, kernel family, compile-time parameters):
//! cheap to build, so a hit costs a hash-map lookup. Only a miss assembles the source, whose
//! hash (with options, NVRTC version and arch) is the disk key. A source NVRTC rejects is
//! remembered too (in memory only): the same text is rejected every time, so the next call
//! gets the same [`crate::Error::Compile`] at once instead of compiling it again. Nothing else
//! is remembered as a failure: a missing library, a driver error or a full device may pass on
//! the next call.

pub(crate) mod cache;
pub(crate) mod codegen;
pub(crate) mod compile;
pub(crate) mod program;

pub use codegen::KernelSource;
pub(crate) use codegen::{Family, KernelSpec};
pub(crate) use program::{Items, Lifted, Own, Program};

use crate::device::{Device, Module};
use crate::error::{CompileFailure, Error, Result};
use cache::CacheKey;
use std::any::TypeId;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Where a kernel came from when it was first needed in this process (ordered by cost:
/// `Memory < Disk < Compiled`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum KernelOrigin {
    /// Already loaded in this process.
    Memory,
    /// Loaded from the on-disk CUBIN cache.
    Disk,
    /// Compiled with NVRTC (and stored in the disk cache, if enabled).
    Compiled,
}

/// How a kernel was obtained and how long it took.
#[derive(Clone, Copy, Debug)]
pub struct JitReport {
    /// Memory, disk or NVRTC.
    pub origin: KernelOrigin,
    /// Wall time to obtain the loaded kernel.
    pub elapsed: Duration,
}

impl JitReport {
    /// The report of obtaining `self`'s kernel and then `other`'s: the costlier origin, both
    /// times.
    pub(crate) fn then(self, other: JitReport) -> JitReport {
        JitReport {
            origin: self.origin.max(other.origin),
            elapsed: self.elapsed + other.elapsed,
        }
    }
}

type MemoryKey = ((TypeId, Option<TypeId>), KernelSpec);

/// A kernel of the cache: loaded, or rejected by NVRTC.
type Entry = std::result::Result<Arc<Module>, CompileFailure>;

/// The loaded (and the rejected) kernels of one CUDA context.
pub(crate) struct KernelCache {
    arch: String,
    nvrtc_version: (i32, i32),
    disk: Option<PathBuf>,
    loaded: Mutex<HashMap<MemoryKey, Entry>>,
    /// NVRTC compilations this cache started (for the tests of the caches).
    compilations: AtomicU64,
}

impl KernelCache {
    pub fn new(arch: String, nvrtc_version: (i32, i32)) -> Self {
        KernelCache {
            arch,
            nvrtc_version,
            disk: cache::cache_dir(),
            loaded: Mutex::new(HashMap::new()),
            compilations: AtomicU64::new(0),
        }
    }

    /// The module of `spec` for `program`, loaded into `device`'s context (compiled if
    /// needed), with where it came from.
    pub fn get(
        &self,
        device: &Device,
        program: &dyn Program,
        spec: &KernelSpec,
    ) -> Result<(Arc<Module>, JitReport)> {
        let start = Instant::now();
        let key = (program.key(), spec.clone());
        let cached = self.lock().get(&key).cloned();
        let (entry, origin) = match cached {
            Some(entry) => (entry, KernelOrigin::Memory),
            None => {
                // Compile outside the lock: other kernels stay available meanwhile.
                let source = codegen::assemble(spec, program);
                let label = (program.monoid_name(), spec.family.name());
                let (entry, origin) = match self.load_or_compile(device, &source, label)? {
                    Ok((module, origin)) => (Ok(Arc::new(module)), origin),
                    Err(rejected) => (Err(rejected), KernelOrigin::Compiled),
                };
                (self.lock().entry(key).or_insert(entry).clone(), origin)
            }
        };
        let module = entry.map_err(|rejected| Error::Compile(Box::new(rejected)))?;
        let report = JitReport {
            origin,
            elapsed: start.elapsed(),
        };
        Ok((module, report))
    }

    /// The NVRTC compilations this cache started.
    pub fn compilations(&self) -> u64 {
        self.compilations.load(Ordering::Relaxed)
    }

    /// Number of kernels loaded in this context.
    pub fn len(&self) -> usize {
        self.lock().values().filter(|entry| entry.is_ok()).count()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<MemoryKey, Entry>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The module of `source` (from the disk cache, or compiled), or why NVRTC rejected it.
    fn load_or_compile(
        &self,
        device: &Device,
        source: &KernelSource,
        (monoid, family): (&'static str, &'static str),
    ) -> Result<std::result::Result<(Module, KernelOrigin), CompileFailure>> {
        let options = compile::options(&self.arch);
        let key = CacheKey::new(&source.text, &options, self.nvrtc_version, &self.arch);
        if let Some(dir) = &self.disk {
            if let Some(cubin) = cache::load(dir, key) {
                // A CUBIN the driver refuses is stale: fall through and recompile.
                if let Ok(module) = device.load_module(cubin, monoid, family) {
                    return Ok(Ok((module, KernelOrigin::Disk)));
                }
            }
        }
        self.compilations.fetch_add(1, Ordering::Relaxed);
        // The options the key holds (an environment that changes between two reads of them
        // must not store a CUBIN under another option set's key).
        let cubin = match compile::try_compile_with(source, options)? {
            Ok(cubin) => cubin,
            Err(rejected) => return Ok(Err(rejected)),
        };
        let module = device.load_module(cubin.clone(), monoid, family)?;
        if let Some(dir) = &self.disk {
            cache::store(dir, key, &cubin);
        }
        Ok(Ok((module, KernelOrigin::Compiled)))
    }
}
