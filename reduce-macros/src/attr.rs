//! Attribute parsing: `#[monoid(identity = ..., combine = ..., commutative, cuda = "...",
//! lift(T) = ...)]` and `#[repr(C)]`. Duplicate and unknown keys are reported at the key's span;
//! parsing goes on after them so that every bad key of one attribute is reported together.

use crate::errors::Errors;
use proc_macro2::Span;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Attribute, Error, Expr, LitInt, LitStr, Token, Type};

#[derive(Default)]
pub struct Attrs {
    pub identity: Option<Expr>,
    pub combine: Option<Expr>,
    /// The span of the `commutative` flag, if present.
    pub commutative: Option<Span>,
    pub cuda: Option<LitStr>,
    /// `lift(T) = |x, i| ...`: how an input item of type T becomes a monoid value.
    pub lifts: Vec<(Type, Expr)>,
    /// The first `#[monoid(...)]` attribute, for "missing key" errors.
    pub first: Option<Attribute>,
}

const KEYS: &str = "`identity = EXPR`, `combine = |l, r| EXPR`, `commutative`, `cuda = \"...\"` \
                    or `lift(T) = |x, i| EXPR`";

pub fn parse_monoid_attrs(attrs: &[Attribute], errors: &mut Errors) -> Attrs {
    let mut out = Attrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("monoid")) {
        out.first.get_or_insert_with(|| attr.clone());
        let result = attr.parse_nested_meta(|meta| {
            let key = match meta.path.get_ident() {
                Some(id) => id.to_string(),
                None => String::new(),
            };
            match key.as_str() {
                "identity" => {
                    let value: Expr = meta.value()?.parse()?;
                    set(&mut out.identity, value, &meta, errors);
                }
                "combine" => {
                    let value: Expr = meta.value()?.parse()?;
                    set(&mut out.combine, value, &meta, errors);
                }
                "cuda" => {
                    let value: LitStr = meta.value()?.parse()?;
                    if value.value().contains('\0') {
                        // NVRTC takes the text as a C string.
                        errors.push(Error::new_spanned(
                            &value,
                            "the CUDA text holds a NUL byte, which NVRTC cannot take: write \
                             `\\\\0` in the Rust string (C++ then reads the escape `\\0`)",
                        ));
                    }
                    if value.value().contains(['\u{1}', '\u{2}']) {
                        // The translation marks its holes in the text with these two.
                        errors.push(Error::new_spanned(
                            &value,
                            "the CUDA text holds the control character U+0001 or U+0002, \
                             which the derive uses to mark places in the text",
                        ));
                    }
                    set(&mut out.cuda, value, &meta, errors);
                }
                "lift" if meta.input.peek(syn::token::Paren) => {
                    let content;
                    syn::parenthesized!(content in meta.input);
                    let ty: Type = content.parse()?;
                    let value: Expr = meta.value()?.parse()?;
                    let key = crate::tokens::tokens_to_string(&ty);
                    if out
                        .lifts
                        .iter()
                        .any(|(t, _)| crate::tokens::tokens_to_string(t) == key)
                    {
                        errors.push(Error::new_spanned(
                            &ty,
                            format!("duplicate `lift({key})`: one lift per input type"),
                        ));
                    } else {
                        out.lifts.push((ty, value));
                    }
                }
                "lift" => {
                    skip_value(&meta)?;
                    errors.push(Error::new_spanned(
                        &meta.path,
                        "`lift` names the input type: `lift(f32) = |x, i| ...`",
                    ));
                }
                "commutative" => {
                    if has_value(&meta) {
                        skip_value(&meta)?;
                        errors.push(Error::new_spanned(
                            &meta.path,
                            "`commutative` is a flag and takes no value: write `commutative` \
                             (leave it out for a non-commutative monoid)",
                        ));
                    } else {
                        set(&mut out.commutative, meta.path.span(), &meta, errors);
                    }
                }
                _ => {
                    skip_value(&meta)?;
                    errors.push(Error::new_spanned(
                        &meta.path,
                        format!(
                            "unknown key `{}` in #[monoid(...)]; expected {KEYS}",
                            crate::tokens::tokens_to_string(&meta.path)
                        ),
                    ));
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    out
}

/// Whether the key is followed by `= value` or `(...)` rather than by `,` or the end.
fn has_value(meta: &ParseNestedMeta) -> bool {
    !meta.input.is_empty() && !meta.input.peek(Token![,])
}

/// Consumes `= EXPR` or `(...)` after a key that is reported as an error.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if has_value(meta) {
        let _: proc_macro2::TokenTree = meta.input.parse()?;
    }
    Ok(())
}

fn set<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta, errors: &mut Errors) {
    if slot.is_some() {
        errors.push(Error::new_spanned(
            &meta.path,
            format!(
                "duplicate key `{}` in #[monoid(...)]",
                crate::tokens::tokens_to_string(&meta.path)
            ),
        ));
    } else {
        *slot = Some(value);
    }
}

/// The largest `#[repr(align(N))]` accepted: the alignment CUDA guarantees for device
/// allocations (the memory pool's blocks and the scratch regions are carved at it).
const MAX_ALIGN: u64 = 256;

/// What `#[repr(...)]` says. `ok` is false when an unsupported repr was reported.
pub struct Repr {
    pub c: bool,
    pub align: Option<u64>,
    pub ok: bool,
}

pub fn parse_repr(attrs: &[Attribute], errors: &mut Errors) -> Repr {
    let mut out = Repr {
        c: false,
        align: None,
        ok: true,
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("repr")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") {
                out.c = true;
            } else if meta.path.is_ident("align") {
                let content;
                syn::parenthesized!(content in meta.input);
                let n: LitInt = content.parse()?;
                let align: u64 = n.base10_parse()?;
                if align > MAX_ALIGN {
                    out.ok = false;
                    errors.push(Error::new_spanned(
                        &n,
                        format!(
                            "#[repr(align({align}))]: alignments past {MAX_ALIGN} bytes are not \
                             supported: device memory is allocated at {MAX_ALIGN}-byte \
                             boundaries, so such values could not lie at their alignment"
                        ),
                    ));
                }
                out.align = Some(align);
            } else if meta.path.is_ident("packed") {
                skip_value(&meta)?;
                out.ok = false;
                errors.push(Error::new_spanned(
                    &meta.path,
                    "#[repr(packed)] is not supported by #[derive(Monoid)]: CUDA C++ cannot \
                     declare the same packed layout portably; use #[repr(C)] (reorder fields \
                     by size to avoid padding)",
                ));
            } else {
                skip_value(&meta)?;
                out.ok = false;
                errors.push(Error::new_spanned(
                    &meta.path,
                    format!(
                        "#[repr({})] is not supported by #[derive(Monoid)]; use #[repr(C)] \
                         (optionally with align(N))",
                        crate::tokens::tokens_to_string(&meta.path)
                    ),
                ));
            }
            Ok(())
        });
        // A malformed repr is rustc's to report; do not add a second message.
        if result.is_err() {
            out.ok = false;
        }
    }
    out
}
