//! Shared fixtures of the integration tests: the test monoids ([`monoids`]: exactly
//! associative, NOT commutative, of every item size and shape the runtime must handle), segment
//! layouts ([`layouts`]), configurations ([`configs`]), random data (floats for the portable
//! mode: [`floats`]), the laws, the GPU sweeps
//! that report every failing call ([`sweep`]), the CPU emulator of SegShuffle's kernel
//! ([`emu`]), and the gates below.
//!
//! Gates: a GPU test calls [`gpu`]; without a device it prints why and returns `None`, unless
//! `REDUCE_REQUIRE_GPU=1`, when it panics (the GPU machine sets it). NVRTC tests call
//! [`require_nvrtc`]; with `REDUCE_REQUIRE_NVRTC=1` (set by `.ci/run` and on the GPU machine) a
//! missing library fails. Emulator tests call [`emu::compiler`]; with `REDUCE_REQUIRE_EMULATOR=1`
//! (set by `.ci/run`) a missing host C++ compiler fails.

pub mod configs;
pub mod cubin;
pub mod emu;
pub mod floats;
pub mod layouts;
pub mod monoids;
pub mod sweep;

pub use layouts::{convert, offsets_of, owners_of};
pub use monoids::standard::*;

use reduce_core::Monoid;
use reduce_cuda::Gpu;

/// SplitMix64: fast, seedable, good enough for test data.
#[derive(Clone, Debug)]
pub struct TestRng(u64);

impl TestRng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        TestRng(seed)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
}

/// Random values of a test monoid. Values are chosen so that long products do not collapse
/// to a fixed point (odd multipliers, invertible matrices), which would hide reordering.
pub trait Random: Monoid + PartialEq + std::fmt::Debug {
    /// One random value.
    fn random(rng: &mut TestRng) -> Self;
    /// `n` random values.
    fn random_vec(n: usize, seed: u64) -> Vec<Self> {
        let mut rng = TestRng::new(seed);
        (0..n).map(|_| Self::random(&mut rng)).collect()
    }
}

pub use reduce_cuda::reduce_core::monoid::bytes_of;

/// Each item lifted into a value by `lift(x, i)`, `i` its index: what the kernels fold for a
/// lifted input (the identity lift for monoid values).
pub fn lifted_by<X: Copy, M>(items: &[X], lift: impl Fn(X, u64) -> M) -> Vec<M> {
    items
        .iter()
        .enumerate()
        .map(|(i, &x)| lift(x, i as u64))
        .collect()
}

