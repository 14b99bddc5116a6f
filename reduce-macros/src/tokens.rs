//! Helpers on syn trees and tokens that every stage uses: identifiers without `r#`, expressions
//! without parentheses, token text as rustc prints it, paths that name constants.

use quote::ToTokens;
use syn::{Expr, Ident};

/// Whether a path names a constant by Rust's naming convention (`N`, `MAX_LEN`, `geom::N`):
/// the translation reads such paths as `usize` constants known when the kernel is generated.
pub fn is_const_path(path: &syn::Path) -> bool {
    path.segments.iter().all(|s| s.arguments.is_none())
        && path.segments.last().is_some_and(|s| {
            let name = unraw(&s.ident);
            name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

/// `quote` output with the spaces rustc would not print (`Vec < u8 >` -> `Vec<u8>`).
pub fn tokens_to_string(t: &impl ToTokens) -> String {
    let s = t.to_token_stream().to_string();
    s.replace(" < ", "<")
        .replace("< ", "<")
        .replace(" >", ">")
        .replace(" :: ", "::")
        .replace(":: ", "::")
        .replace(" ,", ",")
        .replace("& ", "&")
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
