//! The machinery every algorithm's launches go through, whatever the family: a [`Dispatch`]
//! holds one call's device, kernel cache, program (the monoid and its items) and scratch
//! memory, and owns what the families share — loading kernels, typed launches, persistent
//! grids, scratch regions, multi-pass loops, the status word, and the fault check at the end.
//!
//! - `scratch.rs`: the device memory calls reuse (regions, the completion ticket, the status
//!   word, the pinned host word);
//! - `passes.rs`: the multi-pass loop of the one-block-per-data-block kernels;
//! - `segmented.rs`: what every segmented family shares (the job, the identity fill, the exact
//!   layout check and its typed errors, the status word handed out behind a launch).

mod passes;
mod scratch;
pub(crate) mod segmented;

pub(crate) use passes::{pass_regions, PassArgs};
pub(crate) use scratch::Scratch;

use crate::device::{Device, Entry, Fault, Kernel, KernelArgs, Module};
use crate::error::{Error, Result};
use crate::jit::{Items, JitReport, KernelCache, KernelSpec, Program};
use reduce_core::DeviceCopy;
use std::sync::{Arc, MutexGuard};

/// The kernels of one program on one device: loads (compiling if needed) the module of a spec.
/// Needs no scratch memory, so `prepare` calls use it without waiting for running calls.
#[derive(Clone, Copy)]
pub(crate) struct Loader<'a> {
    pub device: &'a Device,
    pub kernels: &'a KernelCache,
    pub program: &'a dyn Program,
}

impl Loader<'_> {
    /// The module of `spec` for the program (compiled or loaded if needed). A kernel whose
    /// static shared memory is past what a block may declare is the family's `InvalidConfig`.
    pub fn module(&self, spec: &KernelSpec) -> Result<(Arc<Module>, JitReport)> {
        (self.kernels.get(self.device, self.program, spec))
            .map_err(|e| e.static_smem_refusal(spec.family.name()))
    }
}

/// One call's launches: the device and kernels they use, and the scratch memory they own
/// until the call ends (the lock serialises the calls of host threads sharing a `Gpu`).
pub(crate) struct Dispatch<'a> {
    pub device: &'a Device,
    loader: Loader<'a>,
    scratch: MutexGuard<'a, Scratch>,
    /// The modules this call launched kernels of (their fault records are read at the end).
    launched: Vec<Arc<Module>>,
}

impl<'a> Dispatch<'a> {
    /// A call of `loader`'s program on its device, holding `scratch`. Binds the device's context
    /// to the calling thread: the raw copies and launches that follow act on the current
    /// context.
    pub fn new(loader: Loader<'a>, scratch: MutexGuard<'a, Scratch>) -> Result<Self> {
        loader.device.bind()?;
        Ok(Dispatch {
            device: loader.device,
            loader,
            scratch,
            launched: Vec::new(),
        })
    }

    /// The items the call reduces, as planning sees them.
    pub fn items(&self) -> Items {
        self.loader.program.items()
    }

