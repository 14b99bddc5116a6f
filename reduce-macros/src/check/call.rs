//! Checking what names a struct or a function: struct literals (fields in any order, `..base`),
//! tuple-struct constructors (`Pair(a, b)`), `#[device_fn]` calls, and methods called through
//! their type (`f32::max(a, b)`).

use super::tree::{lookup_method, project_field, Kind, Method, TExpr, T};
use super::{err, Checker, Uses, SUBSET};
use crate::tokens::{strip_parens, tokens_to_string, unraw};
use crate::types::{Scalar, Style, Ty};
use syn::{Expr, Result};

impl<'a> Checker<'a> {
    /// The struct a literal or constructor path names, if it is one the translation knows; an
    /// error for another module's struct named like the monoid
    /// ([`crate::types::World::named_like_self`]).
    fn struct_of_path(&mut self, path: &syn::Path) -> Result<Option<String>> {
        if let Some(e) = self.world.named_like_self(path) {
            return Err(e);
        }
        let Some(last) = path.segments.last() else {
            return Ok(None);
        };
        let name = unraw(&last.ident);
        if path.segments.len() == 1 && name == "Self" && last.arguments.is_none() {
            return Ok(self.world.self_name.clone());
        }
        let ty: syn::Type = syn::Type::Path(syn::TypePath {
            qself: None,
            path: path.clone(),
        });
        Ok(match self.world.ty(&ty, false) {
            Ok(Ty::Struct(name)) => {
                if self.world.self_name.as_deref() != Some(&name) {
                    Uses::add(&mut self.uses.structs, path);
                }
                Some(name)
            }
            _ => None,
        })
    }

