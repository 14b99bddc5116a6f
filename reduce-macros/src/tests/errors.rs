//! The errors of misuse: type errors, statements outside the language, constructs that cannot
//! be translated.

use super::*;

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
        let shown = crate::tokens::tokens_to_string(&e);
        let got = body_error(e, "S");
        assert!(got.contains(want), "`{shown}`: got `{got}`, want `{want}`");
    }
}

#[test]
fn subset_errors() {
    let cases: Vec<(Expr, &str)> = vec![
        (parse_quote!(l.q2), "no field `q2` on `S`"),
        (
            parse_quote!(l.a.checked_add(1)),
            "method `checked_add` cannot be translated to CUDA (the device has no `Option`",
        ),
        (parse_quote!(f32::consts::PI), "unsupported path"),
        (parse_quote!(f32::PI), "unsupported constant `f32::PI`"),
        (parse_quote!(1isize), "unsupported literal suffix `isize`"),
        (parse_quote!(foo), "cannot find `foo`"),
        (
            parse_quote!({
                let [p, q] = l.m;
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
        let shown = crate::tokens::tokens_to_string(&expr);
        let e = error(expr, "u32");
        assert!(e.contains(want), "`{shown}`: got `{e}`, want `{want}`");
    }
}

/// Text the derive would misread is refused with an error, never a panic: the marker
/// characters in a `cuda` text, an index whose bounds overflow the checker's arithmetic.
#[test]
fn odd_input_is_an_error_or_nothing_not_a_panic() {
    let node: syn::DeriveInput = parse_quote! {
        #[monoid(identity = 0, combine = |l, r| l, cuda = "return \u{1}9\u{2};")]
        struct T { a: u32 }
    };
    let mut errors = Errors::default();
    crate::attr::parse_monoid_attrs(&node.attrs, &mut errors);
    let e = errors.into_error().expect("an error").to_string();
    assert!(e.contains("U+0001 or U+0002"), "{e}");
    // (2^64 - 1)^2 is past i128: the checker gives up its bound (the index is checked at run
    // time) rather than overflow.
    let _ = try_cuda(
        parse_quote!(l.m[usize::MAX.wrapping_mul(usize::MAX)]),
        "u32",
    );
}
