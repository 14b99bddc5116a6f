//! Data already on the GPU: your own cudarc kernels fill buffers, and reduce reduces them where
//! they are, on your stream: no copy to the host, no synchronisation in between. A plain
//! reduction of a non-commutative monoid, float statistics written into a buffer of yours,
//! and a segmented reduction.
//!
//!     cargo run --release --example interop

use reduce_cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use reduce_cuda::cudarc::nvrtc::compile_ptx;
use reduce_cuda::reduce_core::fold_segments;
use reduce_cuda::{fold, Algorithm, Gpu, Max, Monoid, SegAlgorithm, Sum};

/// The affine map x -> a*x + b (mod 2^32); `combine(l, r)` applies l first. Not commutative.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a),
                                   b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
struct Affine {
    a: u32,
    b: u32,
}

/// Your kernels (any CUDA C++ of yours; here compiled with cudarc's NVRTC).
const USER_KERNELS: &str = r#"
extern "C" __global__ void make_maps(unsigned int* maps, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        maps[2 * i] = (unsigned int)i * 2654435761u | 1u;
        maps[2 * i + 1] = (unsigned int)i ^ 0x5bd1e995u;
    }
}
extern "C" __global__ void make_samples(float* x, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        x[i] = (float)(i % 100) * 0.25f;
    }
}
// CSR offsets of segments of `width` items (the last one shorter): segments + 1 entries.
extern "C" __global__ void make_offsets(unsigned int* offsets, unsigned long long segments,
                                        unsigned long long n, unsigned int width) {
    for (unsigned long long s = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
         s <= segments; s += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long o = s * width;
        offsets[s] = (unsigned int)(o < n ? o : n);
    }
}
"#;

/// What `make_maps` writes, computed on the host to check the results.
fn host_map(i: usize) -> Affine {
    Affine {
        a: (i as u32).wrapping_mul(2_654_435_761) | 1,
        b: i as u32 ^ 0x5bd1_e995,
    }
}

/// A grid-stride launch configuration for your kernels.
fn grid() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1024, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Your own cudarc setup: a context and a stream. (cudarc panics without a driver: ask first.)
    if !reduce_cuda::driver_available() {
        println!(
            "interop needs a CUDA device: {}",
            reduce_cuda::Error::DriverMissing
        );
        return Ok(());
    }
    let ctx = match CudaContext::new(0) {
        Ok(ctx) => ctx,
        Err(e) => {
            println!("interop needs a CUDA device: {e}");
            return Ok(());
        }
    };
    let stream = ctx.new_stream()?;
    // reduce runs on your stream: after the kernels you queued before, before those after.
    let gpu = Gpu::from_stream(stream.clone())?;
    println!("device: {}", gpu.info().name);

    let module = ctx.load_module(compile_ptx(USER_KERNELS)?)?;
    let n = 1usize << 24;
    let n64 = n as u64;

    // 1. Plain: your kernel writes n affine maps; reduce folds them in place, in order.
    let mut maps = stream.alloc_zeros::<u32>(2 * n)?;
    let make_maps = module.load_function("make_maps")?;
    let mut launch = stream.launch_builder(&make_maps);
    launch.arg(&mut maps).arg(&n64);
    // SAFETY: make_maps(unsigned int*, unsigned long long) writes the 2n words of `maps`.
    unsafe { launch.launch(grid()) }?;
    // SAFETY: Affine is #[repr(C)] { u32, u32 }, so 2n u32 are n Affine values.
    let view = unsafe { maps.transmute::<Affine>(n) }.expect("2n words hold n maps");
    let total = gpu.reduce(&view, Algorithm::Auto)?; // no sync, no host copy of the maps
    let expected = fold(&(0..n).map(host_map).collect::<Vec<_>>());
    println!(
        "plain: fold of {n} affine maps = {total:?}, equal to the sequential fold: {}",
        total == expected
    );
    assert_eq!(total, expected);

    // 2. A CudaSlice<f32> is an input of the built-in monoids as it is; results go into a
    //    buffer of yours and stay on the device (copied back here only to print them).
    let mut samples = stream.alloc_zeros::<f32>(n)?;
    let make_samples = module.load_function("make_samples")?;
    let mut launch = stream.launch_builder(&make_samples);
    launch.arg(&mut samples).arg(&n64);
    // SAFETY: make_samples(float*, unsigned long long) writes the n floats of `samples`.
    unsafe { launch.launch(grid()) }?;
    let mut stats = stream.alloc_zeros::<f32>(2)?;
    gpu.reduce_into::<Sum<f32>>(&samples, &mut stats.slice_mut(0..1), Algorithm::Auto)?;
    gpu.reduce_into::<Max<f32>>(&samples, &mut stats.slice_mut(1..2), Algorithm::Auto)?;
    let stats = stream.clone_dtoh(&stats)?;
    let exact: f64 = (0..n).map(|i| (i % 100) as f64 * 0.25).sum();
    println!(
        "samples: sum {} (exact {exact}), max {}",
        stats[0], stats[1]
    );
    assert!(((stats[0] as f64 - exact) / exact).abs() < 1e-5 && stats[1] == 24.75);

    // 3. Segmented: your kernel writes CSR offsets of segments of 1000 maps.
    let (width, segments) = (1000u32, n.div_ceil(1000));
    let segments64 = segments as u64;
    let mut offsets = stream.alloc_zeros::<u32>(segments + 1)?;
    let make_offsets = module.load_function("make_offsets")?;
    let mut launch = stream.launch_builder(&make_offsets);
    launch
        .arg(&mut offsets)
        .arg(&segments64)
        .arg(&n64)
        .arg(&width);
    // SAFETY: make_offsets(unsigned int*, unsigned long long, unsigned long long, unsigned int)
    // writes the segments + 1 entries of `offsets`.
    unsafe { launch.launch(grid()) }?;
    // Reduce your maps over your offsets, straight into a buffer of yours: no copy at all.
    let mut out = stream.alloc_zeros::<u32>(2 * segments)?;
    {
        // SAFETY: as above, 2 * segments u32 are `segments` Affine values.
        let mut out_view = unsafe { out.transmute_mut::<Affine>(segments) }.expect("room");
        gpu.reduce_segments_into(&view, &offsets, &mut out_view, SegAlgorithm::Auto)?;
    }
    let words = stream.clone_dtoh(&out)?;
    let host_offsets: Vec<u32> = (0..=segments)
        .map(|s| (s * width as usize).min(n) as u32)
        .collect();
    let expected = fold_segments(&(0..n).map(host_map).collect::<Vec<_>>(), &host_offsets)?;
    let got: Vec<Affine> = words
        .chunks(2)
        .map(|w| Affine { a: w[0], b: w[1] })
        .collect();
    println!(
        "segmented: {segments} segments, equal to the sequential folds: {}",
        got == expected
    );
    assert_eq!(got, expected);
    Ok(())
}
