//! syn -> our own typed tree: the struct's shape (fields and their types), its `#[repr]`, its
//! `#[monoid(...)]` attribute and the decoded `combine` closure.
//!
//! Shape errors (enum, generics, field types, repr) are collected in [`Errors`] and make
//! [`Input::shape_ok`] false, which tells the expansion not to emit a stub impl (a stub would
//! only add follow-up errors such as "`Foo: Copy` is not satisfied").

use crate::attr::{self, Attrs};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Expr, Fields, Ident, Member, Pat, Type};

/// Collects errors so that one derive reports all the mistakes it can find at once.
#[derive(Default)]
pub struct Errors(Option<Error>);

impl Errors {
    pub fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(existing) => existing.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn into_error(self) -> Option<Error> {
        self.0
    }
}

/// The primitive types a field (or an expression) may have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scalar {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
}

impl Scalar {
    pub const ALL: [Scalar; 11] = [
        Scalar::Bool,
        Scalar::U8,
        Scalar::I8,
        Scalar::U16,
        Scalar::I16,
        Scalar::U32,
        Scalar::I32,
        Scalar::U64,
        Scalar::I64,
        Scalar::F32,
        Scalar::F64,
    ];

    pub fn from_rust(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.rust() == name)
    }

    /// The Rust spelling, also used as the suffix of the prelude helpers (`r_add_i32`).
    pub fn rust(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U8 => "u8",
            Scalar::I8 => "i8",
            Scalar::U16 => "u16",
            Scalar::I16 => "i16",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// The CUDA C++ spelling (`char` alone has an implementation-defined sign: never used).
    pub fn c(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U8 => "unsigned char",
            Scalar::I8 => "signed char",
            Scalar::U16 => "unsigned short",
            Scalar::I16 => "short",
            Scalar::U32 => "unsigned int",
            Scalar::I32 => "int",
            Scalar::U64 => "unsigned long long",
            Scalar::I64 => "long long",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    /// Size in bytes; equal to the alignment for every scalar on the device.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Bool | Scalar::U8 | Scalar::I8 => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            Scalar::U64 | Scalar::I64 | Scalar::F64 => 8,
        }
    }

    pub fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Scalar::Bool | Scalar::F32 | Scalar::F64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        )
    }

    /// Integers narrower than `int`: C promotes them, so every result is cast back.
    pub fn is_narrow(self) -> bool {
        matches!(self, Scalar::U8 | Scalar::I8 | Scalar::U16 | Scalar::I16)
    }
}

/// The type of a field, a local or an expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Ty {
    Scalar(Scalar),
    Array(Box<Ty>, usize),
    /// The deriving struct itself (the only struct type there is).
    Struct,
}

impl Ty {
    /// Rust spelling for messages.
    pub fn rust(&self, struct_name: &str) -> String {
        match self {
            Ty::Scalar(s) => s.rust().to_owned(),
            Ty::Array(elem, n) => format!("[{}; {}]", elem.rust(struct_name), n),
            Ty::Struct => struct_name.to_owned(),
        }
    }

    /// (size, align) on the device; `Struct` is never a field type so never asked.
    pub fn size_align(&self) -> (u64, u64) {
        match self {
            Ty::Scalar(s) => (s.size(), s.size()),
            Ty::Array(elem, n) => {
                let (size, align) = elem.size_align();
                (size * *n as u64, align)
            }
            Ty::Struct => unreachable!("a struct type is never a field type"),
        }
    }

