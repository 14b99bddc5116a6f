//! Data that already lives on the GPU: reductions over cudarc slices and views and raw device
//! addresses, in place; `Gpu`s on a caller's stream, ordered with the caller's kernels without
//! synchronisation; several `Gpu`s on one device running concurrently; and every misuse of
//! borrowed memory as an error value. Skips (saying so) without a GPU unless
//! REDUCE_REQUIRE_GPU=1.

use reduce_cuda::cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use reduce_cuda::cudarc::nvrtc::compile_ptx;
use reduce_cuda::reduce_core::fold_segments;
use reduce_cuda::{
    fold, Algorithm, Config, CudaMonoid, DeviceSlice, DeviceSliceMut, Error, Gpu, Max, Min,
    SegAlgorithm, SegConfig, Sum,
};
use reduce_tests::configs::every_config;
use reduce_tests::*;
use std::sync::Arc;

/// Kernels "the user wrote": fill affine maps (after an optional delay), overwrite, delay,
/// and a flag pair for the concurrency check. Compiled with cudarc's NVRTC.
const USER_KERNELS: &str = r#"
__device__ void spin(unsigned long long cycles) {
    const long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) {}
}
// maps[i] = affine map (2i + 1, i * 2654435761), as two u32; every thread spins first.
extern "C" __global__ void fill_affine(unsigned int* maps, unsigned long long n, unsigned long long delay) {
    spin(delay);
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        maps[2 * i] = 2u * (unsigned int)i + 1u;
        maps[2 * i + 1] = (unsigned int)(i * 2654435761ull);
    }
}
extern "C" __global__ void overwrite(unsigned int* words, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        words[i] = 0xdeadbeefu;
    }
}
extern "C" __global__ void delay(unsigned long long cycles) { spin(cycles); }
// Waits until *flag != 0, at most `limit` cycles; *seen = 1 if it saw the flag, 2 if it gave up.
extern "C" __global__ void wait_for_flag(const volatile unsigned int* flag, unsigned int* seen, unsigned long long limit) {
    const long long start = clock64();
    while (*flag == 0u) {
        if ((unsigned long long)(clock64() - start) > limit) { *seen = 2u; return; }
    }
    *seen = 1u;
}
extern "C" __global__ void set_flag(volatile unsigned int* flag) { *flag = 1u; __threadfence_system(); }
"#;

/// About 25 ms at the clocks of current data-centre GPUs: far longer than any launch latency.
const DELAY_CYCLES: u64 = 50_000_000;
/// About 10 s: the spinner's give-up limit (reached only when the check fails).
const GIVE_UP_CYCLES: u64 = 20_000_000_000;

struct UserKernels {
    fill_affine: CudaFunction,
    overwrite: CudaFunction,
    delay: CudaFunction,
    wait_for_flag: CudaFunction,
    set_flag: CudaFunction,
}

fn user_kernels(ctx: &Arc<CudaContext>) -> UserKernels {
    let ptx = compile_ptx(USER_KERNELS).expect("the user kernels compile");
    let module = ctx.load_module(ptx).unwrap();
    let f = |name| module.load_function(name).unwrap();
    UserKernels {
        fill_affine: f("fill_affine"),
        overwrite: f("overwrite"),
        delay: f("delay"),
        wait_for_flag: f("wait_for_flag"),
        set_flag: f("set_flag"),
    }
}

/// What `fill_affine` writes.
fn affine_maps(n: usize) -> Vec<Affine> {
    (0..n as u64)
        .map(|i| Affine {
            a: 2 * i as u32 + 1,
            b: (i.wrapping_mul(2_654_435_761)) as u32,
        })
        .collect()
}

