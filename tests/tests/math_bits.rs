//! The CUDA prelude's elementary functions (`r_exp_f64`, `r_powf_f32`, ...) give the bits of
//! `reduce_core::math` on every input tried: the prelude compiled by the host C++ compiler
//! (IEEE-754 double and float, no contraction into FMAs: what NVRTC compiles with
//! `--fmad=false`) runs each function on random bit patterns of every exponent, dense sweeps and
//! the special values, and its results are compared bit for bit with the Rust routines. The GPU
//! runs the same text (`lang_math`). Also the integer helpers `r_pow_*` and `r_sat_*` against
//! Rust's `wrapping_pow` and `saturating_*`. Needs the emulator's host compiler.

use reduce_core::math::{self, Math};
use reduce_tests::emu::{compiler, run_prelude_driver};
use reduce_tests::TestRng;

/// The driver's `main` (after the prelude).
const DRIVER: &str = r#"
// stdin: lines "f64 <name> <bits> <bits2>", "f32 <name> <bits> <bits2>", "int <name> <a> <b>"
// stdout: result bits, one line each.
int main() {
    char kind[8], name[16];
    while (std::scanf("%7s %15s", kind, name) == 2) {
        if (!std::strcmp(kind, "f64")) {
            unsigned long long b, c; std::scanf("%llx %llx", &b, &c);
            const double x = r_f64_from_bits(b), z = r_f64_from_bits(c);
            double y = 0;
            if (!std::strcmp(name, "exp")) y = r_exp_f64(x);
            else if (!std::strcmp(name, "exp2")) y = r_exp2_f64(x);
            else if (!std::strcmp(name, "ln")) y = r_ln_f64(x);
            else if (!std::strcmp(name, "log2")) y = r_log2_f64(x);
            else if (!std::strcmp(name, "log10")) y = r_log10_f64(x);
            else if (!std::strcmp(name, "tanh")) y = r_tanh_f64(x);
            else if (!std::strcmp(name, "ln_1p")) y = r_ln_1p_f64(x);
            else if (!std::strcmp(name, "exp_m1")) y = r_exp_m1_f64(x);
            else if (!std::strcmp(name, "powf")) y = r_powf_f64(x, z);
            else if (!std::strcmp(name, "powi")) y = r_powi_f64(x, (int)c);
            std::printf("%llx\n", r_f64_bits(y));
        } else if (!std::strcmp(kind, "f32")) {
            unsigned int b, c; std::scanf("%x %x", &b, &c);
            const float x = r_f32_from_bits(b), z = r_f32_from_bits(c);
            float y = 0;
            if (!std::strcmp(name, "exp")) y = r_exp_f32(x);
            else if (!std::strcmp(name, "exp2")) y = r_exp2_f32(x);
            else if (!std::strcmp(name, "ln")) y = r_ln_f32(x);
            else if (!std::strcmp(name, "log2")) y = r_log2_f32(x);
            else if (!std::strcmp(name, "log10")) y = r_log10_f32(x);
            else if (!std::strcmp(name, "tanh")) y = r_tanh_f32(x);
            else if (!std::strcmp(name, "ln_1p")) y = r_ln_1p_f32(x);
            else if (!std::strcmp(name, "exp_m1")) y = r_exp_m1_f32(x);
            else if (!std::strcmp(name, "powf")) y = r_powf_f32(x, z);
            else if (!std::strcmp(name, "powi")) y = r_powi_f32(x, (int)c);
            std::printf("%x\n", r_f32_bits(y));
        } else {
            long long a, b; std::scanf("%lld %lld", &a, &b);
            long long r = 0;
            if (!std::strcmp(name, "pow_i32")) r = r_pow_i32((int)a, (unsigned int)b);
            else if (!std::strcmp(name, "pow_u8")) r = r_pow_u8((unsigned char)a, (unsigned int)b);
            else if (!std::strcmp(name, "pow_i64")) r = r_pow_i64(a, (unsigned int)b);
            else if (!std::strcmp(name, "sadd_i8")) r = r_sat_add_i8((signed char)a, (signed char)b);
            else if (!std::strcmp(name, "ssub_i8")) r = r_sat_sub_i8((signed char)a, (signed char)b);
            else if (!std::strcmp(name, "smul_i8")) r = r_sat_mul_i8((signed char)a, (signed char)b);
            else if (!std::strcmp(name, "sadd_u16")) r = r_sat_add_u16((unsigned short)a, (unsigned short)b);
            else if (!std::strcmp(name, "ssub_u16")) r = r_sat_sub_u16((unsigned short)a, (unsigned short)b);
            else if (!std::strcmp(name, "smul_u16")) r = r_sat_mul_u16((unsigned short)a, (unsigned short)b);
            else if (!std::strcmp(name, "sadd_i64")) r = r_sat_add_i64(a, b);
            else if (!std::strcmp(name, "ssub_i64")) r = r_sat_sub_i64(a, b);
            else if (!std::strcmp(name, "smul_i64")) r = r_sat_mul_i64(a, b);
            else if (!std::strcmp(name, "smul_u64")) r = (long long)r_sat_mul_u64((unsigned long long)a, (unsigned long long)b);
            else if (!std::strcmp(name, "sadd_u64")) r = (long long)r_sat_add_u64((unsigned long long)a, (unsigned long long)b);
            std::printf("%lld\n", r);
        }
    }
    return 0;
}
"#;

