//! NCCL communicators that never hang: the library is checked before use (cudarc panics when
//! it is missing); communicators are blocking (NCCL posts a group in the calling thread, with
//! no background job to poll for), and a watchdog thread aborts them when a call — creating
//! them, posting a group — is still running at its deadline (a missing or stuck peer), so that
//! the call returns an error; collectives are posted on raw device bytes inside NCCL groups;
//! streams are waited for with the same deadline, and a communicator that times out is
//! aborted.

use super::error::{ClusterError, Result};
use crate::gpu::Gpu;
use cudarc::nccl::sys;
use std::ffi::{c_int, c_uint, c_void, CStr};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// NCCL 2.14: the first release with `ncclCommInitRankConfig` (communicator configurations).
const MIN_VERSION: i32 = 21400;
/// How long an abort may take before the cluster stops waiting for it.
const ABORT_WAIT: Duration = Duration::from_secs(10);

/// NVLink SHARP (multicast) stays off: `NCCL_NVLS_ENABLE=0` unless the environment already
/// says otherwise, set while the program loads (an `.init_array` entry: before `main`, so
/// before NCCL reads its environment and before any thread of the program could read the
/// environment while it changes — a data race in the C library). NCCL runs on Linux only.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static KEEP_NVLS_OFF: extern "C" fn() = {
    extern "C" fn keep_nvls_off() {
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            std::env::set_var("NCCL_NVLS_ENABLE", "0");
        }
    }
    keep_nvls_off
};

/// Loads NCCL (an error, never a panic, when it is missing) and returns its version code
/// (e.g. 22703 for 2.27.3).
pub(crate) fn load() -> Result<i32> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the library.
    if !*PRESENT.get_or_init(|| unsafe { sys::is_culib_present() }) {
        return Err(ClusterError::NcclMissing);
    }
    let mut version: c_int = 0;
    // SAFETY: the library is present; the pointer is valid for the call.
    check(
        unsafe { sys::ncclGetVersion(&mut version) },
        "reading the NCCL version",
        None,
    )?;
    if version < MIN_VERSION {
        return Err(ClusterError::NcclTooOld {
            found: version_string(version),
        });
    }
    Ok(version)
}

/// `major.minor.patch` of an NCCL version code.
pub(crate) fn version_string(code: i32) -> String {
    let (major, minor) = if code >= 10000 {
        (code / 10000, (code / 100) % 100)
    } else {
        (code / 1000, (code / 100) % 10)
    };
    format!("{major}.{minor}.{}", code % 100)
}

/// Whether an NCCL result is "in progress" (`Ok(true)`), done (`Ok(false)`) or an error.
fn check(result: sys::ncclResult_t, during: &'static str, comm: Option<&Comm>) -> Result<bool> {
    match result {
        sys::ncclResult_t::ncclSuccess => Ok(false),
        sys::ncclResult_t::ncclInProgress => Ok(true),
        code => Err(ClusterError::Nccl {
            during,
            code: format!("{code:?}"),
            message: last_error(comm),
        }),
    }
}

fn last_error(comm: Option<&Comm>) -> String {
    let raw = comm.map_or(std::ptr::null_mut(), Comm::raw);
    // SAFETY: NCCL returns a static or per-communicator string (or null); `raw` is null or live.
    let text = unsafe { sys::ncclGetLastError(raw) };
    if text.is_null() {
        return String::new();
    }
    // SAFETY: a NUL-terminated string owned by NCCL, copied at once.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .trim()
        .to_string()
}

/// A new NCCL unique id (the rendezvous of one communicator).
pub(crate) fn unique_id() -> Result<[u8; 128]> {
    load()?;
    let mut id = sys::ncclUniqueId { internal: [0; 128] };
    // SAFETY: NCCL is loaded; the pointer is valid for the call.
    check(
        unsafe { sys::ncclGetUniqueId(&mut id) },
        "creating a unique id",
        None,
    )?;
    Ok(id.internal.map(|c| c as u8))
}

/// A deadline for one step.
#[derive(Clone, Copy)]
pub(crate) struct Deadline {
    start: Instant,
    timeout: Duration,
}

impl Deadline {
    pub fn new(timeout: Duration) -> Self {
        Deadline {
            start: Instant::now(),
            timeout,
        }
    }

    pub fn check(&self, during: &'static str) -> Result<()> {
        if self.start.elapsed() > self.timeout {
            return Err(ClusterError::Timeout {
                during,
                waited: self.timeout,
            });
        }
        Ok(())
    }