fn one_block() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn grid(blocks: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `fill_affine` on `stream` into `maps` (2n u32), after `delay` cycles.
fn launch_fill(k: &UserKernels, stream: &CudaStream, maps: &mut CudaSlice<u32>, delay: u64) {
    let n = (maps.len() / 2) as u64;
    let mut launch = stream.launch_builder(&k.fill_affine);
    launch.arg(maps).arg(&n).arg(&delay);
    // SAFETY: fill_affine(unsigned int*, unsigned long long, unsigned long long) writes 2n words.
    unsafe { launch.launch(grid(64)) }.unwrap();
}

/// `overwrite` on `stream`: every word of `words` becomes 0xdeadbeef.
fn launch_overwrite(k: &UserKernels, stream: &CudaStream, words: &mut CudaSlice<u32>) {
    let n = words.len() as u64;
    let mut launch = stream.launch_builder(&k.overwrite);
    launch.arg(words).arg(&n);
    // SAFETY: overwrite(unsigned int*, unsigned long long) writes n words.
    unsafe { launch.launch(grid(64)) }.unwrap();
}

fn launch_delay(k: &UserKernels, stream: &CudaStream) {
    let mut launch = stream.launch_builder(&k.delay);
    launch.arg(&DELAY_CYCLES);
    // SAFETY: delay(unsigned long long) touches no memory.
    unsafe { launch.launch(one_block()) }.unwrap();
}

/// A user's context handle (the device's primary context, as `Gpu::new` uses) and kernels.
/// The tests of this file run one at a time ([`serial`]): several check that streams overlap,
/// and another test's synchronising driver calls (allocations, frees, module loads) in the same
/// process would serialise the streams meanwhile (a waiter once gave up that way).
fn user_setup() -> Option<(Gpu, Arc<CudaContext>, UserKernels)> {
    let gpu = gpu()?;
    let ctx = CudaContext::new(0).unwrap();
    let kernels = user_kernels(&ctx);
    Some((gpu, ctx, kernels))
}

/// Loads the reduction kernels of `configs` before a test relies on streams overlapping: with
/// CUDA's lazy loading, loading a kernel may synchronise the context, which would serialise
/// the streams (and hide the ordering bug a test looks for).
fn warm(gpu: &Gpu, configs: &[Config]) {
    let items = affine_maps(5000);
    let xs = gpu.upload(&items).unwrap();
    for &config in configs {
        assert_eq!(gpu.reduce(&xs, config).unwrap(), fold(&items));
    }
}

/// Reduces `slice` (borrowed) and an uploaded copy of `items` with every algorithm and checks
/// that the two agree bit for bit (`bits` makes the comparison exact for floats).
fn same_as_uploaded<M, I>(gpu: &Gpu, borrowed: &I, items: &[M], bits: impl Fn(M) -> Vec<u64>)
where
    M: CudaMonoid + std::fmt::Debug,
    I: reduce_cuda::DeviceInput<M>,
{
    let uploaded = gpu.upload(items).unwrap();
    for config in every_config() {
        let got = gpu.reduce(borrowed, config).unwrap();
        let want = gpu.reduce(&uploaded, config).unwrap();
        assert_eq!(
            bits(got),
            bits(want),
            "{} n={} {config:?}: {got:?} vs {want:?}",
            M::CUDA_NAME,
            items.len()
        );
    }
}

fn affine_bits(m: Affine) -> Vec<u64> {
    vec![m.a as u64, m.b as u64]
}

/// Evidence 1: a reduction on a borrowed slice equals the one on an uploaded copy bit for bit:
/// cudarc slices, views (also at offsets that are not 16-byte aligned: the item-by-item path),
/// mutable views and raw addresses, for a non-commutative monoid and for float built-ins over
/// a plain `CudaSlice<f32>`.
#[test]
fn borrowed_memory_reduces_like_an_uploaded_copy() {
    let _serial = serial();
    let Some((gpu, ctx, _)) = user_setup() else {
        return;
    };
    let stream = ctx.new_stream().unwrap();
    for (i, &n) in [1usize, 33, 1025, 300_001, 1 << 22].iter().enumerate() {
        let items = Affine::random_vec(n, 40 + i as u64);
        let words: Vec<u32> = items.iter().flat_map(|m| [m.a, m.b]).collect();
        let mut slice: CudaSlice<u32> = stream.clone_htod(&words).unwrap();
        // SAFETY: Affine is #[repr(C)] { u32, u32 }: 2n u32 are n valid values.
        let maps = unsafe { slice.transmute::<Affine>(n) }.unwrap();
        same_as_uploaded(&gpu, &maps, &items, affine_bits);
        same_as_uploaded(&gpu, &maps.slice(n..), &[], affine_bits);
        if n > 3 {
            // Offsets of 1 and 3 items: 8 and 24 bytes, not 16-byte aligned.
            for skip in [1, 3] {
                let view = maps.slice(skip..);
                same_as_uploaded(&gpu, &view, &items[skip..], affine_bits);
            }
        }
        // SAFETY: the address and length of live device memory of this context, holding n
        // Affine values; nothing writes it while the raw slice is used.
        let (address, _) = slice.device_ptr(&stream);
        let raw = unsafe { DeviceSlice::<Affine>::from_raw(address, n, &gpu) }.unwrap();
        same_as_uploaded(&gpu, &raw, &items, affine_bits);
        let mut mutable = slice.as_view_mut();
        // SAFETY: as above.
        let view_mut = unsafe { mutable.transmute_mut::<Affine>(n) }.unwrap();
        same_as_uploaded(&gpu, &view_mut, &items, affine_bits);

        // A CudaSlice<f32> of arbitrary finite floats, reduced as Sum, Min and Max.
        let mut rng = TestRng::new(7 + i as u64);
        let floats: Vec<f32> = (0..n)
            .map(|_| f32::from_bits(rng.next_u32() & 0xbf7f_ffff))
            .collect();
        let xs = stream.clone_htod(&floats).unwrap();
        let sums: Vec<Sum<f32>> = floats.iter().map(|&x| Sum(x)).collect();
        same_as_uploaded(&gpu, &xs, &sums, |s| vec![s.0.to_bits() as u64]);
        let mins: Vec<Min<f32>> = floats.iter().map(|&x| Min(x)).collect();
        same_as_uploaded(&gpu, &xs, &mins, |s| vec![s.0.to_bits() as u64]);
        if n > 1 {
            let maxs: Vec<Max<f32>> = floats[1..].iter().map(|&x| Max(x)).collect();
            same_as_uploaded(&gpu, &xs.slice(1..), &maxs, |s| vec![s.0.to_bits() as u64]);
        }
    }
}

/// Segmented reductions on borrowed memory: items, offsets and owners as cudarc slices, views at
/// offsets that are not 16-byte aligned, raw addresses, u32 and u64 layouts; results into a
/// caller's slice. Every algorithm, both forms, bit for bit against the CPU fold.
#[test]
fn segmented_reductions_on_borrowed_memory() {
    let _serial = serial();
    let Some((gpu, ctx, _)) = user_setup() else {
        return;
    };
    let stream = ctx.new_stream().unwrap();
    let n = 200_003usize;
    let items = Affine::random_vec(n + 3, 77);
    let mut rng = TestRng::new(5);
    let mut offsets = vec![0u32];
    while (*offsets.last().unwrap() as usize) < n {
        let next = *offsets.last().unwrap() + rng.range(0, 40) as u32;
        offsets.push(next.min(n as u32));
    }
    let segments = offsets.len() - 1;
    let owner = owners_of(
        &offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect::<Vec<u32>>(),
    );
    let words: Vec<u32> = items.iter().flat_map(|m| [m.a, m.b]).collect();
    let slice: CudaSlice<u32> = stream.clone_htod(&words).unwrap();
    let d_offsets: CudaSlice<u32> = stream.clone_htod(&offsets).unwrap();
    let wide: Vec<u64> = offsets.iter().map(|&o| o as u64).collect();
    let d_wide: CudaSlice<u64> = stream.clone_htod(&wide).unwrap();
    let d_owner: CudaSlice<u32> = stream.clone_htod(&owner).unwrap();
    let mut configs: Vec<SegConfig> = (SegAlgorithm::ALL.into_iter())
        .filter(|&a| a.runs_on(gpu.info()))
        .map(SegConfig::from)
        .collect();
    configs.push(SegAlgorithm::Auto.into());
    for skip in [0usize, 1, 3] {
        // Items from `skip` on: 8 * skip bytes in, so 1 and 3 are not 16-byte aligned.
        let host = &items[skip..skip + n];
        let expected = fold_segments(host, &offsets).unwrap();
        // SAFETY: Affine is #[repr(C)] { u32, u32 }: 2 (n + 3) u32 are n + 3 valid values.
        let maps = unsafe { slice.transmute::<Affine>(n + 3) }.unwrap();
        let view = maps.slice(skip..skip + n);
        for config in &configs {
            let what = format!("skip {skip} {config:?}");
            let got = gpu.reduce_segments(&view, &d_offsets, *config).unwrap();
            assert!(gpu.download(&got).unwrap() == expected, "{what} offsets");
            let got = gpu
                .reduce_by_owner(&view, &d_owner, segments, *config)
                .unwrap();
            assert!(gpu.download(&got).unwrap() == expected, "{what} owner");
        }
        // u64 offsets from a cudarc slice, into a caller's slice.
        let mut out: CudaSlice<u32> = stream.alloc_zeros(2 * segments).unwrap();
        {
            // SAFETY: 2 * segments u32 are `segments` Affine values.
            let mut out_view = unsafe { out.transmute_mut::<Affine>(segments) }.unwrap();
            gpu.reduce_segments_into(&view, &d_wide, &mut out_view, SegAlgorithm::Auto)
                .unwrap();
        }
        let got: Vec<Affine> = stream
            .clone_dtoh(&out)
            .unwrap()
            .chunks(2)
            .map(|w| Affine { a: w[0], b: w[1] })
            .collect();
        assert!(
            got == expected,
            "skip {skip} u64 offsets into a caller's slice"
        );
        // Raw addresses.
        let (address, _) = view.device_ptr(&stream);
        // SAFETY: live device memory of this context holding n Affine values.
        let raw = unsafe { DeviceSlice::<Affine>::from_raw(address, n, &gpu) }.unwrap();
        let (offsets_address, _) = d_offsets.device_ptr(&stream);
        // SAFETY: as above, segments + 1 u32.
        let raw_offsets =
            unsafe { DeviceSlice::<u32>::from_raw(offsets_address, segments + 1, &gpu) }.unwrap();
        let got = gpu
            .reduce_segments(&raw, &raw_offsets, SegAlgorithm::SegMerge)
            .unwrap();
        assert!(gpu.download(&got).unwrap() == expected, "skip {skip} raw");
    }
    // A too-short output is an error.
    let mut short: CudaSlice<u32> = stream.alloc_zeros(2).unwrap();
    // SAFETY: 2 u32 are one Affine.
    let mut short_view = unsafe { short.transmute_mut::<Affine>(1) }.unwrap();
    // SAFETY: as above.
    let maps = unsafe { slice.transmute::<Affine>(n + 3) }.unwrap();
    assert!(matches!(
        gpu.reduce_segments_into(
            &maps.slice(0..n),
            &d_offsets,
            &mut short_view,
            SegAlgorithm::Auto
        ),
        Err(Error::LengthMismatch { .. })
    ));
}

/// Results into a caller's memory: a `CudaSlice<f32>` (as `Sum<f32>`), a mutable view at an
/// offset, a raw output address; and device-to-device copies in and out of cudarc slices.
#[test]
fn results_land_in_a_callers_memory() {
    let _serial = serial();
    let Some((gpu, ctx, _)) = user_setup() else {
        return;
    };
    let stream = ctx.new_stream().unwrap();
    let floats: Vec<f32> = (0..100_000).map(|i| (i % 13) as f32).collect();
    let xs = stream.clone_htod(&floats).unwrap();
    let want: f32 = floats.iter().sum(); // small integers: exact in any grouping
    let mut out = stream.alloc_zeros::<f32>(3).unwrap();
    gpu.reduce_into::<Sum<f32>>(&xs, &mut out, Algorithm::Auto)
        .unwrap();
    gpu.reduce_into::<Max<f32>>(&xs, &mut out.slice_mut(2..), Algorithm::Shuffle)
        .unwrap();
    let (address, _) = out.device_ptr(&stream);
    // SAFETY: out[1] is live device memory of this context; nothing else uses it meanwhile.
    let mut raw = unsafe { DeviceSliceMut::<Sum<f32>>::from_raw(address + 4, 1, &gpu) }.unwrap();
    gpu.reduce_into(&xs, &mut raw, Algorithm::Matrix).unwrap();
    gpu.synchronize().unwrap(); // the raw output's home is the Gpu's stream
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![want, want, 12.0]);

    // Device-to-device copies: cudarc slice -> DeviceVec -> cudarc slice, and download.
    let items = Affine::random_vec(5000, 9);
    let copy = gpu.upload(&items).unwrap();
    let words: Vec<u32> = items.iter().flat_map(|m| [m.a, m.b]).collect();
    let mut back = stream.alloc_zeros::<u32>(words.len()).unwrap();
    {
        // SAFETY: 2n u32 hold n Affine values.
        let mut view = unsafe { back.transmute_mut::<Affine>(items.len()) }.unwrap();
        gpu.copy_into(&copy, &mut view).unwrap();
        assert_eq!(gpu.download(&view).unwrap(), items);
        assert_eq!(gpu.download(&gpu.copy(&view).unwrap()).unwrap(), items);
    }
    assert_eq!(stream.clone_dtoh(&back).unwrap(), words);
}

