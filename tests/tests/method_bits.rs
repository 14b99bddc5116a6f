//! The CUDA prelude's helpers behind the derive's methods and operators give Rust's values:
//! the prelude compiled by the host C++ compiler (IEEE arithmetic, no contraction into FMAs, as
//! NVRTC compiles it with `--fmad=false`) runs
//! - every integer helper on every pair of 8-bit operands (and on random and extreme ones of 16,
//!   32 and 64 bits), each answer — the value and the fault's kind — compared with Rust's
//!   method, a panic of which is the fault (a division by zero: kind 2; the operators'
//!   `MIN / -1`: kind 3);
//! - every exact float helper on random bit patterns of every exponent, values with halves and
//!   the special values, compared bit for bit (any NaN equal to any NaN).
//!
//! The GPU runs the same text (`lang_plain`'s `Methods` and `Quotients`). Needs the emulator's
//! host compiler.

use reduce_tests::emu::{compiler, run_prelude_driver};
use reduce_tests::TestRng;
use std::fmt::Write as _;

/// The integer driver's fault hook, which keeps the kind.
const FAULT_HOOK: &str = "static unsigned long long fault_kind;\n\
                          #define R_ON_FAULT(kind, i, n) (fault_kind = (kind))";

/// The integer driver's `main` up to its dispatch (after the prelude).
const HEAD: &str = r#"
// stdin: lines "<helper> <type> <a> <b>" (a and b as 64-bit two's complement); stdout: the
// result's bits (sign-extended for a signed result) and the fault's kind.
int main() {
    char name[32], ty[8];
    long long a, b;
    while (std::scanf("%31s %7s %lld %lld", name, ty, &a, &b) == 4) {
        fault_kind = 0;
        long long r = 0;
"#;

/// One helper the driver calls on two operands of a type: (prelude name, whether it takes `b`
/// as a `u32` exponent, whether the result is the unsigned type of the width, whether the
/// result is a `u32` count or a bool).
struct Helper {
    name: &'static str,
    exponent: bool,
    result: Result_,
}

#[derive(Clone, Copy, PartialEq)]
enum Result_ {
    Same,
    Unsigned,
    U32,
}

const SIGNED: [(&str, &str, u32); 4] = [
    ("i8", "signed char", 8),
    ("i16", "short", 16),
    ("i32", "int", 32),
    ("i64", "long long", 64),
];
const UNSIGNED: [(&str, &str, u32); 4] = [
    ("u8", "unsigned char", 8),
    ("u16", "unsigned short", 16),
    ("u32", "unsigned int", 32),
    ("u64", "unsigned long long", 64),
];

fn helpers(signed: bool) -> Vec<Helper> {
    let h = |name, exponent, result| Helper {
        name,
        exponent,
        result,
    };
    let mut v = vec![
        h("div", false, Result_::Same),
        h("rem", false, Result_::Same),
        h("wdiv", false, Result_::Same),
        h("wrem", false, Result_::Same),
        h("rem_euclid", false, Result_::Same),
        h("div_euclid", false, Result_::Same),
        h("abs_diff", false, Result_::Unsigned),
        h("saturating_pow", true, Result_::Same),
        h("pow", true, Result_::Same),
        h("count_zeros", false, Result_::U32),
        h("leading_ones", false, Result_::U32),
        h("trailing_ones", false, Result_::U32),
        h("reverse_bits", false, Result_::Same),
        h("swap_bytes", false, Result_::Same),
    ];
    if signed {
        v.extend([
            h("unsigned_abs", false, Result_::Unsigned),
            h("signum", false, Result_::Same),
            h("saturating_neg", false, Result_::Same),
            h("saturating_abs", false, Result_::Same),
            h("is_positive", false, Result_::U32),
            h("is_negative", false, Result_::U32),
        ]);
    } else {
        v.push(h("is_power_of_two", false, Result_::U32));
    }
    v
}

/// Whether the helper takes one operand.
fn unary(name: &str) -> bool {
    matches!(
        name,
        "count_zeros"
            | "leading_ones"
            | "trailing_ones"
            | "reverse_bits"
            | "swap_bytes"
            | "unsigned_abs"
            | "signum"
            | "saturating_neg"
            | "saturating_abs"
            | "is_positive"
            | "is_negative"
            | "is_power_of_two"
    )
}

/// The driver's dispatch on (helper, type).
fn driver() -> String {
    let mut out = HEAD.to_string();
    for (types, signed) in [(SIGNED, true), (UNSIGNED, false)] {
        for (rust, c, bits) in types {
            let unsigned_c = UNSIGNED[(bits.trailing_zeros() - 3) as usize].1;
            for h in helpers(signed) {
                let args = if unary(h.name) {
                    format!("({c})a")
                } else if h.exponent {
                    format!("({c})a, (unsigned int)b")
                } else {
                    format!("({c})a, ({c})b")
                };
                let helper = match h.name {
                    "div" | "rem" | "wdiv" | "wrem" | "pow" => format!("r_{}_{rust}", h.name),
                    other => format!("r_{other}_{rust}"),
                };
                let value = match h.result {
                    Result_::Same => format!("(long long)({c}){helper}({args})"),
                    Result_::Unsigned => format!("(long long)({unsigned_c}){helper}({args})"),
                    Result_::U32 => format!("(long long)(unsigned int){helper}({args})"),
                };
                out += &format!(
                    "        if (!std::strcmp(name, \"{}\") && !std::strcmp(ty, \"{rust}\")) r = {value};\n",
                    h.name
                );
            }
        }
    }
    out += "        std::printf(\"%lld %llu\\n\", r, fault_kind);\n    }\n    return 0;\n}\n";
    out
}

/// Rust's answer for `helper` on `a` and `b` of type `$t` (`$u` its unsigned twin): the value
/// as the driver prints it and the fault's kind (a panic of a division: 2 by zero, 3 for MIN by
/// -1, with the value the prelude documents: 0, or MIN for the quotients).
macro_rules! rust_answer {
    ($t:ty, $u:ty, $name:expr, $a:expr, $b:expr) => {{
        let (a, b) = ($a as $t, $b as $t);
        let e = $b as u32;
        let min_by_minus_one = <$t>::MIN != 0 && a == <$t>::MIN && b as i64 == -1;
        let division = |q: bool| {
            if b == 0 {
                Some((0i64, 2u64))
            } else if min_by_minus_one {
                Some((if q { <$t>::MIN as i64 } else { 0 }, 3))
            } else {
                None
            }
        };
        let same = |v: $t| (v as i64, 0u64);
        let unsigned = |v: $u| (v as i64, 0u64);
        let count = |v: u32| (v as i64, 0u64);
        match $name {
            "div" => division(true).unwrap_or_else(|| same(a / b)),
            "rem" => division(false).unwrap_or_else(|| same(a % b)),
            "wdiv" => {
                if b == 0 {
                    (0, 2)
                } else {
                    same(a.wrapping_div(b))
                }
            }
            "wrem" => {
                if b == 0 {
                    (0, 2)
                } else {
                    same(a.wrapping_rem(b))
                }
            }
            "rem_euclid" => division(false).unwrap_or_else(|| same(a.rem_euclid(b))),
            "div_euclid" => division(true).unwrap_or_else(|| same(a.div_euclid(b))),
            "abs_diff" => unsigned(a.abs_diff(b) as $u),
            "saturating_pow" => same(a.saturating_pow(e)),
            "pow" => same(a.wrapping_pow(e)),
            "count_zeros" => count(a.count_zeros()),
            "leading_ones" => count(a.leading_ones()),
            "trailing_ones" => count(a.trailing_ones()),
            "reverse_bits" => same(a.reverse_bits()),
            "swap_bytes" => same(a.swap_bytes()),
            other => Only::only(a, other),
        }
    }};
}

/// The methods of only the signed (or only the unsigned) types.
trait Only: Copy {
    fn only(self, name: &str) -> (i64, u64);
}

macro_rules! only_signed {
    ($($t:ty),*) => {$(
        impl Only for $t {
            fn only(self, name: &str) -> (i64, u64) {
                let v = match name {
                    "unsigned_abs" => self.unsigned_abs() as i64,
                    "signum" => self.signum() as i64,
                    "saturating_neg" => self.saturating_neg() as i64,
                    "saturating_abs" => self.saturating_abs() as i64,
                    "is_positive" => self.is_positive() as i64,
                    "is_negative" => self.is_negative() as i64,
                    other => panic!("no {other}"),
                };
                (v, 0)
            }
        }
    )*};
}
macro_rules! only_unsigned {
    ($($t:ty),*) => {$(
        impl Only for $t {
            fn only(self, name: &str) -> (i64, u64) {
                match name {
                    "is_power_of_two" => (self.is_power_of_two() as i64, 0),
                    other => panic!("no {other}"),
                }
            }
        }
    )*};
}
only_signed!(i8, i16, i32, i64);
only_unsigned!(u8, u16, u32, u64);

/// Rust's answer, as the driver prints it: the value (sign-extended for a signed result) and the
/// fault's kind.
fn answer(ty: &str, name: &str, a: i64, b: i64) -> (i64, u64) {
    match ty {
        "i8" => rust_answer!(i8, u8, name, a, b),
        "i16" => rust_answer!(i16, u16, name, a, b),
        "i32" => rust_answer!(i32, u32, name, a, b),
        "i64" => rust_answer!(i64, u64, name, a, b),
        "u8" => rust_answer!(u8, u8, name, a, b),
        "u16" => rust_answer!(u16, u16, name, a, b),
        "u32" => rust_answer!(u32, u32, name, a, b),
        _ => rust_answer!(u64, u64, name, a, b),
    }
}

/// Every pair of 8-bit operands; for the wider types their extremes, small values and random
/// ones.
fn operands(bits: u32, rng: &mut TestRng) -> Vec<(i64, i64)> {
    if bits == 8 {
        return (-128i64..128)
            .flat_map(|a| (-128i64..128).map(move |b| (a, b)))
            .collect();
    }
    let edges: Vec<i64> = vec![
        0,
        1,
        -1,
        2,
        -2,
        3,
        7,
        -7,
        1 << (bits - 1),
        (1 << (bits - 1)) - 1,
        -(1 << (bits - 1)),
        -((1 << (bits - 1)) - 1),
        i64::MIN,
        i64::MAX,
    ];
    let mut v: Vec<(i64, i64)> = edges
        .iter()
        .flat_map(|&a| edges.iter().map(move |&b| (a, b)))
        .collect();
    v.extend((0..20_000).map(|k| {
        let (a, b) = (rng.next_u64() as i64, rng.next_u64() as i64);
        // small operands too: most divisions of random 64-bit values are 0
        match k % 3 {
            0 => (a, b),
            1 => (a, b % 97),
            _ => (a % 100_000, b % 300),
        }
    }));
    v
}

#[test]
fn integer_helpers_are_rusts_and_fault_where_rust_panics() {
    let Some(cxx) = compiler() else { return };
    let mut rng = TestRng::new(0x1_0b17);
    // The driver's input, and Rust's answers in the same order (kept small: millions of cases).
    let (mut input, mut want) = (String::new(), Vec::new());
    for (types, signed) in [(SIGNED, true), (UNSIGNED, false)] {
        for (ty, _, bits) in types {
            let pairs = operands(bits, &mut rng);
            for h in helpers(signed) {
                let mut seen = std::collections::HashSet::new();
                for &(a, b) in &pairs {
                    // exponents up to 69, as the derive's users write them
                    let b = if h.exponent { b.rem_euclid(70) } else { b };
                    let (a, b) = if unary(h.name) { (a, 0) } else { (a, b) };
                    if seen.insert((a, b)) {
                        let _ = writeln!(input, "{} {ty} {a} {b}", h.name);
                        want.push(answer(ty, h.name, a, b));
                    }
                }
            }
        }
    }
    let lines: Vec<String> = input.lines().map(str::to_string).collect();
    let output = run_prelude_driver(&cxx, "int-bits", FAULT_HOOK, &driver(), input);
    let got: Vec<(i64, u64)> = output
        .lines()
        .map(|l| {
            let (v, k) = l.split_once(' ').unwrap();
            (v.parse().unwrap(), k.parse().unwrap())
        })
        .collect();
    assert_eq!(got.len(), want.len(), "the driver answered every case");
    let wrong: Vec<String> = (0..want.len())
        .filter(|&i| got[i] != want[i])
        .take(10)
        .map(|i| format!("{}: prelude {:?}, Rust {:?}", lines[i], got[i], want[i]))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} cases:\n{}",
        want.len(),
        wrong.join("\n")
    );
}

