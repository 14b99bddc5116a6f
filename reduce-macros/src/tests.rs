//! Unit tests of the translation: the C++ each construct becomes, and the errors of misuse.

use crate::ast::{Errors, StructInput};
use crate::check::Checker;
use crate::emit::{Emitter, Holes};
use crate::text;
use crate::types::{FnSig, Scalar, Ty, World};
use syn::{parse_quote, Expr, Result};

/// A world with struct `S` (every field type), `P` (a nested struct) and a helper `h`.
fn world() -> World {
    let p: syn::DeriveInput = parse_quote! {
        #[repr(C)]
        struct P { x: f32, y: f32 }
    };
    let node: syn::DeriveInput = parse_quote! {
        #[repr(C)]
        #[monoid(identity = 0, combine = |l, r| l)]
        struct S {
            a: u32, b: i32, c: u8, h: i16, w: u64, q: i64,
            x: f32, y: f64, flag: bool, m: [u32; 3], g: [[i8; 2]; 2], p: P, ps: [P; 2],
        }
    };
    let mut errors = Errors::default();
    let mut world = World {
        self_name: Some("S".into()),
        ..World::default()
    };
    let p = StructInput::from_syn(&p, false, &mut errors)
        .def(&world, &mut errors)
        .unwrap();
    world.structs.insert("P".into(), p);
    let s = StructInput::from_syn(&node, true, &mut errors)
        .def(&world, &mut errors)
        .unwrap();
    world.structs.insert("S".into(), s);
    world.fns.insert(
        "h".into(),
        FnSig {
            name: "h".into(),
            params: vec![
                Ty::Scalar(Scalar::U32),
                Ty::Array(Box::new(Ty::Scalar(Scalar::U32)), crate::types::Len::Lit(3)),
            ],
            ret: Ty::Scalar(Scalar::U32),
        },
    );
    assert!(errors.into_error().is_none());
    world
}

fn checker(world: &World, ret: Ty) -> Checker<'_> {
    let mut checker = Checker::new(world, ret, None);
    for p in ["l", "r"] {
        checker.param(p.to_owned(), p.to_owned(), Ty::Struct("S".into()), false);
    }
    checker
}

/// The C++ for `expr` of Rust type `ty`, with `l` and `r` of type `S` in scope.
fn try_cuda(expr: Expr, ty: &str) -> Result<String> {
    let world = world();
    let ty = world.ty(&syn::parse_str(ty).unwrap(), false).unwrap();
    let mut checker = checker(&world, ty.clone());
    let t = checker.check(&expr, Some(&ty))?;
    let t = checker.coerce(t, &ty)?;
    let holes = Holes::default();
    Ok(Emitter::new(&world, &holes).init(&t))
}

fn cuda(expr: Expr, ty: &str) -> String {
    try_cuda(expr, ty).unwrap_or_else(|e| panic!("{e}"))
}

fn error(expr: Expr, ty: &str) -> String {
    match try_cuda(expr, ty) {
        Ok(s) => panic!("expected an error, got `{s}`"),
        Err(e) => e.to_string(),
    }
}

/// The C++ body (statements ending in `return`) of a function of `l`, `r` returning `ty`.
fn try_body(body: Expr, ty: &str) -> Result<String> {
    let world = world();
    let ty = world.ty(&syn::parse_str(ty).unwrap(), false).unwrap();
    let mut checker = checker(&world, ty);
    let t = checker.body(&body)?;
    let holes = Holes::default();
    let mut out = String::new();
    Emitter::new(&world, &holes).body(&t, 1, &mut out);
    Ok(out)
}

fn body(e: Expr, ty: &str) -> String {
    try_body(e, ty).unwrap_or_else(|e| panic!("{e}"))
}

