//! Out-of-bounds faults of translated monoid code.
//!
//! Rust panics on an array index out of bounds. The derive's CUDA translation checks every
//! run-time index (`r_ix` in `reduce_core::CUDA_PRELUDE`): one out of bounds records a fault in
//! the module global `r_fault_info` (flag, first index, length) and uses element 0 instead, so
//! the device never touches memory out of bounds. After a launch of a monoid that can fault
//! (`CudaMonoid::CAN_FAULT`, or `Lift::LIFT_CAN_FAULT` for lifted kernels), the runtime reads
//! the global, resets it, and turns a fault into [`Error::DeviceFault`]. Reading it
//! synchronizes the stream, so monoids that cannot fault skip the check.

use crate::codegen::KernelSpec;
use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;
use reduce_core::CudaMonoid;
use std::any::TypeId;

/// The module global the prelude records faults in: [flag, first index, length], u64 each.
const FAULT_GLOBAL: &str = "r_fault_info";

impl Gpu {
    /// Waits for the queued work, then reads and clears the fault records of the kernels
    /// `specs` (already loaded) of monoid `M`: `Err(Error::DeviceFault)` if any recorded one.
    /// Call it after the launches of a reduction of a monoid that can fault; it synchronizes
    /// the stream.
    pub(crate) fn check_device_fault<M: CudaMonoid>(&self, specs: &[&KernelSpec]) -> Result<()> {
        self.synchronize()?;
        let stream = &self.inner.stream;
        let mut first = None;
        for spec in specs {
            let Some(kernel) = self.inner.kernels.loaded(TypeId::of::<M>(), spec) else {
                continue;
            };
            // A module whose code never records a fault may have dropped the global.
            let Some(ptr) = kernel.global(FAULT_GLOBAL, stream) else {
                continue;
            };
            let mut info = [0u64; 3];
            // SAFETY: the global holds three u64; the stream is synchronized above and below.
            unsafe {
                cudarc::driver::result::memcpy_dtoh_async(&mut info[..], ptr, stream.cu_stream())
            }
            .during("reading the device fault record")?;
            self.synchronize()?;
            if info[0] != 0 {
                // SAFETY: as above; 24 bytes.
                unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, 24, stream.cu_stream()) }
                    .during("clearing the device fault record")?;
                first.get_or_insert((info[1], info[2]));
            }
        }
        self.synchronize()?;
        match first {
            Some((index, len)) => Err(Error::DeviceFault {
                monoid: M::CUDA_NAME,
                index,
                len,
            }),
            None => Ok(()),
        }
    }
}
