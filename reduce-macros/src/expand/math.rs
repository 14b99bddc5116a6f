//! The Rust side of the language's elementary functions: in the code the derive emits, `x.exp()`
//! (and `f32::exp(x)`) calls `reduce_core::math::Math::exp(x)`, the routine the CUDA text calls
//! too (`r_exp_f32`), never `std`'s, whose bits differ by platform. The checker has typed every call, so the names are the float methods.

use proc_macro2::TokenStream;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr};

/// Whether the language translates a float method of this name through `reduce_core::math`.
fn routed(name: &str) -> bool {
    matches!(
        name,
        "exp" | "exp2" | "ln" | "log2" | "log10" | "powf" | "powi" | "tanh"
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
                let float =
                    segs.len() == 2 && matches!(segs[0].ident.to_string().as_str(), "f32" | "f64");
                if p.qself.is_some() || !float {
                    return;
                }
                let name = &segs[1].ident;
                if !routed(&name.to_string()) {
                    return;
                }
                *c.func = parse_quote!(#krate::math::Math::#name);
            }
            _ => {}
        }
    }
}

/// `e` with its elementary-function calls routed to `reduce_core::math` (at `krate`).
pub(super) fn route(e: &Expr, krate: &TokenStream) -> Expr {
    let mut e = e.clone();
    Router { krate }.visit_expr_mut(&mut e);
    e
}

/// A function item with its body's calls routed (a `#[device_fn]`'s Rust side).
pub(super) fn route_fn(item: &syn::ItemFn, krate: &TokenStream) -> syn::ItemFn {
    let mut item = item.clone();
    Router { krate }.visit_block_mut(&mut item.block);
    item
}