fn body_error(e: Expr, ty: &str) -> String {
    match try_body(e, ty) {
        Ok(s) => panic!("expected an error, got:\n{s}"),
        Err(e) => e.to_string(),
    }
}

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
    assert_eq!(cuda(parse_quote!(l.a / r.a % 3), "u32"), "(l.a / r.a) % 3u");
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
fn conditions_and_blocks() {
    assert_eq!(
        cuda(
            parse_quote!(if l.a < r.a {
                l.a
            } else if l.flag {
                2
            } else {
                r.a
            }),
            "u32"
        ),
        "(l.a < r.a) ? l.a : (l.flag ? 2u : r.a)"
    );
    assert_eq!(
        cuda(
            parse_quote!({
                let t = l.a + 1;
                t * t
            }),
            "u32"
        ),
        "[&]() -> unsigned int { const unsigned int v_t = l.a + 1u; return v_t * v_t; }()"
    );
    // shadowing gets a fresh C++ name
    assert_eq!(
        cuda(
            parse_quote!({
                let t: u32 = 1;
                let t = t + l.a;
                t
            }),
            "u32"
        ),
        "[&]() -> unsigned int { const unsigned int v_t = 1u; const unsigned int v_t_2 = \
         v_t + l.a; return v_t_2; }()"
    );
    assert_eq!(
        cuda(parse_quote!(l.flag && !r.flag), "bool"),
        "l.flag && (!r.flag)"
    );
    assert_eq!(
        cuda(parse_quote!(l.flag ^ r.flag), "bool"),
        "l.flag != r.flag"
    );
}

#[test]
fn arrays() {
    assert_eq!(cuda(parse_quote!(l.m[2]), "u32"), "l.m[2]");
    assert_eq!(cuda(parse_quote!(l.g[1][0]), "i8"), "l.g[1][0]");
    assert_eq!(cuda(parse_quote!([l.a, 2, 3][1]), "u32"), "2u");
    assert_eq!(cuda(parse_quote!(l.m), "[u32; 3]"), "l.m");
    assert_eq!(cuda(parse_quote!([0; 3]), "[u32; 3]"), "{0u, 0u, 0u}");
    assert_eq!(
        cuda(parse_quote!(if l.flag { l.m } else { r.m }), "[u32; 3]"),
        "l.flag ? l.m : r.m"
    );
    assert_eq!(
        cuda(parse_quote!([l.g[1], [1, 2]]), "[[i8; 2]; 2]"),
        "{{l.g[1], {(signed char)1, (signed char)2}}}"
    );
    assert_eq!(cuda(parse_quote!(l.m == r.m), "bool"), "r_eq(l.m, r.m)");
    assert_eq!(cuda(parse_quote!(l.m != r.m), "bool"), "!r_eq(l.m, r.m)");
    // an array literal that is not an initializer is a typed r_array
    assert_eq!(
        cuda(
            parse_quote!(if l.flag { [1, 2, 3] } else { r.m }),
            "[u32; 3]"
        ),
        "l.flag ? r_array<unsigned int, 3>{1u, 2u, 3u} : r.m"
    );
}

#[test]
fn struct_values() {
    assert_eq!(
        cuda(parse_quote!(if l.flag { l } else { r }), "Self"),
        "l.flag ? l : r"
    );
    assert_eq!(
        cuda(parse_quote!((if l.flag { l } else { r }).a), "u32"),
        "l.flag ? l.a : r.a"
    );
    assert_eq!(cuda(parse_quote!(S { a: 5, ..l }.a), "u32"), "5u");
    assert_eq!(cuda(parse_quote!(S { a: 5, ..l }.b), "i32"), "l.b");
}

