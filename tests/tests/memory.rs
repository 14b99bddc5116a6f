//! The memory pool every buffer comes from: reuse across calls and sizes, trim (also right after
//! a drop, while the block waits in the host-side cache), cap, out of memory under a cap, stream
//! order across streams (a block freed while a queued kernel still reads it is not handed to
//! another stream before that kernel ends), frees from other threads;
//! and views of a `DeviceVec` of a primitive as a built-in monoid.

use reduce_cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
use reduce_cuda::cudarc::nvrtc::compile_ptx;
use reduce_cuda::{
    Algorithm, AxisAlgorithm, AxisConfig, DeviceVec, Error, Gpu, Scan, ScanAlgorithm, ScanConfig,
    SegAlgorithm, Sum,
};
use reduce_tests::monoids::wide::Aligned256;
use reduce_tests::*;

/// The tests of this file measure the pool: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A mebibyte.
const MIB: usize = 1 << 20;

#[test]
fn freed_memory_is_kept_and_reused_for_mixed_sizes() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    let items = Affine::random_vec(1 << 20, 1);
    let xs = gpu.upload(&items).unwrap();
    let offsets = gpu.upload(&offsets_of(&vec![4u32; 1 << 18])).unwrap();
    let sizes = [1usize << 10, 5 << 16, 3 << 18, 1 << 20, 7 << 12];
    let round = |gpu: &Gpu| {
        for &n in &sizes {
            let piece = gpu.upload(&items[..n]).unwrap();
            let got = gpu.reduce(&piece, Algorithm::Auto).unwrap();
            assert_eq!(got, reduce_cuda::fold(&items[..n]));
        }
        let per_segment = gpu
            .reduce_segments(&xs, &offsets, SegAlgorithm::Auto)
            .unwrap();
        assert_eq!(per_segment.len(), 1 << 18);
    };
    round(&gpu);
    gpu.synchronize().unwrap();
    let warm = gpu.pool_usage().unwrap();
    for _ in 0..20 {
        round(&gpu);
    }
    gpu.synchronize().unwrap();
    let after = gpu.pool_usage().unwrap();
    assert_eq!(
        after.in_use, warm.in_use,
        "every buffer went back to the pool"
    );
    assert!(
        after.held <= warm.held,
        "the pool serves the same sizes again without taking more: {warm:?} then {after:?}"
    );
    assert!(after.held > after.in_use, "freed memory is kept: {after:?}");
}

#[test]
fn trim_hands_kept_memory_back() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    let big = gpu.zeroed::<u8>(256 * MIB).unwrap();
    drop(big);
    gpu.synchronize().unwrap();
    let before = gpu.pool_usage().unwrap();
    assert!(before.held >= 256 * MIB, "{before:?}");
    gpu.trim_pool().unwrap();
    let after = gpu.pool_usage().unwrap();
    assert!(
        after.held + 256 * MIB <= before.held,
        "{before:?} then {after:?}"
    );
    assert_eq!(after.in_use, before.in_use);
}

/// A dropped buffer waits on the host for the next allocation of its size on its stream;
/// trimming hands it to the driver and waits for its free, so that its memory comes back even
/// right after the drop (no synchronisation between).
#[test]
fn trim_right_after_a_drop_hands_the_memory_back() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    gpu.trim_pool().unwrap();
    let base = gpu.pool_usage().unwrap();
    drop(gpu.zeroed::<u8>(256 * MIB).unwrap());
    let kept = gpu.pool_usage().unwrap();
    assert!(kept.held >= base.held + 256 * MIB, "{base:?} then {kept:?}");
    assert_eq!(kept.in_use, base.in_use);
    gpu.trim_pool().unwrap();
    let after = gpu.pool_usage().unwrap();
    assert!(
        after.held + 256 * MIB <= kept.held,
        "{kept:?} then {after:?}"
    );
}

#[test]
fn a_cap_bounds_the_pool_and_is_reported_when_reached() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    gpu.trim_pool().unwrap();
    let in_use = gpu.pool_usage().unwrap().in_use;
    let cap = in_use + 64 * MIB;
    gpu.set_pool_cap(Some(cap)).unwrap();
    let result = std::panic::catch_unwind(|| {
        // Within the cap: fine, and kept memory stays under it.
        for _ in 0..10 {
            let a = gpu.zeroed::<u8>(40 * MIB).unwrap();
            let b = gpu.zeroed::<u8>(20 * MIB).unwrap();
            drop((a, b));
        }
        gpu.synchronize().unwrap();
        let usage = gpu.pool_usage().unwrap();
        assert_eq!(usage.cap, Some(cap));
        assert!(usage.held <= cap + 32 * MIB, "{usage:?}");
        // Past the cap: an error that names it.
        let kept = gpu.zeroed::<u8>(40 * MIB).unwrap();
        let e = gpu.zeroed::<u8>(40 * MIB).unwrap_err();
        let Error::OutOfMemory {
            requested,
            cap: Some(reported),
            pool_in_use,
            ..
        } = e
        else {
            panic!("{e:?}")
        };
        assert_eq!((requested, reported), (40 * MIB, cap));
        assert!(pool_in_use >= 40 * MIB);
        assert!(e.to_string().contains("cap"), "{e}");
        drop(kept);
        // The reductions' own buffers obey it too, and recover once memory is freed.
        let items = gpu.upload(&Affine::random_vec(1000, 3)).unwrap();
        gpu.reduce(&items, Algorithm::Auto).unwrap();
    });
    gpu.set_pool_cap(None).unwrap();
    assert_eq!(gpu.pool_usage().unwrap().cap, None);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// A cap at the memory in use lets nothing more be allocated (a cap of 0 too: it is a cap, not