    pub(super) fn struct_lit(&mut self, s: &'a syn::ExprStruct, e: &'a Expr) -> Result<TExpr<'a>> {
        let name = match (&s.qself, self.struct_of_path(&s.path)?) {
            (None, Some(name)) => name,
            _ => {
                return Err(err(
                    &s.path,
                    format!(
                        "unknown struct `{}`: struct literals may build `Self`, the monoid's own \
                         struct or a #[derive(DeviceCopy)] struct",
                        tokens_to_string(&s.path)
                    ),
                ));
            }
        };
        let def = self.world.strukt(&name).clone();
        let mut vals: Vec<Option<TExpr<'a>>> = vec![None; def.fields.len()];
        for fv in &s.fields {
            let Some(idx) = def.field(&fv.member) else {
                return Err(err(
                    &fv.member,
                    format!("no field `{}` on `{name}`", tokens_to_string(&fv.member)),
                ));
            };
            if vals[idx].is_some() {
                return Err(err(
                    &fv.member,
                    format!(
                        "field `{}` specified more than once",
                        def.fields[idx].rust_name
                    ),
                ));
            }
            let ty = def.fields[idx].ty.clone();
            let v = self.check(&fv.expr, Some(&ty))?;
            vals[idx] = Some(self.coerce(v, &ty)?);
        }
        if let Some(rest) = &s.rest {
            if vals.iter().all(Option::is_some) {
                // Rust still evaluates the base (an index in it may fault); the translation
                // would drop it.
                return Err(err(
                    rest,
                    "every field is given: the base `..` adds nothing; remove it \
                     (clippy::needless_update)",
                ));
            }
            let ty = Ty::Struct(name.clone());
            let base = self.check(rest, Some(&ty))?;
            let base = self.coerce(base, &ty)?;
            for (i, v) in vals.iter_mut().enumerate() {
                if v.is_none() {
                    *v = Some(project_field(self.world, base.clone(), i));
                }
            }
        } else if s.dot2_token.is_some() {
            return Err(err(s.dot2_token, "`..` needs a base value: `..l`"));
        }
        let missing: Vec<&str> = vals
            .iter()
            .zip(&def.fields)
            .filter(|(v, _)| v.is_none())
            .map(|(_, f)| f.rust_name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(err(
                &s.path,
                format!("missing fields in struct literal: {}", missing.join(", ")),
            ));
        }
        Ok(TExpr {
            kind: Kind::Struct(name.clone(), vals.into_iter().map(Option::unwrap).collect()),
            ty: T::Known(Ty::Struct(name)),
            src: e,
        })
    }

    /// `f32::from_bits(u)` (`u: u32`), `f64::from_bits(u)` (`u: u64`): the float of that bit
    /// pattern.
    fn float_of_bits(&mut self, s: Scalar, c: &'a syn::ExprCall, e: &'a Expr) -> Result<TExpr<'a>> {
        let bits = if s == Scalar::F32 {
            Scalar::U32
        } else {
            Scalar::U64
        };
        let [arg] = c.args.iter().collect::<Vec<_>>()[..] else {
            return Err(err(
                e,
                format!("`from_bits` takes 1 argument(s), {} given", c.args.len()),
            ));
        };
        let v = self.check(arg, Some(&Ty::Scalar(bits)))?;
        let v = self.coerce(v, &Ty::Scalar(bits))?;
        Ok(TExpr {
            kind: Kind::Method(Method::FromBits, Box::new(v), vec![]),
            ty: T::Known(Ty::Scalar(s)),
            src: e,
        })
    }

    /// `u64::from(x)`, `f64::from(x)`, ...: Rust's lossless conversions between primitives
    /// (`From`), which are the `as` casts that keep every value.
    fn lossless(&mut self, to: Scalar, c: &'a syn::ExprCall, e: &'a Expr) -> Result<TExpr<'a>> {
        let [arg] = c.args.iter().collect::<Vec<_>>()[..] else {
            return Err(err(
                e,
                format!("`from` takes 1 argument(s), {} given", c.args.len()),
            ));
        };
        let v = self.check(arg, None)?;
        let T::Known(Ty::Scalar(from)) = v.ty else {
            return Err(err(
                arg,
                match v.ty {
                    T::Int | T::Float => {
                        "the literal's type is ambiguous here: add a suffix (`2u32`, `2.0f32`)"
                            .to_string()
                    }
                    other => format!("`{}::from` of {}", to.rust(), self.ty_name(&other)),
                },
            ));
        };
        if !is_lossless(from, to) {
            return Err(err(
                e,
                format!(
                    "Rust has no `From<{}>` for `{}` (it would lose values): write `as {}`",
                    from.rust(),
                    to.rust(),
                    to.rust()
                ),
            ));
        }
        let cast = |inner: TExpr<'a>, s: Scalar| TExpr {
            kind: Kind::Cast(Box::new(inner)),
            ty: T::Known(Ty::Scalar(s)),
            src: e,
        };
        Ok(match (from, to.is_float()) {
            (a, _) if a == to => v,
            // `bool as f32` is not a cast Rust has: through u8
            (Scalar::Bool, true) => cast(cast(v, Scalar::U8), to),
            _ => cast(v, to),
        })
    }

    pub(super) fn call(&mut self, c: &'a syn::ExprCall, e: &'a Expr) -> Result<TExpr<'a>> {
        let Expr::Path(p) = strip_parens(&c.func) else {
            return Err(err(&c.func, "only named functions can be called"));
        };
        if p.qself.is_some() {
            return Err(err(&c.func, "qualified paths are not supported"));
        }
        let segs = &p.path.segments;
        // `f32::max(a, b)`: a method called through its type.
        if segs.len() == 2 && p.path.leading_colon.is_none() {
            if let Some(s) = Scalar::from_rust(&segs[0].ident.to_string()) {
                if segs[1].ident == "from_bits" && s.is_float() {
                    return self.float_of_bits(s, c, e);
                }
                if segs[1].ident == "from" {
                    return self.lossless(s, c, e);
                }
                if let Some(m) = lookup_method(&segs[1].ident) {
                    let mut args = c.args.iter();
                    let Some(receiver) = args.next() else {
                        return Err(err(e, "missing the receiver argument"));
                    };
                    let recv = self.check(receiver, Some(&Ty::Scalar(s)))?;
                    let recv = self.coerce(recv, &Ty::Scalar(s))?;
                    let rest: Vec<&'a Expr> = args.collect();
                    return self.method_call(m, &segs[1].ident, recv, &rest, e);
                }
            }
        }
        let last = unraw(&segs.last().expect("a path has a segment").ident);
        // A tuple struct's constructor: `Self(a, b)`, `Pair(a, b)`.
        if let Some(name) = self.struct_of_path(&p.path)? {
            let def = self.world.strukt(&name).clone();
            if def.style != Style::Tuple {
                return Err(err(
                    &c.func,
                    format!("`{name}` has named fields: write `{name} {{ field: value, ... }}`"),
                ));
            }
            if c.args.len() != def.fields.len() {
                return Err(err(
                    e,
                    format!(
                        "`{name}` has {} fields but {} values are given",
                        def.fields.len(),
                        c.args.len()
                    ),
                ));
            }
            let mut vals = Vec::new();
            for (a, f) in c.args.iter().zip(&def.fields) {
                let v = self.check(a, Some(&f.ty))?;
                vals.push(self.coerce(v, &f.ty)?);
            }
            return Ok(TExpr {
                kind: Kind::Struct(name.clone(), vals),
                ty: T::Known(Ty::Struct(name)),
                src: e,
            });
        }
        let Some(sig) = self.world.fns.get(&last).cloned() else {
            return Err(err(
                &c.func,
                format!(
                    "`{last}` cannot be called from translated code: mark the function \
                     #[device_fn] ({SUBSET})"
                ),
            ));
        };
        if self.this_fn.as_deref() == Some(last.as_str()) {
            return Err(err(
                &c.func,
                format!("`{last}` calls itself: recursion is not supported on the device"),
            ));
        }
        if c.args.len() != sig.params.len() {
            return Err(err(
                e,
                format!(
                    "`{last}` takes {} argument(s), {} given",
                    sig.params.len(),
                    c.args.len()
                ),
            ));
        }
        let mut args = Vec::new();
        for (a, ty) in c.args.iter().zip(&sig.params) {
            let v = self.check(a, Some(ty))?;
            args.push(self.coerce(v, ty)?);
        }
        Uses::add(&mut self.uses.calls, &p.path);
        Ok(TExpr {
            kind: Kind::Call(last, args),
            ty: T::Known(sig.ret),
            src: e,
        })
    }
}

/// Whether Rust implements `From<from>` for `to` (the lossless conversions between the
/// language's primitives; `usize` from `u8`, `u16` and `bool`, as Rust's).
fn is_lossless(from: Scalar, to: Scalar) -> bool {
    use Scalar::*;
    if from == to {
        return true;
    }
    match from {
        Bool => to != Bool,
        U8 => !matches!(to, I8 | Bool),
        U16 => matches!(to, U32 | U64 | Usize | I32 | I64 | F32 | F64),
        U32 => matches!(to, U64 | I64 | F64),
        U64 => false,
        I8 => matches!(to, I16 | I32 | I64 | F32 | F64),
        I16 => matches!(to, I32 | I64 | F32 | F64),
        I32 => matches!(to, I64 | F64),
        F32 => to == F64,
        I64 | Usize | F64 => false,
    }
}
