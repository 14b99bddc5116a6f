//! Operators, methods and casts: wrapping integer arithmetic, masked shift amounts, floats
//! through the IEEE helpers, Rust's `as` rules.

use super::*;

#[test]
fn integer_arithmetic_wraps() {
    assert_eq!(
        cuda(parse_quote!(l.a * r.a + l.a), "u32"),
        "(l.a * r.a) + l.a"
    );
    assert_eq!(cuda(parse_quote!(l.b + r.b), "i32"), "r_add_i32(l.b, r.b)");
    assert_eq!(
        cuda(parse_quote!(l.q.wrapping_mul(r.q)), "i64"),
        "r_mul_i64(l.q, r.q)"
    );
    assert_eq!(cuda(parse_quote!(l.c - r.c), "u8"), "r_sub_u8(l.c, r.c)");
    assert_eq!(
        cuda(parse_quote!(l.h.wrapping_neg()), "i16"),
        "r_neg_i16(l.h)"
    );
    assert_eq!(cuda(parse_quote!(-l.b), "i32"), "r_neg_i32(l.b)");
    // A division by a value that may be 0 is the prelude's checked one (a fault where Rust
    // panics); by a literal other than 0 and -1 it is C's.
    assert_eq!(
        cuda(parse_quote!(l.a / r.a % 3), "u32"),
        "r_div_u32(l.a, r.a) % 3u"
    );
    assert_eq!(cuda(parse_quote!(l.a / 7), "u32"), "l.a / 7u");
    assert_eq!(
        cuda(parse_quote!(l.w.wrapping_rem(r.w)), "u64"),
        "r_wrem_u64(l.w, r.w)"
    );
    assert_eq!(
        cuda(parse_quote!(l.b.wrapping_div(-1)), "i32"),
        "r_wdiv_i32(l.b, (-1))"
    );
    assert_eq!(cuda(parse_quote!(l.b / r.b), "i32"), "r_div_i32(l.b, r.b)");
    // float division through the IEEE intrinsics (NVRTC folds `(c / c) != (c / c)` otherwise)
    assert_eq!(cuda(parse_quote!(l.x / r.x), "f32"), "__fdiv_rn(l.x, r.x)");
    assert_eq!(cuda(parse_quote!(l.y / r.y), "f64"), "__ddiv_rn(l.y, r.y)");
    assert_eq!(
        cuda(parse_quote!(l.c & r.c), "u8"),
        "(unsigned char)(l.c & r.c)"
    );
    assert_eq!(cuda(parse_quote!(!l.c), "u8"), "(unsigned char)~l.c");
    assert_eq!(cuda(parse_quote!(!l.a), "u32"), "~l.a");
    assert_eq!(cuda(parse_quote!(l.w ^ r.w), "u64"), "l.w ^ r.w");
    assert_eq!(
        cuda(parse_quote!(l.a.rotate_left(3)), "u32"),
        "r_rotl_u32(l.a, 3u)"
    );
    // Bit counts of any integer type are u32, from the prelude's helpers.
    assert_eq!(
        cuda(parse_quote!(l.a.count_ones()), "u32"),
        "r_popc_u32(l.a)"
    );
    assert_eq!(
        cuda(
            parse_quote!(l.c.leading_zeros() + l.a.trailing_zeros()),
            "u32"
        ),
        "r_clz_u8(l.c) + r_ctz_u32(l.a)"
    );
    let e = error(parse_quote!(l.x.count_ones()), "u32");
    assert!(e.contains("not a method of `f32`"), "{e}");
}

#[test]
fn shift_amounts_are_masked() {
    assert_eq!(cuda(parse_quote!(l.a << 33), "u32"), "l.a << 1");
    assert_eq!(cuda(parse_quote!(l.b >> 40), "i32"), "l.b >> 8");
    assert_eq!(cuda(parse_quote!(l.b << 3), "i32"), "r_shl_i32(l.b, 3)");
    assert_eq!(cuda(parse_quote!(l.c << 9), "u8"), "r_shl_u8(l.c, 9)");
    assert_eq!(cuda(parse_quote!(l.w >> r.c), "u64"), "r_shr_u64(l.w, r.c)");
    assert_eq!(
        cuda(parse_quote!(l.a.wrapping_shl(r.a)), "u32"),
        "r_shl_u32(l.a, r.a)"
    );
}

