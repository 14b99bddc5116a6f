//! Compound values: `if`/`else` and blocks, arrays, structs, run-time indices, nested structs
//! and helper calls, `usize` constants known when the kernel is generated.

use super::*;

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
