//! Exact C++ literals: integers wrapped to their type, floats that read back to the same bits.

use crate::check::FloatVal;
use crate::types::Scalar;

/// An integer literal of type `s`, wrapped to its width as Rust does with `overflowing_literals`
/// allowed; C's own literal type always equals `s`.
pub fn int_lit(v: i128, s: Scalar) -> String {
    let bits = s.bits();
    let u = (v as u128) & ((1u128 << bits) - 1);
    let value: i128 = if s.is_signed() && (u >> (bits - 1)) & 1 == 1 {
        u as i128 - (1i128 << bits)
    } else {
        u as i128
    };
    match s {
        Scalar::U32 => format!("{value}u"),
        Scalar::U64 | Scalar::Usize => format!("{value}ull"),
        Scalar::I32 if value == i128::from(i32::MIN) => "(-2147483647 - 1)".to_owned(),
        Scalar::I32 if value < 0 => format!("({value})"),
        Scalar::I32 => value.to_string(),
        Scalar::I64 if value == i128::from(i64::MIN) => "(-9223372036854775807ll - 1)".to_owned(),
        Scalar::I64 if value < 0 => format!("({value}ll)"),
        Scalar::I64 => format!("{value}ll"),
        Scalar::U8 | Scalar::I8 | Scalar::U16 | Scalar::I16 => format!("({}){value}", s.c()),
        _ => unreachable!("not an integer type"),
    }
}

pub fn float_lit(v: &FloatVal, s: Scalar, negate: bool) -> String {
    match s {
        Scalar::F32 => {
            let x = match v {
                FloatVal::Digits(d) => d.parse::<f32>().unwrap_or(f32::NAN),
                FloatVal::F32(x) => *x,
                FloatVal::F64(x) => *x as f32,
            };
            fmt_f32(if negate { -x } else { x })
        }
        Scalar::F64 => {
            let x = match v {
                FloatVal::Digits(d) => d.parse::<f64>().unwrap_or(f64::NAN),
                FloatVal::F32(x) => f64::from(*x),
                FloatVal::F64(x) => *x,
            };
            fmt_f64(if negate { -x } else { x })
        }
        _ => unreachable!("not a float type"),
    }
}

/// Exact C++ text for an f32: Rust's shortest round-trip digits plus `f` when that text reads
/// back to the same float even through a double (so a compiler that parses via double cannot
/// round twice); a hexadecimal float otherwise; NaNs and infinities by their bits.
fn fmt_f32(x: f32) -> String {
    if !x.is_finite() {
        return format!("r_f32_from_bits(0x{:08x}u)", x.to_bits());
    }
    let s = format!("{x:?}");
    let safe = s
        .parse::<f64>()
        .is_ok_and(|d| (d as f32).to_bits() == x.to_bits());
    let text = if safe {
        format!("{s}f")
    } else {
        format!("{}f", hex_float(f64::from(x)))
    };
    if x.is_sign_negative() {
        format!("({text})")
    } else {
        text
    }
}

/// Exact C++ text for an f64: shortest round-trip digits; NaNs and infinities by their bits.
fn fmt_f64(x: f64) -> String {
    if !x.is_finite() {
        return format!("r_f64_from_bits(0x{:016x}ull)", x.to_bits());
    }
    let s = format!("{x:?}");
    if x.is_sign_negative() {
        format!("({s})")
    } else {
        s
    }
}

/// A C++17 hexadecimal floating literal (`0x1.8p+0`) for a finite f64.
fn hex_float(x: f64) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0 && mant == 0 {
        return format!("{sign}0x0p+0");
    }
    let (lead, e) = if exp == 0 {
        (0, -1022)
    } else {
        (1, exp - 1023)
    };
    let digits = format!("{mant:013x}");
    let digits = digits.trim_end_matches('0');
    let frac = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    format!("{sign}0x{lead}{frac}p{e:+}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hexadecimal_floats() {
        assert_eq!(hex_float(1.5), "0x1.8p+0");
        assert_eq!(hex_float(-0.1), "-0x1.999999999999ap-4");
        assert_eq!(hex_float(f64::from(f32::from_bits(1))), "0x1p-149");
        assert_eq!(hex_float(f64::from_bits(1)), "0x0.0000000000001p-1022");
    }

    #[test]
    fn integers_wrap_to_their_type() {
        assert_eq!(int_lit(300, Scalar::U8), "(unsigned char)44");
        assert_eq!(int_lit(-1, Scalar::U32), "4294967295u");
        assert_eq!(
            int_lit(i128::from(i32::MIN), Scalar::I32),
            "(-2147483647 - 1)"
        );
        assert_eq!(int_lit(5, Scalar::Usize), "5ull");
    }

    /// Parses what `fmt_f32` prints, the way a C++ compiler would (through a double).
    fn parse_c_f32(s: &str) -> f32 {
        let s = s.trim_start_matches('(').trim_end_matches(')');
        let (neg, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let s = s.strip_suffix('f').unwrap();
        let v = if let Some(hex) = s.strip_prefix("0x") {
            let (mant, exp) = hex.split_once('p').unwrap();
            let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
            let mut v = u64::from_str_radix(int, 16).unwrap() as f64;
            for (i, d) in frac.chars().enumerate() {
                v += f64::from(d.to_digit(16).unwrap()) * 16f64.powi(-(i as i32) - 1);
            }
            (v * 2f64.powi(exp.parse().unwrap())) as f32
        } else {
            s.parse::<f64>().unwrap() as f32
        };
        if neg {
            -v
        } else {
            v
        }
    }

    #[test]
    fn f32_text_reads_back_exactly_even_through_a_double() {
        let mut bits = 0x9e37_79b9u32;
        let specials = [
            0u32,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x3f80_0001,
            0x7f7f_ffff,
            0x8000_0001,
        ];
        for i in 0..200_000u32 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let b = specials.get(i as usize).copied().unwrap_or(bits);
            let x = f32::from_bits(b);
            if !x.is_finite() {
                continue;
            }
            let text = fmt_f32(x);
            assert_eq!(parse_c_f32(&text).to_bits(), b, "{x:?} printed as {text}");
        }
    }
}
