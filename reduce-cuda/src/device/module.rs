//! A loaded CUBIN: its entry points (looked up once), whether they spill, and the fault record
//! of translated monoid code.
//!
//! Rust panics on an array index out of bounds. The derive's CUDA translation checks every
//! run-time index (`r_ix` in `reduce_core::CUDA_PRELUDE`): one out of bounds records a fault in
//! the module global `r_fault_info` (kind, first index, length) and uses element 0 instead, so
//! the device never touches memory out of bounds. The dispatch layer reads and clears the
//! record after the launches of a monoid that can fault.

use super::health::DriverContext;
use super::Device;
use crate::error::Result;
use cudarc::driver::{CudaFunction, CudaModule, DevicePtr};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The module global the prelude records faults in: [kind, first index, length], u64 each.
const FAULT_GLOBAL: &str = "r_fault_info";

/// A module loaded into a device's context.
pub(crate) struct Module {
    module: Arc<CudaModule>,
    /// The monoid and the kernel family it was compiled for (what a lost context blames).
    pub monoid: &'static str,
    pub family: &'static str,
    entries: Mutex<HashMap<&'static str, Arc<EntryPoint>>>,
}

/// An entry point of a module, with what the driver says of it, asked once: a launch of a
/// kernel already used costs no query.
pub(crate) struct EntryPoint {
    pub function: CudaFunction,
    /// Static shared memory per block, in bytes.
    pub static_smem: usize,
    /// Local memory per thread (registers spilled under `__launch_bounds__`, a stack frame).
    pub local_bytes: usize,
    /// The attributes set on the function: the most dynamic shared memory it is opted in to,
    /// and whether the carveout preference is set.
    pub set: Mutex<(usize, bool)>,
    /// Resident blocks per SM, by (threads per block, dynamic shared memory).
    pub occupancy: Mutex<HashMap<(u32, usize), u32>>,
}

impl Device {
    /// Loads a CUBIN of `family`'s kernels for `monoid` into this context (an error for one the
    /// driver refuses, e.g. a stale disk-cache entry).
    pub fn load_module(
        &self,
        cubin: Vec<u8>,
        monoid: &'static str,
        family: &'static str,
    ) -> Result<Module> {
        let module = self
            .ctx
            .load_module(Ptx::from_binary(cubin))
            .during("loading a CUBIN")?;
        Ok(Module {
            module,
            monoid,
            family,
            entries: Mutex::new(HashMap::new()),
        })
    }
}

impl Module {
    /// The entry point `name`.
    pub fn entry(&self, name: &'static str) -> Result<Arc<EntryPoint>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = entries.get(name) {
            return Ok(entry.clone());
        }
        let function = self
            .module
            .load_function(name)
            .during("looking up a kernel entry point")?;
        let static_smem = function
            .shared_size_bytes()
            .during("reading a kernel's shared memory")? as usize;
        let local_bytes = function
            .local_size_bytes()
            .during("reading a kernel's local memory size")? as usize;
        let entry = Arc::new(EntryPoint {
            function,
            static_smem,
            local_bytes,
            set: Mutex::new((0, false)),
            occupancy: Mutex::new(HashMap::new()),
        });
        entries.insert(name, entry.clone());
        Ok(entry)
    }

    /// Whether the entry point `name` uses local memory (spills, or a stack frame).
    pub fn uses_local_memory(&self, name: &'static str) -> Result<bool> {
        Ok(self.entry(name)?.local_bytes > 0)
    }

    /// Reads the module's fault record and clears it: the first fault since the last read.
    /// Waits for the work queued on `device` (which must be the context the module is loaded
    /// in).
    pub fn take_fault(&self, device: &Device) -> Result<Option<Fault>> {
        let stream = &device.stream;
        // A module whose code never records a fault may have dropped the global.
        let Ok(global) = self.module.get_global(FAULT_GLOBAL, stream) else {
            return Ok(None);
        };
        let (address, _record) = global.device_ptr(stream);
        // SAFETY: the global holds three u64 written by the module's kernels.
        let info = unsafe { device.copy_to_host::<u64>(address, 3) }?;
        if info[0] == 0 {
            return Ok(None);
        }
        // SAFETY: as above; 24 bytes.
        unsafe { device.fill(address, 0, 24) }?;
        Ok(Some(match info[0] {
            FAULT_DIV_ZERO => Fault::Division { overflow: false },
            FAULT_DIV_OVERFLOW => Fault::Division { overflow: true },
            _ => Fault::Index {
                index: info[1],
                len: info[2],
            },
        }))
    }
}

/// A fault the device code of a monoid recorded where Rust would have panicked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fault {
    /// A run-time index out of bounds: the first one, and the length of its array.
    Index { index: u64, len: u64 },
    /// An integer division by zero, or (`overflow`) the operators' MIN / -1 or MIN % -1.
    Division { overflow: bool },
}

/// The prelude's fault kinds (`R_FAULT_DIV_ZERO`, `R_FAULT_DIV_OVERFLOW`; 1 is an index).
const FAULT_DIV_ZERO: u64 = 2;
const FAULT_DIV_OVERFLOW: u64 = 3;
