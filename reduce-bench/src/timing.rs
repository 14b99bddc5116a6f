//! Device time of work on a `Gpu`'s stream, measured with CUDA events.

use crate::driver::driver;
use reduce_cuda::cudarc::driver::sys::CUevent_flags;
use reduce_cuda::{Gpu, Result};

/// The timed runs per measured point.
pub const REPS: usize = 20;

/// The shortest warm-up: the first call of a new kernel compiles it (NVRTC, up to a second of
/// host work), and a GPU left idle that long may come back at lower clocks, which 20 timed
/// calls of 0.1 ms would measure before they rise again.
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(25);

/// Runs `call` at least 3 times and for at least [`WARM_UP`] (at most 10^4 calls), then waits
/// for `gpu`'s stream.
fn warm_up(gpu: &Gpu, mut call: impl FnMut() -> Result<()>) -> Result<()> {
    let start = std::time::Instant::now();
    for i in 0.. {
        call()?;
        if i >= 2 && (i >= 10_000 || start.elapsed() >= WARM_UP) {
            break;
        }
        // A queue of calls is not a warm GPU: wait for each, so that the time is the GPU's.
        gpu.synchronize()?;
    }
    gpu.synchronize()
}

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
/// of `gpu`'s stream. Warm-up ([`warm_up`]), then the median of `reps` calls, in microseconds.
pub fn host_median_us(gpu: &Gpu, reps: usize, call: impl FnMut() -> Result<()>) -> Result<f64> {
    host_clock_us(gpu, reps, call, true)
}

/// The host clock around `call` alone (its host work and launches, not its kernels, where the
/// call does not wait for them itself: a trusted `_into` call of a monoid that cannot fault),
/// each call waited for before the next: warm-up ([`warm_up`]), then the median of `reps`, in
/// microseconds.
pub fn enqueue_us(gpu: &Gpu, reps: usize, call: impl FnMut() -> Result<()>) -> Result<f64> {
    host_clock_us(gpu, reps, call, false)
}

/// Warm-up ([`warm_up`]), then the median of `reps` host-clock times (µs) of `call`, each
/// followed by a synchronisation of `gpu`'s stream, timed with the call when `with_sync`.
fn host_clock_us(
    gpu: &Gpu,
    reps: usize,
    mut call: impl FnMut() -> Result<()>,
    with_sync: bool,
) -> Result<f64> {
    warm_up(gpu, &mut call)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let start = std::time::Instant::now();
        call()?;
        if with_sync {
            gpu.synchronize()?;
        }
        times.push(start.elapsed().as_secs_f64() * 1e6);
        gpu.synchronize()?;
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Warm-up ([`warm_up`]), then the median of `reps` event-timed runs of `enqueue`.
pub fn median_ms(gpu: &Gpu, reps: usize, mut enqueue: impl FnMut() -> Result<()>) -> Result<f32> {
    warm_up(gpu, &mut enqueue)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        times.push(time_ms(gpu, &mut enqueue)?);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[times.len() / 2])
}

/// The device time per call of `calls` calls queued back to back between two events, in
/// milliseconds: the host's work for a call hides behind the calls queued before it where it
/// is shorter than their kernels (one call is queued before the first event, so that the first
/// timed one's hides too). Warm-up ([`warm_up`]), then the median of 5 such batches.
pub fn queued_ms(gpu: &Gpu, calls: usize, mut enqueue: impl FnMut() -> Result<()>) -> Result<f32> {
    let calls = calls.max(1);
    warm_up(gpu, &mut enqueue)?;
    let mut times = Vec::with_capacity(5);
    for _ in 0..5 {
        enqueue()?;
        let batch = time_ms(gpu, || (0..calls).try_for_each(|_| enqueue()))?;
        times.push(batch / calls as f32);
    }
    times.sort_by(f32::total_cmp);
    Ok(times[times.len() / 2])
}
