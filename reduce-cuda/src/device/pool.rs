//! The memory pool every buffer of the library comes from: a stream-ordered CUDA pool of its
//! own per context (not the device's default pool, which other libraries share), that keeps
//! freed memory for reuse instead of handing it back to the driver at each synchronisation.
//!
//! Reuse follows stream order: a block freed on a stream is handed out again to that stream at
//! once, and to another only after the free's stream has passed it (the driver adds the
//! dependency), so memory a queued kernel still reads is never reused under it. Every `Gpu` of
//! one context shares its pool (`Pool::of`); a buffer frees on the stream it was allocated on,
//! from any thread.
//!
//! In front of the driver's pool, the last few freed blocks wait on the host (`Pool::cache`): an
//! allocation of the same size on the same stream takes one back without a driver call (the
//! stream's order makes that as safe as the driver's own reuse on that stream). A call that
//! allocates its output and a caller that drops it then cost what the `_into` form costs;
//! trimming, a cap and an allocation that fails hand the cached blocks to the driver first.

use super::health::{make_current, DriverContext, Health};
use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUmemPool_attribute};
use cudarc::driver::{result, CudaContext, CudaStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// At most this many freed blocks wait on the host for reuse...
const CACHE_BLOCKS: usize = 16;
/// ...holding at most this many bytes.
const CACHE_BYTES: usize = 1 << 30;

/// A freed block waiting for an allocation of its size on its stream.
struct Cached {
    address: u64,
    bytes: usize,
    stream: Arc<CudaStream>,
}

/// What a pool holds, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolUsage {
    /// Device memory the pool holds: in use, or kept for reuse.
    pub held: usize,
    /// Device memory in live buffers.
    pub in_use: usize,
    /// The most the pool may hold (`None`: the device's memory is the limit).
    pub cap: Option<usize>,
}

/// The stored cap that means none (a cap of 0 is a cap: nothing may be allocated; a cap of
/// `usize::MAX` is none anyway).
const NO_CAP: usize = usize::MAX;

/// A stream-ordered pool of one context.
pub(crate) struct Pool {
    raw: sys::CUmemoryPool,
    ctx: Arc<CudaContext>,
    /// The context's health: a buffer of a lost context keeps its loss known.
    _health: Arc<Health>,
    /// Bytes of live buffers.
    in_use: AtomicUsize,
    /// The cap in bytes, [`NO_CAP`] for none.
    cap: AtomicUsize,
    /// The device's memory in bytes: a larger request fails at once.
    total: usize,
    /// Freed blocks, oldest first.
    cache: Mutex<Vec<Cached>>,
}

// SAFETY: a CUmemoryPool handle may be used from any thread; the counters are atomic.
unsafe impl Send for Pool {}
unsafe impl Sync for Pool {}

/// The pools of the process, by context (a pool keeps its context alive, so the key stays
/// unique while the pool lives).
static POOLS: Mutex<Vec<(usize, Weak<Pool>)>> = Mutex::new(Vec::new());

impl Pool {
    /// The pool of context `ctx` (current on the calling thread), created on first use.
    pub fn of(ctx: &Arc<CudaContext>, health: &Arc<Health>) -> Result<Arc<Pool>> {
        let key = ctx.cu_ctx() as usize;
        let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        pools.retain(|(_, pool)| pool.strong_count() > 0);
        if let Some(pool) = pools
            .iter()
            .find(|(k, _)| *k == key)
            .and_then(|(_, p)| p.upgrade())
        {
            return Ok(pool);
        }
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        props.location.id = ctx.cu_device();
        // SAFETY: `props` is a valid, zero-initialised description of a device pool.
        let raw = unsafe { result::mem_pool::create(&props) }.during("creating a memory pool")?;
        let (_, total) = ctx
            .mem_get_info()
            .during("reading the device's memory size")?;
        let pool = Arc::new(Pool {
            raw,
            total,
            ctx: ctx.clone(),
            _health: health.clone(),
            in_use: AtomicUsize::new(0),
            cap: AtomicUsize::new(NO_CAP),
            cache: Mutex::new(Vec::new()),
        });
        // Keep freed memory (the default threshold, 0, returns it at every synchronisation).
        pool.set(
            CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            u64::MAX,
        )?;
        pools.push((key, Arc::downgrade(&pool)));
        Ok(pool)
    }

