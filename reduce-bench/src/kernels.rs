//! The harness's own kernels (`kernels/bench.cu`), compiled with NVRTC for the device and
//! loaded into the `Gpu`'s context: the read roof every reduction is compared with, and the
//! random fill of the benchmark data, which lives in memory of the harness's own and is lent
//! to the reductions as a `DeviceSlice`.

use crate::driver::driver;
use crate::timing::median_ms;
use reduce_cuda::cudarc::driver::{
    CudaFunction, CudaSlice, DevicePtr, LaunchConfig, PushKernelArg,
};
use reduce_cuda::cudarc::nvrtc::Ptx;
use reduce_cuda::{DeviceCopy, DeviceSlice, Error, Gpu, KernelSource, Min, Result, Sum};

const SOURCE: &str = include_str!("../kernels/bench.cu");

/// The fill seed of [`BenchKernels::poison`] (no benchmark's data uses it).
const POISON_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Item types that random words fill: every bit pattern is a valid value.
///
/// # Safety
/// Every bit pattern of `size_of::<Self>()` bytes must be a valid value of `Self`.
pub unsafe trait AnyBits: DeviceCopy {}

// SAFETY: an f32 or f64 (and the built-in monoids over them, transparent wrappers) takes any
// bits.
unsafe impl AnyBits for f32 {}
unsafe impl AnyBits for Sum<f32> {}
unsafe impl AnyBits for Min<f32> {}
unsafe impl AnyBits for Sum<f64> {}

/// Word masks applied by [`BenchKernels::fill_random`] to word k of every item (the layout of
/// `r_masks` in `kernels/bench.cu`).
#[derive(Clone, Copy, Debug)]
pub struct FillMasks {
    /// OR-ed into word k of every item.
    pub or_mask: [u32; 32],
    /// AND-ed into word k of every item (after the OR).
    pub and_mask: [u32; 32],
}

impl Default for FillMasks {
    fn default() -> Self {
        FillMasks {
            or_mask: [0; 32],
            and_mask: [u32::MAX; 32],
        }
    }
}

impl FillMasks {
    /// The words of `r_masks`: the OR masks, then the AND masks.
    fn words(&self) -> Vec<u32> {
        self.or_mask.iter().chain(&self.and_mask).copied().collect()
    }
}

/// `len` random items in device memory of the harness's own, on a `Gpu`'s stream.
pub struct Filled<T> {
    memory: CudaSlice<u8>,
    items: DeviceSlice<T>,
}

impl<T> Filled<T> {
    /// The items, as reductions read them. The memory is freed (stream-ordered) when the
    /// `Filled` is dropped: keep no clone of the slice past it.
    pub fn items(&self) -> &DeviceSlice<T> {
        &self.items
    }
}

impl<T: reduce_cuda::DeviceCopy> Filled<T> {
    /// The first `len` items (at most all), as another slice of the same memory.
    pub fn prefix(&self, gpu: &Gpu, len: usize) -> Result<DeviceSlice<T>> {
        let len = len.min(self.items.len());
        // SAFETY: a prefix of the items, which live as long as `self`; the caller keeps the
        // slice no longer than that.
        unsafe { DeviceSlice::from_raw(self.items.address(), len, gpu) }
    }
}

/// The benchmark kernels (read roof, random fill), compiled once per `Gpu`.
pub struct BenchKernels {
    gpu: Gpu,
    roof: CudaFunction,
    copy: CudaFunction,
    fill: CudaFunction,
}

