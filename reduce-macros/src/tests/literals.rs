//! Literals and constants: unsuffixed literals typed by their context, exact float
//! literals, the constants of the primitive types.

use super::*;

#[test]
fn integer_literals_take_their_type_from_the_context() {
    assert_eq!(cuda(parse_quote!(1), "u32"), "1u");
    assert_eq!(cuda(parse_quote!(1), "u64"), "1ull");
    assert_eq!(cuda(parse_quote!(1), "i32"), "1");
    assert_eq!(cuda(parse_quote!(-1), "i64"), "(-1ll)");
    assert_eq!(cuda(parse_quote!(7), "u8"), "(unsigned char)7");
    assert_eq!(cuda(parse_quote!(-7), "i8"), "(signed char)-7");
    assert_eq!(cuda(parse_quote!(7), "u16"), "(unsigned short)7");
    assert_eq!(cuda(parse_quote!(b'a'), "u8"), "(unsigned char)97");
    assert_eq!(cuda(parse_quote!(0xffu32), "u32"), "255u");
    // overflowing literals wrap, as they do in Rust with the lint allowed
    assert_eq!(cuda(parse_quote!(300), "u8"), "(unsigned char)44");
    assert_eq!(cuda(parse_quote!(-128), "i8"), "(signed char)-128");
    assert_eq!(cuda(parse_quote!(l.a + 1), "u32"), "l.a + 1u");
    assert_eq!(cuda(parse_quote!(2 * l.w), "u64"), "2ull * l.w");
    assert_eq!(cuda(parse_quote!([1, 2, 3]), "[u32; 3]"), "{1u, 2u, 3u}");
    assert_eq!(cuda(parse_quote!([7; 2]), "[u32; 2]"), "{7u, 7u}");
    // A long repeat is filled on the device, not listed (nor held by the macro item by item).
    assert_eq!(
        cuda(parse_quote!([7; 100_000_000]), "[u32; 100_000_000]"),
        "r_fill<unsigned int, 100000000>(7u)"
    );
    assert_eq!(
        cuda(parse_quote!(if l.flag { 1 } else { 2 }), "i16"),
        "l.flag ? (short)1 : (short)2"
    );
}

#[test]
fn constants() {
    assert_eq!(cuda(parse_quote!(i32::MIN), "i32"), "(-2147483647 - 1)");
    assert_eq!(
        cuda(parse_quote!(i64::MIN), "i64"),
        "(-9223372036854775807ll - 1)"
    );
    assert_eq!(
        cuda(parse_quote!(u64::MAX), "u64"),
        "18446744073709551615ull"
    );
    assert_eq!(cuda(parse_quote!(i8::MAX), "i8"), "(signed char)127");
    assert_eq!(cuda(parse_quote!(u8::BITS), "u32"), "8u");
    assert_eq!(
        cuda(parse_quote!(f32::INFINITY), "f32"),
        "r_f32_from_bits(0x7f800000u)"
    );
    assert_eq!(
        cuda(parse_quote!(f32::NEG_INFINITY), "f32"),
        "r_f32_from_bits(0xff800000u)"
    );
    assert_eq!(
        cuda(parse_quote!(f32::NAN), "f32"),
        "r_f32_from_bits(0x7fc00000u)"
    );
    assert_eq!(
        cuda(parse_quote!(f64::INFINITY), "f64"),
        "r_f64_from_bits(0x7ff0000000000000ull)"
    );
    assert_eq!(cuda(parse_quote!(f32::MAX), "f32"), "3.4028235e38f");
    assert_eq!(cuda(parse_quote!(f32::MIN), "f32"), "(-3.4028235e38f)");
    assert_eq!(
        cuda(parse_quote!(f64::EPSILON), "f64"),
        "2.220446049250313e-16"
    );
}

#[test]
fn float_literals_are_exact() {
    assert_eq!(cuda(parse_quote!(1.5), "f32"), "1.5f");
    assert_eq!(cuda(parse_quote!(1f32), "f32"), "1.0f");
    assert_eq!(cuda(parse_quote!(0.1), "f64"), "0.1");
    assert_eq!(cuda(parse_quote!(1e-45), "f32"), "1e-45f");
    assert_eq!(cuda(parse_quote!(-0.0), "f32"), "(-0.0f)");
    assert_eq!(
        cuda(parse_quote!(1e39), "f32"),
        "r_f32_from_bits(0x7f800000u)"
    );
}
