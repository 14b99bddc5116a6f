//! `#[derive(Monoid)]` for the reduce framework: one Rust closure becomes both the CPU
//! `Monoid::combine` and the CUDA C++ `m_combine`.
//!
//! Use it through `reduce_cuda::Monoid` (or `reduce_core::Monoid`); the documentation of the
//! derive is on [`macro@Monoid`], [`macro@DeviceCopy`] and [`macro@device_fn`] (the text lives
//! in `doc/*.md`, shown on the pages of all three crates).
//!
//! Layout of this crate (after thiserror-impl and serde_derive): `ast` (syn -> our own tree),
//! `attr` (attribute parsing), `valid` (required keys, reserved names: the rules in `names`),
//! `types` (the language's types), `check` (type checking: expressions, statements), `emit`
//! (CUDA C++ printing: expressions, statements, literals), `text` (the CUDA text of each item),
//! `resolve` (macro-time reflection between derives), `expand` (token generation). `errors`
//! (the error collector) and `tokens` (helpers on syn tokens) are leaves every stage imports.

#![deny(missing_docs)]

mod ast;
mod attr;
mod check;
mod emit;
mod errors;
mod expand;
mod names;
mod resolve;
mod text;
mod tokens;
mod types;
mod valid;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

#[doc = include_str!("../doc/monoid.md")]
#[proc_macro_derive(Monoid, attributes(monoid))]
pub fn derive_monoid(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_monoid(&input, expand::Krate::Core).into()
}

// The same derive, naming the traits as `::reduce_cuda::reduce_core::...`, for crates that depend
// on `reduce_cuda` only: `reduce_cuda::Monoid`, whose page shows these docs. Their examples are
// tested once, on `Monoid` (hence `not(doctest)` on this copy).
#[cfg_attr(not(doctest), doc = include_str!("../doc/monoid.md"))]
#[doc(hidden)]
#[proc_macro_derive(MonoidViaCuda, attributes(monoid))]
pub fn derive_monoid_via_cuda(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_monoid(&input, expand::Krate::ViaCuda).into()
}

#[doc = include_str!("../doc/device_copy.md")]
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_device_copy(&input, expand::Krate::Core).into()
}

// `DeviceCopy` for crates that depend on `reduce_cuda` only (`reduce_cuda::DeviceCopy`).
#[cfg_attr(not(doctest), doc = include_str!("../doc/device_copy.md"))]
#[doc(hidden)]
#[proc_macro_derive(DeviceCopyViaCuda)]
pub fn derive_device_copy_via_cuda(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive_device_copy(&input, expand::Krate::ViaCuda).into()
}

#[doc = include_str!("../doc/device_fn.md")]
#[proc_macro_attribute]
pub fn device_fn(args: TokenStream, item: TokenStream) -> TokenStream {
    device_fn_with(args, item, expand::Krate::Core)
}

// `device_fn` for crates that depend on `reduce_cuda` only (`reduce_cuda::device_fn`).
#[cfg_attr(not(doctest), doc = include_str!("../doc/device_fn.md"))]
#[doc(hidden)]
#[proc_macro_attribute]
pub fn device_fn_via_cuda(args: TokenStream, item: TokenStream) -> TokenStream {
    device_fn_with(args, item, expand::Krate::ViaCuda)
}

fn device_fn_with(args: TokenStream, item: TokenStream, krate: expand::Krate) -> TokenStream {
    let args = proc_macro2::TokenStream::from(args);
    if !args.is_empty() {
        return syn::Error::new_spanned(args, "#[device_fn] takes no arguments")
            .to_compile_error()
            .into();
    }
    let item = parse_macro_input!(item as syn::ItemFn);
    expand::device_fn(item, krate).into()
}

/// The continuation of the macros' reflection chains (see `resolve`); not for direct use.
#[doc(hidden)]
#[proc_macro]
pub fn __reduce_resolve(input: TokenStream) -> TokenStream {
    match resolve::State::decode(input.into()) {
        Ok(state) => match state.next() {
            Ok(lookup) => lookup.into(),
            Err(state) => expand::finish(*state).into(),
        },
        Err(e) => e.to_compile_error().into(),
    }
}
