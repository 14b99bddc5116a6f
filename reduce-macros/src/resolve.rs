//! Macro-time reflection: how one derive learns the fields of a `#[derive(DeviceCopy)]` struct
//! or the signature of a `#[device_fn]` defined elsewhere in the crate.
//!
//! Every such item (and every monoid) defines a `macro_rules!` named like itself, re-exported
//! next to it, so that `use geom::Point;` also imports the macro `Point!`. Invoked with a
//! continuation state, the macro forwards the state to [`crate::resolve`]'s proc macro with the
//! item's definition prepended (`@info { {struct Point ...} {struct Inner ...} }`): its own
//! definition and those of the structs it mentions, so the information is self-contained.
//!
//! A derive that names unknown items starts a chain: it invokes the first item's macro with
//! the state (`@krate`, `@mode`, the items got so far, the paths still pending, its own
//! input); each hop resolves one path; the last one runs the final expansion with a complete
//! [`World`]. An item's own reflection macro only waits for the structs its definition names
//! (never for functions), so helpers and monoids that use each other do not wait on each other.

use crate::tokens::unraw;
use crate::types::{FnSig, Scalar, StructDef, World};
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::{Error, Path, Result};

/// What the final expansion of a chain produces.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Mode {
    /// A monoid's reflection macro.
    MonoidInfo,
    /// A monoid's impls (translation of identity, combine and lifts).
    MonoidBody,
    /// A `#[derive(DeviceCopy)]` struct's reflection macro and impls.
    Struct,
    /// A `#[device_fn]`'s reflection macro and marker type.
    FnInfo,
    /// A `#[device_fn]`'s `DeviceFn` impl (translation of its body).
    FnBody,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::MonoidInfo => "monoid_info",
            Mode::MonoidBody => "monoid_body",
            Mode::Struct => "struct",
            Mode::FnInfo => "fn_info",
            Mode::FnBody => "fn_body",
        }
    }

    fn parse(s: &str) -> Option<Mode> {
        [
            Mode::MonoidInfo,
            Mode::MonoidBody,
            Mode::Struct,
            Mode::FnInfo,
            Mode::FnBody,
        ]
        .into_iter()
        .find(|m| m.name() == s)
    }
}

/// The continuation state of a chain.
pub struct State {
    /// The path of `reduce_core` the user's crate names (`::reduce_core` or
    /// `::reduce_cuda::reduce_core`).
    pub krate: TokenStream,
    pub mode: Mode,
    /// Reflection items received so far: struct definitions and function signatures.
    pub got: Vec<TokenStream>,
    /// Paths still to look up.
    pub pending: Vec<Path>,
    /// The name (last segment) of the path whose reflection macro this state was sent to: the
    /// first item it prepends must be named so (else the path is an alias).
    pub asked: Option<String>,
    /// The original item (derive input or function).
    pub input: TokenStream,
}

