//! The launches of one device (stream) that may not have completed: what a lost context blames
//! (`health.rs`). Behind each launch the stream writes the launch's sequence number into pinned
//! host memory (a stream memory operation, no kernel), so the host knows the last launch that
//! completed, even after a fault has stopped the context; where the device has no stream memory
//! operations, completion is known at synchronisations only.

use super::health::{lock, DriverContext, PendingLaunches};
use super::pinned::Pinned;
use crate::error::{LaunchInfo, Result};
use cudarc::driver::sys;
use cudarc::driver::{CudaContext, CudaStream};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The launches of one device (stream) that may not have completed, oldest first.
pub(crate) struct LaunchLog {
    /// Pinned, device-mapped: the sequence number of the last launch that completed, written
    /// by the stream behind each launch.
    word: Pinned,
    /// Whether the device takes stream memory operations (else completion is known only at
    /// synchronisations).
    stream_ops: bool,
    issued: Mutex<Issued>,
}

struct Issued {
    /// The last sequence number given.
    last: u32,
    /// The last sequence number known complete by a synchronisation.
    synced: u32,
    pending: VecDeque<(u32, LaunchInfo)>,
}

/// Whether sequence number `a` comes after `b` (numbers wrap).
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl LaunchLog {
    /// A log for a stream of `ctx`.
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Arc<LaunchLog>> {
        let stream_ops = ctx
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1)
            .is_ok_and(|v| v != 0);
        Ok(Arc::new(LaunchLog {
            word: Pinned::zeroed(ctx, 4)?,
            stream_ops,
            issued: Mutex::new(Issued {
                last: 0,
                synced: 0,
                pending: VecDeque::new(),
            }),
        }))
    }

    /// The last sequence number known complete.
    fn done(&self, issued: &Issued) -> u32 {
        if !self.stream_ops {
            return issued.synced;
        }
        // SAFETY: the word holds a u32 the stream writes whole.
        let written = unsafe { self.word.read::<u32>() };
        if after(written, issued.synced) {
            written
        } else {
            issued.synced
        }
    }

    /// Records `info`'s launch, just queued on `stream`, and queues behind it the write of its
    /// sequence number.
    pub fn launched(&self, stream: &CudaStream, info: LaunchInfo) -> Result<()> {
        let mut issued = lock(&self.issued);
        let done = self.done(&issued);
        while issued
            .pending
            .front()
            .is_some_and(|&(s, _)| !after(s, done))
        {
            issued.pending.pop_front();
        }
        issued.last = issued.last.wrapping_add(1);
        let seq = issued.last;
        issued.pending.push_back((seq, info));
        if !self.stream_ops {
            return Ok(());
        }
        // SAFETY: the word is live pinned memory mapped for the device, 4-byte aligned.
        let written = unsafe {
            sys::cuStreamWriteValue32_v2(stream.cu_stream(), self.word.device_address(), seq, 0)
        }
        .result();
        drop(issued); // a sticky error reads the log
        written.during("recording a launch's completion")
    }

    /// The sequence number of the last launch queued: a synchronisation that starts now covers
    /// it ([`LaunchLog::synchronized`]).
    pub fn mark(&self) -> u32 {
        lock(&self.issued).last
    }

    /// The stream was synchronized after the launch `mark` numbered: it and those before it
    /// completed.
    pub fn synchronized(&self, mark: u32) {
        let mut issued = lock(&self.issued);
        if after(mark, issued.synced) {
            issued.synced = mark;
        }
    }
}

impl PendingLaunches for LaunchLog {
    fn first_incomplete(&self) -> Option<LaunchInfo> {
        let issued = lock(&self.issued);
        let done = self.done(&issued);
        issued
            .pending
            .iter()
            .find(|&&(s, _)| after(s, done))
            .map(|&(_, info)| info)
    }
}
