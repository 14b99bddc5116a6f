//! Shared fixtures of the integration tests: exactly associative, NON-commutative test monoids
//! of every item size the runtime must handle, random data, and the GPU/NVRTC gates.
//!
//! Gates: a GPU test calls [`gpu`]; without a device it prints why and returns `None`, unless
//! `REDUCE_REQUIRE_GPU=1`, when it panics (the GPU machine sets it). NVRTC tests call
//! [`require_nvrtc`]; with `REDUCE_REQUIRE_NVRTC=1` (set by `.ci/run`) a missing library fails.

pub mod cubin;
pub mod emu;
pub mod fuzz_regressions;
pub mod lang;

use reduce_core::Monoid;
use reduce_cuda::Gpu;

/// x -> a*x + b (mod 2^32); `combine(l, r)` applies l first. 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
pub struct Affine {
    pub a: u32,
    pub b: u32,
}

/// 2x2 matrices over u32 with wrapping arithmetic, row-major. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat2 { m: [1, 0, 0, 1] },
         combine = |l, r| Mat2 { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[3])),
             l.m[2].wrapping_mul(r.m[0]).wrapping_add(l.m[3].wrapping_mul(r.m[2])),
             l.m[2].wrapping_mul(r.m[1]).wrapping_add(l.m[3].wrapping_mul(r.m[3])),
         ] })]
pub struct Mat2 {
    pub m: [u32; 4],
}

/// The first item that is set. 8 bytes (bool + padding + u32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = KeepFirst { set: false, value: 0 },
         combine = |l, r| if l.set { l } else { r })]
pub struct KeepFirst {
    pub set: bool,
    pub value: u32,
}

/// The last item that is set. 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = KeepLast { set: false, value: 0 },
         combine = |l, r| if r.set { r } else { l })]
pub struct KeepLast {
    pub set: bool,
    pub value: u32,
}

/// Polynomial rolling hash of a byte string: hash(s ++ t) = hash(s) * B^|t| + hash(t)
/// (mod 2^64). `pow` carries B^len. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = RollingHash { hash: 0, pow: 1 },
         combine = |l, r| RollingHash { hash: l.hash.wrapping_mul(r.pow).wrapping_add(r.hash), pow: l.pow.wrapping_mul(r.pow) })]
pub struct RollingHash {
    pub hash: u64,
    pub pow: u64,
}

/// Permutations of {0, 1, 2, 3}, two bits per image, composed "l first, then r": the
/// symmetric group S4 in one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Perm4 { p: 0b11_10_01_00 },
         combine = |l, r| Perm4 { p:
             ((r.p >> (2 * (l.p & 3))) & 3)
             | (((r.p >> (2 * ((l.p >> 2) & 3))) & 3) << 2)
             | (((r.p >> (2 * ((l.p >> 4) & 3))) & 3) << 4)
             | (((r.p >> (2 * ((l.p >> 6) & 3))) & 3) << 6) })]
pub struct Perm4 {
    pub p: u8,
}

/// Affine maps mod 2^8. 2 bytes: exercises 8-bit wrapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine8 { a: 1, b: 0 },
         combine = |l, r| Affine8 { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
pub struct Affine8 {
    pub a: u8,
    pub b: u8,
}

/// Affine maps mod 2^16. 4 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine16 { a: 1, b: 0 },
         combine = |l, r| Affine16 { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
pub struct Affine16 {
    pub a: u16,
    pub b: u16,
}

/// Upper-triangular 2x2 matrices [[a, b], [0, c]] over u32. 12 bytes (no 16-byte multiple).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Tri { a: 1, b: 0, c: 1 },
         combine = |l, r| Tri { a: l.a.wrapping_mul(r.a), b: l.a.wrapping_mul(r.b).wrapping_add(l.b.wrapping_mul(r.c)), c: l.c.wrapping_mul(r.c) })]
pub struct Tri {
    pub a: u32,
    pub b: u32,
    pub c: u32,
}