/// Evidence 2: the caller's kernel writes, `reduce` reads, on the same stream, with no
/// synchronisation between. The kernel waits ~25 ms before writing over a poisoned buffer, so
/// a reduction that did not wait for it would read poison.
#[test]
fn a_callers_kernel_then_reduce_on_the_same_stream() {
    let _serial = serial();
    let Some((_, ctx, k)) = user_setup() else {
        return;
    };
    let n = 1 << 20;
    let want = fold(&affine_maps(n));
    let stream = ctx.new_stream().unwrap();
    let gpu = Gpu::from_stream(stream.clone()).unwrap();
    warm(&gpu, &every_config());
    for config in every_config() {
        let mut maps = stream.alloc_zeros::<u32>(2 * n).unwrap();
        launch_overwrite(&k, &stream, &mut maps);
        stream.synchronize().unwrap();
        launch_fill(&k, &stream, &mut maps, DELAY_CYCLES);
        // SAFETY: 2n u32 hold n Affine values.
        let view = unsafe { maps.transmute::<Affine>(n) }.unwrap();
        assert_eq!(gpu.reduce(&view, config).unwrap(), want, "{config:?}");
    }
    // The same through a raw address and reduce_into (queued, no host wait at all until the
    // download).
    let mut maps = stream.alloc_zeros::<u32>(2 * n).unwrap();
    launch_overwrite(&k, &stream, &mut maps);
    stream.synchronize().unwrap();
    launch_fill(&k, &stream, &mut maps, DELAY_CYCLES);
    let (address, _) = maps.device_ptr(&stream);
    // SAFETY: live memory of this context holding n Affine values once the fill has run,
    // which is queued on the Gpu's own stream.
    let raw = unsafe { DeviceSlice::<Affine>::from_raw(address, n, &gpu) }.unwrap();
    let mut out = gpu.zeroed::<Affine>(1).unwrap();
    gpu.reduce_into(&raw, &mut out, Algorithm::Auto).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), vec![want]);
}