#[test]
fn type_errors() {
    let e = error(
        parse_quote!({
            let t = 1;
            t + l.a
        }),
        "u32",
    );
    assert!(e.contains("cannot infer the type of `t`"), "{e}");
    let e = error(parse_quote!(l.a + r.c), "u32");
    assert!(
        e.contains("mismatched operand types for `+`: `u32` and `u8`"),
        "{e}"
    );
    let e = error(parse_quote!(l.a), "i32");
    assert!(e.contains("expected `i32`, found `u32`"), "{e}");
    // A constant is a `usize` (a length or bound): the message says so and how to use it.
    let e = error(parse_quote!(l.a.wrapping_mul(B)), "u32");
    assert!(
        e.contains("found the constant `B`") && e.contains("write `B as u32`"),
        "{e}"
    );
    let e = error(parse_quote!(1), "f32");
    assert!(e.contains("write a float literal"), "{e}");
    let e = error(parse_quote!(-l.a), "u32");
    assert!(
        e.contains("cannot negate a value of the unsigned type `u32`"),
        "{e}"
    );
    let e = error(parse_quote!(-1 as u32), "u32");
    assert!(e.contains("cannot negate"), "{e}");
    let e = error(parse_quote!(1 < 2), "bool");
    assert!(e.contains("cannot infer the type of the literals"), "{e}");
    let e = error(parse_quote!(l.x & r.x), "f32");
    assert!(e.contains("`&` is not supported for `f32`"), "{e}");
    let e = error(parse_quote!(l.flag as f32), "f32");
    assert!(e.contains("cannot cast `bool` as `f32`"), "{e}");
    let e = error(parse_quote!((1 + 2) as u8), "u8");
    assert!(e.contains("add a suffix"), "{e}");
    let e = error(parse_quote!(2.0.max(l.x)), "f32");
    assert!(e.contains("ambiguous type"), "{e}");
    let e = error(parse_quote!(l == r), "bool");
    assert!(e.contains("compare the fields"), "{e}");
    let e = error(parse_quote!(l.a.abs()), "u32");
    assert!(e.contains("`abs` is not a method of `u32`"), "{e}");
    let e = error(parse_quote!(l.x.sqrt(1.0)), "f32");
    assert!(e.contains("takes 0 argument(s), 1 given"), "{e}");
}

#[test]
fn run_time_indices_are_checked() {
    assert_eq!(
        cuda(parse_quote!(l.m[l.a as usize]), "u32"),
        "l.m[r_ix((unsigned long long)l.a, 3)]"
    );
    assert_eq!(
        cuda(parse_quote!(l.g[r.c as usize][1]), "i8"),
        "l.g[r_ix((unsigned long long)r.c, 2)][1]"
    );
    // a literal index is a usize: constant indices stay unchecked
    assert_eq!(cuda(parse_quote!(l.m[2usize]), "u32"), "l.m[2]");
    assert_eq!(
        cuda(parse_quote!([l.a, r.a][(l.w & 3) as usize]), "u32"),
        "r_array<unsigned int, 2>{l.a, r.a}[r_ix(l.w & 3ull, 2)]"
    );
    // in bounds by construction: not checked
    assert_eq!(
        cuda(parse_quote!([l.a, r.a][(l.w & 1) as usize]), "u32"),
        "r_array<unsigned int, 2>{l.a, r.a}[l.w & 1ull]"
    );
    // a lambda as an index is parenthesized (`[[` opens a C++ attribute)
    assert_eq!(
        cuda(
            parse_quote!(l.m[(match l.c {
                0 => 1u64,
                _ => 2,
            }) as usize
                % 3]),
            "u32"
        ),
        "l.m[([&]() -> unsigned long long {\n    if (l.c == (unsigned char)0) {\n        return 1ull;\n    } else {\n        return 2ull;\n    }\n}() % 3ull)]"
    );
    // `&` on bools evaluates both sides in Rust: a right side that may fault is not skipped
    assert_eq!(
        cuda(parse_quote!(l.flag & r.flag), "bool"),
        "l.flag && r.flag"
    );
    assert_eq!(
        cuda(parse_quote!(l.flag | (l.m[r.c as usize] > 2)), "bool"),
        "(bool)(l.flag | (l.m[r_ix((unsigned long long)r.c, 3)] > 2u))"
    );
    let e = error(parse_quote!(l.m[l.a]), "u32");
    assert!(e.contains("expected `usize`, found `u32`"), "{e}");
    assert!(e.contains("as usize"), "{e}");
    let e = error(parse_quote!(l.m[3]), "u32");
    assert!(e.contains("index 3 is out of bounds"), "{e}");
}

