//! Device time of work on a `Gpu`'s stream, measured with CUDA events.

use crate::driver::driver;
use reduce_cuda::cudarc::driver::sys::CUevent_flags;
use reduce_cuda::{Gpu, Result};

/// The timed runs per measured point.
pub const REPS: usize = 20;

/// Device time of the work `enqueue` puts on `gpu`'s stream, in milliseconds, between two CUDA
/// events recorded on the stream (waits for it to finish). Events made by
/// `CudaContext::new_event(None)` have timing disabled: these are recorded with the default
/// flags.
fn time_ms(gpu: &Gpu, enqueue: impl FnOnce() -> Result<()>) -> Result<f32> {
    let stream = gpu.stream();
    let start = stream
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(driver("recording an event"))?;
    enqueue()?;
    let end = stream
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(driver("recording an event"))?;
    end.synchronize().map_err(driver("waiting for an event"))?;
    start
        .elapsed_ms(&end)
        .map_err(driver("reading event times"))
}

/// The time of a call as its caller sees it: the host clock around `call` and a synchronisation
/// of `gpu`'s stream. Warm-up 3, then the median of `reps` calls, in microseconds.
pub fn host_median_us(gpu: &Gpu, reps: usize, mut call: impl FnMut() -> Result<()>) -> Result<f64> {
    for _ in 0..3 {
        call()?;
    }
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let start = std::time::Instant::now();
        call()?;
        gpu.synchronize()?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Warm-up 3, then the median of `reps` event-timed runs of `enqueue`.
pub fn median_ms(gpu: &Gpu, reps: usize, mut enqueue: impl FnMut() -> Result<()>) -> Result<f32> {
    for _ in 0..3 {
        enqueue()?;
    }
    gpu.synchronize()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        times.push(time_ms(gpu, &mut enqueue)?);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[times.len() / 2])
}