    /// The loader of this call's kernels.
    pub fn loader(&self) -> &Loader<'a> {
        &self.loader
    }

    /// The module of `spec` for this call's program (compiled or loaded if needed).
    pub fn module(&self, spec: &KernelSpec) -> Result<(Arc<Module>, JitReport)> {
        self.loader.module(spec)
    }

    /// Entry point `entry` of the module of `spec`, ready to launch in blocks of `block`
    /// threads with `smem` bytes of dynamic shared memory (`algorithm` names it in errors).
    pub fn kernel<A>(
        &self,
        spec: &KernelSpec,
        entry: Entry<A>,
        block: u32,
        smem: usize,
        algorithm: &'static str,
    ) -> Result<Kernel<A>> {
        let (module, _) = self.module(spec)?;
        self.device.kernel(&module, entry, block, smem, algorithm)
    }

    /// Queues `kernel` on `grid` blocks.
    pub fn launch<A: KernelArgs>(&mut self, kernel: &Kernel<A>, grid: u64, args: A) -> Result<()> {
        self.watch(&kernel.module);
        self.device.launch(kernel, grid, args)
    }

    /// Reads `module`'s fault record at [`Dispatch::finish`] as if this call had launched it
    /// (for kernels of it that earlier calls queued).
    pub fn watch(&mut self, module: &Arc<Module>) {
        if !self.launched.iter().any(|m| Arc::ptr_eq(m, module)) {
            self.launched.push(module.clone());
        }
    }

    /// A grid-stride launch of `kernel` over `count` elements: 256-thread blocks, at most 16
    /// per SM.
    pub fn launch_over<A: KernelArgs>(
        &mut self,
        kernel: &Kernel<A>,
        count: u64,
        args: A,
    ) -> Result<()> {
        let grid = count
            .div_ceil(256)
            .clamp(1, self.device.info.multiprocessors as u64 * 16);
        self.launch(kernel, grid, args)
    }

    /// The grid of a persistent kernel: the caller's `requested` grid, else as many blocks as
    /// the device holds at once.
    pub fn persistent_grid<A>(&self, kernel: &Kernel<A>, requested: Option<u32>) -> Result<u64> {
        match requested {
            Some(grid) => Ok(grid as u64),
            None => self.device.resident_blocks(kernel),
        }
    }

    /// Device regions of the given sizes, each 256-byte aligned, in one scratch allocation
    /// reused between calls: valid until the call ends.
    pub fn carve(&mut self, sizes: &[usize]) -> Result<Vec<u64>> {
        self.scratch.carve(self.device, sizes)
    }

    /// At least `words` u32 that are zero, which the call must leave zero (its kernels clear
    /// what they set, or [`Dispatch::clear_zeroed`] behind them): their device address.
    pub fn zeroed(&mut self, words: usize) -> Result<u64> {
        self.scratch.zeroed(self.device, words)
    }

    /// Queues a fill of the first `bytes` bytes of the zeroed words ([`Dispatch::zeroed`]) with
    /// zeros, behind the call's kernels. Should it fail to queue, the words are dropped, so that
    /// the next call gets new zero-filled ones instead of what this call's kernels set.
    pub fn clear_zeroed(&mut self, bytes: usize) -> Result<()> {
        self.scratch.clear_zeroed(self.device, bytes)
    }

    /// The completion ticket of single-launch kernels (one u32, zero between launches: the
    /// kernels' last block resets it).
    pub fn ticket(&self) -> u64 {
        self.scratch.ticket.address()
    }

    /// The status word of the segmented single-launch kernels (all ones between launches: the
    /// kernels' last block, or `hand_status` behind a launch, reads and resets it, so that a
    /// call queues no fill before a launch).
    pub fn seg_status(&self) -> u64 {
        self.scratch.seg_status.address()
    }

    /// Queues a fill of the status word with all ones (no bad index), for a call whose launches
    /// failed before the kernel that resets it ran. Best effort: the call's error is the
    /// launch's.
    pub fn reset_seg_status(&mut self) {
        // SAFETY: the status word is one u64 of the scratch.
        let _ = unsafe { self.device.fill(self.seg_status(), 0xff, 8) };
    }

    /// The count of ids the segmented kernels' long identity fills took in one launch (zero
    /// between launches: their last block resets it), which bounds those fills on a bad layout.
    pub fn fill_budget(&self) -> u64 {
        self.scratch.fill_budget.address()
    }

    /// Marks the pinned host word pending and returns its device address, for a launch whose
    /// last block stores a status there ([`Dispatch::poll_status`] waits for it).
    pub fn arm_status(&mut self) -> Result<u64> {
        let device = self.device;
        self.scratch.pinned(device)?.arm(|| device.synchronize())
    }

    /// The status the armed launch stored (see [`crate::device::PinnedWord::poll`]).
    pub fn poll_status(&mut self) -> Result<u64> {
        let device = self.device;
        self.scratch
            .pinned(device)?
            .poll(|| device.is_idle("waiting for the validation status"))
    }

    /// The 8-byte status word at device address `status`, once the queued work is done.
    pub fn read_status(&mut self, status: u64) -> Result<u64> {
        let device = self.device;
        let word = self.scratch.pinned(device)?;
        // SAFETY: `status` holds one u64 written by a kernel or a fill; the word is pinned and
        // read only after the synchronisation below.
        unsafe { device.queue_copy_to_host(status, word.bytes()?) }?;
        device.synchronize()?;
        // SAFETY: the copy above has completed.
        Ok(unsafe { word.value() })
    }

    /// The device address of pinned host memory for one value of `M`, for a kernel to write
    /// the result of a reduction to the host into directly: no copy queued behind the kernel,
    /// [`Dispatch::read_result`] reads it once the stream is synchronized.
    pub fn result_slot<M: DeviceCopy>(&mut self) -> Result<u64> {
        let device = self.device;
        Ok(self
            .scratch
            .result(device, std::mem::size_of::<M>())?
            .device_address())
    }

    /// The value the call's kernels wrote at [`Dispatch::result_slot`].
    ///
    /// # Safety
    /// The stream was synchronized after the kernel that wrote it, a value of `M`.
    pub unsafe fn read_result<M: DeviceCopy>(&mut self) -> Result<M> {
        let device = self.device;
        let slot = self.scratch.result(device, std::mem::size_of::<M>())?;
        // SAFETY: the caller's.
        Ok(unsafe { slot.read::<M>() })
    }

    /// Ends the call: `result` (the launches' outcome), and, for a program whose device code
    /// can fault, the fault records of every module it launched, read and cleared even when the
    /// launches failed (or the next call would report them); the launches' error comes first.
    /// Reading them waits for the queued work.
    pub fn finish<T>(self, result: Result<T>) -> Result<T> {
        if !self.loader.program.can_fault() || self.launched.is_empty() {
            return result;
        }
        let faults = self.take_faults();
        let value = result?;
        faults.map(|()| value)
    }

    fn take_faults(&self) -> Result<()> {
        self.device.synchronize()?;
        let mut first = None;
        for module in &self.launched {
            if let Some(fault) = module.take_fault(self.device)? {
                first.get_or_insert(fault);
            }
        }
        self.device.synchronize()?;
        let monoid = self.loader.program.monoid_name();
        match first {
            Some(Fault::Index { index, len }) => Err(Error::DeviceFault { monoid, index, len }),
            Some(Fault::Division { overflow }) => Err(Error::DivisionFault { monoid, overflow }),
            None => Ok(()),
        }
    }
}