    /// Parses a field type, a `let` annotation or a cast target. `self_name` is accepted (as
    /// `Self` is) only when `allow_struct`.
    pub fn from_syn(ty: &Type, self_name: &Ident, allow_struct: bool) -> syn::Result<Ty> {
        match ty {
            Type::Paren(p) => Ty::from_syn(&p.elem, self_name, allow_struct),
            Type::Group(g) => Ty::from_syn(&g.elem, self_name, allow_struct),
            Type::Path(p) if p.qself.is_none() => {
                let name = p.path.segments.last().map(|s| s.ident.to_string());
                let single = p.path.segments.len() == 1 && p.path.leading_colon.is_none();
                let plain = p.path.segments.iter().all(|s| s.arguments.is_none());
                if let (true, true, Some(name)) = (single, plain, name.as_deref()) {
                    if let Some(s) = Scalar::from_rust(name) {
                        return Ok(Ty::Scalar(s));
                    }
                    if allow_struct && (name == "Self" || p.path.is_ident(self_name)) {
                        return Ok(Ty::Struct);
                    }
                    if let Some(why) = unsupported_primitive(name) {
                        return Err(Error::new_spanned(
                            ty,
                            format!("unsupported type `{name}`: {why}"),
                        ));
                    }
                }
                Err(Error::new_spanned(
                    ty,
                    format!(
                        "unsupported type `{}`: #[derive(Monoid)] fields must be u8, i8, u16, \
                         i16, u32, i32, u64, i64, f32, f64, bool or fixed-size arrays of them; \
                         nested structs are not supported (flatten their fields into this struct)",
                        tokens_to_string(ty)
                    ),
                ))
            }
            Type::Array(a) => {
                let elem = Ty::from_syn(&a.elem, self_name, false)?;
                let len = match &a.len {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(n),
                        ..
                    }) if n.suffix().is_empty() || n.suffix() == "usize" => {
                        n.base10_parse::<usize>()?
                    }
                    other => {
                        return Err(Error::new_spanned(
                            other,
                            "the array length must be an integer literal (the CUDA struct \
                             definition needs its value)",
                        ))
                    }
                };
                if len == 0 {
                    return Err(Error::new_spanned(
                        &a.len,
                        "zero-length arrays are not supported (CUDA C++ has no zero-size \
                         members)",
                    ));
                }
                Ok(Ty::Array(Box::new(elem), len))
            }
            Type::Reference(_) | Type::Ptr(_) => Err(Error::new_spanned(
                ty,
                "references and pointers cannot be copied to the device; fields must be \
                 primitive numbers, bool or fixed-size arrays of them",
            )),
            Type::Tuple(t) if t.elems.is_empty() => Err(Error::new_spanned(
                ty,
                "unsupported type `()`: fields must be primitive numbers, bool or fixed-size \
                 arrays of them",
            )),
            _ => Err(Error::new_spanned(
                ty,
                format!(
                    "unsupported type `{}`: fields must be u8, i8, u16, i16, u32, i32, u64, i64, \
                     f32, f64, bool or fixed-size arrays of them",
                    tokens_to_string(ty)
                ),
            )),
        }
    }
}

fn unsupported_primitive(name: &str) -> Option<&'static str> {
    Some(match name {
        "usize" | "isize" => {
            "its size depends on the host; use u32/u64 (or i32/i64) so that Rust and CUDA agree"
        }
        "u128" | "i128" => "CUDA C++ has no portable 128-bit integer; use two u64 fields",
        "char" => "CUDA C++ has no Unicode scalar type; store the code point as u32",
        "f16" | "f128" => "only f32 and f64 floats are supported",
        _ => return None,
    })
}

/// `quote` output with the spaces rustc would not print (`Vec < u8 >` -> `Vec<u8>`).
pub fn tokens_to_string(t: &impl ToTokens) -> String {
    let s = t.to_token_stream().to_string();
    s.replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
        .replace(" ,", ",")
        .replace("& ", "&")
}

pub struct Field {
    /// How Rust names it: `a` or `0`.
    pub member: Member,
    /// Field name in messages (`a`, `0`).
    pub rust_name: String,
    /// Field name in the CUDA struct: the Rust name, or `f0, f1, ...` for tuple structs.
    pub cuda_name: String,
    pub ty: Ty,
    pub span: Span,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Named,
    Tuple,
}

/// A `combine` closure parameter: a name, or `_`.
pub enum Param {
    Named(Ident),
    Wild(Span),
}

/// The decoded `combine = |l, r| body` closure.
pub struct Combine {
    pub left: Param,
    pub right: Param,
    pub body: Expr,
}