impl BenchKernels {
    /// Compiles the benchmark kernels for `gpu` and loads them into its context.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let source = KernelSource {
            family: "bench".into(),
            text: SOURCE.into(),
            sections: vec![(1, "kernels/bench.cu".into())],
        };
        let cubin = reduce_cuda::testing::compile_cubin(&source, &gpu.info().arch())?;
        let module = gpu
            .context()
            .load_module(Ptx::from_binary(cubin))
            .map_err(driver("loading the benchmark kernels"))?;
        Ok(BenchKernels {
            gpu: gpu.clone(),
            roof: module
                .load_function("read_roof")
                .map_err(driver("loading read_roof"))?,
            copy: module
                .load_function("copy_roof")
                .map_err(driver("loading copy_roof"))?,
            fill: module
                .load_function("fill_random")
                .map_err(driver("loading fill_random"))?,
        })
    }

    /// Median time (ms) over `reps` runs of streaming every byte of `buffer` once with 16-byte
    /// loads: the read roof that reductions are compared with.
    pub fn read_roof_ms<T>(&self, buffer: &Filled<T>, reps: usize) -> Result<f32> {
        self.read_roof_prefix_ms(buffer, buffer.items.len() * std::mem::size_of::<T>(), reps)
    }

    /// The read roof over `buffers` in turn, a buffer a launch, as the calls it is compared with
    /// rotate them: neither then reads from L2 what the other reads from memory.
    pub fn read_roof_rotated_ms<T>(&self, buffers: &[Filled<T>], reps: usize) -> Result<f32> {
        let mut launches = (buffers.iter())
            .map(|b| self.read_roof_launch(b, b.items.len() * std::mem::size_of::<T>()))
            .collect::<Result<Vec<_>>>()?;
        let mut i = 0usize;
        median_ms(&self.gpu, reps, || {
            i += 1;
            let k = i % launches.len();
            (launches[k])()
        })
    }

    /// The read roof of the first `bytes` of `buffer` (at most all of them): for a case that
    /// reads only a prefix, the rate a read of that many bytes reaches.
    pub fn read_roof_prefix_ms<T>(
        &self,
        buffer: &Filled<T>,
        bytes: usize,
        reps: usize,
    ) -> Result<f32> {
        median_ms(&self.gpu, reps, self.read_roof_launch(buffer, bytes)?)
    }

    /// One launch of the read roof's kernel over the first `bytes` of `buffer` (at most all of
    /// them), as a closure that owns the word the kernel may write.
    pub fn read_roof_launch<'a, T>(
        &'a self,
        buffer: &'a Filled<T>,
        bytes: usize,
    ) -> Result<impl FnMut() -> Result<()> + 'a> {
        let bytes = bytes.min(buffer.items.len() * std::mem::size_of::<T>());
        let n4 = (bytes / 16) as u64;
        let stream = self.gpu.stream();
        let mut sink = stream
            .alloc_zeros::<u32>(1)
            .map_err(driver("allocating the roof's sink"))?;
        let grid = self.gpu.info().multiprocessors * 8;
        Ok(move || {
            let mut launch = stream.launch_builder(&self.roof);
            launch.arg(&buffer.memory).arg(&n4).arg(&mut sink);
            // SAFETY: read_roof(const uint4*, r_size, unsigned int*) reads n4 16-byte vectors
            // of the buffer (bytes / 16 of them) and may write the one word of the sink.
            unsafe { launch.launch(config(grid, 512)) }
                .map(|_| ())
                .map_err(driver("launching read_roof"))
        })
    }

    /// The copy roof of `buffer`'s bytes: the faster median (ms, over `reps` runs) of
    /// `cuMemcpyDtoD` and a kernel of 16-byte loads and stores, each copying every byte of
    /// `buffer` into a buffer of the same size (each byte read once and written once).
    pub fn copy_roof_ms<T>(&self, buffer: &Filled<T>, reps: usize) -> Result<f32> {
        let bytes = buffer.items.len() * std::mem::size_of::<T>();
        let stream = self.gpu.stream();
        let src = buffer.memory.slice(0..bytes);
        let mut dst = stream
            .alloc_zeros::<u8>(bytes.max(16))
            .map_err(driver("allocating the copy roof's target"))?;
        let memcpy = median_ms(&self.gpu, reps, || {
            stream
                .memcpy_dtod(&src, &mut dst)
                .map_err(driver("copying for the copy roof"))
        })?;
        let n4 = (bytes / 16) as u64;
        let grid = self.gpu.info().multiprocessors * 8;
        let kernel = median_ms(&self.gpu, reps, || {
            let mut launch = stream.launch_builder(&self.copy);
            launch.arg(&buffer.memory).arg(&mut dst).arg(&n4);
            // SAFETY: copy_roof(const uint4*, uint4*, r_size) reads n4 16-byte vectors of the
            // buffer and writes as many of `dst`, which holds as many bytes.
            unsafe { launch.launch(config(grid, 512)) }
                .map(|_| ())
                .map_err(driver("launching copy_roof"))
        })?;
        Ok(memcpy.min(kernel))
    }

    /// Overwrites `out` with random bits (a seed of their own): a result checked after a call
    /// into `out` is then that call's, never one an earlier call left in a shared buffer.
    pub fn poison<T: AnyBits>(&self, out: &mut reduce_cuda::DeviceVec<T>) -> Result<()> {
        let noise = self.fill_random::<T>(out.len(), POISON_SEED, &FillMasks::default())?;
        self.gpu.copy_into(noise.items(), out)
    }

    /// A buffer of `len` random items: random words, then `masks` applied per word of an item.
    pub fn fill_random<T: AnyBits>(
        &self,
        len: usize,
        seed: u64,
        masks: &FillMasks,
    ) -> Result<Filled<T>> {
        let size = std::mem::size_of::<T>();
        if !size.is_multiple_of(4) {
            return Err(Error::InvalidConfig {
                algorithm: "fill_random",
                reason: format!("item size {size} is not a multiple of 4 bytes"),
            });
        }
        let stream = self.gpu.stream();
        // Never a zero-byte allocation; 16 bytes keep vector loads of tails in bounds (as
        // reduce-cuda's own buffers).
        // SAFETY: u8 has no invalid values; the kernel below writes every item's bytes.
        let mut memory = unsafe { stream.alloc::<u8>((len * size).max(16)) }
            .map_err(driver("allocating benchmark data"))?;
        let masks = stream
            .clone_htod(&masks.words())
            .map_err(driver("uploading the fill masks"))?;
        let words = (len * size / 4) as u64;
        let (item_words, grid) = ((size / 4) as u64, self.gpu.info().multiprocessors * 16);
        let mut launch = stream.launch_builder(&self.fill);
        launch
            .arg(&mut memory)
            .arg(&words)
            .arg(&seed)
            .arg(&item_words)
            .arg(&masks);
        // SAFETY: fill_random(unsigned int*, r_size, r_size, r_size, const r_masks*) writes
        // `words` words of the buffer and reads the 64 words of the masks.
        unsafe { launch.launch(config(grid, 256)) }.map_err(driver("launching fill_random"))?;
        self.gpu.synchronize()?;
        let address = memory.device_ptr(stream).0;
        // SAFETY: the range holds `len` values of T, written above (any bits are a valid T);
        // the memory lives in the `Filled` with the slice, is freed on this stream after the
        // work queued before, and nothing writes to it again.
        let items = unsafe { DeviceSlice::from_raw(address, len, &self.gpu) }?;
        Ok(Filled { memory, items })
    }
}

/// A one-dimensional launch of `grid` blocks of `block` threads, no dynamic shared memory.
fn config(grid: u32, block: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}