    /// Lets kernels of device `device` (another device of the process, which can access this
    /// one's memory) read and write every buffer of the pool, those handed out already and
    /// those to come. Idempotent.
    #[cfg(feature = "nccl")]
    pub fn grant_access(&self, device: sys::CUdevice) -> Result<()> {
        let desc = sys::CUmemAccessDesc {
            location: sys::CUmemLocation {
                type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: device,
            },
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: the pool is live; `desc` is one valid access description.
        unsafe { sys::cuMemPoolSetAccess(self.raw, &desc, 1) }
            .result()
            .during("sharing a memory pool with a peer device")
    }

    fn set(&self, attribute: CUmemPool_attribute, mut value: u64) -> Result<()> {
        // SAFETY: the pool is live; the attributes set here are 64-bit.
        unsafe {
            result::mem_pool::set_attribute(self.raw, attribute, (&mut value as *mut u64).cast())
        }
        .during("setting a memory pool attribute")
    }

    fn get(&self, attribute: CUmemPool_attribute) -> Result<u64> {
        let mut value = 0u64;
        // SAFETY: the pool is live; the attributes read here are 64-bit.
        unsafe {
            result::mem_pool::get_attribute(self.raw, attribute, (&mut value as *mut u64).cast())
        }
        .during("reading a memory pool attribute")?;
        Ok(value)
    }

    /// What the pool holds now.
    pub fn usage(&self) -> Result<PoolUsage> {
        Ok(PoolUsage {
            held: self.get(CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)? as usize,
            in_use: self.in_use.load(Ordering::Relaxed),
            cap: self.cap(),
        })
    }

    fn cap(&self) -> Option<usize> {
        Some(self.cap.load(Ordering::Relaxed)).filter(|&c| c != NO_CAP)
    }

    /// Sets the cap on the memory the pool holds, and trims to it (a cap of 0 lets nothing be
    /// allocated).
    pub fn set_cap(&self, cap: Option<usize>) -> Result<()> {
        self.cap.store(cap.unwrap_or(NO_CAP), Ordering::Relaxed);
        match cap {
            Some(cap) => self.trim(cap),
            None => Ok(()),
        }
    }

    /// Returns kept memory to the device until the pool holds at most `keep` bytes (memory in
    /// use stays).
    pub fn trim(&self, keep: usize) -> Result<()> {
        // The cached blocks go to the driver; their frees must have run before it can return
        // their memory.
        let released = self.release(&mut self.cache(), 0);
        for stream in released {
            stream
                .synchronize()
                .during("waiting for freed memory before trimming")?;
        }
        // SAFETY: the pool is live.
        unsafe { result::mem_pool::trim_to(self.raw, keep) }.during("trimming a memory pool")
    }

    /// `bytes` bytes on `stream` (its context current), in stream order.
    pub fn alloc(&self, bytes: usize, stream: &CudaStream) -> Result<u64> {
        // More than the device holds never fits: fail before the driver reserves what it can
        // (which, for a moment, would starve every other allocation on the device).
        if bytes > self.total {
            return Err(self.out_of_memory(bytes));
        }
        // The bytes count as in use from here: reserved against the cap in one step, so that
        // allocations on several threads cannot pass it together.
        let cap = self.cap();
        let reserved = self
            .in_use
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |in_use| {
                let total = in_use.checked_add(bytes)?;
                cap.is_none_or(|cap| total <= cap).then_some(total)
            });
        if reserved.is_err() {
            return Err(self.out_of_memory(bytes));
        }
        let address = self.reserved_alloc(bytes, stream);
        if address.is_err() {
            self.in_use.fetch_sub(bytes, Ordering::Relaxed);
        }
        address
    }

