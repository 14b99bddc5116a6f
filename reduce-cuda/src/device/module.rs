//! A loaded CUBIN: its entry points (looked up once), whether they spill, and the fault record
//! of translated monoid code.
//!
//! Rust panics on an array index out of bounds. The derive's CUDA translation checks every
//! run-time index (`r_ix` in `reduce_core::CUDA_PRELUDE`): one out of bounds records a fault in
//! the module global `r_fault_info` (flag, first index, length) and uses element 0 instead, so
//! the device never touches memory out of bounds. The dispatch layer reads and clears the
//! record after the launches of a monoid that can fault.

use super::Device;
use crate::error::{DriverContext, Result};
use cudarc::driver::{CudaFunction, CudaModule, DevicePtr};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The module global the prelude records faults in: [flag, first index, length], u64 each.
const FAULT_GLOBAL: &str = "r_fault_info";

/// A module loaded into a device's context.
pub(crate) struct Module {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
    /// Per entry point: whether it uses local memory (spills), once asked.
    local: Mutex<HashMap<&'static str, bool>>,
}

impl Device {
    /// Loads a CUBIN into this context (an error for one the driver refuses, e.g. a stale
    /// disk-cache entry).
    pub fn load_module(&self, cubin: Vec<u8>) -> Result<Module> {
        let module = self
            .ctx
            .load_module(Ptx::from_binary(cubin))
            .during("loading a CUBIN")?;
        Ok(Module {
            module,
            functions: Mutex::new(HashMap::new()),
            local: Mutex::new(HashMap::new()),
        })
    }
}

impl Module {
    /// The entry point `name`.
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

    /// Reads the module's fault record and clears it: `Some((index, len))` of the first index
    /// out of bounds since the last read. Waits for the work queued on `device` (which must be
    /// the context the module is loaded in).
    pub fn take_fault(&self, device: &Device) -> Result<Option<(u64, u64)>> {
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
        Ok(Some((info[1], info[2])))
    }
}