/// FNV-1a of the bytes of `xs` (padding bytes as zeros): the hashes the portable tests print
/// per case, to compare the bits of devices.
pub fn bits_hash<T: reduce_cuda::DeviceCopy>(xs: &[T]) -> u64 {
    bytes_of(xs).iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// A device, or `None` (after saying why) when there is none and none is required.
/// Panics when `REDUCE_REQUIRE_GPU=1` and no device can be opened.
pub fn gpu() -> Option<Gpu> {
    match Gpu::new(0) {
        Ok(gpu) => Some(gpu),
        Err(e) if env_flag("REDUCE_REQUIRE_GPU") => {
            panic!("REDUCE_REQUIRE_GPU=1 but no GPU could be opened: {e}")
        }
        Err(e) => {
            eprintln!("GPU test skipped (set REDUCE_REQUIRE_GPU=1 to make this a failure): {e}");
            None
        }
    }
}

/// `host` written `skip` items into a fresh allocation that ends where the view ends, so that a
/// read past the view is a read past the allocation (`compute-sanitizer --tool memcheck` reports
/// it); the buffer must outlive the view.
pub fn placed<T: reduce_cuda::DeviceCopy>(
    gpu: &Gpu,
    host: &[T],
    skip: usize,
) -> (
    reduce_cuda::cudarc::driver::CudaSlice<u8>,
    reduce_cuda::DeviceSlice<T>,
) {
    use reduce_cuda::cudarc::driver::DevicePtr;
    use reduce_cuda::{DeviceSlice, DeviceSliceMut};
    let size = std::mem::size_of::<T>();
    let stream = gpu.stream();
    let bytes = stream
        .alloc_zeros::<u8>(((host.len() + skip) * size).max(1))
        .unwrap();
    let address = bytes.device_ptr(stream).0 + (skip * size) as u64;
    // SAFETY: live device memory of this context holding host.len() values past `skip`;
    // nothing else reads or writes it while the views are used.
    let mut dst = unsafe { DeviceSliceMut::<T>::from_raw(address, host.len(), gpu) }.unwrap();
    gpu.upload_into(&mut dst, host).unwrap();
    // SAFETY: as above.
    let src = unsafe { DeviceSlice::<T>::from_raw(address, host.len(), gpu) }.unwrap();
    (bytes, src)
}

/// Whether NVRTC can be used; panics when `REDUCE_REQUIRE_NVRTC=1` and it cannot.
pub fn require_nvrtc() -> bool {
    if reduce_cuda::testing::nvrtc_available() {
        return true;
    }
    if env_flag("REDUCE_REQUIRE_NVRTC") {
        panic!("REDUCE_REQUIRE_NVRTC=1 but libnvrtc could not be loaded (is LD_LIBRARY_PATH set?)");
    }
    eprintln!("NVRTC test skipped (set REDUCE_REQUIRE_NVRTC=1 to make this a failure): libnvrtc not found");
    false
}

/// Holds this test binary's lock while alive: for tests that must not run beside another test of
/// the same binary (they share the devices, measure timeouts, or check that streams overlap).
/// A test that panicked while holding it does not poison it for the others.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Panics, showing `text`, unless it contains `piece` (assertions on generated CUDA text).
pub fn assert_contains(text: &str, piece: &str) {
    assert!(text.contains(piece), "missing `{piece}` in:\n{text}");
}

/// The identity laws, exactly, on each of `xs`.
pub fn assert_identity<M: Monoid + PartialEq + std::fmt::Debug>(xs: &[M]) {
    for &x in xs {
        assert_eq!(M::combine(M::identity(), x), x);
        assert_eq!(M::combine(x, M::identity()), x);
    }
}

/// Associativity, exactly, over every triple of `xs`.
pub fn assert_associative<M: Monoid + PartialEq + std::fmt::Debug>(xs: &[M]) {
    for &a in xs {
        for &b in xs {
            for &c in xs {
                assert_eq!(
                    M::combine(M::combine(a, b), c),
                    M::combine(a, M::combine(b, c)),
                    "{a:?} {b:?} {c:?}"
                );
            }
        }
    }
}

/// Both identity laws and associativity over `xs`.
pub fn assert_monoid_laws<M: Monoid + PartialEq + std::fmt::Debug>(xs: &[M]) {
    assert_identity(xs);
    assert_associative(xs);
}

/// Every plain algorithm and `Auto` reduce `items` (already on the device as `xs`) to `want`,
/// bit for bit.
pub fn assert_every_algorithm<M: reduce_core::CudaMonoid + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    xs: &reduce_cuda::DeviceVec<M>,
    want: M,
    what: &str,
) {
    let all = reduce_cuda::Algorithm::ALL;
    for algorithm in all.into_iter().chain([reduce_cuda::Algorithm::Auto]) {
        let got = gpu
            .reduce(xs, algorithm)
            .unwrap_or_else(|e| panic!("{} {what} {algorithm}: {e}", M::CUDA_NAME));
        assert_eq!(got, want, "{} {what} {algorithm}", M::CUDA_NAME);
    }
}

/// Every plain algorithm's kernel for `M` compiles with NVRTC for [`CI_ARCH`] (call after
/// [`require_nvrtc`]).
pub fn compiles_every_algorithm<M: reduce_core::CudaMonoid>() {
    for algorithm in reduce_cuda::Algorithm::ALL {
        let config = reduce_cuda::Config::new(algorithm);
        if let Err(e) = reduce_cuda::testing::compile_kernel::<M>(config, CI_ARCH) {
            panic!("{algorithm} for {} does not compile:\n{e}", M::CUDA_NAME);
        }
    }
}

/// Whether the environment variable `name` is `1`.
pub(crate) fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// The NVRTC target for compile-only checks without a device.
pub const CI_ARCH: &str = "sm_90";

/// The README's code blocks, compiled and run as doctests (`cargo test -p reduce-tests --doc`).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The Rust blocks of the user guide (`docs/guide/`), as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide/algorithms.md")]
#[doc = include_str!("../../docs/guide/segmented.md")]
#[doc = include_str!("../../docs/guide/interop.md")]
#[doc = include_str!("../../docs/guide/language.md")]
#[doc = include_str!("../../docs/guide/axes.md")]
#[doc = include_str!("../../docs/guide/scans.md")]
pub struct GuideDoctests;

/// The multi-GPU guide's blocks (they need reduce-cuda's feature `nccl`, which builds without
/// libnccl): `cargo test -p reduce-tests --features nccl --doc`.
#[cfg(all(doctest, feature = "nccl"))]
#[doc = include_str!("../../docs/guide/multi-gpu.md")]
pub struct MultiGpuDoctests;