    /// [`Pool::alloc`] once its bytes are reserved: a cached block, else the driver's.
    fn reserved_alloc(&self, bytes: usize, stream: &CudaStream) -> Result<u64> {
        {
            let mut cache = self.cache();
            let same = |c: &Cached| c.bytes == bytes && c.stream.cu_stream() == stream.cu_stream();
            if let Some(k) = cache.iter().rposition(same) {
                return Ok(cache.remove(k).address);
            }
        }
        let attempt = || {
            // SAFETY: the pool and the stream are live, of the current context.
            unsafe { result::mem_pool::alloc_async(self.raw, bytes, stream.cu_stream()) }
        };
        let address = match attempt() {
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                // Memory kept for reuse may be what is missing: hand it back, try once more.
                self.trim(0)?;
                attempt()
            }
            other => other,
        };
        let address = match address {
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                return Err(self.out_of_memory(bytes))
            }
            // A sticky error (a fault of a launch queued before) loses the context and names
            // the launch, as every other driver call does.
            other => other.during("allocating device memory")?,
        };
        if let Some(cap) = self.cap() {
            if self.usage().is_ok_and(|u| u.held > cap) {
                if let Err(e) = self.trim(cap) {
                    // The block goes back before the error does.
                    // SAFETY: the block was just allocated on `stream` and nothing uses it.
                    let _ = unsafe { result::free_async(address, stream.cu_stream()) };
                    return Err(e);
                }
            }
        }
        Ok(address)
    }

    /// Frees `bytes` bytes at `address` on `stream`, in stream order (from any thread): into the
    /// cache, whose oldest blocks go to the driver past its limits.
    pub fn free(&self, address: u64, bytes: usize, stream: &Arc<CudaStream>) {
        self.in_use.fetch_sub(bytes, Ordering::Relaxed);
        let mut cache = self.cache();
        cache.push(Cached {
            address,
            bytes,
            stream: stream.clone(),
        });
        // The newest blocks within the limits stay.
        let mut held = 0;
        let keep = cache
            .iter()
            .rev()
            .take(CACHE_BLOCKS)
            .take_while(|c| {
                held += c.bytes;
                held <= CACHE_BYTES
            })
            .count();
        self.release(&mut cache, keep);
    }

    fn cache(&self) -> MutexGuard<'_, Vec<Cached>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hands the oldest cached blocks to the driver, on their streams, until `keep` are left;
    /// returns those streams (each once).
    fn release(&self, cache: &mut Vec<Cached>, keep: usize) -> Vec<Arc<CudaStream>> {
        let old = cache.len().saturating_sub(keep);
        let mut streams: Vec<Arc<CudaStream>> = Vec::new();
        for block in cache.drain(..old) {
            let freed = make_current(&self.ctx).and_then(|()| {
                // SAFETY: `address` came from this pool on this context and is freed once (it
                // left the cache); the free is ordered after the work queued on its stream.
                unsafe { result::free_async(block.address, block.stream.cu_stream()) }
            });
            self.ctx.record_err(freed);
            if !streams
                .iter()
                .any(|s| s.cu_stream() == block.stream.cu_stream())
            {
                streams.push(block.stream);
            }
        }
        streams
    }

    fn out_of_memory(&self, requested: usize) -> Error {
        let (free, total) = self.ctx.mem_get_info().unwrap_or((0, 0));
        let usage = self.usage().unwrap_or(PoolUsage {
            held: 0,
            in_use: self.in_use.load(Ordering::Relaxed),
            cap: self.cap(),
        });
        Error::OutOfMemory {
            requested,
            free,
            total,
            pool_held: usage.held,
            pool_in_use: usage.in_use,
            cap: usage.cap,
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Every buffer holds the pool: none is left but the cached blocks. The frees may still
        // be queued; the driver destroys the pool once they have run.
        let mut cache = std::mem::take(&mut *self.cache());
        self.release(&mut cache, 0);
        let destroyed = self.ctx.bind_to_thread().and_then(|()| {
            // SAFETY: the pool is live and destroyed once.
            unsafe { result::mem_pool::destroy(self.raw) }
        });
        self.ctx.record_err(destroyed);
    }
}