#[test]
fn floats() {
    assert_eq!(
        cuda(parse_quote!(l.x * r.x + 1.0), "f32"),
        "(l.x * r.x) + 1.0f"
    );
    assert_eq!(cuda(parse_quote!(l.x.min(r.x)), "f32"), "fminf(l.x, r.x)");
    assert_eq!(cuda(parse_quote!(l.y.max(r.y)), "f64"), "fmax(l.y, r.y)");
    assert_eq!(
        cuda(parse_quote!(f32::max(l.x, 0.0)), "f32"),
        "fmaxf(l.x, 0.0f)"
    );
    assert_eq!(
        cuda(parse_quote!(l.x.mul_add(2.0, r.x)), "f32"),
        "fmaf(l.x, 2.0f, r.x)"
    );
    assert_eq!(
        cuda(parse_quote!(l.y.sqrt().abs()), "f64"),
        "fabs(sqrt(l.y))"
    );
    assert_eq!(cuda(parse_quote!(l.x % r.x), "f32"), "fmodf(l.x, r.x)");
    assert_eq!(cuda(parse_quote!(-l.x), "f32"), "-l.x");
    assert_eq!(cuda(parse_quote!(l.x.is_nan()), "bool"), "r_isnan(l.x)");
    // float comparisons through the prelude's r_f<op> (NVVM folds some NaN comparisons)
    assert_eq!(cuda(parse_quote!(l.x < r.x), "bool"), "r_flt(l.x, r.x)");
    assert_eq!(cuda(parse_quote!(l.y == r.y), "bool"), "r_feq(l.y, r.y)");
    assert_eq!(
        cuda(parse_quote!(l.a.min(r.a)), "u32"),
        "r_min_u32(l.a, r.a)"
    );
    assert_eq!(cuda(parse_quote!(l.h.abs()), "i16"), "r_abs_i16(l.h)");
}

#[test]
fn casts() {
    assert_eq!(cuda(parse_quote!(l.x as i32), "i32"), "r_f32_as_i32(l.x)");
    assert_eq!(cuda(parse_quote!(l.y as u8), "u8"), "r_f64_as_u8(l.y)");
    assert_eq!(cuda(parse_quote!(l.a as f32), "f32"), "(float)l.a");
    assert_eq!(cuda(parse_quote!(l.y as f32), "f32"), "(float)l.y");
    assert_eq!(cuda(parse_quote!(l.w as u32), "u32"), "(unsigned int)l.w");
    assert_eq!(
        cuda(parse_quote!(l.flag as u8), "u8"),
        "(unsigned char)l.flag"
    );
    assert_eq!(cuda(parse_quote!(l.a as u32), "u32"), "l.a");
    // rustc: a literal cast to an integer type has that type; otherwise i32 / f64
    assert_eq!(cuda(parse_quote!(-1 as i8), "i8"), "(signed char)-1");
    assert_eq!(cuda(parse_quote!(2 as f32), "f32"), "(float)2");
    assert_eq!(cuda(parse_quote!(1.5 as u32), "u32"), "r_f64_as_u32(1.5)");
    assert_eq!(cuda(parse_quote!(0.1 as f32), "f32"), "0.1f");
}

#[test]
fn exact_float_methods() {
    assert_eq!(cuda(parse_quote!(l.x.floor()), "f32"), "r_floor_f32(l.x)");
    assert_eq!(
        cuda(parse_quote!(f64::round_ties_even(l.y)), "f64"),
        "r_round_ties_even_f64(l.y)"
    );
    assert_eq!(
        cuda(parse_quote!(l.x.copysign(r.x)), "f32"),
        "r_copysign_f32(l.x, r.x)"
    );
    // `recip` is the division `1.0 / x`, through the same IEEE intrinsic as `/`.
    assert_eq!(
        cuda(parse_quote!(l.y.recip()), "f64"),
        "__ddiv_rn(1.0, l.y)"
    );
    assert_eq!(
        cuda(
            parse_quote!(l.x.is_finite() && !l.y.is_sign_negative()),
            "bool"
        ),
        "r_is_finite_f32(l.x) && (!r_is_sign_negative_f64(l.y))"
    );
    // to_bits gives the unsigned type of the float's width; from_bits takes it back.
    assert_eq!(
        cuda(parse_quote!(l.x.to_bits()), "u32"),
        "r_to_bits_f32(l.x)"
    );
    assert_eq!(
        cuda(parse_quote!(f64::from_bits(l.w ^ 1)), "f64"),
        "r_f64_from_bits(l.w ^ 1ull)"
    );
    assert!(error(parse_quote!(l.x.to_bits()), "u64").contains("expected `u64`"));
    assert!(error(parse_quote!(f32::from_bits(l.w)), "f32").contains("expected `u32`"));
    assert!(error(parse_quote!(l.a.floor()), "u32").contains("not a method of `u32`"));
}

