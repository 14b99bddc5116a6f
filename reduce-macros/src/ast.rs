//! syn -> our own tree: a struct's shape (fields, const parameters, `#[repr]`), its
//! `#[monoid(...)]` attribute with the decoded closures, and `#[device_fn]` functions.
//!
//! Shape errors (enum, type generics, repr) are collected in [`Errors`] and make
//! [`StructInput::shape_ok`] false, which tells the expansion not to emit a stub impl (a stub
//! would only add follow-up errors such as "`Foo: Copy` is not satisfied"). Field types are
//! typed later, once the structs they name are known (see `resolve`).

use crate::attr::{self, Attrs};
use crate::errors::Errors;
use crate::tokens::{strip_parens, unraw};
use crate::types::{FieldDef, StructDef, Style, World};
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Expr, Fields, GenericParam, Ident, Member, Pat, Type};

/// A field before its type is resolved.
pub struct RawField {
    pub member: Member,
    pub rust_name: String,
    pub cuda_name: String,
    pub ty: Type,
    pub span: Span,
}

/// A `#[derive(Monoid)]` or `#[derive(DeviceCopy)]` struct.
pub struct StructInput {
    pub ident: Ident,
    /// `ident` without `r#`.
    pub name: String,
    pub style: Style,
    pub fields: Vec<RawField>,
    /// `const K: usize` parameters, in order.
    pub const_params: Vec<Ident>,
    pub generics: syn::Generics,
    /// `#[repr(C, align(N))]`.
    pub align: Option<u64>,
    /// `#[monoid(...)]` (empty for `DeviceCopy`).
    pub attrs: Attrs,
    pub combine: Option<Closure>,
    /// `lift(X) = |x, i| ...`, decoded.
    pub lifts: Vec<(Type, Closure)>,
    /// Whether the struct itself is fine (a `#[repr(C)]` struct with fields and no type
    /// generics), so that a stub impl would not add errors of its own.
    pub shape_ok: bool,
    /// The `#[repr(...)]` attributes, kept for the reflection item.
    pub repr_attrs: Vec<syn::Attribute>,
}

impl StructInput {
    /// `monoid`: whether `#[monoid(...)]` is parsed (derive Monoid) or rejected.
    pub fn from_syn(node: &DeriveInput, monoid: bool, errors: &mut Errors) -> StructInput {
        let ident = node.ident.clone();
        let name = unraw(&ident);
        let mut shape_ok = true;
        let what = if monoid { "Monoid" } else { "DeviceCopy" };

        let (style, fields) = match &node.data {
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => (Style::Named, named.named.iter().collect::<Vec<_>>()),
                Fields::Unnamed(unnamed) => {
                    (Style::Tuple, unnamed.unnamed.iter().collect::<Vec<_>>())
                }
                Fields::Unit => (Style::Named, Vec::new()),
            },
            Data::Enum(e) => {
                shape_ok = false;
                errors.push(Error::new_spanned(
                    e.enum_token,
                    format!(
                        "#[derive({what})] supports only structs: an enum has no fixed layout \
                         shared with CUDA C++; use a #[repr(C)] struct with a tag field"
                    ),
                ));
                (Style::Named, Vec::new())
            }
            Data::Union(u) => {
                shape_ok = false;
                errors.push(Error::new_spanned(
                    u.union_token,
                    format!("#[derive({what})] supports only structs, not unions"),
                ));
                (Style::Named, Vec::new())
            }
        };
        let is_struct = matches!(node.data, Data::Struct(_));
        if is_struct && fields.is_empty() {
            shape_ok = false;
            errors.push(Error::new_spanned(
                &node.ident,
                format!(
                    "#[derive({what})] needs at least one field (CUDA C++ structs cannot be \
                     empty)"
                ),
            ));
        }

        let mut const_params = Vec::new();
        let mut generics_ok = true;
        for p in &node.generics.params {
            match p {
                GenericParam::Const(c) if monoid && is_usize(&c.ty) && c.default.is_none() => {
                    const_params.push(c.ident.clone());
                }
                GenericParam::Const(c) if monoid => {
                    generics_ok = false;
                    errors.push(Error::new_spanned(
                        c,
                        "const parameters must be `const NAME: usize` without a default",
                    ));
                }
                other => {
                    generics_ok = false;
                    let msg = if monoid {
                        "#[derive(Monoid)] supports const generic parameters (`const K: usize`) \
                         but not type or lifetime parameters: the CUDA text is written once per \
                         type"
                    } else {
                        "#[derive(DeviceCopy)] does not support generic structs: the CUDA text is \
                         written once per type"
                    };
                    errors.push(Error::new_spanned(other, msg));
                }
            }
        }
        if let Some(w) = &node.generics.where_clause {
            generics_ok = false;
            errors.push(Error::new_spanned(w, "`where` clauses are not supported"));
        }
        shape_ok &= generics_ok;