#[test]
fn nested_structs_and_helper_calls() {
    assert_eq!(cuda(parse_quote!(l.p.x), "f32"), "l.p.x");
    assert_eq!(cuda(parse_quote!(l.ps[1].y), "f32"), "l.ps[1].y");
    assert_eq!(
        cuda(parse_quote!(P { y: 1.0, x: l.x }), "P"),
        "P{l.x, 1.0f}"
    );
    assert_eq!(cuda(parse_quote!(P { y: 1.0, x: l.x }.x), "f32"), "l.x");
    assert_eq!(
        cuda(parse_quote!(h(l.a, [1, 2, 3])), "u32"),
        "fn_h(l.a, {1u, 2u, 3u})"
    );
    let e = error(parse_quote!(h(l.a)), "u32");
    assert!(e.contains("`h` takes 2 argument(s), 1 given"), "{e}");
    let e = error(parse_quote!(g(l.a)), "u32");
    assert!(e.contains("mark the function #[device_fn]"), "{e}");
    let e = error(parse_quote!(l.p.z), "f32");
    assert!(e.contains("no field `z` on `P`"), "{e}");
    // a projection never drops a part that may fault
    assert_eq!(
        cuda(
            parse_quote!(
                P {
                    x: 1.0,
                    y: l.ps[l.a as usize].y
                }
                .x
            ),
            "f32"
        ),
        "P{1.0f, l.ps[r_ix((unsigned long long)l.a, 2)].y}.x"
    );
}

#[test]
fn generation_constants() {
    let world = world();
    let holes = Holes::default();
    let mut checker = checker(&world, Ty::Scalar(Scalar::Usize));
    let e: Expr = parse_quote!(N * 2);
    let t = checker.check(&e, None).unwrap();
    let text = Emitter::new(&world, &holes).init(&t);
    assert_eq!(text, "\u{1}0\u{2}ull * 2ull");
    assert_eq!(holes.into_vec(), vec![crate::emit::Hole::Sym("N".into())]);
    assert_eq!(checker.uses.consts.len(), 1);
}

