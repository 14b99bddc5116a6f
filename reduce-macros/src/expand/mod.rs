//! Token generation: the first stage of each macro (parse, validate, start the reflection
//! chains of `resolve`; this file), and the final stage once every named item is known: the
//! reflection macro ([`info`], this file) and the impls (`structs.rs`, `monoid.rs`,
//! `device_fn.rs`, from the pieces in `parts.rs`), or the errors plus a stub (after thiserror's
//! fallback, so one mistake does not cascade).

mod device_fn;
mod monoid;
mod parts;
mod rust_side;
mod structs;

use crate::ast::{Closure, FnInput, StructInput};
use crate::errors::Errors;
use crate::resolve::{self, Mode, State};
use crate::valid;
use device_fn::device_fn_impl;
use monoid::{monoid_body, monoid_stub};
use parts::{allow_untranslatable_lints, body_expr};
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use structs::struct_impls;
use syn::DeriveInput;

/// Which path the generated impls name the traits by.
#[derive(Clone, Copy)]
pub enum Krate {
    /// `::reduce_core` (the `Monoid`, `DeviceCopy`, `device_fn` macros).
    Core,
    /// `::reduce_cuda::reduce_core` (the `*ViaCuda` macros, re-exported by reduce_cuda).
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

/// Starts a chain: looks up `refs`, then runs `finish`. Without refs, finishes at once.
fn start(krate: TokenStream, mode: Mode, refs: Vec<syn::Path>, input: TokenStream) -> TokenStream {
    let state = State {
        krate,
        mode,
        got: Vec::new(),
        pending: refs,
        asked: None,
        input,
    };
    match state.next() {
        Ok(lookup) => lookup,
        Err(state) => finish(*state),
    }
}

/// The end of a chain.
pub fn finish(state: State) -> TokenStream {
    let result = match state.mode {
        Mode::MonoidInfo | Mode::Struct | Mode::FnInfo => info(&state),
        Mode::MonoidBody => monoid_body(&state),
        Mode::FnBody => device_fn_impl(&state),
    };
    let tokens = match result {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    };
    match state.mode {
        Mode::Struct => {
            let impls = struct_impls(&state).unwrap_or_else(|e| e.to_compile_error());
            quote!(#tokens #impls)
        }
        _ => tokens,
    }
}

pub fn derive_monoid(node: &DeriveInput, krate: Krate) -> TokenStream {
    let mut errors = Errors::default();
    let mut input = StructInput::from_syn(node, true, &mut errors);
    valid::check(&input, &mut errors);
    input.shape_ok &= check_field_shapes(&input, &mut errors);
    if let Some(error) = errors.into_error() {
        let error = error.to_compile_error();
        let stub = if input.shape_ok {
            monoid_stub(&input, krate.path())
        } else {
            TokenStream::new()
        };
        return quote!(#error #stub);
    }
    let mut skip = input.const_names();
    skip.push(input.name.clone());
    let mut info_refs = Vec::new();
    for f in &input.fields {
        resolve::type_refs(&f.ty, &skip, &mut info_refs);
    }
    let mut body_refs = info_refs.clone();
    if let Some(identity) = &input.attrs.identity {
        resolve::expr_refs(identity, &skip, &mut body_refs);
    }
    if let (Some(c), None) = (&input.combine, &input.attrs.cuda) {
        closure_refs(c, &skip, &mut body_refs);
    }
    for (ty, c) in &input.lifts {
        resolve::type_refs(ty, &skip, &mut body_refs);
        closure_refs(c, &skip, &mut body_refs);
    }
    let tokens = node.to_token_stream();
    let krate = krate.path();
    let info = start(krate.clone(), Mode::MonoidInfo, info_refs, tokens.clone());
    let body = start(krate, Mode::MonoidBody, body_refs, tokens);
    quote!(#info #body)
}

fn closure_refs(c: &Closure, skip: &[String], out: &mut Vec<syn::Path>) {
    for (_, ty) in &c.params {
        if let Some(ty) = ty {
            resolve::type_refs(ty, skip, out);
        }
    }
    resolve::expr_refs(&c.body, skip, out);
}

/// Reports, before any lookup, the field types that cannot be right whatever the structs they
/// name are (`usize`, tuples, references, `String`...). Returns whether they are all fine.
fn check_field_shapes(input: &StructInput, errors: &mut Errors) -> bool {
    let mut skip = input.const_names();
    skip.push(input.name.clone());
    let mut refs = Vec::new();
    for f in &input.fields {
        resolve::type_refs(&f.ty, &skip, &mut refs);
    }
    let mut world = resolve::placeholder_world(&refs);
    world.const_params = input.const_names();
    input.def(&world, errors).is_some()
}

pub fn derive_device_copy(node: &DeriveInput, krate: Krate) -> TokenStream {
    let mut errors = Errors::default();
    let input = StructInput::from_syn(node, false, &mut errors);
    valid::check_names(&input, &mut errors);
    check_field_shapes(&input, &mut errors);
    if let Some(error) = errors.into_error() {
        return error.to_compile_error();
    }
    let mut refs = Vec::new();
    for f in &input.fields {
        resolve::type_refs(&f.ty, std::slice::from_ref(&input.name), &mut refs);
    }
    start(krate.path(), Mode::Struct, refs, node.to_token_stream())
}

pub fn device_fn(item: syn::ItemFn, krate: Krate) -> TokenStream {
    let mut errors = Errors::default();
    let Some(input) = FnInput::from_syn(&item, &mut errors) else {
        let error = errors.into_error().map(|e| e.to_compile_error());
        return quote!(#item #error);
    };
    let mut sig_refs = Vec::new();
    for (_, ty, _) in &input.params {
        resolve::type_refs(ty, &[], &mut sig_refs);
    }
    resolve::type_refs(&input.ret, &[], &mut sig_refs);
    let mut body_refs = sig_refs.clone();
    let body = body_expr(&item);
    resolve::expr_refs(&body, &[], &mut body_refs);
    let tokens = item.to_token_stream();
    let krate = krate.path();
    // The Rust side calls reduce_core::math where the translation calls the prelude's routines.
    let rust = rust_side::route_fn(&item, &krate);
    let info = start(krate.clone(), Mode::FnInfo, sig_refs, tokens.clone());
    let body = start(krate, Mode::FnBody, body_refs, tokens);
    let allow = allow_untranslatable_lints();
    quote!(#allow #rust #info #body)
}

/// The reflection macro of a struct, monoid or function (its definition and the structs it
/// names, untyped: consumers type them).
fn info(state: &State) -> syn::Result<TokenStream> {
    let krate = &state.krate;
    if state.mode == Mode::FnInfo {
        let item: syn::ItemFn = syn::parse2(state.input.clone())?;
        let name = &item.sig.ident;
        let marker = quote! {
            #[allow(non_camel_case_types)]
            pub struct #name {}
        };
        return Ok(resolve::info_macro(
            krate,
            name,
            resolve::fn_item(&item),
            &state.got,
            Some(marker),
        ));
    }
    let node: DeriveInput = syn::parse2(state.input.clone())?;
    let mut errors = Errors::default();
    let input = StructInput::from_syn(&node, state.mode == Mode::MonoidInfo, &mut errors);
    Ok(resolve::info_macro(
        krate,
        &node.ident,
        resolve::struct_item(&input, &node),
        &state.got,
        None,
    ))
}