impl State {
    /// Continues the chain: the next lookup, or the state itself (`Err`) when everything is
    /// known. Every path the input names is looked up, even where an item of its name came with
    /// another's definition: the path may name another item of that name, or be an alias.
    pub fn next(mut self) -> std::result::Result<TokenStream, Box<State>> {
        if self.pending.is_empty() {
            return Err(Box::new(self));
        }
        let path = self.pending.remove(0);
        self.asked = Some(unraw(&path.segments.last().expect("a segment").ident));
        let state = self.encode();
        Ok(quote!(#path! { #state }))
    }

    fn encode(&self) -> TokenStream {
        let krate = &self.krate;
        let mode = syn::Ident::new(self.mode.name(), proc_macro2::Span::call_site());
        let got = self.got.iter().map(|g| quote!({ #g }));
        let pending = self.pending.iter().map(|p| quote!(#p ;));
        let asked = self
            .asked
            .as_ref()
            .map(|a| syn::Ident::new(a, proc_macro2::Span::call_site()));
        let input = &self.input;
        quote! {
            @krate [ #krate ] @mode #mode @asked [ #asked ] @got { #(#got)* }
            @pending [ #(#pending)* ] @input { #input }
        }
    }

    /// Parses `@info {..}* @krate [..] @mode m @asked [..] @got {..} @pending [..] @input {..}`.
    pub fn decode(tokens: TokenStream) -> Result<State> {
        let mut it = tokens.into_iter().peekable();
        let mut infos = Vec::new();
        let take = |it: &mut std::iter::Peekable<proc_macro2::token_stream::IntoIter>,
                    key: &str|
         -> Result<TokenTree> {
            match (it.next(), it.next()) {
                (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(id)))
                    if p.as_char() == '@' && id == key =>
                {
                    it.next().ok_or_else(|| bad_state(key))
                }
                _ => Err(bad_state(key)),
            }
        };
        while let Some(TokenTree::Punct(p)) = it.peek() {
            if p.as_char() != '@' {
                break;
            }
            let mut look = it.clone();
            look.next();
            match look.next() {
                Some(TokenTree::Ident(id)) if id == "info" => {
                    let TokenTree::Group(g) = take(&mut it, "info")? else {
                        return Err(bad_state("info"));
                    };
                    infos.extend(braced_items(g.stream()));
                }
                _ => break,
            }
        }
        let group = |t: TokenTree, key: &str| match t {
            TokenTree::Group(g) => Ok(g.stream()),
            _ => Err(bad_state(key)),
        };
        let krate = group(take(&mut it, "krate")?, "krate")?;
        let mode = match take(&mut it, "mode")? {
            TokenTree::Ident(id) => {
                Mode::parse(&id.to_string()).ok_or_else(|| bad_state("mode"))?
            }
            _ => return Err(bad_state("mode")),
        };
        let asked = group(take(&mut it, "asked")?, "asked")?
            .into_iter()
            .find_map(|t| match t {
                TokenTree::Ident(id) => Some(unraw(&id)),
                _ => None,
            });
        let mut got = braced_items(group(take(&mut it, "got")?, "got")?);
        let pending_tokens = group(take(&mut it, "pending")?, "pending")?;
        let input = group(take(&mut it, "input")?, "input")?;
        let mut pending = Vec::new();
        let mut current = TokenStream::new();
        for t in pending_tokens {
            match &t {
                TokenTree::Punct(p) if p.as_char() == ';' => {
                    pending.push(syn::parse2(std::mem::take(&mut current))?);
                }
                _ => current.extend([t]),
            }
        }
        // Items are known by name: a path that names an item by another name, or two items of
        // one name, would be taken for another item.
        if let (Some(asked), Some(own)) = (&asked, infos.first().and_then(item_name)) {
            if *asked != own {
                return Err(Error::new(
                    proc_macro2::Span::call_site(),
                    format!(
                        "`{asked}` names `{own}` by another name (`use … as {asked}`?): the \
                         translation knows structs and device functions by their own names, so \
                         name it `{own}`"
                    ),
                ));
            }
        }
        for info in infos {
            let name = item_name(&info);
            match got.iter().find(|g| item_name(g) == name) {
                None => got.push(info),
                Some(g) if g.to_string() == info.to_string() => {}
                Some(_) => {
                    return Err(Error::new(
                        proc_macro2::Span::call_site(),
                        format!(
                            "two different items are named `{}` here: the translation knows \
                             structs and device functions by name, so rename one",
                            name.unwrap_or_default()
                        ),
                    ))
                }
            }
        }
        Ok(State {
            krate,
            mode,
            got,
            pending,
            asked,
            input,
        })
    }

    /// The world of the received items: structs (typed in dependency order) and functions.
    pub fn world(&self) -> Result<World> {
        let mut world = World::default();
        let mut structs = Vec::new();
        let mut fns = Vec::new();
        for item in &self.got {
            match syn::parse2::<syn::Item>(item.clone()) {
                Ok(syn::Item::Struct(s)) => structs.push(s),
                _ => fns.push(syn::parse2::<syn::ForeignItemFn>(item.clone())?),
            }
        }
        // A struct is typed once the structs its fields name are.
        while !structs.is_empty() {
            let before = structs.len();
            let mut rest = Vec::new();
            for s in structs {
                match struct_def(&world, &s) {
                    Ok(def) => {
                        world.structs.insert(def.name.clone(), def);
                    }
                    Err(_) => rest.push(s),
                }
            }
            if rest.len() == before {
                return Err(struct_def(&world, &rest[0]).expect_err("not typed"));
            }
            structs = rest;
        }
        for f in fns {
            let sig = fn_sig(&world, &f.sig)?;
            world.fns.insert(sig.name.clone(), sig);
        }
        Ok(world)
    }
}

fn bad_state(key: &str) -> Error {
    Error::new(
        proc_macro2::Span::call_site(),
        format!("internal error of #[derive(Monoid)]: malformed continuation state at `@{key}`"),
    )
}

/// `{a} {b}` -> [a, b].
fn braced_items(tokens: TokenStream) -> Vec<TokenStream> {
    tokens
        .into_iter()
        .filter_map(|t| match t {
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => Some(g.stream()),
            _ => None,
        })
        .collect()
}

/// The name of a reflection item (`struct NAME` or `fn NAME`).
fn item_name(item: &TokenStream) -> Option<String> {
    let mut prev_kw = false;
    for t in item.clone() {
        if let TokenTree::Ident(id) = &t {
            let s = id.to_string();
            if prev_kw {
                return Some(s.strip_prefix("r#").unwrap_or(&s).to_owned());
            }
            prev_kw = s == "struct" || s == "fn";
        }
    }
    None
}

fn struct_def(world: &World, s: &syn::ItemStruct) -> Result<StructDef> {
    let node = syn::DeriveInput {
        attrs: s.attrs.clone(),
        vis: s.vis.clone(),
        ident: s.ident.clone(),
        generics: s.generics.clone(),
        data: syn::Data::Struct(syn::DataStruct {
            struct_token: s.struct_token,
            fields: s.fields.clone(),
            semi_token: s.semi_token,
        }),
    };
    let mut errors = crate::errors::Errors::default();
    let input = crate::ast::StructInput::from_syn(&node, true, &mut errors);
    let inner = World {
        const_params: input.const_names(),
        ..world.clone()
    };
    let def = input.def(&inner, &mut errors);
    match (errors.into_error(), def) {
        (None, Some(def)) => Ok(def),
        (Some(e), _) => Err(e),
        (None, None) => unreachable!("an untyped struct reports an error"),
    }
}

fn fn_sig(world: &World, sig: &syn::Signature) -> Result<FnSig> {
    let mut params = Vec::new();
    for input in &sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            params.push(world.ty(&t.ty, false)?);
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Type(_, ty) => world.ty(ty, false)?,
        syn::ReturnType::Default => unreachable!("a #[device_fn] returns a value"),
    };
    Ok(FnSig {
        name: unraw(&sig.ident),
        params,
        ret,
    })
}

/// The reflection item of a struct: `#[repr(..)] struct NAME<const ..> { fields }`, nothing else.
pub fn struct_item(input: &crate::ast::StructInput, node: &syn::DeriveInput) -> TokenStream {
    let repr = &input.repr_attrs;
    let ident = &node.ident;
    let generics = &node.generics;
    let fields = match &node.data {
        syn::Data::Struct(s) => {
            let mut fields = s.fields.clone();
            for f in fields.iter_mut() {
                f.attrs.clear();
            }
            fields
        }
        _ => unreachable!("only structs get a reflection item"),
    };
    let semi = matches!(fields, syn::Fields::Unnamed(_)).then(|| quote!(;));
    quote!(#(#repr)* struct #ident #generics #fields #semi)
}

/// The reflection item of a function: its signature.
pub fn fn_item(item: &syn::ItemFn) -> TokenStream {
    let sig = &item.sig;
    quote!(#sig ;)
}

/// A world in which every name in `refs` is a struct without fields: enough to report the
/// field-type errors that do not depend on other items before any lookup.
pub fn placeholder_world(refs: &[Path]) -> World {
    let mut world = World::default();
    for p in refs {
        let name = unraw(&p.segments.last().expect("a segment").ident);
        world.structs.insert(
            name.clone(),
            StructDef {
                name,
                style: crate::types::Style::Named,
                fields: Vec::new(),
                align: None,
            },
        );
    }
    world
}

/// The paths a type names that may be structs (not scalars, `Self`, or `skip`), every distinct
/// spelling of a name (`Point`, `geom::Point`): each is looked up, so that two different structs
/// of one name, or an alias, are refused rather than one standing for the other.
pub fn type_refs(ty: &syn::Type, skip: &[String], out: &mut Vec<Path>) {
    Refs { skip, out }.visit_type(ty);
}

/// The paths a function body or closure names that may be structs or `#[device_fn]`s: struct
/// literals, calls, and types (annotations, casts, parameters).
pub fn expr_refs(e: &syn::Expr, skip: &[String], out: &mut Vec<Path>) {
    Refs { skip, out }.visit_expr(e);
}

struct Refs<'s> {
    skip: &'s [String],
    out: &'s mut Vec<Path>,
}

impl Refs<'_> {
    fn add(&mut self, path: &Path) {
        let Some(last) = path.segments.last() else {
            return;
        };
        let name = unraw(&last.ident);
        let first = path.segments[0].ident.to_string();
        if name == "Self"
            || self.skip.contains(&name)
            || Scalar::from_rust(&name).is_some()
            || crate::types::unsupported_std(&name).is_some()
            || (path.segments.len() > 1 && Scalar::from_rust(&first).is_some())
        {
            return;
        }
        // Only identifiers: the macro path drops generic arguments (`TopK<K>` -> `TopK`).
        let mut clean = path.clone();
        for seg in clean.segments.iter_mut() {
            seg.arguments = syn::PathArguments::None;
        }
        let spelling = crate::tokens::tokens_to_string(&clean);
        if !(self.out.iter()).any(|p| crate::tokens::tokens_to_string(p) == spelling) {
            self.out.push(clean);
        }
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_type_path(&mut self, t: &'ast syn::TypePath) {
        if t.qself.is_none() {
            self.add(&t.path);
        }
        syn::visit::visit_type_path(self, t);
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        self.add(&s.path);
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = crate::tokens::strip_parens(&c.func) {
            if p.qself.is_none() {
                self.add(&p.path);
            }
        }
        for a in &c.args {
            self.visit_expr(a);
        }
    }

    // Array lengths (`[f32; K]`) and other expressions inside types are not items.
    fn visit_expr_path(&mut self, _: &'ast syn::ExprPath) {}

    // Closures and items inside bodies are rejected by the translation.
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// `#[doc(hidden)] mod __reduce_device_NAME { mod info { macro_rules! NAME .. } }` and the
/// re-export that puts the macro next to the item.
pub fn info_macro(
    krate: &TokenStream,
    name: &syn::Ident,
    own: TokenStream,
    got: &[TokenStream],
    vis_marker: Option<TokenStream>,
) -> TokenStream {
    let module = syn::Ident::new(&format!("__reduce_device_{}", unraw(name)), name.span());
    let items = std::iter::once(own)
        .chain(got.iter().cloned())
        .map(|i| Group::new(Delimiter::Brace, i).into_token_stream());
    let marker = vis_marker.map(|m| {
        quote! {
            pub(crate) mod marker {
                #m
            }
        }
    });
    let reexport_marker = marker.as_ref().map(
        |_| quote!(#[doc(hidden)] #[allow(unused_imports)] pub(crate) use #module::marker::#name;),
    );
    quote! {
        #[doc(hidden)]
        #[allow(non_snake_case, unused_macros, unused_imports)]
        mod #module {
            pub(crate) mod info {
                macro_rules! #name {
                    ($($state:tt)*) => {
                        #krate::__reduce_resolve! { @info { #(#items)* } $($state)* }
                    };
                }
                pub(crate) use #name;
            }
            #marker
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        pub(crate) use #module::info::#name;
        #reexport_marker
    }
}