#[test]
fn mutation_and_loops() {
    assert_eq!(
        body(
            parse_quote!({
                let mut acc = 0u32;
                for i in 0..3 {
                    acc = acc.wrapping_add(l.m[i].wrapping_mul(r.m[2 - i]));
                    acc ^= r.m[3 - i] + l.m[(i + acc as usize) % 3];
                }
                acc
            }),
            "u32"
        ),
        "    unsigned int v_acc = 0u;
    for (unsigned long long v_i = 0ull; v_i < 3ull; ++v_i) {
        v_acc = v_acc + (l.m[v_i] * r.m[2ull - v_i]);
        v_acc ^= r.m[r_ix(3ull - v_i, 3)] + l.m[(v_i + ((unsigned long long)v_acc)) % 3ull];
    }
    return v_acc;
"
    );
    // compound assignment keeps Rust's wrapping and masking; an array element as the place
    assert_eq!(
        body(
            parse_quote!({
                let mut t = l.g;
                let mut k: i8 = 1;
                t[1][0] += k;
                t[0][(l.a & 3) as usize] <<= 9;
                k -= 3;
                if k < 0 {
                    t[0][0] = k;
                }
                t
            }),
            "[[i8; 2]; 2]"
        ),
        "    r_array<r_array<signed char, 2>, 2> v_t = l.g;
    signed char v_k = (signed char)1;
    v_t[1][0] = r_add_i8(v_t[1][0], v_k);
    v_t[0][r_ix((unsigned long long)(l.a & 3u), 2)] = r_shl_i8(v_t[0][r_ix((unsigned long long)(l.a & 3u), 2)], 9);
    v_k = r_sub_i8(v_k, (signed char)3);
    if (v_k < (signed char)0) {
        v_t[0][0] = v_k;
    }
    return v_t;
"
    );
    // inclusive ranges up to MAX never overflow the counter; `_` gets a name; break, continue
    assert_eq!(
        body(
            parse_quote!({
                let mut n = 0u32;
                for _ in 0..=2u8 {
                    n += 1;
                }
                for k in 250..=255u8 {
                    if k == 252 {
                        continue;
                    }
                    if n > 100 {
                        break;
                    }
                    n += k as u32;
                }
                n
            }),
            "u32"
        ),
        "    unsigned int v_n = 0u;
    for (unsigned char r_k1 = (unsigned char)0; r_k1 < (unsigned char)3; ++r_k1) {
        v_n += 1u;
    }
    {
    unsigned char v_k = (unsigned char)250;
    for (bool r_go2 = v_k <= (unsigned char)255; r_go2; r_go2 = v_k != (unsigned char)255 && (++v_k, true)) {
        if (v_k == (unsigned char)252) {
            continue;
        }
        if (v_n > 100u) {
            break;
        }
        v_n += (unsigned int)v_k;
    }
    }
    return v_n;
"
    );
    // `for x in array`
    assert_eq!(
        body(
            parse_quote!({
                let mut s = 0.0f32;
                for p in l.ps {
                    s += p.x;
                }
                s
            }),
            "f32"
        ),
        "    float v_s = 0.0f;
    const r_array<P, 2> r_a1 = l.ps;
    for (unsigned long long v_index = 0; v_index < 2; ++v_index) {
        const P v_p = r_a1[v_index];
        v_s += v_p.x;
    }
    return v_s;
"
    );
    // the loop goes over a copy: assigning to the array inside does not change its elements
    assert_eq!(
        body(
            parse_quote!({
                let mut t = l.m;
                for x in t {
                    t[0] = t[0].wrapping_add(x);
                }
                t[0]
            }),
            "u32"
        ),
        "    r_array<unsigned int, 3> v_t = l.m;
    const r_array<unsigned int, 3> r_a1 = v_t;
    for (unsigned long long v_index = 0; v_index < 3; ++v_index) {
        const unsigned int v_x = r_a1[v_index];
        v_t[0] = v_t[0] + v_x;
    }
    return v_t[0];
"
    );
}

#[test]
fn loop_variables_take_usize_from_index_uses() {
    // i indexes: usize; j does not: i32 (rustc's fallback)
    let text = body(
        parse_quote!({
            let mut s = 0i32;
            for i in 0..3 {
                for j in 0..2 {
                    s = s.wrapping_add(j + l.m[i] as i32);
                }
            }
            s
        }),
        "i32",
    );
    assert!(
        text.contains("for (unsigned long long v_i = 0ull; v_i < 3ull; ++v_i)"),
        "{text}"
    );
    assert!(text.contains("for (int v_j = 0; v_j < 2; ++v_j)"), "{text}");
}

#[test]
fn statement_errors() {
    let cases: Vec<(Expr, &str)> = vec![
        (
            parse_quote!({
                for i in 0..l.a {
                    let _x = i;
                }
                l
            }),
            "must be known when the kernel is generated",
        ),
        (
            parse_quote!({
                let mut i = 0u32;
                while i < 3 {
                    i += 1;
                }
                l
            }),
            "`while` loops are not supported",
        ),
        (
            parse_quote!({
                let t = l.a;
                t = 2;
                l
            }),
            "declare it with `let mut t`",
        ),
        (
            parse_quote!({
                let mut t = l.a;
                let u = {
                    t += 1;
                    t
                };
                S { a: u, ..l }
            }),
            "may not assign to `t`, which is declared outside it",
        ),
        (
            parse_quote!({
                let u = {
                    if l.flag {
                        return r;
                    }
                    l
                };
                u
            }),
            "`return` is supported only as a statement",
        ),
        (
            parse_quote!({
                break;
            }),
            "`break` is supported only",
        ),
        (
            parse_quote!({
                l.a += 1;
                l
            }),
            "cannot assign to `l`",
        ),
        (
            parse_quote!({
                let mut t = 0u32;
                t += 1.0;
                l
            }),
            "expected `u32`",
        ),
        (
            parse_quote!({
                for i in 0..3 {
                    l.a
                }
                l
            }),
            "its final expression is unused",
        ),
        (parse_quote!({ loop {} }), "`loop` is not supported"),
    ];
    for (e, want) in cases {
        let shown = crate::ast::tokens_to_string(&e);
        let got = body_error(e, "S");
        assert!(got.contains(want), "`{shown}`: got `{got}`, want `{want}`");
    }
}