/// The memory's stream is not the `Gpu`'s: the reduction waits for the caller's kernel on the
/// other stream (a join), both with cudarc's event tracking (the slice's writer is a third
/// stream, known only through cudarc's write event) and without it (the writer is the slice's
/// own stream).
#[test]
fn a_callers_kernel_on_another_stream_is_waited_for() {
    let _serial = serial();
    let Some((gpu, ctx, k)) = user_setup() else {
        return;
    };
    let n = 1 << 20;
    let want = fold(&affine_maps(n));
    warm(&gpu, &[Config::new(Algorithm::Auto)]);
    // Event tracking on (cudarc's default) and two streams: cudarc tracks reads and writes.
    let home = ctx.new_stream().unwrap();
    let writer = ctx.new_stream().unwrap();
    assert!(ctx.is_managing_stream_synchronization());
    for (name, stream) in [("home stream", &home), ("tracked writer stream", &writer)] {
        let mut maps = home.alloc_zeros::<u32>(2 * n).unwrap();
        launch_overwrite(&k, &home, &mut maps);
        home.synchronize().unwrap();
        launch_fill(&k, stream, &mut maps, DELAY_CYCLES);
        // SAFETY: 2n u32 hold n Affine values.
        let view = unsafe { maps.transmute::<Affine>(n) }.unwrap();
        assert_eq!(gpu.reduce(&view, Algorithm::Auto).unwrap(), want, "{name}");
    }
    // Event tracking off: only the home stream orders the memory.
    let untracked = CudaContext::new(0).unwrap();
    // SAFETY: before any allocation through this handle; every use below is ordered by hand.
    unsafe { untracked.disable_event_tracking() };
    let home = untracked.new_stream().unwrap();
    let mut maps = home.alloc_zeros::<u32>(2 * n).unwrap();
    launch_overwrite(&k, &home, &mut maps);
    home.synchronize().unwrap();
    launch_fill(&k, &home, &mut maps, DELAY_CYCLES);
    // SAFETY: 2n u32 hold n Affine values.
    let view = unsafe { maps.transmute::<Affine>(n) }.unwrap();
    assert_eq!(gpu.reduce(&view, Algorithm::Auto).unwrap(), want);
}

