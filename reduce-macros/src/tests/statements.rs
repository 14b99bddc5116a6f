//! Statements: `let mut`, assignment and compound assignment, `for` loops over ranges and
//! arrays, `break`/`continue`, and `match` as a value and as a statement.

use super::*;

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
fn tuple_lets_bind_every_value_computed_first() {
    // `let (a, b) = (b, a + b)` reads the old names: fresh C++ names for the new ones.
    assert_eq!(
        body(
            parse_quote!({
                let (mut a, mut b) = (l.a, r.a);
                for _k in 0..3 {
                    let (x, y, _) = (b, a.wrapping_add(b), l.m[0]);
                    a = x;
                    b = y;
                }
                a ^ b
            }),
            "u32"
        ),
        "    unsigned int v_a = l.a;
    unsigned int v_b = r.a;
    for (int v__k = 0; v__k < 3; ++v__k) {
        const unsigned int v_x = v_b;
        const unsigned int v_y = v_a + v_b;
        const unsigned int v_discarded = l.m[0];
        v_a = v_x;
        v_b = v_y;
    }
    return v_a ^ v_b;
"
    );
    let typed = body(
        parse_quote!({
            let (p, q): (u64, f32) = (1, 2.5);
            p as f32 + q
        }),
        "f32",
    );
    assert!(typed.contains("unsigned long long v_p = 1ull;"), "{typed}");
    let e = body_error(
        parse_quote!({
            let (a, b) = l.p;
            a
        }),
        "f32",
    );
    assert!(e.contains("tuple of 2 values written out"), "{e}");
    let e = body_error(
        parse_quote!({
            let (a, b) = (1, 2);
            a
        }),
        "u32",
    );
    assert!(e.contains("cannot infer the type"), "{e}");
}