#[test]
fn match_on_integers_and_bools() {
    assert_eq!(
        body(
            parse_quote!(match l.c {
                0 => 10,
                1 | 2 => 20,
                b'a'..=b'z' => 30,
                n if n > 200 => n as u32,
                _ => 0,
            }),
            "u32"
        ),
        "    const unsigned char v_n = l.c;
    if (l.c == (unsigned char)0) {
        return 10u;
    } else if ((l.c == (unsigned char)1) || (l.c == (unsigned char)2)) {
        return 20u;
    } else if (l.c >= (unsigned char)97 && l.c <= (unsigned char)122) {
        return 30u;
    } else if (v_n > (unsigned char)200) {
        return (unsigned int)v_n;
    } else {
        return 0u;
    }
"
    );
    // in an expression: a lambda; the scrutinee is evaluated once
    assert_eq!(
        cuda(
            parse_quote!(match l.flag ^ r.flag {
                true => l.a,
                false => r.a,
            }),
            "u32"
        ),
        "[&]() -> unsigned int {\n    const bool r_m1 = l.flag != r.flag;\n    if (r_m1 == true) {\n        return l.a;\n    } else {\n        return r.a;\n    }\n}()"
    );
    // as a statement
    assert_eq!(
        body(
            parse_quote!({
                let mut t = l.b;
                match t {
                    i32::MIN..=-1 => t = 0,
                    0 => {}
                    _ => {
                        t -= 1;
                    }
                }
                t
            }),
            "i32"
        ),
        "    int v_t = l.b;
    if (v_t >= (-2147483647 - 1) && v_t <= (-1)) {
        v_t = 0;
    } else if (v_t == 0) {
    } else {
        v_t = r_sub_i32(v_t, 1);
    }
    return v_t;
"
    );
    let e = error(
        parse_quote!(match l.x {
            _ => 1u32,
        }),
        "u32",
    );
    assert!(
        e.contains("`match` is supported on integers and bools"),
        "{e}"
    );
    let e = error(
        parse_quote!(match l.c {
            300 => 1u32,
            _ => 2,
        }),
        "u32",
    );
    assert!(e.contains("out of the range of `u8`"), "{e}");
}

#[test]
fn subset_errors() {
    let cases: Vec<(Expr, &str)> = vec![
        (parse_quote!(l.q2), "no field `q2` on `S`"),
        (
            parse_quote!(l.a.swap_bytes()),
            "method `swap_bytes` cannot be translated",
        ),
        (parse_quote!(f32::consts::PI), "unsupported path"),
        (parse_quote!(f32::PI), "unsupported constant `f32::PI`"),
        (parse_quote!(1isize), "unsupported literal suffix `isize`"),
        (parse_quote!(foo), "cannot find `foo`"),
        (
            parse_quote!({
                let (p, q) = (l.a, r.a);
                p
            }),
            "`let` patterns are not supported",
        ),
        (
            parse_quote!({
                l.a;
                r.a
            }),
            "value is unused",
        ),
        (
            parse_quote!({
                let t = l.a;
            }),
            "ends with a `let`",
        ),
        (
            parse_quote!(if l.flag {
                l.a
            }),
            "`if` without `else`",
        ),
        (parse_quote!(&l.a), "references are not supported"),
        (parse_quote!(T { a: 1 }.a), "unknown struct `T`"),
        (
            parse_quote!(S { a: 1 }.a),
            "missing fields in struct literal",
        ),
        (parse_quote!(println!("x")), "macros cannot be translated"),
        (parse_quote!('x' as u32), "char literals are not supported"),
        (parse_quote!((l.a, r.a).0), "tuples cannot be translated"),
    ];
    for (expr, want) in cases {
        let shown = crate::ast::tokens_to_string(&expr);
        let e = error(expr, "u32");
        assert!(e.contains(want), "`{shown}`: got `{e}`, want `{want}`");
    }
}

