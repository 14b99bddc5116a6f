//! Measurement helpers for the `bench` binary and for users comparing algorithms: CUDA-event
//! timing, the read-bandwidth roof of the same device, and random device data.

use crate::buffer::DeviceVec;
use crate::codegen::KernelSource;
use crate::compile;
use crate::error::{DriverContext, Error, Result};
use crate::gpu::Gpu;
use cudarc::driver::sys::CUevent_flags;
use cudarc::nvrtc::Ptx;
use reduce_core::DeviceCopy;

pub mod layouts;

const BENCH_KERNELS: &str = include_str!("../kernels/bench.cu");

impl Gpu {
    /// Device time of the work `enqueue` puts on this `Gpu`'s stream, in milliseconds,
    /// measured with CUDA events (waits for it to finish).
    pub fn time_ms(&self, enqueue: impl FnOnce() -> Result<()>) -> Result<f32> {
        let stream = &self.inner.stream;
        let start = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        enqueue()?;
        let end = stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .during("recording an event")?;
        end.synchronize().during("waiting for an event")?;
        start.elapsed_ms(&end).during("reading event times")
    }
}

/// Benchmark kernels (read roof, random fill), compiled once per `Gpu`.
pub struct BenchKernels {
    gpu: Gpu,
    roof: cudarc::driver::CudaFunction,
    fill: cudarc::driver::CudaFunction,
}

/// Word masks applied by [`BenchKernels::fill_random`] to word k of every item.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct FillMasks {
    /// OR-ed into word k of every item.
    pub or_mask: [u32; 32],
    /// AND-ed into word k of every item (after the OR).
    pub and_mask: [u32; 32],
}

unsafe impl DeviceCopy for FillMasks {}

impl Default for FillMasks {
    fn default() -> Self {
        FillMasks {
            or_mask: [0; 32],
            and_mask: [u32::MAX; 32],
        }
    }
}

impl BenchKernels {
    /// Compiles the benchmark kernels for `gpu`.
    pub fn new(gpu: &Gpu) -> Result<Self> {
        let source = KernelSource {
            family: "bench".into(),
            text: BENCH_KERNELS.into(),
            sections: vec![(1, "kernels/bench.cu".into())],
        };
        let cubin = compile::compile_cubin(&source, &gpu.info().arch())?;
        let module = gpu
            .inner
            .ctx
            .load_module(Ptx::from_binary(cubin))
            .during("loading the benchmark kernels")?;
        Ok(BenchKernels {
            gpu: gpu.clone(),
            roof: module
                .load_function("read_roof")
                .during("loading read_roof")?,
            fill: module
                .load_function("fill_random")
                .during("loading fill_random")?,
        })
    }

    /// Median time (ms) over `reps` runs of streaming every byte of `buffer` once with 16-byte
    /// loads: the read roof that reductions are compared with.
    pub fn read_roof_ms<T>(&self, buffer: &DeviceVec<T>, reps: usize) -> Result<f32> {
        let bytes = buffer.len() * std::mem::size_of::<T>();
        let n4 = (bytes / 16) as u64;
        let ptr = buffer.device_ptr(&self.gpu.inner.stream);
        let sink = self.gpu.upload(&[0u32])?;
        let sink_ptr = sink.device_ptr(&self.gpu.inner.stream);
        let grid = self.gpu.info().multiprocessors as u64 * 8;
        let run = || {
            self.gpu
                .launch(&self.roof, grid, 512, 0, &[ptr, n4, sink_ptr])
        };
        median_ms(&self.gpu, reps, run)
    }

    /// A buffer of `len` random items: random words, then `masks` applied per word of an item.
    pub fn fill_random<T: DeviceCopy>(
        &self,
        len: usize,
        seed: u64,
        masks: &FillMasks,
    ) -> Result<DeviceVec<T>> {
        let size = std::mem::size_of::<T>();
        if !size.is_multiple_of(4) {
            return Err(Error::InvalidConfig {
                algorithm: "fill_random",
                reason: format!("item size {size} is not a multiple of 4 bytes"),
            });
        }
        let buffer = DeviceVec::<T>::alloc(&self.gpu.inner.stream, self.gpu.info().ordinal, len)?;
        let masks = self.gpu.upload(std::slice::from_ref(masks))?;
        let stream = &self.gpu.inner.stream;
        let words = (len * size / 4) as u64;
        let grid = self.gpu.info().multiprocessors as u64 * 16;
        let args = [
            buffer.device_ptr(stream),
            words,
            seed,
            (size / 4) as u64,
            masks.device_ptr(stream),
        ];
        self.gpu.launch(&self.fill, grid, 256, 0, &args)?;
        self.gpu.synchronize()?;
        Ok(buffer)
    }
}

/// Warm-up 3, then the median of `reps` event-timed runs of `enqueue`.
pub fn median_ms(gpu: &Gpu, reps: usize, mut enqueue: impl FnMut() -> Result<()>) -> Result<f32> {
    for _ in 0..3 {
        enqueue()?;
    }
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        times.push(gpu.time_ms(&mut enqueue)?);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[times.len() / 2])
}
