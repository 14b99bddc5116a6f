//! Built-in monoids over the primitive numbers: [`Sum`], [`Product`], [`Min`], [`Max`].
//!
//! Each is a `#[repr(transparent)]` newtype, so a `DeviceVec<Sum<f32>>` is a buffer of `f32`.
//! Semantics, identical on the CPU and on the device, bit for bit:
//!
//! | monoid | integers | floats |
//! |---|---|---|
//! | `Sum` | wrapping `+`, identity 0, commutative | IEEE `+`, identity `-0.0` (the exact additive identity), commutative (but not associative: results depend on the algorithm's tree, deterministically) |
//! | `Product` | wrapping `*`, identity 1, commutative | IEEE `*`, identity 1.0, commutative (not associative) |
//! | `Min` | identity `MAX`, commutative | NaN-propagating (the leftmost NaN wins), else the leftmost least value (so `-0.0` vs `0.0` keeps the earlier), identity `+inf`; exactly associative, not commutative |
//! | `Max` | identity `MIN`, commutative | as `Min`, mirrored, identity `-inf` |

use crate::monoid::{CudaMonoid, DeviceCopy, Monoid};
use num_traits::{Bounded, Float, One, WrappingAdd, WrappingMul, Zero};

/// Sum of primitive numbers (wrapping for integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
#[repr(transparent)]
pub struct Sum<T>(pub T);

/// Product of primitive numbers (wrapping for integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
#[repr(transparent)]
pub struct Product<T>(pub T);

/// Minimum of primitive numbers (NaN-propagating for floats).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
#[repr(transparent)]
pub struct Min<T>(pub T);

/// Maximum of primitive numbers (NaN-propagating for floats).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
#[repr(transparent)]
pub struct Max<T>(pub T);