/// The memory's own stream waits for the reduction: the caller overwrites the input on its
/// stream right after `reduce_into` returns, while the `Gpu`'s stream is still busy (~25 ms of
/// a delay kernel queued before the reduction); the reduction must still see the old data.
#[test]
fn the_memorys_stream_waits_for_the_reduction() {
    let _serial = serial();
    let Some((gpu, _ctx, k)) = user_setup() else {
        return;
    };
    let n = 1 << 20;
    let want = fold(&affine_maps(n));
    let untracked = CudaContext::new(0).unwrap();
    // SAFETY: before any allocation through this handle; every use below is ordered by hand.
    unsafe { untracked.disable_event_tracking() };
    let home = untracked.new_stream().unwrap();
    let mut maps = home.alloc_zeros::<u32>(2 * n).unwrap();
    launch_overwrite(&k, &home, &mut maps); // every kernel of the test launched once first
    launch_fill(&k, &home, &mut maps, 0);
    home.synchronize().unwrap();
    warm(&gpu, &[Config::new(Algorithm::Auto)]);
    let mut out = gpu.zeroed::<Affine>(1).unwrap();
    launch_delay(&k, gpu.stream());
    {
        // SAFETY: 2n u32 hold n Affine values.
        let view = unsafe { maps.transmute::<Affine>(n) }.unwrap();
        gpu.reduce_into(&view, &mut out, Algorithm::Auto).unwrap();
    }
    launch_overwrite(&k, &home, &mut maps);
    assert_eq!(gpu.download(&out).unwrap(), vec![want]);
}