/// The float driver: lines "<helper> <f32|f64> <bits of x> <bits of y>", answers the result's
/// bits (a bool as 0 or 1).
const FLOAT_DRIVER: &str = r#"
#define R_FLOAT_CASES(F, S)                                                          \
    if (!std::strcmp(name, "floor")) r = r_##S##_bits(r_floor_##S(x));              \
    if (!std::strcmp(name, "ceil")) r = r_##S##_bits(r_ceil_##S(x));                \
    if (!std::strcmp(name, "trunc")) r = r_##S##_bits(r_trunc_##S(x));              \
    if (!std::strcmp(name, "round")) r = r_##S##_bits(r_round_##S(x));              \
    if (!std::strcmp(name, "round_ties_even")) r = r_##S##_bits(r_round_ties_even_##S(x)); \
    if (!std::strcmp(name, "fract")) r = r_##S##_bits(r_fract_##S(x));              \
    if (!std::strcmp(name, "signum")) r = r_##S##_bits(r_signum_##S(x));            \
    if (!std::strcmp(name, "copysign")) r = r_##S##_bits(r_copysign_##S(x, y));     \
    if (!std::strcmp(name, "clamp")) r = r_##S##_bits(r_clamp_##S(x, (F)-2.5, (F)100)); \
    if (!std::strcmp(name, "rem_euclid")) r = r_##S##_bits(r_rem_euclid_##S(x, y)); \
    if (!std::strcmp(name, "div_euclid")) r = r_##S##_bits(r_div_euclid_##S(x, y)); \
    if (!std::strcmp(name, "is_finite")) r = r_is_finite_##S(x);                    \
    if (!std::strcmp(name, "is_infinite")) r = r_is_infinite_##S(x);                \
    if (!std::strcmp(name, "is_sign_negative")) r = r_is_sign_negative_##S(x);      \
    if (!std::strcmp(name, "is_sign_positive")) r = r_is_sign_positive_##S(x);
