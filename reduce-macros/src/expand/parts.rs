//! Pieces of generated code that the impls share: the lints allowed on pasted code, function
//! bodies, the CUDA text as a `format!` call, and the code that defines a text's dependencies.

use crate::emit::Hole;
use crate::text::Text;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, LitStr};

/// Clippy lints whose suggested rewrites (iterators, `matches!`, `copy_from_slice`) are outside
/// the translated language: allowed on the code the derives paste.
pub(super) fn allow_untranslatable_lints() -> TokenStream {
    quote!(#[allow(
        clippy::needless_range_loop,
        clippy::match_like_matches_macro,
        clippy::manual_memcpy,
        clippy::needless_return
    )])
}

/// A `#[device_fn]`'s body as a block expression, as the translation checks it.
pub(super) fn body_expr(item: &syn::ItemFn) -> Expr {
    Expr::Block(syn::ExprBlock {
        attrs: Vec::new(),
        label: None,
        block: (*item.block).clone(),
    })
}

/// A function body from an expression: the block itself when it is one, else `{ expr }`.
pub(super) fn fn_body(e: &Expr) -> TokenStream {
    match e {
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
            let block = &b.block;
            quote!(#block)
        }
        _ => quote!({ #e }),
    }
}

/// `format!(template, holes...)` for a text, evaluated in an impl where `Self` is the item.
pub(super) fn format_text(t: &Text) -> TokenStream {
    let mut template = String::new();
    let mut args = Vec::new();
    let mut rest = t.text.as_str();
    while let Some(start) = rest.find('\u{1}') {
        let end = rest[start..].find('\u{2}').expect("a marker ends") + start;
        let i: usize = rest[start + 1..end]
            .parse()
            .expect("a marker holds an index");
        template.push_str(&rest[..start].replace('{', "{{").replace('}', "}}"));
        template.push_str("{}");
        args.push(match &t.holes[i] {
            Hole::Sym(path) => {
                let path: syn::Path = syn::parse_str(path).expect("a path prints back");
                quote!(#path)
            }
            Hole::SizeOf => quote!(::core::mem::size_of::<Self>()),
            Hole::AlignOf => quote!(::core::mem::align_of::<Self>()),
            Hole::OffsetOf(member) => {
                let member: syn::Member = syn::parse_str(member).expect("a member prints back");
                quote!(::core::mem::offset_of!(Self, #member))
            }
        });
        rest = &rest[end + 1..];
    }
    template.push_str(&rest.replace('{', "{{").replace('}', "}}"));
    if args.is_empty() {
        let lit = LitStr::new(&t.text, proc_macro2::Span::call_site());
        quote!(::std::string::String::from(#lit))
    } else {
        quote!(::std::format!(#template, #(#args),*))
    }
}

/// `<PATH as CudaStruct>::cuda_define(defs);` for each struct path, `DeviceFn` for each call.
pub(super) fn define_deps(
    krate: &TokenStream,
    structs: &[syn::Path],
    calls: &[syn::Path],
) -> TokenStream {
    quote! {
        #( <#structs as #krate::CudaStruct>::cuda_define(defs); )*
        #( <#calls as #krate::DeviceFn>::cuda_define(defs); )*
    }
}

/// `FAULTS || <call as DeviceFn>::CAN_FAULT || ...`.
pub(super) fn can_fault(krate: &TokenStream, faults: bool, calls: &[syn::Path]) -> TokenStream {
    quote!(#faults #( || <#calls as #krate::DeviceFn>::CAN_FAULT )*)
}

/// `const _: () = { let _: usize = N; };` for each `usize` constant the text names.
pub(super) fn const_checks(consts: &[syn::Path]) -> TokenStream {
    quote! {
        #( const _: () = { let _: usize = #consts; }; )*
    }
}