/// 2x2 matrices over u64, wrapping. 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat2w { m: [1, 0, 0, 1] },
         combine = |l, r| Mat2w { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[2])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[3])),
             l.m[2].wrapping_mul(r.m[0]).wrapping_add(l.m[3].wrapping_mul(r.m[2])),
             l.m[2].wrapping_mul(r.m[1]).wrapping_add(l.m[3].wrapping_mul(r.m[3])),
         ] })]
pub struct Mat2w {
    pub m: [u64; 4],
}

/// 3x3 matrices over u64, wrapping, row-major. 72 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Monoid)]
#[repr(C)]
#[monoid(identity = Mat3 { m: [1, 0, 0, 0, 1, 0, 0, 0, 1] },
         combine = |l, r| Mat3 { m: [
             l.m[0].wrapping_mul(r.m[0]).wrapping_add(l.m[1].wrapping_mul(r.m[3])).wrapping_add(l.m[2].wrapping_mul(r.m[6])),
             l.m[0].wrapping_mul(r.m[1]).wrapping_add(l.m[1].wrapping_mul(r.m[4])).wrapping_add(l.m[2].wrapping_mul(r.m[7])),
             l.m[0].wrapping_mul(r.m[2]).wrapping_add(l.m[1].wrapping_mul(r.m[5])).wrapping_add(l.m[2].wrapping_mul(r.m[8])),
             l.m[3].wrapping_mul(r.m[0]).wrapping_add(l.m[4].wrapping_mul(r.m[3])).wrapping_add(l.m[5].wrapping_mul(r.m[6])),
             l.m[3].wrapping_mul(r.m[1]).wrapping_add(l.m[4].wrapping_mul(r.m[4])).wrapping_add(l.m[5].wrapping_mul(r.m[7])),
             l.m[3].wrapping_mul(r.m[2]).wrapping_add(l.m[4].wrapping_mul(r.m[5])).wrapping_add(l.m[5].wrapping_mul(r.m[8])),
             l.m[6].wrapping_mul(r.m[0]).wrapping_add(l.m[7].wrapping_mul(r.m[3])).wrapping_add(l.m[8].wrapping_mul(r.m[6])),
             l.m[6].wrapping_mul(r.m[1]).wrapping_add(l.m[7].wrapping_mul(r.m[4])).wrapping_add(l.m[8].wrapping_mul(r.m[7])),
             l.m[6].wrapping_mul(r.m[2]).wrapping_add(l.m[7].wrapping_mul(r.m[5])).wrapping_add(l.m[8].wrapping_mul(r.m[8])),
         ] })]
pub struct Mat3 {
    pub m: [u64; 9],
}

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