pub struct Input {
    pub ident: Ident,
    /// `ident` without `r#`.
    pub name: String,
    pub style: Style,
    pub fields: Vec<Field>,
    /// `#[repr(C, align(N))]`.
    pub align: Option<u64>,
    pub attrs: Attrs,
    pub combine: Option<Combine>,
    /// Whether the struct itself is fine (a non-generic `#[repr(C)]` struct of supported fields),
    /// so that a stub impl would not add errors of its own.
    pub shape_ok: bool,
}

impl Input {
    pub fn from_syn(node: &DeriveInput, errors: &mut Errors) -> Input {
        let ident = node.ident.clone();
        let name = unraw(&ident);
        let shape_ok = std::cell::Cell::new(true);
        let fail = |errors: &mut Errors, e: Error| {
            errors.push(e);
            shape_ok.set(false);
        };

        let (style, fields) = match &node.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => (Style::Named, named.named.iter().collect::<Vec<_>>()),
                Fields::Unnamed(unnamed) => {
                    (Style::Tuple, unnamed.unnamed.iter().collect::<Vec<_>>())
                }
                Fields::Unit => (Style::Named, Vec::new()),
            },
            Data::Enum(e) => {
                fail(
                    errors,
                    Error::new_spanned(
                        e.enum_token,
                        "#[derive(Monoid)] supports only structs: an enum has no fixed layout \
                         shared with CUDA C++; use a #[repr(C)] struct with a tag field",
                    ),
                );
                (Style::Named, Vec::new())
            }
            Data::Union(u) => {
                fail(
                    errors,
                    Error::new_spanned(
                        u.union_token,
                        "#[derive(Monoid)] supports only structs, not unions",
                    ),
                );
                (Style::Named, Vec::new())
            }
        };
        let is_struct = matches!(node.data, Data::Struct(_));
        if is_struct && fields.is_empty() {
            fail(
                errors,
                Error::new_spanned(
                    &node.ident,
                    "#[derive(Monoid)] needs at least one field (CUDA C++ structs cannot be \
                     empty and a zero-sized item has nothing to reduce)",
                ),
            );
        }

        if !node.generics.params.is_empty() || node.generics.where_clause.is_some() {
            fail(
                errors,
                Error::new_spanned(
                    &node.generics,
                    "#[derive(Monoid)] does not support generic structs: the CUDA text is \
                     written once per type; define one struct per concrete type",
                ),
            );
        }

        let repr = attr::parse_repr(&node.attrs, errors);
        if !repr.ok {
            shape_ok.set(false);
        } else if is_struct && !repr.c {
            fail(
                errors,
                Error::new_spanned(
                    &node.ident,
                    format!(
                    "#[derive(Monoid)] requires #[repr(C)] on `{name}`: the CUDA struct must have \
                     exactly the Rust layout, and only repr(C) fixes the Rust one"
                ),
                ),
            );
        }

        let mut out_fields = Vec::new();
        // With generics, the field types (`T`) only repeat the generics error.
        let fields = if node.generics.params.is_empty() {
            fields
        } else {
            Vec::new()
        };
        for (i, f) in fields.iter().enumerate() {
            let (member, rust_name, cuda_name) = match &f.ident {
                Some(id) => (Member::Named(id.clone()), unraw(id), unraw(id)),
                None => (
                    Member::Unnamed(syn::Index {
                        index: i as u32,
                        span: f.ty.span(),
                    }),
                    i.to_string(),
                    format!("f{i}"),
                ),
            };
            match Ty::from_syn(&f.ty, &node.ident, false) {
                Ok(ty) => out_fields.push(Field {
                    member,
                    rust_name,
                    cuda_name,
                    ty,
                    span: f.ident.as_ref().map_or_else(|| f.ty.span(), |id| id.span()),
                }),
                Err(e) => fail(errors, e),
            }
        }

        let attrs = attr::parse_monoid_attrs(&node.attrs, errors);
        let combine =
            attrs
                .combine
                .as_ref()
                .and_then(|e| match Combine::from_expr(e, &node.ident) {
                    Ok(c) => Some(c),
                    Err(err) => {
                        errors.push(err);
                        None
                    }
                });

        Input {
            ident,
            name,
            style,
            fields: out_fields,
            align: repr.align,
            attrs,
            combine,
            shape_ok: shape_ok.get(),
        }
    }

    /// Device layout of the struct: (size, align), repr(C) rules.
    pub fn layout(&self) -> (u64, u64) {
        let mut size = 0u64;
        let mut align = self.align.unwrap_or(1);
        for f in &self.fields {
            let (s, a) = f.ty.size_align();
            size = size.div_ceil(a) * a + s;
            align = align.max(a);
        }
        (size.div_ceil(align) * align, align)
    }
}

