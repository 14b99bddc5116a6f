//! Token generation: the first stage of each macro (parse, validate, start the reflection
//! chains of `resolve`), and the final stage once every named item is known: the impls, or the
//! errors plus a stub (after thiserror's fallback, so one mistake does not cascade).

use crate::ast::{Closure, Errors, FnInput, StructInput};
use crate::emit::Hole;
use crate::resolve::{self, Mode, State};
use crate::text::{self, MonoidParts, Text};
use crate::types::World;
use crate::valid;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{DeriveInput, Expr, LitStr};

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
        input,
    };
    match state.next() {
        Ok(lookup) => lookup,
        Err(state) => finish(state),
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

// ---------------------------------------------------------------------------------------------
// First stages
// ---------------------------------------------------------------------------------------------

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

/// Clippy lints whose suggested rewrites (iterators, `matches!`, `copy_from_slice`) are outside
/// the translated language: allowed on the code the derives paste.
fn allow_untranslatable_lints() -> TokenStream {
    quote!(#[allow(
        clippy::needless_range_loop,
        clippy::match_like_matches_macro,
        clippy::manual_memcpy,
        clippy::needless_return
    )])
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
    let info = start(krate.clone(), Mode::FnInfo, sig_refs, tokens.clone());
    let body = start(krate, Mode::FnBody, body_refs, tokens);
    let allow = allow_untranslatable_lints();
    quote!(#allow #item #info #body)
}

fn body_expr(item: &syn::ItemFn) -> Expr {
    Expr::Block(syn::ExprBlock {
        attrs: Vec::new(),
        label: None,
        block: (*item.block).clone(),
    })
}

// ---------------------------------------------------------------------------------------------
// Final stages
// ---------------------------------------------------------------------------------------------

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