/// "none"), and threads allocating at once never pass it together.
#[test]
fn a_cap_holds_at_zero_and_under_concurrent_allocations() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    gpu.synchronize().unwrap();
    let in_use = gpu.pool_usage().unwrap().in_use;
    let result = std::panic::catch_unwind(|| {
        gpu.set_pool_cap(Some(0)).unwrap();
        assert_eq!(gpu.pool_usage().unwrap().cap, Some(0));
        if in_use == 0 {
            let e = gpu.zeroed::<u8>(16).unwrap_err();
            assert!(
                matches!(e, Error::OutOfMemory { cap: Some(0), .. }),
                "{e:?}"
            );
        }
        // Room for 8 blocks; 16 threads ask for 4 each at once: at most 8 succeed.
        gpu.set_pool_cap(Some(in_use + 8 * MIB)).unwrap();
        let held: Vec<_> = std::thread::scope(|s| {
            let threads: Vec<_> = (0..16)
                .map(|_| {
                    s.spawn(|| {
                        (0..4)
                            .filter_map(|_| gpu.zeroed::<u8>(MIB).ok())
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|t| t.join().unwrap())
                .collect()
        });
        assert!(
            held.len() <= 8,
            "{} blocks of 1 MiB under a cap of 8",
            held.len()
        );
        assert!(gpu.pool_usage().unwrap().in_use <= in_use + 8 * MIB);
    });
    gpu.set_pool_cap(None).unwrap();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

/// A device past its memory: the pool hands back what it keeps, tries once more, and reports.
/// The allocating calls check their input and configuration on the host before they allocate
/// their results: under a cap that lets nothing more be allocated, a call its checks refuse
/// fails with its own error, not `OutOfMemory`.
#[test]
fn allocating_calls_check_before_they_allocate() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    let xs = gpu.upload(&Affine::random_vec(1000, 5)).unwrap();
    let no_offsets = gpu.upload::<u32>(&[]).unwrap();
    let short_keys = gpu.upload(&vec![0u32; 999]).unwrap();
    gpu.synchronize().unwrap();
    let in_use = gpu.pool_usage().unwrap().in_use;
    gpu.set_pool_cap(Some(in_use)).unwrap();
    let result = std::panic::catch_unwind(|| {
        let bad_scan = ScanConfig::new(ScanAlgorithm::LookAhead).grid(0);
        let bad_axes = AxisConfig::new(AxisAlgorithm::Strips).min_strip(1);
        let inclusive = Scan::Inclusive;
        let invalid = [
            ("scan", gpu.scan(&xs, inclusive, bad_scan).err()),
            (
                "reduce_axes",
                gpu.reduce_axes(&xs, &[10, 100], &[1], bad_axes).err(),
            ),
        ];
        for (call, e) in invalid {
            assert!(
                matches!(e, Some(Error::InvalidConfig { .. })),
                "{call}: {e:?}"
            );
        }
        let layouts = [
            (
                "scan_segments",
                gpu.scan_segments(&xs, &no_offsets, inclusive, ScanAlgorithm::Auto)
                    .err(),
            ),
            (
                "scan_by_key",
                gpu.scan_by_key(&xs, &short_keys, inclusive, ScanAlgorithm::Auto)
                    .err(),
            ),
            (
                "reduce_segments",
                gpu.reduce_segments(&xs, &no_offsets, SegAlgorithm::Auto)
                    .err(),
            ),
        ];
        for (call, e) in layouts {
            assert!(matches!(e, Some(Error::Layout(_))), "{call}: {e:?}");
        }
        // The cap holds: a valid call is refused as out of memory.
        let e = gpu.scan(&xs, inclusive, ScanAlgorithm::Auto).unwrap_err();
        assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
    });
    gpu.set_pool_cap(None).unwrap();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn out_of_memory_reports_the_device_and_the_pool() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    let total = gpu.info().total_memory;
    let e = gpu.zeroed::<u8>(2 * total).unwrap_err();
    let Error::OutOfMemory {
        requested,
        total: reported_total,
        cap: None,
        ..
    } = e
    else {
        panic!("{e:?}")
    };
    assert_eq!((requested, reported_total), (2 * total, total));
    // The pool still serves.
    gpu.zeroed::<u32>(1000).unwrap();
}

const SPIN: &str = r#"
extern "C" __global__ void spin(unsigned long long cycles) {
    const long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) {}
}
"#;

/// Two `Gpu`s on two streams of one context share its pool. A buffer that a reduction queued
/// behind a long kernel still reads is dropped on stream A; a buffer of the same size allocated
/// and zeroed at once on stream B must not be that memory before the reduction has read it.
#[test]
fn a_block_freed_on_one_stream_waits_for_its_readers_before_another_stream_gets_it() {
    let _serial = serial();
    let Some(_) = gpu() else { return };
    let ctx = CudaContext::new(0).unwrap();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let (gpu_a, gpu_b) = (
        Gpu::from_stream(a.clone()).unwrap(),
        Gpu::from_stream(b.clone()).unwrap(),
    );
    let module = ctx.load_module(compile_ptx(SPIN).unwrap()).unwrap();
    let spin = module.load_function("spin").unwrap();
    let n = 1 << 22;
    for round in 0..4 {
        let xs: DeviceVec<Sum<u32>> = gpu_a.upload(&vec![Sum(1u32); n]).unwrap();
        let mut out = gpu_a.zeroed::<Sum<u32>>(1).unwrap();
        let cycles = 100_000_000u64; // about 50 ms
        let mut launch = a.launch_builder(&spin);
        launch.arg(&cycles);
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: spin(unsigned long long) touches no memory.
        unsafe { launch.launch(one) }.unwrap();
        gpu_a.reduce_into(&xs, &mut out, Algorithm::Auto).unwrap();
        drop(xs);
        let zeros = gpu_b.zeroed::<Sum<u32>>(n).unwrap();
        gpu_b.synchronize().unwrap();
        assert_eq!(
            gpu_a.download(&out).unwrap()[0].0,
            n as u32,
            "round {round}: the reduction read memory another stream had zeroed"
        );
        drop(zeros);
    }
}

#[test]
fn buffers_may_be_dropped_on_other_threads() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    gpu.synchronize().unwrap();
    let in_use = gpu.pool_usage().unwrap().in_use;
    let buffers: Vec<DeviceVec<u64>> = (0..8).map(|i| gpu.zeroed(1000 << i).unwrap()).collect();
    std::thread::scope(|scope| {
        for buffer in buffers {
            scope.spawn(move || drop(buffer));
        }
    });
    gpu.synchronize().unwrap();
    assert_eq!(gpu.pool_usage().unwrap().in_use, in_use);
    assert_eq!(
        gpu.download(&gpu.upload(&[7u64; 100]).unwrap()).unwrap(),
        vec![7u64; 100]
    );
}

