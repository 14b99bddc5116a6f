//! The final stage of `#[device_fn]`: the `DeviceFn` impl on the function's marker type, with
//! its translated text.

use super::parts::{body_expr, can_fault, const_checks, define_deps, format_text};
use crate::ast::FnInput;
use crate::errors::Errors;
use crate::resolve::{self, State};
use crate::text;
use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

/// A `#[device_fn]`'s `DeviceFn` impl on its marker type.
pub(super) fn device_fn_impl(state: &State) -> syn::Result<TokenStream> {
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
            params.push((crate::tokens::unraw(name), world.ty(ty, false)?, *mutable));
            resolve::type_refs(ty, &[], &mut structs);
        }
        let ret = world.ty(&input.ret, false)?;
        resolve::type_refs(&input.ret, &[], &mut structs);
        let text = text::device_fn(&world, &input.name, &params, &ret, &body_expr(&item))?;
        for p in &text.uses.structs {
            let spelling = crate::tokens::tokens_to_string(p);
            if !structs
                .iter()
                .any(|q| crate::tokens::tokens_to_string(q) == spelling)
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
