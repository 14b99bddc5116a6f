//! Whether a context can still run work, which of the library's launches lost it, and starting
//! again on the device.
//!
//! A fault inside a kernel (an illegal or misaligned address, an illegal instruction, a trap, a
//! failed device `assert`) is sticky: the driver fails every later call in that context with
//! the same error, and only a context destroyed and made again runs work. Here:
//!
//! - every driver error of the device layer passes through [`DriverContext::during`]; a sticky
//!   one becomes [`Error::DeviceLost`], and marks its context lost ([`Health`], one per
//!   context, held by every `Device` and memory pool of it), so that every later call fails at
//!   once with the same error;
//! - the error names the first of this library's launches that did not complete (the devices'
//!   [`PendingLaunches`], `launches.rs`), or says that none of ours was pending (the fault was
//!   another user's of the context);
//! - once nothing holds the lost primary context, `Gpu::new` resets it ([`reset_if_lost`]) and
//!   tries a new one; a holder outside this library (PyTorch, a cudarc context of yours) keeps
//!   it alive and lost, and `Gpu::new` returns the same error. The driver may also keep the
//!   fault for the whole process: the 580 driver (CUDA 13) fails every new context of the
//!   process with the fault's error, after the reset too, as CUDA's documentation of these
//!   errors says ("the process must be terminated and relaunched"); `Gpu::new` then returns
//!   the same `DeviceLost`, naming the launch, for as long as the process lives.

use crate::error::{Error, LaunchInfo, Result};
use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{CudaContext, DriverError};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Names the step a driver error happened in, and turns a sticky one into
/// [`Error::DeviceLost`].
pub(crate) trait DriverContext<T> {
    /// The result, its error named by `what` (the runtime's step).
    fn during(self, what: &'static str) -> Result<T>;
}

impl<T> DriverContext<T> for std::result::Result<T, DriverError> {
    fn during(self, during: &'static str) -> Result<T> {
        self.map_err(|source| driver_error(during, source))
    }
}

/// Whether the driver reports this error for every call of the context from now on (a fault in
/// a kernel, or a device that stopped answering; `CONTAINED`, an error the GPU contained, for
/// every call of the process: no reset of the context brings that device back).
pub(crate) fn is_sticky(code: CUresult) -> bool {
    use CUresult::*;
    matches!(
        code,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_CONTAINED
    )
}

/// The error of a driver call of the device layer that failed with `source`.
///
/// A sticky error marks lost the context that answers with one when asked: of the contexts not
/// yet known lost, the current one first (the layer binds a context before its calls), then
/// every other the library runs in; then those known lost. The current context alone is not
/// proof: cudarc reports an error a drop stored in a context before it makes that context
/// current, so another, healthy context may be current then. Where none answers, the current one
/// is taken.
fn driver_error(during: &'static str, source: DriverError) -> Error {
    if !is_sticky(source.0) {
        return Error::Driver { during, source };
    }
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes the calling thread's current context (or null) into `ctx`.
    unsafe { sys::cuCtxGetCurrent(&mut ctx) };
    let key = ctx as usize;
    let mut all: Vec<Arc<Health>> = (lock(&HEALTH).iter())
        .filter_map(|(_, h)| h.upgrade())
        .collect();
    all.sort_by_key(|h| (lock(&h.lost).is_some(), h.ctx != key));
    // None answering so (a driver that reports the loss only to some calls): the current one.
    let answering = all.iter().find(|h| h.answers_lost());
    if let Some(health) = answering.or_else(|| all.iter().find(|h| h.ctx == key)) {
        return health.lose(source);
    }
    let launch = lock(&LOST)
        .iter()
        .find(|lost| lost.ctx == key)
        .and_then(|lost| lost.launch);
    Error::DeviceLost { launch, source }
}

/// Makes `ctx` current on the calling thread, leaving an error a drop stored in it for the next
/// call of cudarc to report (cudarc's `bind_to_thread` takes it first).
pub(crate) fn make_current(ctx: &CudaContext) -> std::result::Result<(), DriverError> {
    let mut current: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: writes the calling thread's current context (or null) into `current`; `ctx` is
    // live while borrowed.
    unsafe {
        sys::cuCtxGetCurrent(&mut current).result()?;
        if current != ctx.cu_ctx() {
            sys::cuCtxSetCurrent(ctx.cu_ctx()).result()?;
        }
    }
    Ok(())
}

/// The error of opening device `ordinal`'s primary context, or a stream of it, that failed
/// with the sticky `source`: a context of the device was lost, and something still holds it.
pub(crate) fn lost_on(ordinal: usize, source: DriverError) -> Error {
    let launch = lock(&LOST)
        .iter()
        .rev()
        .find(|lost| lost.ordinal == ordinal)
        .and_then(|lost| lost.launch);
    Error::DeviceLost { launch, source }
}

/// A lost context: the error and the launch it is blamed on.
#[derive(Clone, Copy)]
struct Lost {
    ctx: usize,
    ordinal: usize,
    launch: Option<LaunchInfo>,
    source: DriverError,
}

/// The health of every context the library runs in, by context handle (a `Health` is held by
/// the context's devices and pool, so the handle stays unique while it lives).
static HEALTH: Mutex<Vec<(usize, Weak<Health>)>> = Mutex::new(Vec::new());
/// The contexts lost in this process, kept after the library dropped its last object of them:
/// a holder outside the library may keep a lost primary context alive.
static LOST: Mutex<Vec<Lost>> = Mutex::new(Vec::new());

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether one context still runs work, and the launch logs of its devices.
pub(crate) struct Health {
    ctx: usize,
    /// The context's cudarc handles (one per `CudaContext` of it the library was given), to ask
    /// it whether it is lost while one lives.
    handles: Mutex<Vec<Weak<CudaContext>>>,
    ordinal: usize,
    lost: Mutex<Option<Lost>>,
    logs: Mutex<Vec<Weak<dyn PendingLaunches>>>,
}

/// A device's launches that may not have completed.
pub(crate) trait PendingLaunches: Send + Sync {
    /// The first launch not known to have completed.
    fn first_incomplete(&self) -> Option<LaunchInfo>;
}

impl Health {
    /// The health of `ctx`, made on first use.
    pub fn of(ctx: &Arc<CudaContext>) -> Arc<Health> {
        let key = ctx.cu_ctx() as usize;
        let mut all = lock(&HEALTH);
        all.retain(|(_, h)| h.strong_count() > 0);
        if let Some(health) = all
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, h)| h.upgrade())
        {
            let mut handles = lock(&health.handles);
            handles.retain(|c| c.strong_count() > 0);
            if !handles
                .iter()
                .any(|c| std::ptr::eq(c.as_ptr(), Arc::as_ptr(ctx)))
            {
                handles.push(Arc::downgrade(ctx));
            }
            drop(handles);
            return health;
        }
        let health = Arc::new(Health {
            ctx: key,
            handles: Mutex::new(vec![Arc::downgrade(ctx)]),
            ordinal: ctx.ordinal(),
            lost: Mutex::new(None),
            logs: Mutex::new(Vec::new()),
        });
        all.push((key, Arc::downgrade(&health)));
        health
    }

    /// `DeviceLost` once the context is lost.
    pub fn check(&self) -> Result<()> {
        match *lock(&self.lost) {
            Some(lost) => Err(Error::DeviceLost {
                launch: lost.launch,
                source: lost.source,
            }),
            None => Ok(()),
        }
    }

    /// Whether the context answers a query of its legacy stream with a sticky error (without
    /// waiting for its work). False where no handle of it is left to ask.
    fn answers_lost(&self) -> bool {
        let Some(ctx) = lock(&self.handles).iter().find_map(Weak::upgrade) else {
            return false;
        };
        // SAFETY: `ctx` is live (held); the push is undone by the pop, leaving the thread's
        // current context as it was.
        unsafe {
            if sys::cuCtxPushCurrent_v2(ctx.cu_ctx()) != CUresult::CUDA_SUCCESS {
                return false;
            }
            let answer = sys::cuStreamQuery(std::ptr::null_mut());
            let mut popped: sys::CUcontext = std::ptr::null_mut();
            sys::cuCtxPopCurrent_v2(&mut popped);
            is_sticky(answer)
        }
    }

    /// Follows the launches of `log` (a device of this context).
    pub fn watch(&self, log: Weak<dyn PendingLaunches>) {
        let mut logs = lock(&self.logs);
        logs.retain(|l| l.strong_count() > 0);
        logs.push(log);
    }

    /// Marks the context lost by `source` (the first loss is kept) and returns its error.
    fn lose(&self, source: DriverError) -> Error {
        let mut lost = lock(&self.lost);
        let lost = *lost.get_or_insert_with(|| {
            let launch = lock(&self.logs)
                .iter()
                .filter_map(Weak::upgrade)
                .find_map(|log| log.first_incomplete());
            let lost = Lost {
                ctx: self.ctx,
                ordinal: self.ordinal,
                launch,
                source,
            };
            lock(&LOST).push(lost);
            lost
        });
        Error::DeviceLost {
            launch: lost.launch,
            source: lost.source,
        }
    }
}

