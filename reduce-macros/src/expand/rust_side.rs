//! The Rust code the derive emits from the closures and `#[device_fn]` bodies, as written but
//! for two rewrites that make it do what the CUDA text does:
//!
//! - elementary functions: `x.exp()` calls `reduce_core::math::Math::exp(x)` (and `f32::exp(x)`
//!   `<f32 as Math>::exp(x)`), the routine the CUDA text calls too (`r_exp_f32`), never `std`'s,
//!   whose bits differ by platform. The checker has typed every call, so the names are the float
//!   methods;
//! - indices: `a[i]` indexes `a[reduce_core::fault::ix(i, a.len())]`, which panics as Rust does,
//!   or records the fault and uses element 0 inside the fallible CPU calls, as the device does
//!   (`r_ix`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr};

/// Whether the language translates a float method of this name through `reduce_core::math`.
fn routed(name: &str) -> bool {
    matches!(
        name,
        "exp" | "exp2" | "ln" | "log2" | "log10" | "powf" | "powi" | "tanh" | "ln_1p" | "exp_m1"
    )
}

struct Router<'a> {
    krate: &'a TokenStream,
}

impl VisitMut for Router<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        let krate = self.krate;
        match e {
            Expr::MethodCall(m) => {
                if !routed(&m.method.to_string()) {
                    return;
                }
                // `(a - b).exp()` becomes `Math::exp(a - b)`: no parentheses left to warn of.
                let recv = match &*m.receiver {
                    Expr::Paren(p) => &p.expr,
                    other => other,
                };
                let (name, args) = (&m.method, &m.args);
                *e = parse_quote!(#krate::math::Math::#name(#recv, #args));
            }
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else { return };
                let segs = &p.path.segments;
                let is_float =
                    segs.len() == 2 && matches!(segs[0].ident.to_string().as_str(), "f32" | "f64");
                if p.qself.is_some() || !is_float {
                    return;
                }
                let (float, name) = (&segs[0].ident, &segs[1].ident);
                if !routed(&name.to_string()) {
                    return;
                }
                // The type stays named: `f32::exp(20.0)` is an f32 call, as in CUDA.
                *c.func = parse_quote!(<#float as #krate::math::Math>::#name);
            }
            Expr::Index(index) => {
                // Constant indices too: the checker refuses one past a literal length, but an
                // array of a const generic length `K` has its length only here.
                let (base, i) = (&index.expr, &index.index);
                let checked = quote!(#krate::fault::ix(#i, #base.len()));
                *e = if is_place(base) {
                    parse_quote!(#base[#checked])
                } else {
                    // a value: evaluated once
                    let checked = quote!(#krate::fault::ix(#i, __reduce_base.len()));
                    parse_quote!({
                        let __reduce_base = #base;
                        __reduce_base[#checked]
                    })
                };
            }
            _ => {}
        }
    }
}

/// Whether `e` names a place (a variable, a field, an element): read twice without cost, and
/// assignable.
fn is_place(e: &Expr) -> bool {
    match e {
        Expr::Path(_) => true,
        Expr::Field(f) => is_place(&f.base),
        Expr::Index(i) => is_place(&i.expr),
        Expr::Paren(p) => is_place(&p.expr),
        _ => false,
    }
}

/// `e` with its elementary-function calls routed to `reduce_core::math` and its run-time indices
/// checked by `reduce_core::fault` (at `krate`).
pub(super) fn route(e: &Expr, krate: &TokenStream) -> Expr {
    let mut e = e.clone();
    Router { krate }.visit_expr_mut(&mut e);
    e
}

/// A function item with its body rewritten as [`route`] does (a `#[device_fn]`'s Rust side).
pub(super) fn route_fn(item: &syn::ItemFn, krate: &TokenStream) -> syn::ItemFn {
    let mut item = item.clone();
    Router { krate }.visit_block_mut(&mut item.block);
    item
}