    /// Between polls: spin (yielding) for the first milliseconds, where latency matters, then
    /// sleep a little.
    pub fn pause(&self) {
        if self.start.elapsed() < Duration::from_millis(5) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}

/// A communicator handle, shared by a [`Comm`] and its cluster's [`Watchdog`]: aborted at most
/// once, by whichever comes first. An NCCL communicator may be used from any thread, one call
/// at a time (the cluster calls it behind one mutex); the watchdog aborts it from its own thread
/// while a call may still be inside NCCL, the pattern NCCL's abort is for (PyTorch's watchdog
/// does the same).
struct Handle(AtomicPtr<sys::ncclComm>);

impl Handle {
    /// Aborts the communicator (idempotent): pending operations are cancelled, its resources
    /// freed. Waits at most `ABORT_WAIT` for NCCL, then leaves the abort running.
    fn abort(&self) {
        let raw = self.0.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if raw.is_null() {
            return;
        }
        struct Raw(sys::ncclComm_t);
        // SAFETY: handed to one thread, which alone uses it.
        unsafe impl Send for Raw {}
        impl Raw {
            fn abort(self) {
                // SAFETY: a live communicator, aborted exactly once.
                let _ = unsafe { sys::ncclCommAbort(self.0) };
            }
        }
        let raw = Raw(raw);
        let (done, wait) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("nccl-abort".into())
            .spawn(move || {
                raw.abort();
                let _ = done.send(());
            });
        if spawned.is_ok() {
            let _ = wait.recv_timeout(ABORT_WAIT);
        }
    }
}

/// One rank's NCCL communicator (blocking). Aborted when dropped.
pub(crate) struct Comm {
    handle: Arc<Handle>,
}

impl Comm {
    fn raw(&self) -> sys::ncclComm_t {
        self.handle.0.load(Ordering::Acquire)
    }

    /// Aborts the communicator (idempotent).
    pub fn abort(&mut self) {
        self.handle.abort();
    }

    /// NCCL's state of the communicator: `Ok(true)` while an operation is still in progress,
    /// an error once one failed (a peer that left, an abort).
    fn pending(&self, during: &'static str) -> Result<bool> {
        let mut state = sys::ncclResult_t::ncclSuccess;
        // SAFETY: a live communicator; the pointer is valid for the call.
        check(
            unsafe { sys::ncclCommGetAsyncError(self.raw(), &mut state) },
            during,
            Some(self),
        )?;
        check(state, during, Some(self))
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        self.abort();
    }
}

/// The `deadline` word once the watchdog has aborted the communicators.
const FIRED: u64 = u64::MAX;

/// A thread that aborts a cluster's communicators when a blocking NCCL call is still running
/// at its deadline: the call then returns (with an error) instead of waiting for a peer that
/// never comes. Armed around each such call ([`Watchdog::guard`]); parked otherwise.
pub(crate) struct Watchdog {
    shared: Arc<Watch>,
    thread: Option<JoinHandle<()>>,
}

struct Watch {
    base: Instant,
    /// Nanoseconds after `base` at which to abort; 0 when no call is guarded; `FIRED`.
    deadline: AtomicU64,
    handles: Mutex<Vec<Arc<Handle>>>,
    quit: AtomicBool,
}

impl Watchdog {
    fn new() -> Result<Watchdog> {
        let shared = Arc::new(Watch {
            base: Instant::now(),
            deadline: AtomicU64::new(0),
            handles: Mutex::new(Vec::new()),
            quit: AtomicBool::new(false),
        });
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("nccl-watchdog".into())
            .spawn(move || watch(&theirs))
            .map_err(|e| {
                ClusterError::Gpu(crate::Error::Internal(format!(
                    "could not start the NCCL watchdog thread: {e}"
                )))
            })?;
        Ok(Watchdog {
            shared,
            thread: Some(thread),
        })
    }