        let repr = attr::parse_repr(&node.attrs, errors);
        if !repr.ok {
            shape_ok = false;
        } else if is_struct && !repr.c {
            shape_ok = false;
            errors.push(Error::new_spanned(
                &node.ident,
                format!(
                    "#[derive({what})] requires #[repr(C)] on `{name}`: the CUDA struct must have \
                     exactly the Rust layout, and only repr(C) fixes the Rust one"
                ),
            ));
        }

        // With type generics, the field types (`T`) only repeat the generics error.
        let fields = if generics_ok { fields } else { Vec::new() };
        let fields = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
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
                RawField {
                    member,
                    rust_name,
                    cuda_name,
                    ty: f.ty.clone(),
                    span: f.ident.as_ref().map_or_else(|| f.ty.span(), |id| id.span()),
                }
            })
            .collect();

        let attrs = if monoid {
            attr::parse_monoid_attrs(&node.attrs, errors)
        } else {
            for a in node.attrs.iter().filter(|a| a.path().is_ident("monoid")) {
                errors.push(Error::new_spanned(
                    a,
                    "#[monoid(...)] belongs to #[derive(Monoid)]; #[derive(DeviceCopy)] takes no \
                     attribute",
                ));
            }
            Attrs::default()
        };
        let combine =
            attrs
                .combine
                .as_ref()
                .and_then(|e| match Closure::from_expr(e, "combine", true) {
                    Ok(c) => Some(c),
                    Err(err) => {
                        errors.push(err);
                        None
                    }
                });
        let lifts = attrs
            .lifts
            .iter()
            .filter_map(|(ty, e)| match Closure::from_expr(e, "lift", false) {
                Ok(c) => Some((ty.clone(), c)),
                Err(err) => {
                    errors.push(err);
                    None
                }
            })
            .collect();

        StructInput {
            ident,
            name,
            style,
            fields,
            const_params,
            generics: node.generics.clone(),
            align: repr.align,
            attrs,
            combine,
            lifts,
            shape_ok,
            repr_attrs: node
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("repr"))
                .cloned()
                .collect(),
        }
    }

    /// The typed struct, once every struct its fields name is in `world`.
    pub fn def(&self, world: &World, errors: &mut Errors) -> Option<StructDef> {
        let mut fields = Vec::new();
        let mut ok = true;
        for f in &self.fields {
            match world.ty(&f.ty, true) {
                Ok(ty) => fields.push(FieldDef {
                    member: f.member.clone(),
                    rust_name: f.rust_name.clone(),
                    cuda_name: f.cuda_name.clone(),
                    ty,
                }),
                Err(e) => {
                    ok = false;
                    errors.push(e);
                }
            }
        }
        ok.then(|| StructDef {
            name: self.name.clone(),
            style: self.style,
            fields,
            align: self.align,
        })
    }

    /// The const parameter names, as strings.
    pub fn const_names(&self) -> Vec<String> {
        self.const_params.iter().map(unraw).collect()
    }
}

fn is_usize(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.is_ident("usize"))
}

/// A closure parameter: a name (possibly `mut`), or `_`.
pub enum Param {
    Named { ident: Ident, mutable: bool },
    Wild(Span),
}