/// A function of one float, by the name the driver knows it by.
type Named<F> = (&'static str, fn(F) -> F);

/// (input line, expected output line) pairs.
fn cases() -> Vec<(String, String)> {
    let mut g = TestRng::new(0x51f1_5eed);
    let mut out = Vec::new();
    let f64s: Vec<f64> = (0..24_000)
        .map(|i| match i % 6 {
            0 | 2 | 4 => f64::from_bits(g.next_u64()),
            // (-1, 1): ln_1p's and exp_m1's own ranges
            5 => (g.next_u64() % 2_000_000) as f64 / 1_000_000.0 - 0.999_999,
            _ => (g.next_u64() % 2_000_000) as f64 / 1000.0 - 1000.0,
        })
        .chain([
            0.0,
            -0.0,
            1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::from_bits(1),
        ])
        .collect();
    let funcs64: [Named<f64>; 8] = [
        ("exp", math::exp),
        ("exp2", math::exp2),
        ("ln", math::ln),
        ("log2", math::log2),
        ("log10", math::log10),
        ("tanh", math::tanh),
        ("ln_1p", math::ln_1p),
        ("exp_m1", math::exp_m1),
    ];
    for (name, f) in funcs64 {
        for &x in &f64s {
            out.push((
                format!("f64 {name} {:x} 0", x.to_bits()),
                format!("{:x}", f(x).to_bits()),
            ));
        }
    }
    for (k, &x) in f64s.iter().enumerate() {
        let y = f64s[(k * 7919) % f64s.len()] / 64.0;
        let y = if k % 3 == 0 { y.round() } else { y };
        out.push((
            format!("f64 powf {:x} {:x}", x.to_bits(), y.to_bits()),
            format!("{:x}", Math::powf(x, y).to_bits()),
        ));
        let n = (g.next_u64() % 200) as i32 - 100;
        out.push((
            format!("f64 powi {:x} {:x}", x.to_bits(), n as u32 as u64),
            format!("{:x}", Math::powi(x, n).to_bits()),
        ));
    }
    let f32s: Vec<f32> = (0..24_000)
        .map(|i| match i % 6 {
            0 | 2 | 4 => f32::from_bits(g.next_u64() as u32),
            5 => (g.next_u64() % 2_000_000) as f32 / 1_000_000.0 - 0.999_999,
            _ => (g.next_u64() % 200_000) as f32 / 1000.0 - 100.0,
        })
        .chain([
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ])
        .collect();
    let funcs32: [Named<f32>; 8] = [
        ("exp", Math::exp),
        ("exp2", Math::exp2),
        ("ln", Math::ln),
        ("log2", Math::log2),
        ("log10", Math::log10),
        ("tanh", Math::tanh),
        ("ln_1p", Math::ln_1p),
        ("exp_m1", Math::exp_m1),
    ];
    for (name, f) in funcs32 {
        for &x in &f32s {
            out.push((
                format!("f32 {name} {:x} 0", x.to_bits()),
                format!("{:x}", f(x).to_bits()),
            ));
        }
    }
    for (k, &x) in f32s.iter().enumerate() {
        let y = f32s[(k * 7919) % f32s.len()];
        let y = if k % 3 == 0 { y.round() } else { y };
        out.push((
            format!("f32 powf {:x} {:x}", x.to_bits(), y.to_bits()),
            format!("{:x}", x.powf_exact(y).to_bits()),
        ));
        let n = (g.next_u64() % 200) as i32 - 100;
        out.push((
            format!("f32 powi {:x} {:x}", x.to_bits(), n as u32),
            format!("{:x}", Math::powi(x, n).to_bits()),
        ));
    }
    for _ in 0..20_000 {
        let (a, b) = (g.next_u64() as i64, g.next_u64() as i64);
        let e = (g.next_u64() % 70) as u32;
        let int =
            |name: &str, x: i64, y: i64, r: i64| (format!("int {name} {x} {y}"), format!("{r}"));
        out.push(int(
            "pow_i32",
            a as i32 as i64,
            e as i64,
            (a as i32).wrapping_pow(e) as i64,
        ));
        out.push(int(
            "pow_u8",
            a as u8 as i64,
            e as i64,
            (a as u8).wrapping_pow(e) as i64,
        ));
        out.push(int("pow_i64", a, e as i64, a.wrapping_pow(e)));
        let (a8, b8) = (a as i8, b as i8);
        out.push(int(
            "sadd_i8",
            a8 as i64,
            b8 as i64,
            a8.saturating_add(b8) as i64,
        ));
        out.push(int(
            "ssub_i8",
            a8 as i64,
            b8 as i64,
            a8.saturating_sub(b8) as i64,
        ));
        out.push(int(
            "smul_i8",
            a8 as i64,
            b8 as i64,
            a8.saturating_mul(b8) as i64,
        ));
        let (a16, b16) = (a as u16, b as u16);
        out.push(int(
            "sadd_u16",
            a16 as i64,
            b16 as i64,
            a16.saturating_add(b16) as i64,
        ));
        out.push(int(
            "ssub_u16",
            a16 as i64,
            b16 as i64,
            a16.saturating_sub(b16) as i64,
        ));
        out.push(int(
            "smul_u16",
            a16 as i64,
            b16 as i64,
            a16.saturating_mul(b16) as i64,
        ));
        // Small and large magnitudes for the 64-bit ones.
        let (c, d) = if g.next_u64() & 1 == 0 {
            (a >> 33, b >> 31)
        } else {
            (a, b)
        };
        out.push(int("sadd_i64", c, d, c.saturating_add(d)));
        out.push(int("ssub_i64", c, d, c.saturating_sub(d)));
        out.push(int("smul_i64", c, d, c.saturating_mul(d)));
        let (cu, du) = (c as u64, d as u64);
        out.push(int("smul_u64", c, d, cu.saturating_mul(du) as i64));
        out.push(int("sadd_u64", c, d, cu.saturating_add(du) as i64));
    }
    for (x, y) in [
        (i64::MIN, -1),
        (i64::MIN, 1),
        (-1, i64::MIN),
        (i64::MAX, 2),
        (i64::MIN, 0),
    ] {
        for name in ["sadd_i64", "ssub_i64", "smul_i64"] {
            let r = match name {
                "sadd_i64" => x.saturating_add(y),
                "ssub_i64" => x.saturating_sub(y),
                _ => x.saturating_mul(y),
            };
            out.push((format!("int {name} {x} {y}"), format!("{r}")));
        }
    }
    out
}

/// `powf` as the derive calls it (through `Math`, not std's inherent method).
trait PowfExact {
    fn powf_exact(self, y: f32) -> f32;
}
impl PowfExact for f32 {
    fn powf_exact(self, y: f32) -> f32 {
        Math::powf(self, y)
    }
}

#[test]
fn the_prelude_gives_the_bits_of_reduce_core_math() {
    let Some(cxx) = compiler() else { return };
    let cases = cases();
    let input: String = cases.iter().map(|(i, _)| format!("{i}\n")).collect();
    let output = run_prelude_driver(&cxx, "math-bits", "", DRIVER, input);
    let got: Vec<&str> = output.lines().collect();
    assert_eq!(got.len(), cases.len(), "the driver answered every case");
    let wrong: Vec<String> = cases
        .iter()
        .zip(&got)
        .filter(|((_, want), got)| want != *got)
        .take(10)
        .map(|((input, want), got)| format!("{input}: prelude {got}, Rust {want}"))
        .collect();
    assert!(
        wrong.is_empty(),
        "the prelude differs from reduce_core::math:\n{}",
        wrong.join("\n")
    );
    eprintln!("{} cases, the same bits", cases.len());
}