    /// Runs `call` (blocking NCCL calls on the watched communicators); if it is still running
    /// at `deadline`, the communicators are aborted, which ends it, and the result is
    /// [`ClusterError::Timeout`].
    fn guard<T>(
        &self,
        deadline: &Deadline,
        during: &'static str,
        call: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let at = deadline
            .start
            .checked_add(deadline.timeout)
            .map_or(u128::MAX, |end| {
                end.saturating_duration_since(self.shared.base).as_nanos()
            })
            .clamp(1, FIRED as u128 - 1) as u64;
        self.shared.deadline.store(at, Ordering::SeqCst);
        if let Some(thread) = &self.thread {
            thread.thread().unpark();
        }
        let result = call();
        let fired = self
            .shared
            .deadline
            .compare_exchange(at, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_err();
        if fired {
            return Err(ClusterError::Timeout {
                during,
                waited: deadline.timeout,
            });
        }
        result
    }
}

/// The watchdog's loop: parked while no call is guarded; at the deadline of a guarded call,
/// aborts every communicator.
fn watch(shared: &Watch) {
    while !shared.quit.load(Ordering::Acquire) {
        let at = shared.deadline.load(Ordering::SeqCst);
        if at == 0 || at == FIRED {
            std::thread::park();
            continue;
        }
        let now = shared.base.elapsed().as_nanos() as u64;
        if now < at {
            std::thread::park_timeout(Duration::from_nanos(at - now));
            continue;
        }
        let won = shared
            .deadline
            .compare_exchange(at, FIRED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        if won {
            for handle in shared
                .handles
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
            {
                handle.abort();
            }
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.quit.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

/// The NCCL exchange of a cluster: one communicator per local rank, and their watchdog.
pub(crate) struct Nccl {
    /// First: aborted before the watchdog stops.
    comms: Vec<Comm>,
    watchdog: Watchdog,
}

/// A communicator configuration: blocking, everything else NCCL's default. `version` is
/// the loaded library's, so it reads the fields it knows (NCCL copies at most its own size).
fn config(version: i32) -> sys::ncclConfig_t {
    const UNDEF: c_int = c_int::MIN; // NCCL_CONFIG_UNDEF_INT
    sys::ncclConfig_t {
        size: std::mem::size_of::<sys::ncclConfig_t>(),
        magic: 0xcafe_beef,
        version: version as c_uint,
        blocking: 1,
        cgaClusterSize: UNDEF,
        minCTAs: UNDEF,
        maxCTAs: UNDEF,
        netName: std::ptr::null(),
        splitShare: UNDEF,
        trafficClass: UNDEF,
        commName: std::ptr::null(),
        collnetEnable: UNDEF,
        CTAPolicy: UNDEF,
        shrinkShare: UNDEF,
        nvlsCTAs: UNDEF,
        nChannelsPerNetPeer: UNDEF,
        nvlinkCentricSched: UNDEF,
        graphUsageMode: UNDEF,
        numRmaCtx: UNDEF,
        maxP2pPeers: UNDEF,
    }
}

/// Runs `body` between `ncclGroupStart` and `ncclGroupEnd` (always ended).
fn group(body: impl FnOnce() -> Result<()>) -> Result<()> {
    // SAFETY: NCCL is loaded (every caller got here through `load`).
    check(
        unsafe { sys::ncclGroupStart() },
        "starting an NCCL group",
        None,
    )?;
    let posted = body();
    // SAFETY: as above; ends the group started above.
    let ended = check(unsafe { sys::ncclGroupEnd() }, "ending an NCCL group", None);
    posted?;
    ended.map(|_| ())
}

impl Nccl {
    /// Creates the communicators of `ranks` (rank, its device) of a `world`-rank clique, in
    /// one group, guarded by the watchdog: an error after `timeout` when a rank is missing.
    pub fn init(
        version: i32,
        id: &[u8; 128],
        world: usize,
        ranks: &[(usize, &Gpu)],
        timeout: Duration,
    ) -> Result<Nccl> {
        let deadline = Deadline::new(timeout);
        let watchdog = Watchdog::new()?;
        let id = sys::ncclUniqueId {
            internal: id.map(|b| b as std::ffi::c_char),
        };
        let comms: Vec<Comm> = ranks
            .iter()
            .map(|_| Comm {
                handle: Arc::new(Handle(AtomicPtr::new(std::ptr::null_mut()))),
            })
            .collect();
        *watchdog
            .shared
            .handles
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = comms.iter().map(|c| c.handle.clone()).collect();
        // Every device bound once before the group: a rank that cannot be bound is this error,
        // not a group left waiting for it until the deadline.
        for &(_, gpu) in ranks {
            bind(gpu)?;
        }
        // Inside a group, each call returns its communicator at once; the group's end joins
        // the clique (and blocks until every rank has come, or the watchdog aborts).
        watchdog.guard(&deadline, "creating the communicators", || {
            group(|| {
                for (comm, &(rank, gpu)) in comms.iter().zip(ranks) {
                    // NCCL takes the device from the calling thread's current context.
                    bind(gpu)?;
                    let mut config = config(version);
                    let mut raw = std::ptr::null_mut();
                    // SAFETY: NCCL is loaded; the pointers are valid for the call.
                    let result = unsafe {
                        sys::ncclCommInitRankConfig(
                            &mut raw,
                            world as c_int,
                            id,
                            rank as c_int,
                            &mut config,
                        )
                    };
                    comm.handle.0.store(raw, Ordering::Release);
                    check(result, "creating a communicator", None)?;
                }
                Ok(())
            })
        })?;
        Ok(Nccl { comms, watchdog })
    }

    /// Aborts every communicator: the cluster cannot be used afterwards.
    pub fn abort(&mut self) {
        self.comms.iter_mut().for_each(Comm::abort);
    }

    /// Posts every local rank's collectives in one NCCL group (member m posts `ops[m]` on its
    /// communicator and its device's stream), guarded by the watchdog. With `wait`, also waits
    /// until every stream has finished, against the same deadline.
    pub fn run(
        &self,
        gpus: &[&Gpu],
        ops: &[Vec<Op>],
        during: &'static str,
        timeout: Duration,
        wait: bool,
    ) -> Result<()> {
        let deadline = Deadline::new(timeout);
        self.watchdog
            .guard(&deadline, during, || group(|| self.post(gpus, ops, during)))?;
        if wait {
            for (comm, gpu) in self.comms.iter().zip(gpus) {
                wait_stream(comm, gpu, &deadline, during)?;
            }
        }
        Ok(())
    }

    fn post(&self, gpus: &[&Gpu], ops: &[Vec<Op>], during: &'static str) -> Result<()> {
        for ((comm, gpu), ops) in self.comms.iter().zip(gpus).zip(ops) {
            let stream = gpu.device().raw_stream() as sys::cudaStream_t;
            for op in ops {
                // SAFETY: NCCL is loaded; the communicator is live; every address points into
                // a live device buffer of this rank with the bytes the op reads or writes
                // (checked by the callers), which stays alive until the stream passes the op.
                let result = unsafe {
                    match *op {
                        Op::AllGather { send, recv, bytes } => sys::ncclAllGather(
                            send as *const c_void,
                            recv as *mut c_void,
                            bytes,
                            sys::ncclDataType_t::ncclUint8,
                            comm.raw(),
                            stream,
                        ),
                        Op::Broadcast {
                            send,
                            recv,
                            bytes,
                            root,
                        } => sys::ncclBroadcast(
                            send as *const c_void,
                            recv as *mut c_void,
                            bytes,
                            sys::ncclDataType_t::ncclUint8,
                            root as c_int,
                            comm.raw(),
                            stream,
                        ),
                    }
                };
                check(result, during, Some(comm))?;
            }
        }
        Ok(())
    }

    /// Waits for every communicator's device stream to finish, with a deadline.
    pub fn wait_all(&self, gpus: &[&Gpu], during: &'static str, timeout: Duration) -> Result<()> {
        let deadline = Deadline::new(timeout);
        for (comm, gpu) in self.comms.iter().zip(gpus) {
            wait_stream(comm, gpu, &deadline, during)?;
        }
        Ok(())
    }
}

/// Binds a device's context to the calling thread.
pub(crate) fn bind(gpu: &Gpu) -> Result<()> {
    Ok(gpu.device().bind()?)
}

/// One collective of one rank, on raw device bytes (`ncclUint8`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    /// `recv[r * bytes ..][.. bytes]` = rank r's `send[.. bytes]`, for every rank r.
    AllGather { send: u64, recv: u64, bytes: usize },
    /// `recv[.. bytes]` = the root's `send[.. bytes]` (`send` is only read on the root).
    Broadcast {
        send: u64,
        recv: u64,
        bytes: usize,
        root: usize,
    },
}

/// Polls `gpu`'s stream until it is idle (and `comm` for asynchronous NCCL errors).
fn wait_stream(comm: &Comm, gpu: &Gpu, deadline: &Deadline, during: &'static str) -> Result<()> {
    bind(gpu)?;
    loop {
        if gpu.device().is_idle(during)? {
            return Ok(());
        }
        comm.pending(during)?;
        deadline.check(during)?;
        deadline.pause();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watchdog's logic, without NCCL: a guarded call that ends in time keeps its result; one
    /// still running at the deadline fires the watchdog (which aborts the watched handles, here
    /// a null one) and is a timeout; a deadline past `Instant`'s range never fires; the thread
    /// ends with the watchdog.
    #[test]
    fn the_watchdog_fires_only_past_the_deadline() {
        let watchdog = Watchdog::new().unwrap();
        *watchdog.shared.handles.lock().unwrap() =
            vec![Arc::new(Handle(AtomicPtr::new(std::ptr::null_mut())))];
        let quick = Deadline::new(Duration::from_secs(5));
        assert_eq!(watchdog.guard(&quick, "a quick call", || Ok(7)).unwrap(), 7);
        let short = Deadline::new(Duration::from_millis(50));
        let slow = watchdog.guard(&short, "a slow call", || {
            std::thread::sleep(Duration::from_millis(400));
            Ok(())
        });
        assert!(matches!(
            slow,
            Err(ClusterError::Timeout {
                during: "a slow call",
                ..
            })
        ));
        let endless = Deadline::new(Duration::MAX);
        assert_eq!(
            watchdog.guard(&endless, "a long wait", || Ok(1)).unwrap(),
            1
        );
        // After a timeout the next guarded call is watched again.
        assert_eq!(watchdog.guard(&quick, "another call", || Ok(2)).unwrap(), 2);
        drop(watchdog);
    }
}