impl Param {
    pub fn to_tokens(&self) -> proc_macro2::TokenStream {
        match self {
            Param::Named { ident, mutable } => {
                if *mutable {
                    quote::quote!(mut #ident)
                } else {
                    quote::quote!(#ident)
                }
            }
            Param::Wild(span) => quote::quote_spanned!(*span=> _),
        }
    }
}

/// A decoded two-parameter closure (`combine = |l, r| ...`, `lift(X) = |x, i| ...`), with the
/// parameter types the user wrote, if any.
pub struct Closure {
    pub params: Vec<(Param, Option<Type>)>,
    pub body: Expr,
}

impl Closure {
    fn from_expr(expr: &Expr, key: &str, same_names_are_errors: bool) -> syn::Result<Closure> {
        let what = if key == "combine" {
            "`combine` must be a closure with two parameters: `combine = |l, r| ...`"
        } else {
            "`lift(T)` must be a closure of the item and its index: `lift(f32) = |x, i| ...`"
        };
        let closure = match strip_parens(expr) {
            Expr::Closure(c) => c,
            other => return Err(Error::new_spanned(other, what)),
        };
        if let Some(a) = &closure.asyncness {
            return Err(Error::new_spanned(
                a,
                format!("`{key}` cannot be an async closure"),
            ));
        }
        if let Some(c) = &closure.constness {
            return Err(Error::new_spanned(
                c,
                format!("`{key}` cannot be a const closure"),
            ));
        }
        if closure.inputs.len() != 2 {
            let at = if closure.inputs.is_empty() {
                closure.or1_token.to_token_stream()
            } else {
                closure.inputs.to_token_stream()
            };
            let which = if key == "combine" {
                "(the left and the right operand)"
            } else {
                "(the item and its global index, a u64)"
            };
            return Err(Error::new_spanned(
                at,
                format!(
                    "the `{key}` closure must take exactly two parameters {which}, found {}",
                    closure.inputs.len()
                ),
            ));
        }
        let params = closure
            .inputs
            .iter()
            .map(param)
            .collect::<syn::Result<Vec<_>>>()?;
        if let [(Param::Named { ident: a, .. }, _), (Param::Named { ident: b, .. }, _)] =
            &params[..]
        {
            if same_names_are_errors && a == b {
                return Err(Error::new_spanned(
                    b,
                    format!("the two `{key}` parameters are both named `{b}`"),
                ));
            }
        }
        if let syn::ReturnType::Type(_, ty) = &closure.output {
            let is_self = matches!(&**ty, Type::Path(p) if p.path.is_ident("Self"));
            if !is_self {
                return Err(Error::new_spanned(
                    ty,
                    format!("the `{key}` closure returns `Self`; write `-> Self` or nothing"),
                ));
            }
        }
        Ok(Closure {
            params,
            body: (*closure.body).clone(),
        })
    }
}

fn param(pat: &Pat) -> syn::Result<(Param, Option<Type>)> {
    match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Ok((
            Param::Named {
                ident: p.ident.clone(),
                mutable: p.mutability.is_some(),
            },
            None,
        )),
        Pat::Wild(w) => Ok((Param::Wild(w.underscore_token.span), None)),
        Pat::Type(t) => {
            let (p, _) = param(&t.pat)?;
            Ok((p, Some((*t.ty).clone())))
        }
        other => Err(Error::new_spanned(
            other,
            "closure parameters must be plain names (`|l, r|`), `mut` names or `_`; patterns \
             cannot be translated to CUDA",
        )),
    }
}

/// A `#[device_fn]` function.
pub struct FnInput {
    pub name: String,
    /// (name, type as written, mutable) per parameter.
    pub params: Vec<(Ident, Type, bool)>,
    pub ret: Type,
}

impl FnInput {
    pub fn from_syn(item: &syn::ItemFn, errors: &mut Errors) -> Option<FnInput> {
        let sig = &item.sig;
        let name = unraw(&sig.ident);
        let mut ok = true;
        let mut fail = |e: Error| {
            ok = false;
            errors.push(e);
        };
        for (present, tokens, what) in [
            (
                sig.constness.is_some(),
                sig.constness.to_token_stream(),
                "const",
            ),
            (
                sig.asyncness.is_some(),
                sig.asyncness.to_token_stream(),
                "async",
            ),
            (
                sig.unsafety.is_some(),
                sig.unsafety.to_token_stream(),
                "unsafe",
            ),
            (sig.abi.is_some(), sig.abi.to_token_stream(), "extern"),
        ] {
            if present {
                fail(Error::new_spanned(
                    tokens,
                    format!("a #[device_fn] cannot be {what}"),
                ));
            }
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            fail(Error::new_spanned(
                &sig.generics,
                "a #[device_fn] cannot be generic: its CUDA text is written once",
            ));
        }
        if let Some(v) = &sig.variadic {
            fail(Error::new_spanned(
                v,
                "variadic functions are not supported",
            ));
        }
        if let Some(why) = crate::names::reserved_fn_name(&name) {
            fail(Error::new_spanned(
                &sig.ident,
                format!("a #[device_fn] cannot be named `{name}`: {why}"),
            ));
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => fail(Error::new_spanned(
                    r,
                    "a #[device_fn] is a free function: `self` parameters are not supported",
                )),
                syn::FnArg::Typed(t) => match &*t.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                        params.push((p.ident.clone(), (*t.ty).clone(), p.mutability.is_some()))
                    }
                    other => fail(Error::new_spanned(
                        other,
                        "parameters must be plain names (`a: u32`) or `mut` names",
                    )),
                },
            }
        }
        let ret = match &sig.output {
            syn::ReturnType::Type(_, ty) => (**ty).clone(),
            syn::ReturnType::Default => {
                fail(Error::new_spanned(
                    &sig.ident,
                    "a #[device_fn] must return a value (`-> T`): without references, a \
                     function returning nothing has no effect",
                ));
                return None;
            }
        };
        ok.then_some(FnInput { name, params, ret })
    }
}