/// Evidence 3: `Gpu`s on separate streams of one device, driven from two threads, each with
/// its own scratch memory; every result checked; buffers of one used by the other.
#[test]
fn gpus_on_separate_streams_from_two_threads() {
    let _serial = serial();
    let Some((_, ctx, _)) = user_setup() else {
        return;
    };
    let gpus: Vec<Gpu> = (0..2)
        .map(|_| Gpu::from_stream(ctx.new_stream().unwrap()).unwrap())
        .collect();
    std::thread::scope(|scope| {
        for (t, gpu) in gpus.iter().enumerate() {
            scope.spawn(move || {
                let mut rng = TestRng::new(100 + t as u64);
                for call in 0..200 {
                    let n = rng.range(0, 200_000) as usize;
                    let algorithm = Algorithm::ALL[rng.range(0, 5) as usize];
                    let items = Mat2::random_vec(n, rng.next_u64());
                    let got = gpu.reduce(&gpu.upload(&items).unwrap(), algorithm).unwrap();
                    assert_eq!(
                        got,
                        fold(&items),
                        "thread {t} call {call} n={n} {algorithm}"
                    );
                }
            });
        }
    });
    // A buffer made by one Gpu, reduced by the other (its stream waits for the first one's).
    let items = Affine::random_vec(123_456, 5);
    let xs = gpus[0].upload(&items).unwrap();
    assert_eq!(gpus[1].reduce(&xs, Algorithm::Auto).unwrap(), fold(&items));
}