/// Held while a device's primary context is opened (from [`reset_if_lost`] to [`recovered`]):
/// two threads that find the same device lost must not both reset it, the second one under the
/// first one's new context, its memory and its streams.
static OPENING: Mutex<()> = Mutex::new(());

/// The lock of [`OPENING`] (one process-wide: contexts are opened rarely).
pub(crate) fn opening() -> MutexGuard<'static, ()> {
    lock(&OPENING)
}

/// Before opening device `ordinal`'s primary context (under [`opening`]): if a context of the
/// device was lost and nothing holds the primary context any more, resets it, so that it is made
/// again. (Held, it is left alone: the stream made next fails if it is the lost one.)
pub(crate) fn reset_if_lost(ordinal: usize) -> Result<()> {
    if !lock(&LOST).iter().any(|l| l.ordinal == ordinal) {
        return Ok(());
    }
    let mut device: sys::CUdevice = 0;
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: plain queries of a device the driver counted (the caller checked the ordinal).
    unsafe {
        sys::cuDeviceGet(&mut device, ordinal as i32)
            .result()
            .during("reading a device")?;
        sys::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active)
            .result()
            .during("reading the state of the device's primary context")?;
    }
    if active != 0 {
        return Ok(());
    }
    // SAFETY: nothing retains the primary context: no work, memory or module of it is alive.
    unsafe { sys::cuDevicePrimaryCtxReset_v2(device) }
        .result()
        .during("resetting the device's primary context")?;
    Ok(())
}

/// A stream of device `ordinal`'s primary context was made: the device runs work again (the
/// driver may instead keep a fault for the whole process, and then this is never reached).
pub(crate) fn recovered(ordinal: usize) {
    lock(&LOST).retain(|l| l.ordinal != ordinal);
}
