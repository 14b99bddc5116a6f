//! The on-disk CUBIN cache on a real device: a fresh `Gpu` (what a second process sees) loads
//! from disk; a corrupt entry is recompiled, never trusted. One test per binary: it sets the
//! cache location in the environment.

use reduce_cuda::{Algorithm, Config, KernelOrigin};
use reduce_tests::*;

#[test]
fn second_use_loads_from_disk_and_corruption_recompiles() {
    let dir = std::env::temp_dir().join(format!("reduce-disk-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: the only test of this binary; set before any thread reads the environment.
    unsafe { std::env::set_var(reduce_cuda::testing::CACHE_DIR_ENV, &dir) };
    let Some(gpu) = gpu() else { return };
    let config = Config::new(Algorithm::Matrix);
    let cold = gpu.prepare::<Mat2>(config).unwrap();
    let warm = gpu.prepare::<Mat2>(config).unwrap();
    assert_eq!(
        (cold.origin, warm.origin),
        (KernelOrigin::Compiled, KernelOrigin::Memory)
    );
    drop(gpu);

    let gpu = reduce_cuda::Gpu::new(0).unwrap();
    let disk = gpu.prepare::<Mat2>(config).unwrap();
    assert_eq!(disk.origin, KernelOrigin::Disk);
    println!(
        "JIT: NVRTC {:.1} ms, disk cache {:.2} ms, in process {:.1} us",
        cold.elapsed.as_secs_f64() * 1e3,
        disk.elapsed.as_secs_f64() * 1e3,
        warm.elapsed.as_secs_f64() * 1e6
    );
    drop(gpu);

    // Corrupt every entry: the next Gpu recompiles and still computes the right answer.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x5a;
        std::fs::write(&path, bytes).unwrap();
    }
    let gpu = reduce_cuda::Gpu::new(0).unwrap();
    assert_eq!(
        gpu.prepare::<Mat2>(config).unwrap().origin,
        KernelOrigin::Compiled
    );
    let items = Mat2::random_vec(5000, 9);
    assert_eq!(
        gpu.reduce(&gpu.upload(&items).unwrap(), config).unwrap(),
        reduce_cuda::fold(&items)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
