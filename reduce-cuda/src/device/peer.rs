//! Peer access between the devices of one process: whether one device's kernels can read and
//! write another's memory (over NVLink or PCIe), and opening a context's memory pool to them, so
//! that a kernel on one device reads and writes the buffers another's pool handed out.

use super::health::DriverContext;
use super::Device;
use crate::error::Result;
use cudarc::driver::sys;

impl Device {
    /// Whether kernels on this device can read and write `other`'s memory directly
    /// (`cuDeviceCanAccessPeer`); false for the same device.
    pub fn can_access(&self, other: &Device) -> Result<bool> {
        let (mine, theirs) = (self.ctx.cu_device(), other.ctx.cu_device());
        if mine == theirs {
            return Ok(false);
        }
        let mut can = 0;
        // SAFETY: two valid device handles; the pointer is valid for the call.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, mine, theirs) }
            .result()
            .during("asking whether a device can access a peer's memory")?;
        Ok(can != 0)
    }

    /// Opens this context's memory pool to `other`'s kernels (which [`Device::can_access`]
    /// this device): every buffer of the pool, now and later, is readable and writable there.
    pub fn open_memory_to(&self, other: &Device) -> Result<()> {
        self.pool.grant_access(other.ctx.cu_device())
    }
}
