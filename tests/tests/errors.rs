//! The bad-input contract: every bad input gets a clear error value, never a panic.

use reduce_cuda::testing::compile_kernel;
use reduce_cuda::{Algorithm, Config, Error, Gpu, Monoid};
use reduce_tests::*;

/// A monoid whose hand-written CUDA (the `cuda = "..."` escape hatch) does not compile.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Broken { x: 0 }, combine = |l, r| Broken { x: l.x.wrapping_add(r.x) },
         cuda = "return Broken{l.x + };")]
pub struct Broken {
    pub x: u32,
}

#[test]
fn a_missing_device_is_an_error_not_a_panic() {
    // No driver (CI), or a driver without device 4096 (GPU machine): an error either way.
    let e = Gpu::new(4096).unwrap_err();
    assert!(
        matches!(
            e,
            Error::DriverMissing | Error::NvrtcMissing | Error::NoDevice { .. }
        ),
        "{e:?}"
    );
    assert!(!e.to_string().is_empty());
    if !reduce_cuda::driver_available() {
        assert!(matches!(Gpu::new(0).unwrap_err(), Error::DriverMissing));
        assert!(Gpu::new(0).unwrap_err().to_string().contains("libcuda"));
    }
}

#[test]
fn nvrtc_compile_failure_shows_the_log_and_the_line() {
    if !require_nvrtc() {
        return;
    }
    let Err(Error::Compile(failure)) =
        compile_kernel::<Broken>(Config::new(Algorithm::Matrix), CI_ARCH)
    else {
        panic!("a broken hand-written combine must fail to compile");
    };
    let text = failure.to_string();
    assert!(failure.log.contains("error"), "{text}");
    assert!(failure.line.is_some(), "{text}");
    assert!(
        failure
            .source_line
            .as_deref()
            .unwrap_or("")
            .contains("Broken{l.x + }"),
        "{text}"
    );
    assert!(
        failure
            .section
            .as_deref()
            .unwrap_or("")
            .contains("monoid Broken"),
        "{text}"
    );
    assert!(text.contains("at line"), "{text}");
}

#[test]
fn invalid_parameters_are_named() {
    let cases = [
        (Config::new(Algorithm::Tb2).block(100), "multiple of 32"),
        (Config::new(Algorithm::Tb2).block(96), "power of two"),
        (Config::new(Algorithm::Tb4Warp).block(512), "past 256"),
        (
            Config::new(Algorithm::Matrix).matrix_width(0),
            "matrix width 0",
        ),
        (
            Config::new(Algorithm::DiffWarps).block(256),
            "set producers",
        ),
        (
            Config::new(Algorithm::PersistentMatrix).grid(0),
            "at least one block",
        ),
        (
            Config::new(Algorithm::Shuffle).matrix_width(8),
            "does not apply",
        ),
    ];
    for (config, expected) in cases {
        let e = reduce_cuda::testing::kernel_source_with::<Affine>(config).unwrap_err();
        assert!(matches!(e, Error::InvalidConfig { .. }), "{e:?}");
        assert!(e.to_string().contains(expected), "{config:?}: {e}");
    }
}

#[test]
fn device_errors() {
    let Some(gpu) = gpu() else { return };
    // Allocating past the card.
    let total = gpu.info().total_memory;
    let e = gpu.zeroed::<u8>(2 * total).unwrap_err();
    assert!(matches!(e, Error::OutOfMemory { .. }), "{e:?}");
    assert!(e.to_string().contains("out of memory"), "{e}");
    // A matrix that does not fit in shared memory.
    let xs = gpu.upload(&Mat3::random_vec(100, 1)).unwrap();
    let e = gpu
        .reduce(&xs, Config::new(Algorithm::DiffWarps).matrix_width(512))
        .unwrap_err();
    assert!(e.to_string().contains("shared memory"), "{e}");
    // An empty output buffer.
    let mut empty = gpu.zeroed::<Mat3>(0).unwrap();
    assert!(gpu
        .reduce_into(&xs, &mut empty, Algorithm::Shuffle)
        .is_err());
    // Upload into a buffer of another length.
    let mut two = gpu.zeroed::<u32>(2).unwrap();
    assert!(matches!(
        gpu.upload_into(&mut two, &[1, 2, 3]),
        Err(Error::LengthMismatch { .. })
    ));
    // A buffer of a Gpu in another context of the same device (a non-primary context); the
    // misuses of borrowed and raw memory are in interop.rs.
    let ctx = reduce_cuda::cudarc::driver::CudaContext::new_non_primary(0, 0).unwrap();
    let other = Gpu::from_stream(ctx.new_stream().unwrap()).unwrap();
    let e = other.reduce(&xs, Algorithm::Auto).unwrap_err();
    assert!(matches!(e, Error::ForeignBuffer { .. }), "{e:?}");
    drop(other);
    drop(ctx);
    // The device still works after all of that.
    let items = Mat3::random_vec(1000, 2);
    assert_eq!(
        gpu.reduce(&gpu.upload(&items).unwrap(), Algorithm::Auto)
            .unwrap(),
        reduce_cuda::fold(&items)
    );
}

/// With no NVRTC on the loader path, kernels fail to compile with `NvrtcMissing` instead of
/// panicking inside cudarc. Runs the check in a child process with an empty LD_LIBRARY_PATH.
#[test]
fn missing_nvrtc_is_an_error_not_a_panic() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "child_without_nvrtc", "--ignored", "--nocapture"])
        .env("LD_LIBRARY_PATH", "")
        .env("REDUCE_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}

#[test]
#[ignore = "run by missing_nvrtc_is_an_error_not_a_panic in a child process"]
fn child_without_nvrtc() {
    assert_eq!(std::env::var("REDUCE_CHILD").as_deref(), Ok("1"));
    match compile_kernel::<Affine>(Config::new(Algorithm::Shuffle), CI_ARCH) {
        // Where NVRTC is in the system's loader cache (the GPU machine) it is still found.
        Ok(()) => {}
        Err(e) => assert!(matches!(e, Error::NvrtcMissing), "{e:?}"),
    }
}

/// NVRTC rejects the same text every time: the runtime remembers the rejection (in memory) and
/// returns the same error at once from the second call on, without compiling again.
#[test]
fn a_rejected_kernel_is_not_compiled_again() {
    let Some(gpu) = gpu() else { return };
    let xs = gpu.upload(&[Broken { x: 1 }, Broken { x: 2 }]).unwrap();
    let config = Config::new(Algorithm::Tb2);
    let first = gpu.reduce(&xs, config).unwrap_err().to_string();
    assert!(first.contains("Broken{l.x + }"), "{first}");
    let compiled = reduce_cuda::testing::compilations(&gpu);
    for _ in 0..3 {
        let again = gpu.reduce(&xs, config).unwrap_err().to_string();
        assert_eq!(again, first);
        let prepared = gpu.prepare::<Broken>(config).unwrap_err().to_string();
        assert_eq!(prepared, first);
    }
    assert_eq!(
        reduce_cuda::testing::compilations(&gpu),
        compiled,
        "compiled again"
    );
    // Another configuration is another text: compiled (and rejected) once.
    gpu.reduce(&xs, Config::new(Algorithm::Matrix)).unwrap_err();
    assert_eq!(reduce_cuda::testing::compilations(&gpu), compiled + 1);
}