/// Evidence 3, overlap without timing: stream A runs a kernel that waits until a flag is set;
/// the flag is set on stream B only after a reduction on the `Gpu` of stream B has returned to
/// the host. That can only happen if B's reduction ran while A's kernel was in flight (if the
/// streams were serialised, A's kernel gives up after ~10 s and says so). A reduction queued
/// on A behind the waiting kernel then completes with the right value.
#[test]
fn a_reduction_runs_while_another_streams_kernel_is_in_flight() {
    let _serial = serial();
    let Some((_, _ctx, k)) = user_setup() else {
        return;
    };
    let untracked = CudaContext::new(0).unwrap();
    // SAFETY: before any allocation through this handle; the flag is shared by two streams on
    // purpose and ordered by the kernels themselves.
    unsafe { untracked.disable_event_tracking() };
    let (sa, sb) = (
        untracked.new_stream().unwrap(),
        untracked.new_stream().unwrap(),
    );
    let (ga, gb) = (
        Gpu::from_stream(sa.clone()).unwrap(),
        Gpu::from_stream(sb.clone()).unwrap(),
    );
    let (items_a, items_b) = (Affine::random_vec(1 << 20, 1), Mat2::random_vec(1 << 20, 2));
    let (xs_a, xs_b) = (ga.upload(&items_a).unwrap(), gb.upload(&items_b).unwrap());
    let mut out_a = ga.zeroed::<Affine>(1).unwrap();
    // Warm-up: kernels compiled and loaded, scratch allocated, before anything waits.
    ga.reduce_into(&xs_a, &mut out_a, Algorithm::Auto).unwrap();
    gb.reduce(&xs_b, Algorithm::Auto).unwrap();
    let (mut flag, mut seen) = (
        sa.alloc_zeros::<u32>(1).unwrap(),
        sa.alloc_zeros::<u32>(1).unwrap(),
    );
    {
        // set_flag launched once (on `seen`, reset below) before anything waits for it; the
        // allocations on stream A are complete before stream B touches them.
        sa.synchronize().unwrap();
        let mut launch = sb.launch_builder(&k.set_flag);
        launch.arg(&mut seen);
        // SAFETY: set_flag(volatile unsigned int*) writes one word.
        unsafe { launch.launch(one_block()) }.unwrap();
        sb.synchronize().unwrap();
        sa.memset_zeros(&mut seen).unwrap();
    }
    ga.synchronize().unwrap();
    let mut out_a = ga.zeroed::<Affine>(1).unwrap();
    {
        let mut launch = sa.launch_builder(&k.wait_for_flag);
        launch.arg(&flag).arg(&mut seen).arg(&GIVE_UP_CYCLES);
        // SAFETY: wait_for_flag(const volatile unsigned int*, unsigned int*, unsigned long long).
        unsafe { launch.launch(one_block()) }.unwrap();
    }
    ga.reduce_into(&xs_a, &mut out_a, Algorithm::Auto).unwrap(); // queued behind the waiter
    let got_b = gb.reduce(&xs_b, Algorithm::Auto).unwrap(); // returns while A waits
    {
        let mut launch = sb.launch_builder(&k.set_flag);
        launch.arg(&mut flag);
        // SAFETY: set_flag(volatile unsigned int*) writes one word.
        unsafe { launch.launch(one_block()) }.unwrap();
    }
    sa.synchronize().unwrap();
    assert_eq!(
        sa.clone_dtoh(&seen).unwrap(),
        vec![1],
        "stream A's kernel gave up waiting: the reduction on stream B did not run beside it"
    );
    assert_eq!(got_b, fold(&items_b));
    assert_eq!(ga.download(&out_a).unwrap(), vec![fold(&items_a)]);
}