int main() {
    char name[32], ty[8];
    unsigned long long a, b;
    while (std::scanf("%31s %7s %llx %llx", name, ty, &a, &b) == 4) {
        unsigned long long r = 0;
        if (!std::strcmp(ty, "f32")) {
            const float x = r_f32_from_bits((unsigned int)a), y = r_f32_from_bits((unsigned int)b);
            R_FLOAT_CASES(float, f32)
        } else {
            const double x = r_f64_from_bits(a), y = r_f64_from_bits(b);
            R_FLOAT_CASES(double, f64)
        }
        std::printf("%llx\n", r);
    }
    return 0;
}
"#;

const FLOAT_HELPERS: [&str; 15] = [
    "floor",
    "ceil",
    "trunc",
    "round",
    "round_ties_even",
    "fract",
    "signum",
    "copysign",
    "clamp",
    "rem_euclid",
    "div_euclid",
    "is_finite",
    "is_infinite",
    "is_sign_negative",
    "is_sign_positive",
];

/// Rust's answer for a float helper on `x` and `y` of type `$t`: the result's bits, NaN as
/// `None` (any NaN matches).
macro_rules! float_answer {
    ($t:ty, $name:expr, $x:expr, $y:expr) => {{
        let (x, y): ($t, $t) = ($x, $y);
        let float = |v: $t| (!v.is_nan()).then(|| v.to_bits() as u64);
        let flag = |b: bool| Some(b as u64);
        match $name {
            "floor" => float(x.floor()),
            "ceil" => float(x.ceil()),
            "trunc" => float(x.trunc()),
            "round" => float(x.round()),
            "round_ties_even" => float(x.round_ties_even()),
            "fract" => float(x.fract()),
            "signum" => float(x.signum()),
            "copysign" => float(x.copysign(y)),
            "clamp" => float(x.clamp(-2.5, 100.0)),
            "rem_euclid" => float(x.rem_euclid(y)),
            "div_euclid" => float(x.div_euclid(y)),
            "is_finite" => flag(x.is_finite()),
            "is_infinite" => flag(x.is_infinite()),
            "is_sign_negative" => flag(x.is_sign_negative()),
            _ => flag(x.is_sign_positive()),
        }
    }};
}