#[test]
fn whole_monoid_text() {
    let node: syn::DeriveInput = parse_quote! {
        #[repr(C)]
        #[monoid(
            identity = Affine { b: 0, a: 1 },
            combine = |x, y| {
                let a = x.a.wrapping_mul(y.a);
                Affine { a, b: x.b.wrapping_mul(y.a).wrapping_add(y.b) }
            }
        )]
        struct Affine { a: u32, b: u32 }
    };
    let mut errors = Errors::default();
    let input = StructInput::from_syn(&node, true, &mut errors);
    let mut world = World {
        self_name: Some("Affine".into()),
        ..World::default()
    };
    let def = input.def(&world, &mut errors).unwrap();
    world.structs.insert("Affine".into(), def.clone());
    assert!(errors.into_error().is_none());
    let (header, rest) = text::monoid(&text::MonoidParts {
        world: &world,
        name: "Affine",
        const_params: &[],
        commutative: false,
        identity: input.attrs.identity.as_ref().unwrap(),
        combine: input.combine.as_ref(),
        hand_written: None,
    })
    .unwrap();
    assert_eq!(
        header.text,
        "// monoid Affine, generated by #[derive(Monoid)]\n"
    );
    assert_eq!(
        rest.text,
        "typedef Affine M;
__device__ __forceinline__ M m_identity() { return Affine{1u, 0u}; }
__device__ __forceinline__ M m_combine(M l, M r) {
    const unsigned int v_a = l.a * r.a;
    return Affine{v_a, (l.b * r.a) + r.b};
}
"
    );
    let def_text = text::struct_def(&world, &def);
    assert_eq!(
        def_text.text,
        "struct Affine {
    unsigned int a;
    unsigned int b;
};
static_assert(sizeof(Affine) == \u{1}0\u{2}, \"Affine: CUDA size differs from Rust size_of\");
static_assert(alignof(Affine) == \u{1}1\u{2}, \"Affine: CUDA alignment differs from Rust align_of\");
static_assert(r_offsetof(Affine, b) == \u{1}2\u{2}, \"Affine.b: CUDA offset differs from Rust offset_of\");
"
    );
}

#[test]
fn device_fn_text() {
    let world = world();
    let text = text::device_fn(
        &world,
        "dot",
        &[
            (
                "a".into(),
                world.ty(&parse_quote!([u32; 3]), false).unwrap(),
                false,
            ),
            (
                "b".into(),
                world.ty(&parse_quote!([u32; 3]), false).unwrap(),
                true,
            ),
        ],
        &Ty::Scalar(Scalar::U32),
        &parse_quote!({
            let mut s = 0u32;
            for i in 0..3 {
                b[i] *= a[i];
                s = s.wrapping_add(b[s as usize & 7]);
            }
            s
        }),
    )
    .unwrap();
    assert_eq!(
        text.text,
        "__device__ inline unsigned int fn_dot(const r_array<unsigned int, 3> v_a, r_array<unsigned int, 3> v_b) {
    unsigned int v_s = 0u;
    for (unsigned long long v_i = 0ull; v_i < 3ull; ++v_i) {
        v_b[v_i] *= v_a[v_i];
        v_s = v_s + v_b[r_ix(((unsigned long long)v_s) & 7ull, 3)];
    }
    return v_s;
}
"
    );
    assert!(text.uses.faults);
    let e = text::device_fn(
        &world,
        "h",
        &[],
        &Ty::Scalar(Scalar::U32),
        &parse_quote!(h(1, [1, 2, 3])),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("recursion is not supported"), "{e}");
}
