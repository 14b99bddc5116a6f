//! Getting a loaded kernel: in-process cache, then the disk cache, then NVRTC.
//!
//! The in-process key is (monoid type, kernel family, compile-time parameters): cheap to
//! build, so a hit costs a hash-map lookup. Only a miss assembles the source, whose hash (with
//! options, NVRTC version and arch) is the disk key.

use crate::cache::{self, CacheKey};
use crate::codegen::{assemble, assemble_lifted, KernelSource, KernelSpec};
use crate::compile;
use crate::error::{DriverContext, Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use reduce_core::{CudaMonoid, DeviceCopy, Lift};
use std::any::TypeId;
use std::collections::HashMap;
use std::path::PathBuf;
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

/// A loaded module.
pub(crate) struct LoadedKernel {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    /// Per entry point: whether it uses local memory (spills), once asked.
    local: Mutex<HashMap<&'static str, bool>>,
}

impl LoadedKernel {
    /// The entry point `name` of the module.
    pub fn function(&self, name: &'static str) -> Result<CudaFunction> {
        let mut functions = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let f = self
            .module
            .load_function(name)
            .during("looking up a kernel entry point")?;
        functions.insert(name, f.clone());
        Ok(f)
    }

    /// Whether the entry point `name` uses local memory (registers spilled under its
    /// `__launch_bounds__`, or a stack frame); asked of the driver once.
    pub fn uses_local_memory(&self, name: &'static str) -> Result<bool> {
        if let Some(&local) = self
            .local
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Ok(local);
        }
        let bytes = self
            .function(name)?
            .local_size_bytes()
            .during("reading a kernel's local memory size")?;
        let local = bytes > 0;
        self.local
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name, local);
        Ok(local)
    }

    /// The device address and size of the module's global `name`, if it has one.
    pub fn global(&self, name: &str, stream: &Arc<cudarc::driver::CudaStream>) -> Option<u64> {
        use cudarc::driver::DevicePtr;
        let view = self.module.get_global(name, stream).ok()?;
        let (ptr, _sync) = view.device_ptr(stream);
        Some(ptr)
    }
}

type MemoryKey = (TypeId, KernelSpec);

/// The kernels of one CUDA context.
pub(crate) struct KernelCache {
    arch: String,
    nvrtc_version: (i32, i32),
    disk: Option<PathBuf>,
    loaded: Mutex<HashMap<MemoryKey, Arc<LoadedKernel>>>,
}

impl KernelCache {
    pub fn new(arch: String, nvrtc_version: (i32, i32)) -> Self {
        KernelCache {
            arch,
            nvrtc_version,
            disk: cache::cache_dir(),
            loaded: Mutex::new(HashMap::new()),
        }
    }

    /// The loaded kernel for `spec` and monoid `M`, with where it came from.
    pub fn get<M: CudaMonoid>(
        &self,
        ctx: &Arc<CudaContext>,
        spec: &KernelSpec,
    ) -> Result<(Arc<LoadedKernel>, JitReport)> {
        self.get_with(ctx, TypeId::of::<M>(), spec, || assemble::<M>(spec))
    }

    /// The loaded kernel for `spec` (which names the input type) and monoid `M` lifting `X`.
    pub fn get_lifted<M: Lift<X>, X: DeviceCopy>(
        &self,
        ctx: &Arc<CudaContext>,
        spec: &KernelSpec,
    ) -> Result<(Arc<LoadedKernel>, JitReport)> {
        self.get_with(ctx, TypeId::of::<M>(), spec, || {
            assemble_lifted::<M, X>(spec)
        })
    }

    /// A kernel already loaded for monoid `monoid` and `spec`, if any.
    pub fn loaded(&self, monoid: TypeId, spec: &KernelSpec) -> Option<Arc<LoadedKernel>> {
        self.lock().get(&(monoid, spec.clone())).cloned()
    }

    fn get_with(
        &self,
        ctx: &Arc<CudaContext>,
        monoid: TypeId,
        spec: &KernelSpec,
        assemble: impl FnOnce() -> KernelSource,
    ) -> Result<(Arc<LoadedKernel>, JitReport)> {
        let start = Instant::now();
        let key = (monoid, spec.clone());
        if let Some(kernel) = self.lock().get(&key) {
            let report = JitReport {
                origin: KernelOrigin::Memory,
                elapsed: start.elapsed(),
            };
            return Ok((kernel.clone(), report));
        }
        // Compile outside the lock: other kernels stay available meanwhile.
        let source = assemble();
        let (module, origin) = self.load_or_compile(ctx, &source)?;
        let kernel = Arc::new(LoadedKernel {
            module,
            functions: Mutex::new(HashMap::new()),
            local: Mutex::new(HashMap::new()),
        });
        let kernel = self.lock().entry(key).or_insert(kernel).clone();
        Ok((
            kernel,
            JitReport {
                origin,
                elapsed: start.elapsed(),
            },
        ))
    }

    /// Number of kernels loaded in this context.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<MemoryKey, Arc<LoadedKernel>>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn load_or_compile(
        &self,
        ctx: &Arc<CudaContext>,
        source: &KernelSource,
    ) -> Result<(Arc<CudaModule>, KernelOrigin)> {
        let options = compile::options(&self.arch);
        let key = CacheKey::new(&source.text, &options, self.nvrtc_version, &self.arch);
        if let Some(dir) = &self.disk {
            if let Some(cubin) = cache::load(dir, key) {
                // A CUBIN the driver refuses is stale: fall through and recompile.
                if let Ok(module) = ctx.load_module(Ptx::from_binary(cubin)) {
                    return Ok((module, KernelOrigin::Disk));
                }
            }
        }
        let cubin = compile::compile_cubin(source, &self.arch)?;
        let module = ctx
            .load_module(Ptx::from_binary(cubin.clone()))
            .map_err(|source| Error::Driver {
                during: "loading a freshly compiled CUBIN",
                source,
            })?;
        if let Some(dir) = &self.disk {
            cache::store(dir, key, &cubin);
        }
        Ok((module, KernelOrigin::Compiled))
    }
}