impl Combine {
    fn from_expr(expr: &Expr, self_ident: &Ident) -> syn::Result<Combine> {
        let closure = match strip_parens(expr) {
            Expr::Closure(c) => c,
            other => {
                return Err(Error::new_spanned(
                    other,
                    "`combine` must be a closure with two parameters: `combine = |l, r| ...`",
                ))
            }
        };
        if let Some(a) = &closure.asyncness {
            return Err(Error::new_spanned(
                a,
                "`combine` cannot be an async closure",
            ));
        }
        if let Some(c) = &closure.constness {
            return Err(Error::new_spanned(c, "`combine` cannot be a const closure"));
        }
        if closure.inputs.len() != 2 {
            let what = if closure.inputs.is_empty() {
                closure.or1_token.to_token_stream()
            } else {
                closure.inputs.to_token_stream()
            };
            return Err(Error::new_spanned(
                what,
                format!(
                    "the `combine` closure must take exactly two parameters (the left and the \
                     right operand), found {}",
                    closure.inputs.len()
                ),
            ));
        }
        let left = param(&closure.inputs[0], self_ident)?;
        let right = param(&closure.inputs[1], self_ident)?;
        if let (Param::Named(a), Param::Named(b)) = (&left, &right) {
            if a == b {
                return Err(Error::new_spanned(
                    b,
                    format!("the two `combine` parameters are both named `{b}`"),
                ));
            }
        }
        if let syn::ReturnType::Type(_, ty) = &closure.output {
            match Ty::from_syn(ty, self_ident, true) {
                Ok(Ty::Struct) => {}
                _ => {
                    return Err(Error::new_spanned(
                        ty,
                        "the `combine` closure must return `Self`",
                    ))
                }
            }
        }
        Ok(Combine {
            left,
            right,
            body: (*closure.body).clone(),
        })
    }
}

fn param(pat: &Pat, self_ident: &Ident) -> syn::Result<Param> {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
            Ok(Param::Named(p.ident.clone()))
        }
        Pat::Wild(w) => Ok(Param::Wild(w.underscore_token.span)),
        Pat::Type(t) => {
            match Ty::from_syn(&t.ty, self_ident, true) {
                Ok(Ty::Struct) => {}
                _ => {
                    return Err(Error::new_spanned(
                        &t.ty,
                        format!("`combine` parameters have the type `Self` (`{self_ident}`)"),
                    ))
                }
            }
            param(&t.pat, self_ident)
        }
        Pat::Ident(p) if p.mutability.is_some() => Err(Error::new_spanned(
            p.mutability,
            "`mut` parameters are not supported: the CUDA translation has no mutation",
        )),
        other => Err(Error::new_spanned(
            other,
            "`combine` parameters must be plain names (`|l, r|`) or `_`; patterns cannot be \
             translated to CUDA",
        )),
    }
}

pub fn strip_parens(mut e: &Expr) -> &Expr {
    loop {
        match e {
            Expr::Paren(p) => e = &p.expr,
            Expr::Group(g) => e = &g.expr,
            _ => return e,
        }
    }
}

pub fn unraw(id: &Ident) -> String {
    let s = id.to_string();
    s.strip_prefix("r#").map(str::to_owned).unwrap_or(s)
}
