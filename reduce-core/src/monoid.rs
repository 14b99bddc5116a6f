//! The two traits every reduction is written against.

/// An associative binary operation with a two-sided identity.
///
/// `combine` must be associative: `combine(combine(a, b), c) == combine(a, combine(b, c))`.
/// It need not be commutative: every algorithm in this project keeps the left-to-right order of
/// the items unless the monoid sets [`Monoid::COMMUTATIVE`], which is a promise that
/// `combine(a, b) == combine(b, a)` for all `a`, `b` and allows order-free fast paths.
///
/// Check a hand-written or derived monoid with [`crate::laws`] (feature `proptest`).
pub trait Monoid: Copy + Send + Sync + 'static {
    /// The identity: `combine(identity(), x) == x == combine(x, identity())`.
    fn identity() -> Self;
    /// Combines `left` (the earlier items) with `right` (the later items).
    fn combine(left: Self, right: Self) -> Self;
    /// Only a promise of commutativity enables order-free kernels.
    const COMMUTATIVE: bool = false;
}

/// Plain data that may be copied byte for byte to and from a device.
///
/// # Safety
/// The type must have no pointers or references, no interior mutability, all-zero bytes must
/// be a valid value, and every byte pattern the device code produces for it must be a valid
/// value. `#[derive(Monoid)]` implements
/// it for `#[repr(C)]` structs whose fields are primitive numbers, `bool` and fixed arrays of
/// them; this crate implements it for the primitive numbers and the built-in monoids.
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

macro_rules! device_copy_primitives {
    ($($t:ty),*) => { $(unsafe impl DeviceCopy for $t {})* };
}
device_copy_primitives!(bool, u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

/// A monoid that can run on a CUDA device: it carries its own CUDA C++ text.
///
/// The text returned by [`CudaMonoid::cuda_source`] is pasted after [`crate::CUDA_PRELUDE`]
/// and before the kernel templates. It must define:
///
/// ```text
/// typedef <the item type> M;                       // same size, alignment and field offsets as Self
/// __device__ __forceinline__ M m_identity();       // Monoid::identity
/// __device__ __forceinline__ M m_combine(M l, M r);// Monoid::combine, bit for bit
/// ```
///
/// `#[derive(Monoid)]` writes it from the `identity` and `combine` expressions, with
/// `static_assert`s that the CUDA layout matches the Rust one (checked whenever NVRTC compiles it).
///
/// # Safety
/// The CUDA type `M` must have exactly the layout of `Self` and `m_combine`/`m_identity` must
/// only produce valid values of `Self`: kernels write `M` values that are read back as `Self`.
pub unsafe trait CudaMonoid: Monoid + DeviceCopy {
    /// A short name for diagnostics and kernel names (the Rust type's name).
    const CUDA_NAME: &'static str;
    /// The CUDA C++ definitions of `M`, `m_identity` and `m_combine`.
    fn cuda_source() -> String;
}