impl Random for Affine {
    fn random(rng: &mut TestRng) -> Self {
        Affine {
            a: rng.next_u32() | 1,
            b: rng.next_u32(),
        }
    }
}
impl Random for Mat2 {
    fn random(rng: &mut TestRng) -> Self {
        // det = a*d - b*c odd: invertible mod 2^32.
        let (a, b, c) = (rng.next_u32() | 1, rng.next_u32() & !1, rng.next_u32());
        Mat2 {
            m: [a, b, c, rng.next_u32() | 1],
        }
    }
}
impl Random for KeepFirst {
    fn random(rng: &mut TestRng) -> Self {
        // An unset item carries value 0: the identity's, so that the laws hold bit for bit.
        let set = rng.next_u32().is_multiple_of(64);
        KeepFirst {
            set,
            value: if set { rng.next_u32() } else { 0 },
        }
    }
}
impl Random for KeepLast {
    fn random(rng: &mut TestRng) -> Self {
        // An unset item carries value 0: the identity's, so that the laws hold bit for bit.
        let set = rng.next_u32().is_multiple_of(64);
        KeepLast {
            set,
            value: if set { rng.next_u32() } else { 0 },
        }
    }
}
impl Random for RollingHash {
    fn random(rng: &mut TestRng) -> Self {
        RollingHash {
            hash: rng.next_u64() & 0xff,
            pow: 1_000_003,
        }
    }
}
impl Random for Perm4 {
    fn random(rng: &mut TestRng) -> Self {
        const PERMS: [[u8; 4]; 24] = [
            [0, 1, 2, 3],
            [0, 1, 3, 2],
            [0, 2, 1, 3],
            [0, 2, 3, 1],
            [0, 3, 1, 2],
            [0, 3, 2, 1],
            [1, 0, 2, 3],
            [1, 0, 3, 2],
            [1, 2, 0, 3],
            [1, 2, 3, 0],
            [1, 3, 0, 2],
            [1, 3, 2, 0],
            [2, 0, 1, 3],
            [2, 0, 3, 1],
            [2, 1, 0, 3],
            [2, 1, 3, 0],
            [2, 3, 0, 1],
            [2, 3, 1, 0],
            [3, 0, 1, 2],
            [3, 0, 2, 1],
            [3, 1, 0, 2],
            [3, 1, 2, 0],
            [3, 2, 0, 1],
            [3, 2, 1, 0],
        ];
        let q = PERMS[(rng.next_u32() % 24) as usize];
        Perm4 {
            p: q[0] | (q[1] << 2) | (q[2] << 4) | (q[3] << 6),
        }
    }
}
impl Random for Affine8 {
    fn random(rng: &mut TestRng) -> Self {
        Affine8 {
            a: (rng.next_u32() as u8) | 1,
            b: rng.next_u32() as u8,
        }
    }
}
impl Random for Affine16 {
    fn random(rng: &mut TestRng) -> Self {
        Affine16 {
            a: (rng.next_u32() as u16) | 1,
            b: rng.next_u32() as u16,
        }
    }
}
impl Random for Tri {
    fn random(rng: &mut TestRng) -> Self {
        Tri {
            a: rng.next_u32() | 1,
            b: rng.next_u32(),
            c: rng.next_u32() | 1,
        }
    }
}
impl Random for Mat2w {
    fn random(rng: &mut TestRng) -> Self {
        let (a, b, c) = (rng.next_u64() | 1, rng.next_u64() & !1, rng.next_u64());
        Mat2w {
            m: [a, b, c, rng.next_u64() | 1],
        }
    }
}
impl Random for Mat3 {
    fn random(rng: &mut TestRng) -> Self {
        // Unit upper-triangular times a random lower part with even entries: det odd.
        let mut m = [0u64; 9];
        for (i, v) in m.iter_mut().enumerate() {
            let (row, col) = (i / 3, i % 3);
            *v = match row.cmp(&col) {
                std::cmp::Ordering::Equal => rng.next_u64() | 1,
                std::cmp::Ordering::Less => rng.next_u64(),
                std::cmp::Ordering::Greater => rng.next_u64() & !1,
            };
        }
        Mat3 { m }
    }
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

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1")
}

/// CSR offsets (segments + 1 entries, from 0) of segments with these lengths.
pub fn offsets_of(lengths: &[u32]) -> Vec<u32> {
    std::iter::once(0)
        .chain(lengths.iter().scan(0u32, |acc, &l| {
            *acc += l;
            Some(*acc)
        }))
        .collect()
}

/// The owner of every item (sorted segment ids) of segments with these lengths.
pub fn owners_of(lengths: &[u32]) -> Vec<u32> {
    lengths
        .iter()
        .enumerate()
        .flat_map(|(s, &l)| std::iter::repeat_n(s as u32, l as usize))
        .collect()
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
pub struct GuideDoctests;

/// The multi-GPU guide's blocks (they need reduce-cuda's feature `nccl`, which builds without
/// libnccl): `cargo test -p reduce-tests --features nccl --doc`.
#[cfg(all(doctest, feature = "nccl"))]
#[doc = include_str!("../../docs/guide/multi-gpu.md")]
pub struct MultiGpuDoctests;