#[test]
fn float_helpers_are_rusts_bit_for_bit() {
    let Some(cxx) = compiler() else { return };
    let mut rng = TestRng::new(0xf10a7);
    let f32s: Vec<f32> = (0..40_000)
        .map(|i| match i % 3 {
            0 => f32::from_bits(rng.next_u32()),
            // halves, quarters and small integers
            1 => (rng.next_u32() % 4000) as f32 / 4.0 - 500.0,
            _ => (rng.next_u32() % 2_000_000) as f32 / 1000.0 - 1000.0,
        })
        .chain([
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ])
        .chain([f32::MIN_POSITIVE, f32::MAX, f32::from_bits(1), 8388609.0])
        .collect();
    let f64s: Vec<f64> = (0..40_000)
        .map(|i| match i % 3 {
            0 => f64::from_bits(rng.next_u64()),
            1 => (rng.next_u64() % 4000) as f64 / 4.0 - 500.0,
            _ => (rng.next_u64() % 2_000_000) as f64 / 1000.0 - 1000.0,
        })
        .chain([
            0.0,
            -0.0,
            0.5,
            -0.5,
            2.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
        ])
        .chain([f64::from_bits(1), 4503599627370497.0])
        .collect();
    let (mut input, mut want) = (String::new(), Vec::new());
    for name in FLOAT_HELPERS {
        for (k, &x) in f32s.iter().enumerate() {
            let y = f32s[(k * 7919 + 13) % f32s.len()];
            let _ = writeln!(input, "{name} f32 {:x} {:x}", x.to_bits(), y.to_bits());
            want.push(float_answer!(f32, name, x, y));
        }
        for (k, &x) in f64s.iter().enumerate() {
            let y = f64s[(k * 7919 + 13) % f64s.len()];
            let _ = writeln!(input, "{name} f64 {:x} {:x}", x.to_bits(), y.to_bits());
            want.push(float_answer!(f64, name, x, y));
        }
    }
    let lines: Vec<String> = input.lines().map(str::to_string).collect();
    let output = run_prelude_driver(&cxx, "float-bits", "", FLOAT_DRIVER, input);
    let got: Vec<u64> = (output.lines())
        .map(|l| u64::from_str_radix(l, 16).unwrap())
        .collect();
    assert_eq!(got.len(), want.len(), "the driver answered every case");
    let nan = |ty: &str, bits: u64| match ty {
        "f32" => f32::from_bits(bits as u32).is_nan(),
        _ => f64::from_bits(bits).is_nan(),
    };
    let wrong: Vec<String> = (0..want.len())
        .filter(|&i| match want[i] {
            Some(w) => got[i] != w,
            None => !nan(lines[i].split(' ').nth(1).unwrap(), got[i]),
        })
        .take(10)
        .map(|i| format!("{}: prelude {:x}, Rust {:x?}", lines[i], got[i], want[i]))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} cases:\n{}",
        want.len(),
        wrong.join("\n")
    );
}
