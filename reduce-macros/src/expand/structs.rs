//! The final stage of `#[derive(DeviceCopy)]`, and the struct impls a monoid shares with it:
//! `DeviceCopy`, `CudaStruct` (the CUDA definition) and a compile-time layout check.

use super::parts::{define_deps, format_text};
use crate::ast::StructInput;
use crate::errors::Errors;
use crate::resolve::{self, State};
use crate::text;
use crate::types::World;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, LitStr};

/// The struct paths a struct's fields name, as written.
fn field_struct_paths(input: &StructInput) -> Vec<syn::Path> {
    let mut skip = input.const_names();
    skip.push(input.name.clone());
    let mut refs = Vec::new();
    for f in &input.fields {
        resolve::type_refs(&f.ty, &skip, &mut refs);
    }
    refs
}

/// `DeviceCopy` and `CudaStruct` impls and a compile-time layout check of a typed struct.
pub(super) fn struct_core_impls(
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
    // Field by field, so that padding bytes between and after the fields are never read.
    let members = input.fields.iter().map(|f| &f.member);
    Ok(quote! {
        // SAFETY: a #[repr(C)] struct of primitive numbers, bools, arrays and other such structs
        // (checked by the derive); the CUDA code only stores values of those field types in it;
        // `write_bytes` reads the fields, never the padding.
        #[automatically_derived]
        unsafe impl #impl_g #krate::DeviceCopy for #ident #ty_g #where_c {
            fn write_bytes(&self, out: &mut [u8]) {
                ::core::assert_eq!(out.len(), ::core::mem::size_of::<Self>());
                out.fill(0);
                #(
                    let at = ::core::mem::offset_of!(Self, #members);
                    let field = &self.#members;
                    #krate::DeviceCopy::write_bytes(
                        field,
                        &mut out[at..at + ::core::mem::size_of_val(field)],
                    );
                )*
            }
        }

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

/// A `#[derive(DeviceCopy)]` struct's impls (its reflection macro comes from
/// [`info`](super::info)).
pub(super) fn struct_impls(state: &State) -> syn::Result<TokenStream> {
    let node: DeriveInput = syn::parse2(state.input.clone())?;
    let mut errors = Errors::default();
    let input = StructInput::from_syn(&node, false, &mut errors);
    let world = state.world()?;
    struct_core_impls(&state.krate, &node, &input, &world)
}
