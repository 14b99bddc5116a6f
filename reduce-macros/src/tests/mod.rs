//! Unit tests of the translation: the C++ each construct becomes, and the errors of misuse. The
//! helpers here check and print one expression or function body in a world with a struct of
//! every field type; the tests are grouped by subject.

mod arithmetic;
mod errors;
mod items;
mod literals;
mod names;
mod statements;
mod values;

use crate::ast::StructInput;
use crate::check::Checker;
use crate::emit::{Emitter, Holes};
use crate::errors::Errors;
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
