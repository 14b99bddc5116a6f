//! The two traits every reduction is written against.

/// An associative binary operation with a two-sided identity.
///
/// `combine` must be associative: `combine(combine(a, b), c) == combine(a, combine(b, c))`.
/// It need not be commutative: every algorithm in this project keeps the left-to-right order of
/// the items unless the monoid sets [`Monoid::COMMUTATIVE`], which is a promise that
/// `combine(a, b) == combine(b, a)` for all `a`, `b` and allows order-free fast paths.
///
/// Check a hand-written or derived monoid with [`crate::laws`] (feature `proptest`).
// Without the feature, `laws` is not built: the link goes to docs.rs, which builds every feature.
#[cfg_attr(
    not(feature = "proptest"),
    doc = "",
    doc = "[`crate::laws`]: https://docs.rs/reduce-core/latest/reduce_core/laws/"
)]
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
/// value. A type with padding bytes must override [`DeviceCopy::write_bytes`] so that it never
/// reads them. `#[derive(Monoid)]` and `#[derive(DeviceCopy)]` implement it for `#[repr(C)]`
/// structs whose fields are primitive numbers, `bool`, fixed arrays and other such structs
/// (padding allowed: their `write_bytes` goes field by field); this crate implements it for the
/// primitive numbers and the built-in monoids.
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {
    /// Writes this value's bytes into `out` (`size_of::<Self>()` of them), its padding bytes as
    /// zeros: the bytes a record or a hash of values holds. A padding byte of a value made on
    /// the host has no defined value, so it is never read.
    ///
    /// The default copies every byte, which is sound only for a type without padding.
    ///
    /// # Panics
    /// When `out` is not `size_of::<Self>()` bytes long.
    fn write_bytes(&self, out: &mut [u8]) {
        // SAFETY: the trait's contract: a type that keeps this default has no padding, so every
        // byte of a value is initialised.
        let bytes = unsafe {
            std::slice::from_raw_parts((self as *const Self).cast::<u8>(), size_of::<Self>())
        };
        out.copy_from_slice(bytes);
    }
}

/// The bytes of `values`, one after another, padding bytes as zeros ([`DeviceCopy::write_bytes`]).
pub fn bytes_of<M: DeviceCopy>(values: &[M]) -> Vec<u8> {
    let mut out = vec![0u8; size_of_val(values)];
    put_bytes(&mut out, values);
    out
}

/// Writes the bytes of `values` into `out` (exactly their size), one after another, padding
/// bytes as zeros.
///
/// # Panics
/// When `out` is not `size_of_val(values)` bytes long.
pub fn put_bytes<M: DeviceCopy>(out: &mut [u8], values: &[M]) {
    assert_eq!(
        out.len(),
        size_of_val(values),
        "put_bytes: the output's length"
    );
    if size_of::<M>() > 0 {
        for (v, o) in values.iter().zip(out.chunks_exact_mut(size_of::<M>())) {
            v.write_bytes(o);
        }
    }
}

macro_rules! device_copy_primitives {
    ($($t:ty),*) => { $(unsafe impl DeviceCopy for $t {})* };
}
device_copy_primitives!(bool, u8, i8, u16, i16, u32, i32, u64, i64, usize, isize, f32, f64);
// SAFETY: an array has no padding of its own; each element writes its bytes.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    fn write_bytes(&self, out: &mut [u8]) {
        put_bytes(out, self);
    }
}

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
    /// Whether the device code can fault where Rust panics: it indexes arrays with run-time
    /// indices, or divides integers by something other than a literal that is neither 0 nor
    /// -1. Every such index and division is checked on the device; an index out of
    /// bounds or a division by zero (or the operators' MIN / -1) records a fault (see
    /// [`crate::CUDA_PRELUDE`]'s `r_fault_info`) that the runtime reports as an error after the
    /// launch, which costs a synchronization, so it checks only monoids that can fault.
    const CAN_FAULT: bool = false;
    /// The CUDA C++ definitions of `M`, `m_identity` and `m_combine`.
    fn cuda_source() -> String;
}

/// A plain-data struct with a CUDA C++ definition: the structs a monoid's fields, a
/// `#[device_fn]`'s parameters or a lift's input may have. `#[derive(DeviceCopy)]` implements
/// it (and `#[derive(Monoid)]` for the monoid itself).
///
/// # Safety
/// The definition must have exactly the layout of `Self` (the derives check it with
/// `static_assert`s against `size_of`, `align_of` and `offset_of!`).
pub unsafe trait CudaStruct: DeviceCopy {
    /// Adds the CUDA definition of this struct, after those of the structs it contains.
    #[doc(hidden)]
    fn cuda_define(defs: &mut CudaDefs);
}

/// How an input item of type `X` becomes a monoid value: transform-reduce without
/// materialising the monoid values. `#[monoid(lift(X) = |x, i| ...)]` implements it; the
/// runtime reads `X` items and folds `lift(x, i)` with `i` the item's global index.
///
/// # Safety
/// `cuda_source_lifted` must define, besides the monoid, `typedef <X's CUDA type> r_in;` with
/// the layout of `X` and `M m_lift(r_in x, unsigned long long i)` computing `lift` bit for bit.
pub unsafe trait Lift<X: DeviceCopy>: CudaMonoid {
    /// The monoid value of the input item `x` at global index `index`.
    fn lift(x: X, index: u64) -> Self;
    /// Whether `m_lift` can fault (see [`CudaMonoid::CAN_FAULT`]).
    const LIFT_CAN_FAULT: bool = false;
    /// The monoid's CUDA text (as [`CudaMonoid::cuda_source`]) followed by `r_in` and `m_lift`.
    fn cuda_source_lifted() -> String;
}

/// A `#[device_fn]` function's CUDA side, implemented on a hidden marker type named like it.
#[doc(hidden)]
pub trait DeviceFn {
    /// Whether the function (or one it calls) can fault (see [`CudaMonoid::CAN_FAULT`]).
    const CAN_FAULT: bool;
    /// Adds the function's definition, after those of the structs and functions it uses.
    fn cuda_define(defs: &mut CudaDefs);
}

/// The definitions a CUDA text needs, each once, in dependency order: structs first, then
/// functions. Items are identified by type; two different items with the same CUDA name make
/// the text fail to compile with a message naming them.
#[doc(hidden)]
#[derive(Default)]
pub struct CudaDefs {
    seen: Vec<(std::any::TypeId, &'static str)>,
    structs: String,
    functions: String,
}

impl CudaDefs {
    /// Whether the item `id` named `name` must be defined now (it is not yet).
    pub fn enter(&mut self, id: std::any::TypeId, name: &'static str) -> bool {
        if self.seen.iter().any(|(i, _)| *i == id) {
            return false;
        }
        if self.seen.iter().any(|(_, n)| *n == name) {
            self.structs.push_str(&format!(
                "#error \"two different items used by this monoid are named `{name}`: rename one \
                 (the CUDA text names items by their Rust names)\"\n"
            ));
            return false;
        }
        self.seen.push((id, name));
        true
    }

    /// Adds a struct definition.
    pub fn add_struct(&mut self, text: &str) {
        self.structs.push_str(text);
    }

    /// Adds a function definition.
    pub fn add_function(&mut self, text: &str) {
        self.functions.push_str(text);
    }

    /// The definitions: structs, then functions.
    pub fn finish(&self) -> String {
        format!("{}{}", self.structs, self.functions)
    }
}
