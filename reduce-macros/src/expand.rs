//! Token generation: the `Monoid`, `DeviceCopy` and `CudaMonoid` impls, or the errors plus a stub.

use crate::ast::{Errors, Input, Param};
use crate::translate::{self, Piece};
use crate::valid;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::{DeriveInput, Expr, LitStr};

/// Which path the generated impls name the traits by.
#[derive(Clone, Copy)]
pub enum Krate {
    /// `::reduce_core` (the `Monoid` derive).
    Core,
    /// `::reduce_cuda::reduce_core` (the `MonoidViaCuda` derive, re-exported by reduce_cuda).
    ViaCuda,
}

impl Krate {
    fn path(self) -> TokenStream {
        match self {
            Krate::Core => quote!(::reduce_core),
            Krate::ViaCuda => quote!(::reduce_cuda::reduce_core),
        }
    }
}

pub fn derive(node: &DeriveInput, krate: Krate) -> TokenStream {
    let mut errors = Errors::default();
    let input = Input::from_syn(node, &mut errors);
    valid::check(&input, &mut errors);

    // Types are only known when the shape is fine; translate then, to report closure errors too.
    let mut identity = None;
    let mut combine = None;
    if input.shape_ok {
        if let Some(expr) = &input.attrs.identity {
            match translate::identity(&input, expr) {
                Ok(body) => identity = Some(body),
                Err(e) => errors.push(e),
            }
        }
        if let (Some(c), None) = (&input.combine, &input.attrs.cuda) {
            match translate::combine(&input, c) {
                Ok(body) => combine = Some(body),
                Err(e) => errors.push(e),
            }
        }
    }

    if let Some(error) = errors.into_error() {
        let error = error.to_compile_error();
        // Like thiserror's fallback: a stub impl keeps every use of the type as a monoid from
        // adding errors of its own. Only for a sound shape, where the stub compiles.
        let stub = if input.shape_ok {
            stub(&input, krate)
        } else {
            TokenStream::new()
        };
        return quote!(#error #stub);
    }

    let (identity, combine_text, hand_written) = match (&input.attrs.cuda, combine) {
        (Some(text), _) => (identity.unwrap(), text.value(), true),
        (None, Some(body)) => (identity.unwrap(), body, false),
        (None, None) => unreachable!("translated or reported"),
    };
    let pieces = translate::cuda_text(&input, &identity, &combine_text, hand_written);
    impls(&input, krate, &pieces)
}

fn impls(input: &Input, krate: Krate, pieces: &[Piece]) -> TokenStream {
    let ident = &input.ident;
    let path = krate.path();
    let c = input.combine.as_ref().expect("checked");
    let left = param(&c.left);
    let right = param(&c.right);
    let identity = fn_body(input.attrs.identity.as_ref().expect("checked"));
    let combine = fn_body(&c.body);
    let commutative = input.attrs.commutative.is_some();
    let name = LitStr::new(&input.name, ident.span());

    // `format!` template: the CUDA text with `{}` where the user's crate fills in layout numbers.
    let mut template = String::new();
    let mut args = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => template.push_str(&t.replace('{', "{{").replace('}', "}}")),
            Piece::SizeOf => {
                template.push_str("{}");
                args.push(quote!(::core::mem::size_of::<Self>()));
            }
            Piece::AlignOf => {
                template.push_str("{}");
                args.push(quote!(::core::mem::align_of::<Self>()));
            }
            Piece::OffsetOf(i) => {
                template.push_str("{}");
                let member = &input.fields[*i].member;
                args.push(quote!(::core::mem::offset_of!(Self, #member)));
            }
        }
    }

    // The derive computes the device layout itself; on a target where Rust lays the struct out
    // differently (64-bit fields are 4-aligned on 32-bit x86) fail at compile time, not at kernel
    // compile time.
    let (size, align) = input.layout();
    let size = size as usize;
    let align = align as usize;
    let layout_msg = LitStr::new(
        &format!(
            "#[derive(Monoid)]: on this target the Rust layout of `{}` differs from its CUDA \
             layout (size {size}, align {align}); 64-bit fields must be 8-byte aligned",
            input.name
        ),
        ident.span(),
    );

    quote! {
        #[automatically_derived]
        impl #path::Monoid for #ident {
            #[inline]
            fn identity() -> Self #identity
            #[inline]
            fn combine(#left: Self, #right: Self) -> Self #combine
            const COMMUTATIVE: bool = #commutative;
        }

        // SAFETY: a #[repr(C)] struct of primitive numbers, bools and arrays of them (checked by
        // the derive); the CUDA code only stores values of those field types in it.
        #[automatically_derived]
        unsafe impl #path::DeviceCopy for #ident {}

        // SAFETY: the CUDA struct has the Rust field types in the Rust order, and its size,
        // alignment and offsets are checked against `size_of`/`align_of`/`offset_of!` by
        // static_asserts every time the text is compiled.
        #[automatically_derived]
        unsafe impl #path::CudaMonoid for #ident {
            const CUDA_NAME: &'static str = #name;
            fn cuda_source() -> ::std::string::String {
                ::std::format!(#template, #(#args),*)
            }
        }

        const _: () = ::core::assert!(
            ::core::mem::size_of::<#ident>() == #size
                && ::core::mem::align_of::<#ident>() == #align,
            #layout_msg
        );
    }
}

/// A function body from an expression: the block itself when it is one, else `{ expr }`.
fn fn_body(e: &Expr) -> TokenStream {
    match e {
        Expr::Block(b) if b.label.is_none() && b.attrs.is_empty() => {
            let block = &b.block;
            quote!(#block)
        }
        _ => quote!({ #e }),
    }
}

fn param(p: &Param) -> TokenStream {
    match p {
        Param::Named(id) => quote!(#id),
        Param::Wild(span) => quote_spanned!(*span=> _),
    }
}

/// Impls with bodies that are never run: the real error has been reported.
fn stub(input: &Input, krate: Krate) -> TokenStream {
    let ident = &input.ident;
    let path = krate.path();
    let name = LitStr::new(&input.name, ident.span());
    quote! {
        #[automatically_derived]
        impl #path::Monoid for #ident {
            fn identity() -> Self {
                ::core::unimplemented!()
            }
            fn combine(_: Self, _: Self) -> Self {
                ::core::unimplemented!()
            }
        }
        #[automatically_derived]
        unsafe impl #path::DeviceCopy for #ident {}
        #[automatically_derived]
        unsafe impl #path::CudaMonoid for #ident {
            const CUDA_NAME: &'static str = #name;
            fn cuda_source() -> ::std::string::String {
                ::core::unimplemented!()
            }
        }
    }
}
