//! The final stage of `#[derive(Monoid)]`: the `Monoid`, `CudaMonoid` and `Lift` impls with the
//! translated text, or the error and a stub.

use super::parts::{
    allow_untranslatable_lints, can_fault, const_checks, define_deps, fn_body, format_text,
};
use super::structs::struct_core_impls;
use crate::ast::StructInput;
use crate::errors::Errors;
use crate::resolve::{self, State};
use crate::text::{self, MonoidParts};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, LitStr};

pub(super) fn monoid_body(state: &State) -> syn::Result<TokenStream> {
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
    // The Rust side does what the translation does: reduce_core::math's routines, checked
    // run-time indices (`rust_side`). A hand-written `cuda` replaces the combine's translation
    // only, so the combine stays as written; the identity is translated either way.
    let identity_body = fn_body(&super::rust_side::route(identity, krate));
    let combine_body = fn_body(&match input.attrs.cuda {
        None => super::rust_side::route(&c.body, krate),
        Some(_) => c.body.clone(),
    });
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
        let body = fn_body(&super::rust_side::route(&closure.body, krate));
        let mut input_refs = Vec::new();
        resolve::type_refs(ty, &[], &mut input_refs);
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

/// Impls with bodies that are never run: the real error has been reported.
pub(super) fn monoid_stub(input: &StructInput, krate: TokenStream) -> TokenStream {
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