/// Evidence 4: every misuse of borrowed memory is an error value.
#[test]
fn misuse_of_borrowed_memory_is_an_error() {
    let _serial = serial();
    let Some((gpu, ctx, _)) = user_setup() else {
        return;
    };
    let stream = ctx.new_stream().unwrap();
    let words = stream.clone_htod(&[1u32; 64]).unwrap();
    let (address, _) = words.device_ptr(&stream);

    // Another context of the same device: a cudarc slice, a Gpu's buffer, context-bound raw
    // memory (cuMemAlloc in that context).
    let other = CudaContext::new_non_primary(0, 0).unwrap();
    let other_stream = other.new_stream().unwrap();
    let foreign = other_stream.clone_htod(&[1.0f32; 16]).unwrap();
    let e = gpu
        .reduce::<Sum<f32>>(&foreign, Algorithm::Auto)
        .unwrap_err();
    assert!(matches!(e, Error::ForeignBuffer { .. }), "{e:?}");
    let other_gpu = Gpu::from_stream(other_stream.clone()).unwrap();
    let e = other_gpu.reduce::<Sum<u32>>(&words.slice(..0), Algorithm::Auto);
    assert!(matches!(e, Err(Error::ForeignBuffer { .. })), "{e:?}");
    other.bind_to_thread().unwrap();
    // SAFETY: a 256-byte allocation in `other`, freed below.
    let bound = unsafe { reduce_cuda::cudarc::driver::result::malloc_sync(256) }.unwrap();
    // SAFETY: checked before any use; the error is the point.
    let e = unsafe { DeviceSlice::<u32>::from_raw(bound, 64, &gpu) }.unwrap_err();
    assert!(matches!(e, Error::ForeignBuffer { .. }), "{e:?}");
    other.bind_to_thread().unwrap();
    // SAFETY: allocated above, used by nothing.
    unsafe { reduce_cuda::cudarc::driver::result::free_sync(bound) }.unwrap();

    // Misaligned: a raw address and a cudarc view at an odd byte offset.
    // SAFETY: checked before any use; the error is the point.
    let e = unsafe { DeviceSlice::<Affine>::from_raw(address + 2, 4, &gpu) }.unwrap_err();
    assert!(
        matches!(e, Error::Misaligned { align: 4, .. }),
        "{e:?}: {e}"
    );
    let bytes = stream.alloc_zeros::<u8>(64).unwrap();
    // SAFETY: any bytes are u32 values; the view is only checked.
    let odd = unsafe { bytes.slice(1..).transmute::<u32>(8) }.unwrap();
    let e = gpu.reduce::<Sum<u32>>(&odd, Algorithm::Auto).unwrap_err();
    assert!(matches!(e, Error::Misaligned { .. }), "{e:?}");

    // Not device memory: a host pointer, an address CUDA never gave out, a range past its
    // allocation; a length past the address space.
    let host = vec![0u32; 64];
    for (what, bad, len) in [
        ("host", host.as_ptr() as u64, 64),
        ("made up", 0x1000, 1),
        ("past the end", address, 1 << 30),
    ] {
        // SAFETY: checked before any use; the error is the point.
        let e = unsafe { DeviceSlice::<u32>::from_raw(bad, len, &gpu) }.unwrap_err();
        assert!(matches!(e, Error::InvalidPointer { .. }), "{what}: {e:?}");
        println!("{what}: {e}");
    }
    // SAFETY: checked before any use; the error is the point.
    let e = unsafe { DeviceSlice::<u32>::from_raw(address, usize::MAX, &gpu) }.unwrap_err();
    assert!(matches!(e, Error::TooLarge { .. }), "{e:?}");
    // An empty raw slice may have any aligned address, and reduces to the identity.
    // SAFETY: nothing is read.
    let empty = unsafe { DeviceSlice::<Sum<u32>>::from_raw(0, 0, &gpu) }.unwrap();
    assert_eq!(gpu.reduce(&empty, Algorithm::Auto).unwrap(), Sum(0));

    // Outputs: too short; copies and uploads of another length.
    let mut none = stream.alloc_zeros::<u32>(1).unwrap();
    let e = gpu
        .reduce_into::<Sum<u32>>(&words, &mut none.slice_mut(0..0), Algorithm::Auto)
        .unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e:?}");
    let e = gpu.copy_into::<u32>(&words, &mut none).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e:?}");
    let e = gpu.upload_into(&mut none, &[1u32, 2]).unwrap_err();
    assert!(matches!(e, Error::LengthMismatch { .. }), "{e:?}");

    // After all of that, both Gpus still work.
    assert_eq!(
        gpu.reduce::<Sum<u32>>(&words, Algorithm::Auto).unwrap(),
        Sum(64)
    );
    let theirs = other_gpu.upload(&[Sum(2u32); 10]).unwrap();
    assert_eq!(other_gpu.reduce(&theirs, Algorithm::Auto).unwrap(), Sum(20));
}

/// The per-thread default stream names another stream on each thread, and a `Gpu` is shared
/// between threads: refused. The context's default stream is one stream for all: accepted.
#[test]
fn the_per_thread_default_stream_is_refused() {
    let Some(gpu) = gpu() else { return };
    let e = Gpu::from_stream(gpu.context().per_thread_stream());
    assert!(
        matches!(&e, Err(Error::InvalidConfig { reason, .. }) if reason.contains("per-thread")),
        "{e:?}"
    );
    let shared = Gpu::from_stream(gpu.context().default_stream()).unwrap();
    let xs = affine_maps(1000);
    let dxs = shared.upload(&xs).unwrap();
    assert_eq!(shared.reduce(&dxs, Algorithm::Auto).unwrap(), fold(&xs));
}