/// `format!(template, holes...)` for a text, evaluated in an impl where `Self` is the item.
fn format_text(t: &Text) -> TokenStream {
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
fn define_deps(krate: &TokenStream, structs: &[syn::Path], calls: &[syn::Path]) -> TokenStream {
    quote! {
        #( <#structs as #krate::CudaStruct>::cuda_define(defs); )*
        #( <#calls as #krate::DeviceFn>::cuda_define(defs); )*
    }
}

/// `FAULTS || <call as DeviceFn>::CAN_FAULT || ...`.
fn can_fault(krate: &TokenStream, faults: bool, calls: &[syn::Path]) -> TokenStream {
    quote!(#faults #( || <#calls as #krate::DeviceFn>::CAN_FAULT )*)
}

/// `const _: () = { let _: usize = N; };` for each `usize` constant the text names.
fn const_checks(consts: &[syn::Path]) -> TokenStream {
    quote! {
        #( const _: () = { let _: usize = #consts; }; )*
    }
}

/// The struct paths a struct's fields name, as written.
fn field_struct_paths(input: &StructInput) -> Vec<syn::Path> {
    let mut skip = input.const_names();
    skip.push(input.name.clone());
    let mut refs = Vec::new();
    for f in &input.fields {
        resolve::type_paths(&f.ty, &skip, &mut refs);
    }
    refs
}

/// `DeviceCopy` and `CudaStruct` impls and a compile-time layout check of a typed struct.
fn struct_core_impls(
    krate: &TokenStream,
    node: &DeriveInput,
    input: &StructInput,
    world: &World,
) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let Some(def) = input.def(world, &mut errors) else {
        return Err(errors
            .into_error()
            .expect("an untyped struct reports an error"));
    };
    let ident = &node.ident;
    let (impl_g, ty_g, where_c) = node.generics.split_for_impl();
    let text = text::struct_def(world, &def);
    let text = format_text(&text);
    let deps = define_deps(krate, &field_struct_paths(input), &[]);
    let name = LitStr::new(&input.name, ident.span());
    let layout = world.struct_layout(&def).map(|(size, align)| {
        let (size, align) = (size as usize, align as usize);
        let msg = LitStr::new(
            &format!(
                "on this target the Rust layout of `{}` differs from its CUDA layout (size \
                 {size}, align {align}); 64-bit fields must be 8-byte aligned",
                input.name
            ),
            ident.span(),
        );
        quote! {
            const _: () = ::core::assert!(
                ::core::mem::size_of::<#ident>() == #size
                    && ::core::mem::align_of::<#ident>() == #align,
                #msg
            );
        }
    });
    let layout = if input.const_params.is_empty() {
        layout
    } else {
        None
    };
    Ok(quote! {
        // SAFETY: a #[repr(C)] struct of primitive numbers, bools, arrays and other such structs
        // (checked by the derive); the CUDA code only stores values of those field types in it.
        #[automatically_derived]
        unsafe impl #impl_g #krate::DeviceCopy for #ident #ty_g #where_c {}

        // SAFETY: the CUDA struct has the Rust field types in the Rust order, and its size,
        // alignment and offsets are checked against `size_of`/`align_of`/`offset_of!` by
        // static_asserts every time the text is compiled.
        #[automatically_derived]
        unsafe impl #impl_g #krate::CudaStruct for #ident #ty_g #where_c {
            fn cuda_define(defs: &mut #krate::CudaDefs) {
                if !defs.enter(::core::any::TypeId::of::<Self>(), #name) {
                    return;
                }
                #deps
                defs.add_struct(&#text);
            }
        }

        #layout
    })
}

/// A `#[derive(DeviceCopy)]` struct's impls (its reflection macro comes from [`info`]).
fn struct_impls(state: &State) -> syn::Result<TokenStream> {
    let node: DeriveInput = syn::parse2(state.input.clone())?;
    let mut errors = Errors::default();
    let input = StructInput::from_syn(&node, false, &mut errors);
    let world = state.world()?;
    struct_core_impls(&state.krate, &node, &input, &world)
}

fn monoid_body(state: &State) -> syn::Result<TokenStream> {
    let node: DeriveInput = syn::parse2(state.input.clone())?;
    let mut errors = Errors::default();
    let input = StructInput::from_syn(&node, true, &mut errors);
    let krate = &state.krate;
    match monoid_impls(state, &node, &input) {
        Ok(tokens) => Ok(tokens),
        Err(e) => {
            let error = e.to_compile_error();
            let stub = monoid_stub(&input, krate.clone());
            Ok(quote!(#error #stub))
        }
    }
}

fn monoid_impls(
    state: &State,
    node: &DeriveInput,
    input: &StructInput,
) -> syn::Result<TokenStream> {
    let krate = &state.krate;
    let mut world = state.world()?;
    world.const_params = input.const_names();
    world.self_name = Some(input.name.clone());
    let mut errors = Errors::default();
    let Some(def) = input.def(&world, &mut errors) else {
        return Err(errors
            .into_error()
            .expect("an untyped struct reports an error"));
    };
    world.structs.insert(def.name.clone(), def);
    let core = struct_core_impls(krate, node, input, &world)?;

    let identity = input.attrs.identity.as_ref().expect("checked");
    let (header, rest) = text::monoid(&MonoidParts {
        world: &world,
        name: &input.name,
        const_params: &world.const_params,
        commutative: input.attrs.commutative.is_some(),
        identity,
        combine: input.combine.as_ref(),
        hand_written: input.attrs.cuda.as_ref().map(LitStr::value),
    })?;
    let mut lifts = Vec::new();
    for (ty, closure) in &input.lifts {
        let input_ty = world.ty(ty, false)?;
        lifts.push((
            ty,
            closure,
            text::lift(&world, &input.name, &input_ty, closure)?,
        ));
    }

    let ident = &node.ident;
    let (impl_g, ty_g, where_c) = node.generics.split_for_impl();
    let c = input.combine.as_ref().expect("checked");
    let left = c.params[0].0.to_tokens();
    let right = c.params[1].0.to_tokens();
    let identity_body = fn_body(identity);
    let combine_body = fn_body(&c.body);
    let commutative = input.attrs.commutative.is_some();
    let name = LitStr::new(&input.name, ident.span());
    let allow = allow_untranslatable_lints();

    let rest_uses = &rest.uses;
    let deps = define_deps(krate, &rest_uses.structs, &rest_uses.calls);
    let faults = can_fault(krate, rest_uses.faults, &rest_uses.calls);
    let header_text = format_text(&header);
    let rest_text = format_text(&rest);
    let mut consts = rest_uses.consts.clone();

    let lift_impls = lifts.iter().map(|(ty, closure, lift)| {
        let x = closure.params[0].0.to_tokens();
        let i = closure.params[1].0.to_tokens();
        let body = fn_body(&closure.body);
        let mut input_refs = Vec::new();
        resolve::type_paths(ty, &[], &mut input_refs);
        let lift_deps = define_deps(krate, &lift.uses.structs, &lift.uses.calls);
        let lift_faults = can_fault(krate, lift.uses.faults, &lift.uses.calls);
        let lift_text = format_text(lift);
        quote! {
            // SAFETY: `m_lift` is the translation of `lift`, and `r_in` is the CUDA struct (or
            // primitive) of the input type, whose layout is checked like the monoid's.
            #[automatically_derived]
            unsafe impl #impl_g #krate::Lift<#ty> for #ident #ty_g #where_c {
                #[inline]
                #allow
                fn lift(#x: #ty, #i: u64) -> Self #body
                const LIFT_CAN_FAULT: bool = #lift_faults;
                fn cuda_source_lifted() -> ::std::string::String {
                    let mut defs = #krate::CudaDefs::default();
                    {
                        let defs = &mut defs;
                        <Self as #krate::CudaStruct>::cuda_define(defs);
                        #deps
                        #( <#input_refs as #krate::CudaStruct>::cuda_define(defs); )*
                        #lift_deps
                    }
                    let mut text = #header_text;
                    text.push_str(&defs.finish());
                    text.push_str(&#rest_text);
                    text.push_str(&#lift_text);
                    text
                }
            }
        }
    });
    for (_, _, lift) in &lifts {
        consts.extend(lift.uses.consts.iter().cloned());
    }
    let consts = const_checks(&consts);

    Ok(quote! {
        #[automatically_derived]
        impl #impl_g #krate::Monoid for #ident #ty_g #where_c {
            #[inline]
            #allow
            fn identity() -> Self #identity_body
            #[inline]
            #allow
            fn combine(#left: Self, #right: Self) -> Self #combine_body
            const COMMUTATIVE: bool = #commutative;
        }

        #core

        // SAFETY: `M` is the CUDA struct of `Self` (layout checked by static_asserts), and
        // `m_identity`/`m_combine` are the translations of `identity` and `combine`, which
        // only store values of the field types.
        #[automatically_derived]
        unsafe impl #impl_g #krate::CudaMonoid for #ident #ty_g #where_c {
            const CUDA_NAME: &'static str = #name;
            const CAN_FAULT: bool = #faults;
            fn cuda_source() -> ::std::string::String {
                let mut defs = #krate::CudaDefs::default();
                {
                    let defs = &mut defs;
                    <Self as #krate::CudaStruct>::cuda_define(defs);
                    #deps
                }
                let mut text = #header_text;
                text.push_str(&defs.finish());
                text.push_str(&#rest_text);
                text
            }
        }

        #( #lift_impls )*
        #consts
    })
}

/// A `#[device_fn]`'s `DeviceFn` impl on its marker type.
fn device_fn_impl(state: &State) -> syn::Result<TokenStream> {
    let item: syn::ItemFn = syn::parse2(state.input.clone())?;
    let krate = &state.krate;
    let mut errors = Errors::default();
    let input = FnInput::from_syn(&item, &mut errors).expect("checked in the first stage");
    let world = state.world()?;
    let module = syn::Ident::new(
        &format!("__reduce_device_{}", input.name),
        item.sig.ident.span(),
    );
    let ident = &item.sig.ident;
    let marker = quote!(#module::marker::#ident);
    let result = (|| -> syn::Result<TokenStream> {
        let mut params = Vec::new();
        let mut structs = Vec::new();
        for (name, ty, mutable) in &input.params {
            params.push((crate::ast::unraw(name), world.ty(ty, false)?, *mutable));
            resolve::type_paths(ty, &[], &mut structs);
        }
        let ret = world.ty(&input.ret, false)?;
        resolve::type_paths(&input.ret, &[], &mut structs);
        let text = text::device_fn(&world, &input.name, &params, &ret, &body_expr(&item))?;
        for p in &text.uses.structs {
            let spelling = crate::ast::tokens_to_string(p);
            if !structs
                .iter()
                .any(|q| crate::ast::tokens_to_string(q) == spelling)
            {
                structs.push(p.clone());
            }
        }
        let deps = define_deps(krate, &structs, &text.uses.calls);
        let faults = can_fault(krate, text.uses.faults, &text.uses.calls);
        let consts = const_checks(&text.uses.consts);
        let cuda_name = LitStr::new(&format!("fn_{}", input.name), ident.span());
        let text = format_text(&text);
        Ok(quote! {
            #[automatically_derived]
            impl #krate::DeviceFn for #marker {
                const CAN_FAULT: bool = #faults;
                fn cuda_define(defs: &mut #krate::CudaDefs) {
                    if !defs.enter(::core::any::TypeId::of::<Self>(), #cuda_name) {
                        return;
                    }
                    #deps
                    defs.add_function(&#text);
                }
            }
            #consts
        })
    })();
    Ok(result.unwrap_or_else(|e| {
        let error = e.to_compile_error();
        quote! {
            #error
            impl #krate::DeviceFn for #marker {
                const CAN_FAULT: bool = false;
                fn cuda_define(_: &mut #krate::CudaDefs) {}
            }
        }
    }))
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

/// Impls with bodies that are never run: the real error has been reported.
fn monoid_stub(input: &StructInput, krate: TokenStream) -> TokenStream {
    let ident = &input.ident;
    let (impl_g, ty_g, where_c) = input.generics.split_for_impl();
    let name = LitStr::new(&input.name, ident.span());
    let lifts = input.lifts.iter().map(|(ty, _)| ty);
    quote! {
        #[automatically_derived]
        impl #impl_g #krate::Monoid for #ident #ty_g #where_c {
            fn identity() -> Self {
                ::core::unimplemented!()
            }
            fn combine(_: Self, _: Self) -> Self {
                ::core::unimplemented!()
            }
        }
        #[automatically_derived]
        unsafe impl #impl_g #krate::DeviceCopy for #ident #ty_g #where_c {}
        #[automatically_derived]
        unsafe impl #impl_g #krate::CudaStruct for #ident #ty_g #where_c {
            fn cuda_define(_: &mut #krate::CudaDefs) {}
        }
        #[automatically_derived]
        unsafe impl #impl_g #krate::CudaMonoid for #ident #ty_g #where_c {
            const CUDA_NAME: &'static str = #name;
            fn cuda_source() -> ::std::string::String {
                ::core::unimplemented!()
            }
        }
        #(
            #[automatically_derived]
            unsafe impl #impl_g #krate::Lift<#lifts> for #ident #ty_g #where_c {
                fn lift(_: #lifts, _: u64) -> Self {
                    ::core::unimplemented!()
                }
                fn cuda_source_lifted() -> ::std::string::String {
                    ::core::unimplemented!()
                }
            }
        )*
    }
}