#[test]
fn more_integer_methods() {
    // abs_diff and unsigned_abs give the unsigned type of the same width.
    assert_eq!(
        cuda(parse_quote!(l.h.abs_diff(r.h)), "u16"),
        "r_abs_diff_i16(l.h, r.h)"
    );
    assert_eq!(
        cuda(parse_quote!(l.q.unsigned_abs()), "u64"),
        "r_unsigned_abs_i64(l.q)"
    );
    assert!(error(parse_quote!(l.b.abs_diff(r.b)), "i32").contains("expected `i32`"));
    assert_eq!(
        cuda(parse_quote!(l.c.reverse_bits() ^ l.c.swap_bytes()), "u8"),
        "(unsigned char)(r_reverse_bits_u8(l.c) ^ r_swap_bytes_u8(l.c))"
    );
    assert_eq!(
        cuda(parse_quote!(l.w.leading_ones() + l.b.count_zeros()), "u32"),
        "r_leading_ones_u64(l.w) + r_count_zeros_i32(l.b)"
    );
    assert_eq!(
        cuda(parse_quote!(l.b.wrapping_abs().saturating_pow(3)), "i32"),
        "r_saturating_pow_i32(r_abs_i32(l.b), 3u)"
    );
    assert_eq!(
        cuda(parse_quote!(l.a.wrapping_pow(r.a)), "u32"),
        "r_pow_u32(l.a, r.a)"
    );
    // Rust has them only on signed (signum, saturating_neg) or unsigned (is_power_of_two) types.
    assert_eq!(cuda(parse_quote!(l.h.signum()), "i16"), "r_signum_i16(l.h)");
    assert!(error(parse_quote!(l.a.signum()), "u32").contains("not a method of `u32`"));
    assert!(error(parse_quote!(l.a.saturating_neg()), "u32").contains("not a method"));
    assert!(error(parse_quote!(l.b.is_power_of_two()), "bool").contains("not a method of `i32`"));
    assert_eq!(
        cuda(parse_quote!(l.w.is_power_of_two()), "bool"),
        "r_is_power_of_two_u64(l.w)"
    );
}

#[test]
fn clamp_takes_literal_bounds_in_order() {
    assert_eq!(
        cuda(parse_quote!(l.x.clamp(-1.0, f32::INFINITY)), "f32"),
        "r_clamp_f32(l.x, (-1.0f), r_f32_from_bits(0x7f800000u))"
    );
    assert_eq!(
        cuda(parse_quote!(l.b.clamp(-5, 5)), "i32"),
        "r_clamp_i32(l.b, (-5), 5)"
    );
    let e = error(parse_quote!(l.b.clamp(r.b, 5)), "i32");
    assert!(e.contains("needs literal bounds"), "{e}");
    let e = error(parse_quote!(l.x.clamp(1.0, -1.0)), "f32");
    assert!(e.contains("out of order"), "{e}");
    let e = error(parse_quote!(l.y.clamp(0.0, f64::NAN)), "f64");
    assert!(e.contains("out of order (or NaN)"), "{e}");
}

#[test]
fn euclid_sign_tests_conversions_and_float_constants() {
    assert_eq!(
        cuda(parse_quote!(l.b.rem_euclid(r.b)), "i32"),
        "r_rem_euclid_i32(l.b, r.b)"
    );
    assert_eq!(
        cuda(parse_quote!(l.x.div_euclid(2.5)), "f32"),
        "r_div_euclid_f32(l.x, 2.5f)"
    );
    assert_eq!(
        cuda(parse_quote!(l.q.is_negative()), "bool"),
        "r_is_negative_i64(l.q)"
    );
    assert!(error(parse_quote!(l.a.is_positive()), "bool").contains("not a method of `u32`"));
    // Rust's lossless `From` conversions are casts; a lossy one is Rust's error too.
    assert_eq!(
        cuda(parse_quote!(u64::from(l.a)), "u64"),
        "(unsigned long long)l.a"
    );
    assert_eq!(
        cuda(parse_quote!(f64::from(l.flag)), "f64"),
        "(double)((unsigned char)l.flag)"
    );
    assert_eq!(cuda(parse_quote!(i32::from(l.b)), "i32"), "l.b");
    let e = error(parse_quote!(u32::from(l.w)), "u32");
    assert!(e.contains("no `From<u64>` for `u32`"), "{e}");
    let e = error(parse_quote!(u64::from(7)), "u64");
    assert!(e.contains("add a suffix"), "{e}");
    // std's float constants are their values.
    assert_eq!(
        cuda(parse_quote!(l.x * std::f32::consts::PI), "f32"),
        "l.x * 3.1415927f"
    );
    let e = error(parse_quote!(core::f64::consts::PIE), "f64");
    assert!(e.contains("unknown constant `PIE`"), "{e}");
}

#[test]
fn literals_are_judged_as_their_type_holds_them() {
    // An overflowing literal wraps (rustc with `overflowing_literals` allowed): 4294967296u32 is
    // 0, a division by it the checked one, never C's `/ 0`.
    assert_eq!(
        cuda(parse_quote!(l.a / 4294967296u32), "u32"),
        "r_div_u32(l.a, 0u)"
    );
    assert_eq!(cuda(parse_quote!(l.a / 4294967297u32), "u32"), "l.a / 1u");
    // 64-bit bounds are compared exactly, not as doubles.
    let e = error(
        parse_quote!(l.q.clamp(9007199254740993, 9007199254740992)),
        "i64",
    );
    assert!(e.contains("out of order"), "{e}");
    let e = error(parse_quote!(l.h.clamp(100i16, 65535i16)), "i16");
    assert!(e.contains("out of order"), "{e}");
}