/// A primitive number the built-in monoids accept. Sealed: implemented for every primitive
/// integer of 8 to 64 bits (`usize` and `isize` among them, 64 bits on the 64-bit hosts CUDA
/// runs on; not `u128` or `i128`) and for `f32`, `f64`.
pub trait Primitive: DeviceCopy + PartialOrd + sealed::Sealed {
    /// The CUDA C++ spelling of the type.
    const CUDA_TYPE: &'static str;
    #[doc(hidden)]
    const IS_FLOAT: bool;
    #[doc(hidden)]
    fn add_identity() -> Self;
    #[doc(hidden)]
    fn mul_identity() -> Self;
    #[doc(hidden)]
    fn min_identity() -> Self;
    #[doc(hidden)]
    fn max_identity() -> Self;
    #[doc(hidden)]
    fn add(self, other: Self) -> Self;
    #[doc(hidden)]
    fn mul(self, other: Self) -> Self;
    #[doc(hidden)]
    fn is_nan(self) -> bool;
    #[doc(hidden)]
    fn cuda_literal(self) -> String;
    /// CUDA expression for `l + r` / `l * r` with this crate's semantics (`op` is `+` or `*`).
    #[doc(hidden)]
    fn cuda_arith(op: char) -> String;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! int_primitives {
    ($($t:ty => $cuda:literal, $via:ty, $via_cuda:literal, $suffix:literal;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Primitive for $t {
            const CUDA_TYPE: &'static str = $cuda;
            const IS_FLOAT: bool = false;
            fn add_identity() -> Self { <$t as Zero>::zero() }
            fn mul_identity() -> Self { <$t as One>::one() }
            fn min_identity() -> Self { <$t as Bounded>::max_value() }
            fn max_identity() -> Self { <$t as Bounded>::min_value() }
            fn add(self, other: Self) -> Self { WrappingAdd::wrapping_add(&self, &other) }
            fn mul(self, other: Self) -> Self { WrappingMul::wrapping_mul(&self, &other) }
            fn is_nan(self) -> bool { false }
            fn cuda_literal(self) -> String {
                // Written through the unsigned carrier so that e.g. i64::MIN is a valid literal.
                format!("(({}){}{})", $cuda, self as $via, $suffix)
            }
            fn cuda_arith(op: char) -> String {
                // Integer arithmetic wraps: compute in an unsigned type of at least 32 bits
                // (no signed overflow, no promotion to int), then convert back.
                format!("({})(({})l {op} ({})r)", $cuda, $via_cuda, $via_cuda)
            }
        }
    )*};
}

int_primitives! {
    u8 => "unsigned char", u32, "unsigned int", "u";
    i8 => "signed char", u32, "unsigned int", "u";
    u16 => "unsigned short", u32, "unsigned int", "u";
    i16 => "short", u32, "unsigned int", "u";
    u32 => "unsigned int", u32, "unsigned int", "u";
    i32 => "int", u32, "unsigned int", "u";
    u64 => "unsigned long long", u64, "unsigned long long", "ull";
    i64 => "long long", u64, "unsigned long long", "ull";
}

// CUDA runs on 64-bit hosts only, where usize and isize are CUDA's 64-bit integers. (The derive
// refuses usize fields in a user's type, whose layout it checks for any host.)
#[cfg(target_pointer_width = "64")]
int_primitives! {
    usize => "unsigned long long", u64, "unsigned long long", "ull";
    isize => "long long", u64, "unsigned long long", "ull";
}

macro_rules! float_primitives {
    ($($t:ty => $cuda:literal, $from_bits:literal;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Primitive for $t {
            const CUDA_TYPE: &'static str = $cuda;
            const IS_FLOAT: bool = true;
            fn add_identity() -> Self { <$t as Float>::neg_zero() }
            fn mul_identity() -> Self { <$t as One>::one() }
            fn min_identity() -> Self { <$t as Float>::infinity() }
            fn max_identity() -> Self { <$t as Float>::neg_infinity() }
            fn add(self, other: Self) -> Self { self + other }
            fn mul(self, other: Self) -> Self { self * other }
            fn is_nan(self) -> bool { Float::is_nan(self) }
            fn cuda_literal(self) -> String {
                // Exact bits, whatever the value (-0.0, infinities).
                format!("{}(0x{:x})", $from_bits, self.to_bits())
            }
            fn cuda_arith(op: char) -> String { format!("l {op} r") }
        }
    )*};
}

float_primitives! {
    f32 => "float", "__int_as_float";
    f64 => "double", "__longlong_as_double";
}

fn cuda_text(name: &str, ty: &str, identity: String, combine: String) -> String {
    format!(
        "// monoid {name} (built in)\n\
         typedef {ty} M;\n\
         __device__ __forceinline__ M m_identity() {{ return {identity}; }}\n\
         __device__ __forceinline__ M m_combine(M l, M r) {{ return {combine}; }}\n"
    )
}

/// NaN-propagating, leftmost-wins choice: `pick_right` says when the right operand wins
/// among two non-NaN values (`<` for Min, `>` for Max).
fn choose<T: Primitive>(l: T, r: T, right_wins: bool) -> T {
    if l.is_nan() {
        l
    } else if r.is_nan() || right_wins {
        r
    } else {
        l
    }
}

fn cuda_choose<T: Primitive>(cmp: &str) -> String {
    if T::IS_FLOAT {
        format!("(l != l) ? l : ((r != r || r {cmp} l) ? r : l)")
    } else {
        format!("(r {cmp} l) ? r : l")
    }
}

macro_rules! builtin_monoid {
    ($name:ident, $identity:ident, |$l:ident, $r:ident| $combine:expr, $commutative:expr, $cuda:expr) => {
        impl<T: Primitive> Monoid for $name<T> {
            fn identity() -> Self {
                $name(T::$identity())
            }
            fn combine(left: Self, right: Self) -> Self {
                let ($l, $r) = (left.0, right.0);
                $name($combine)
            }
            const COMMUTATIVE: bool = $commutative;
        }
        unsafe impl<T: Primitive> DeviceCopy for $name<T> {}
        unsafe impl<T: Primitive> CudaMonoid for $name<T> {
            const CUDA_NAME: &'static str = stringify!($name);
            fn cuda_source() -> String {
                cuda_text(
                    &format!("{}<{}>", stringify!($name), T::CUDA_TYPE),
                    T::CUDA_TYPE,
                    T::$identity().cuda_literal(),
                    $cuda,
                )
            }
        }
    };
}

builtin_monoid!(Sum, add_identity, |l, r| l.add(r), true, T::cuda_arith('+'));
builtin_monoid!(
    Product,
    mul_identity,
    |l, r| l.mul(r),
    true,
    T::cuda_arith('*')
);
builtin_monoid!(
    Min,
    min_identity,
    |l, r| choose(l, r, r < l),
    !T::IS_FLOAT,
    cuda_choose::<T>("<")
);
builtin_monoid!(
    Max,
    max_identity,
    |l, r| choose(l, r, r > l),
    !T::IS_FLOAT,
    cuda_choose::<T>(">")
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold;

    #[test]
    fn integer_sums_and_products_wrap() {
        assert_eq!(fold(&[Sum(250u8), Sum(10)]), Sum(4));
        assert_eq!(fold(&[Sum(i32::MAX), Sum(1)]), Sum(i32::MIN));
        assert_eq!(fold(&[Product(1u64 << 63), Product(2)]), Product(0));
    }

    #[test]
    #[cfg(target_pointer_width = "64")]
    fn pointer_sized_integers_are_cuda_64_bit_integers() {
        assert_eq!(fold(&[Sum(usize::MAX), Sum(2)]), Sum(1));
        assert_eq!(fold(&[Min(3isize), Min(isize::MIN)]), Min(isize::MIN));
        assert_eq!(<usize as Primitive>::CUDA_TYPE, "unsigned long long");
        assert_eq!(
            isize::MIN.cuda_literal(),
            "((long long)9223372036854775808ull)"
        );
    }

    #[test]
    fn float_sum_identity_is_negative_zero() {
        assert_eq!(fold(&[Sum(-0.0f32)]).0.to_bits(), (-0.0f32).to_bits());
        assert_eq!(fold::<Sum<f64>>(&[]).0.to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn float_min_max_propagate_the_leftmost_nan_and_keep_the_leftmost_tie() {
        let nan1 = f32::from_bits(0x7fc0_0001);
        let nan2 = f32::from_bits(0x7fc0_0002);
        assert_eq!(
            fold(&[Min(1.0f32), Min(nan1), Min(nan2)]).0.to_bits(),
            nan1.to_bits()
        );
        assert_eq!(
            fold(&[Min(0.0f32), Min(-0.0)]).0.to_bits(),
            0.0f32.to_bits()
        );
        assert_eq!(
            fold(&[Max(-0.0f64), Max(0.0)]).0.to_bits(),
            (-0.0f64).to_bits()
        );
        assert_eq!(fold(&[Min(3.0f32), Min(-1.0), Min(2.0)]), Min(-1.0));
        assert_eq!(fold::<Max<f32>>(&[]), Max(f32::NEG_INFINITY));
        assert_eq!(fold(&[Max(3i8), Max(-1)]), Max(3));
    }

    #[test]
    fn cuda_text_spells_identities_exactly() {
        let text = <Sum<f32> as CudaMonoid>::cuda_source();
        assert!(text.contains("typedef float M;"), "{text}");
        assert!(text.contains("__int_as_float(0x80000000)"), "{text}");
        let text = <Min<i64> as CudaMonoid>::cuda_source();
        assert!(
            text.contains("((long long)9223372036854775807ull)"),
            "{text}"
        );
        let text = <Sum<i16> as CudaMonoid>::cuda_source();
        assert!(
            text.contains("(short)((unsigned int)l + (unsigned int)r)"),
            "{text}"
        );
    }
}