/// A `DeviceVec<f32>` is read and written as `Sum<f32>` values through a view, as a cudarc
/// `CudaSlice<f32>` is as it is.
#[test]
fn a_device_vec_of_a_primitive_reduces_as_a_built_in_monoid() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    let values: Vec<u32> = (0..10_000).map(|i| i * 7 + 1).collect();
    let xs = gpu.upload(&values).unwrap();
    let total = gpu
        .reduce(&xs.as_monoid::<Sum<u32>>(), Algorithm::Auto)
        .unwrap();
    assert_eq!(total.0, values.iter().fold(0u32, |a, &b| a.wrapping_add(b)));
    let largest = gpu
        .reduce(&xs.as_monoid::<reduce_cuda::Max<u32>>(), Algorithm::Shuffle)
        .unwrap();
    assert_eq!(largest.0, *values.iter().max().unwrap());
    let mut out = gpu.zeroed::<u32>(1).unwrap();
    gpu.reduce_into(
        &xs.as_monoid::<Sum<u32>>(),
        &mut out.as_monoid_mut::<Sum<u32>>(),
        Algorithm::Auto,
    )
    .unwrap();
    assert_eq!(gpu.download(&out).unwrap()[0], total.0);
}

/// Every buffer the pool hands out, of any size and reused or new, lies at the largest
/// alignment a monoid may have: a reduction of it never meets `Error::Misaligned`.
#[test]
fn buffers_of_any_size_hold_values_aligned_to_256_bytes() {
    let _serial = serial();
    let Some(gpu) = gpu() else { return };
    let all = Aligned256::random_vec(300, 1);
    // small odd buffers beside each other, kept alive so that none reuses another's block
    let mut held = Vec::new();
    for n in [1usize, 3, 7, 1, 13, 2, 5, 299, 1, 31] {
        let bytes = gpu.upload(&vec![7u8; n]).unwrap();
        let values = gpu.upload(&all[..n]).unwrap();
        let got = gpu.reduce(&values, Algorithm::Auto).unwrap();
        assert_eq!(got, reduce_cuda::fold(&all[..n]), "{n} values");
        held.push((bytes, values));
    }
    // and blocks the pool hands out again
    drop(held);
    for n in [1usize, 3, 299] {
        let values = gpu.upload(&all[..n]).unwrap();
        assert_eq!(
            gpu.reduce(&values, Algorithm::Auto).unwrap(),
            reduce_cuda::fold(&all[..n])
        );
    }
}
