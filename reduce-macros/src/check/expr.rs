//! Checking expressions: literals, paths, fields, indices, array literals and `if`/`else`
//! (operators, casts and methods are in `ops.rs`, struct literals and calls in `call.rs`).

use super::ops::constant;
use super::tree::{project_elem, project_field, FloatVal, Kind, TExpr, T};
use super::{err, Checker, SUBSET};
use crate::tokens::{is_const_path, strip_parens, tokens_to_string, unraw};
use crate::types::{Len, Scalar, Ty};
use quote::ToTokens;
use syn::{Error, Expr, Lit, Member, Result};

/// The longest `[x; n]` of a literal `n` written out as a brace list of its elements.
const MAX_LISTED_REPEAT: u64 = 64;

/// A non-negative integer literal (`3`, `3usize`), as used for constant indices and lengths.
pub fn index_literal(e: &Expr) -> Option<u64> {
    match strip_parens(e) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(n), ..
        }) if n.suffix().is_empty() || n.suffix() == "usize" => n.base10_parse::<u64>().ok(),
        _ => None,
    }
}

impl<'a> Checker<'a> {
    pub fn check(&mut self, e: &'a Expr, hint: Option<&Ty>) -> Result<TExpr<'a>> {
        let mk = |kind, ty| Ok(TExpr { kind, ty, src: e });
        match e {
            Expr::Paren(p) => self.check(&p.expr, hint),
            Expr::Group(g) => self.check(&g.expr, hint),
            Expr::Lit(l) => self.lit(&l.lit, e),
            Expr::Path(p) => self.path(p, e),
            Expr::Field(f) => {
                let base = self.check(&f.base, None)?;
                self.field(base, &f.member)
            }
            Expr::Index(i) => self.index(i, e),
            Expr::Array(a) => {
                let elem_hint = match hint {
                    Some(Ty::Array(elem, _)) => Some((**elem).clone()),
                    _ => None,
                };
                if a.elems.is_empty() {
                    return Err(err(e, "empty arrays are not supported"));
                }
                // Like rustc, the first element of known type types the others (an inner
                // array of unsuffixed literals needs it).
                let mut hint = elem_hint;
                let mut elems = Vec::new();
                let mut deferred = None;
                for x in &a.elems {
                    match self.check(x, hint.as_ref()) {
                        Ok(t) => {
                            if let (None, T::Known(k)) = (&hint, &t.ty) {
                                hint = Some(k.clone());
                            }
                            elems.push(Some(t));
                        }
                        Err(error) if hint.is_none() => {
                            deferred.get_or_insert(error);
                            elems.push(None);
                        }
                        Err(error) => return Err(error),
                    }
                }
                let elems = match (deferred, &hint) {
                    (None, _) => elems.into_iter().flatten().collect::<Vec<_>>(),
                    (Some(_), Some(h)) => a
                        .elems
                        .iter()
                        .zip(elems)
                        .map(|(x, t)| match t {
                            Some(t) => Ok(t),
                            None => self.check(x, Some(h)),
                        })
                        .collect::<Result<Vec<_>>>()?,
                    (Some(error), None) => return Err(error),
                };
                let elem_ty = self.array_elem_ty(&elems, hint, e)?;
                let elems = elems
                    .into_iter()
                    .map(|x| self.coerce(x, &elem_ty))
                    .collect::<Result<Vec<_>>>()?;
                let n = elems.len() as u64;
                mk(
                    Kind::Array(elems),
                    T::Known(Ty::Array(Box::new(elem_ty), Len::Lit(n))),
                )
            }
            Expr::Repeat(r) => {
                let len = self.world.len(&r.len)?;
                if let Len::Sym(_) = &len {
                    self.note_const(&r.len);
                }
                let elem_hint = match hint {
                    Some(Ty::Array(elem, _)) => Some((**elem).clone()),
                    _ => None,
                };
                let x = self.check(&r.expr, elem_hint.as_ref())?;
                let elem_ty = self.array_elem_ty(std::slice::from_ref(&x), elem_hint, e)?;
                let x = self.coerce(x, &elem_ty)?;
                let ty = T::Known(Ty::Array(Box::new(elem_ty), len.clone()));
                match len {
                    // A short one as its elements (a brace list); a long one, like one of a
                    // named length, filled on the device (`r_fill`): `[0; 100_000_000]` is one
                    // node, not a hundred million.
                    Len::Lit(n) if n <= MAX_LISTED_REPEAT => {
                        mk(Kind::Array(vec![x; n as usize]), ty)
                    }
                    len => mk(Kind::Repeat(Box::new(x), len), ty),
                }
            }
            Expr::Struct(s) => self.struct_lit(s, e),
            Expr::Call(c) => self.call(c, e),
            Expr::Unary(u) => self.unary(u, hint, e),
            Expr::Binary(b) => self.binary(b, e),
            Expr::Cast(c) => self.cast(c, e),
            Expr::MethodCall(m) => self.method(m, e),
            Expr::If(i) => self.if_expr(i, hint, e),
            Expr::Block(b) => {
                if let Some(label) = &b.label {
                    return Err(err(label, "labelled blocks are not supported"));
                }
                self.value_scope(|c| c.block_value(&b.block, hint, e))
            }
            Expr::Match(m) => self.value_scope(|c| c.match_value(m, hint, e)),
            _ => Err(unsupported(e)),
        }
    }

    fn array_elem_ty(&self, elems: &[TExpr], hint: Option<Ty>, e: &Expr) -> Result<Ty> {
        if let Some(h) = hint {
            return Ok(h);
        }
        for x in elems {
            if let T::Known(t) = &x.ty {
                return Ok(t.clone());
            }
        }
        Err(err(
            e,
            "cannot infer the element type of this array: add a suffix to a literal (`1u32`) or \
             a type annotation",
        ))
    }

    /// Records a `usize` constant named in the body (checked by the generated Rust code).
    fn note_const(&mut self, e: &Expr) {
        if let Expr::Path(p) = strip_parens(e) {
            let name = tokens_to_string(&p.path);
            if !self.world.const_params.contains(&name) {
                super::Uses::add(&mut self.uses.consts, &p.path);
            }
        }
    }

    fn index(&mut self, i: &'a syn::ExprIndex, e: &'a Expr) -> Result<TExpr<'a>> {
        let base = self.check(&i.expr, None)?;
        self.index_of(base, i, e)
    }

    /// `base[index]` on a place (assignments) or a value.
    pub(super) fn index_of(
        &mut self,
        base: TExpr<'a>,
        i: &'a syn::ExprIndex,
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        let (elem, len) = match base.known() {
            Ty::Array(elem, len) => ((**elem).clone(), len.clone()),
            other => {
                return Err(err(
                    &i.expr,
                    format!("only arrays can be indexed; this is `{}`", other.rust()),
                ))
            }
        };
        if let (Some(k), Len::Lit(n)) = (index_literal(&i.index), &len) {
            if k >= *n {
                return Err(err(
                    &i.index,
                    format!("index {k} is out of bounds for an array of length {n}"),
                ));
            }
            return Ok(project_elem(base, k));
        }
        let usize_ty = Ty::Scalar(Scalar::Usize);
        let index = self.check(&i.index, Some(&usize_ty))?;
        let index = self.coerce(index, &usize_ty)?;
        let checked = !self.in_bounds(&index, &len);
        self.uses.faults |= checked;
        Ok(TExpr {
            kind: Kind::DynIndex(Box::new(base), Box::new(index), len, checked),
            ty: T::Known(elem),
            src: e,
        })
    }

    fn lit(&self, lit: &Lit, e: &'a Expr) -> Result<TExpr<'a>> {
        let mk = |kind, ty| Ok(TExpr { kind, ty, src: e });
        match lit {
            Lit::Int(n) => {
                let suffix = n.suffix();
                if suffix == "f32" || suffix == "f64" {
                    let s = Scalar::from_rust(suffix).unwrap();
                    let digits = n.base10_digits().to_owned();
                    return mk(
                        Kind::Float(FloatVal::Digits(digits)),
                        T::Known(Ty::Scalar(s)),
                    );
                }
                let value = n
                    .base10_parse::<i128>()
                    .map_err(|_| err(n, "integer literal too large"))?;
                let ty = match suffix {
                    "" => T::Int,
                    s => match Scalar::from_rust(s) {
                        Some(s) if s.is_int() => T::Known(Ty::Scalar(s)),
                        _ => {
                            return Err(err(
                                n,
                                format!(
                                    "unsupported literal suffix `{s}`: use one of u8, i8, u16, \
                                     i16, u32, i32, u64, i64, usize, f32, f64"
                                ),
                            ))
                        }
                    },
                };
                mk(Kind::Int(value), ty)
            }
            Lit::Float(f) => {
                let ty = match f.suffix() {
                    "" => T::Float,
                    "f32" => T::Known(Ty::Scalar(Scalar::F32)),
                    "f64" => T::Known(Ty::Scalar(Scalar::F64)),
                    s => {
                        return Err(err(f, format!("unsupported float literal suffix `{s}`")));
                    }
                };
                mk(
                    Kind::Float(FloatVal::Digits(f.base10_digits().to_owned())),
                    ty,
                )
            }
            Lit::Bool(b) => mk(Kind::Bool(b.value), T::Known(Ty::Scalar(Scalar::Bool))),
            Lit::Byte(b) => mk(
                Kind::Int(i128::from(b.value())),
                T::Known(Ty::Scalar(Scalar::U8)),
            ),
            Lit::Char(_) => Err(err(
                lit,
                "char literals are not supported (CUDA C++ has no `char` matching Rust's); use a \
                 byte literal (`b'a'`) or a u32 code point",
            )),
            _ => Err(err(lit, "this literal cannot be translated to CUDA")),
        }
    }

    fn path(&mut self, p: &'a syn::ExprPath, e: &'a Expr) -> Result<TExpr<'a>> {
        let mk = |kind, ty| Ok(TExpr { kind, ty, src: e });
        if p.qself.is_some() {
            return Err(err(e, "qualified paths are not supported"));
        }
        let segs = &p.path.segments;
        if segs.iter().any(|s| !s.arguments.is_none()) {
            return Err(err(e, "generic arguments are not supported"));
        }
        if segs.len() == 1 && p.path.leading_colon.is_none() {
            let name = unraw(&segs[0].ident);
            if let Some(b) = self.scopes.iter().rev().find(|b| b.rust == name) {
                return mk(Kind::Var(b.cuda.clone()), T::Known(b.ty.clone()));
            }
            if name == "Self" || self.world.structs.contains_key(&name) {
                return Err(err(
                    e,
                    format!(
                        "`{name}` is a type here, not a value; write a struct literal `{name} {{ \
                         ... }}`"
                    ),
                ));
            }
        }
        // `std::f32::consts::PI` (or `core::`): the value of Rust's constant.
        if segs.len() == 4
            && matches!(segs[0].ident.to_string().as_str(), "std" | "core")
            && segs[2].ident == "consts"
        {
            if let Some(s) = Scalar::from_rust(&segs[1].ident.to_string()).filter(|s| s.is_float())
            {
                let name = segs[3].ident.to_string();
                let Some(kind) = float_constant(s, &name) else {
                    return Err(err(
                        &segs[3].ident,
                        format!("unknown constant `{name}` of `{}::consts`", s.rust()),
                    ));
                };
                return mk(kind, T::Known(Ty::Scalar(s)));
            }
        }
        if segs.len() == 2 && p.path.leading_colon.is_none() {
            let ty = segs[0].ident.to_string();
            let konst = segs[1].ident.to_string();
            if let Some(s) = Scalar::from_rust(&ty) {
                if let Some((kind, ty)) = constant(s, &konst) {
                    return mk(kind, T::Known(Ty::Scalar(ty)));
                }
                let supported = if s.is_float() {
                    "INFINITY, NEG_INFINITY, NAN, MAX, MIN, MIN_POSITIVE, EPSILON"
                } else if s.is_int() {
                    "MAX, MIN, BITS"
                } else {
                    "none"
                };
                return Err(err(
                    &segs[1].ident,
                    format!(
                        "unsupported constant `{ty}::{konst}` (supported for {ty}: {supported})"
                    ),
                ));
            }
        }
        let scalar_first = Scalar::from_rust(&segs[0].ident.to_string()).is_some();
        if is_const_path(&p.path) && !scalar_first {
            self.note_const(e);
            return mk(
                Kind::Sym(tokens_to_string(&p.path)),
                T::Known(Ty::Scalar(Scalar::Usize)),
            );
        }
        if segs.len() == 1 {
            let name = unraw(&segs[0].ident);
            return Err(err(
                e,
                format!(
                    "cannot find `{name}`: the CUDA translation knows the parameters, local \
                     variables, `usize` constants (named in capitals) and #[device_fn] functions"
                ),
            ));
        }
        Err(err(
            e,
            format!(
                "unsupported path `{}`: only parameters, locals, `usize` constants and \
                 constants such as `u32::MAX` or `f32::INFINITY` can be translated",
                tokens_to_string(&p.path)
            ),
        ))
    }

    pub(super) fn field(&self, base: TExpr<'a>, member: &Member) -> Result<TExpr<'a>> {
        let name = match &base.ty {
            T::Known(Ty::Struct(name)) => name.clone(),
            other => {
                return Err(err(
                    member,
                    format!(
                        "field access is supported only on struct values; this is {}",
                        self.ty_name(other)
                    ),
                ))
            }
        };
        let def = self.world.strukt(&name);
        let Some(idx) = def.field(member) else {
            return Err(err(
                member,
                format!("no field `{}` on `{name}`", tokens_to_string(member)),
            ));
        };
        Ok(project_field(self.world, base, idx))
    }

    fn if_expr(&mut self, i: &'a syn::ExprIf, hint: Option<&Ty>, e: &'a Expr) -> Result<TExpr<'a>> {
        if let Expr::Let(l) = &*i.cond {
            return Err(err(
                l.let_token,
                "`if let` is not supported; use a plain condition",
            ));
        }
        let cond = self.check(&i.cond, None)?;
        let cond = self.coerce(cond, &Ty::Scalar(Scalar::Bool))?;
        let then = self.value_scope(|c| c.block_value(&i.then_branch, hint, e))?;
        let Some((_, else_expr)) = &i.else_branch else {
            return Err(err(
                i.if_token,
                "`if` without `else` has no value; add an `else` branch (or use it as a \
                 statement)",
            ));
        };
        let other = self.check(else_expr, hint)?;
        let (then, other, ty) = self.unify(then, other, i.if_token.span, || {
            "`if` and `else` have different types".to_owned()
        })?;
        Ok(TExpr {
            kind: Kind::If(Box::new(cond), Box::new(then), Box::new(other)),
            ty,
            src: e,
        })
    }
}

const NO_WHILE: &str = "`while` loops are not supported: their trip count cannot be bounded \
                        when the kernel is generated; use `for i in 0..N` (with `break`)";

/// The error for a construct outside the language, at its keyword or operator.
pub fn unsupported(e: &Expr) -> Error {
    let (tokens, msg): (proc_macro2::TokenStream, String) = match e {
        Expr::ForLoop(x) => (
            x.for_token.to_token_stream(),
            "a `for` loop is a statement: it has no value here".into(),
        ),
        Expr::While(x) => (x.while_token.to_token_stream(), NO_WHILE.into()),
        Expr::Loop(x) => (
            x.loop_token.to_token_stream(),
            "`loop` is not supported: its trip count cannot be bounded when the kernel is \
             generated; use `for i in 0..N` with `break`"
                .into(),
        ),
        Expr::Return(x) => (
            x.return_token.to_token_stream(),
            "`return` is supported only as a statement outside blocks with a value".into(),
        ),
        Expr::Break(x) => (
            x.break_token.to_token_stream(),
            "`break` is supported only as a statement in a `for` loop, outside blocks with a \
             value"
                .into(),
        ),
        Expr::Continue(x) => (
            x.continue_token.to_token_stream(),
            "`continue` is supported only as a statement in a `for` loop, outside blocks with a \
             value"
                .into(),
        ),
        Expr::Try(x) => (
            x.question_token.to_token_stream(),
            "the `?` operator is not supported".into(),
        ),
        Expr::Reference(x) => (
            x.and_token.to_token_stream(),
            "references are not supported: use values (monoid items are `Copy`)".into(),
        ),
        Expr::Assign(x) => (
            x.eq_token.to_token_stream(),
            "an assignment is a statement: write it on its own, ending with `;`".into(),
        ),
        Expr::Closure(x) => (
            x.or1_token.to_token_stream(),
            "closures cannot be translated to CUDA; use a #[device_fn] function".into(),
        ),
        Expr::Macro(x) => (
            x.mac.to_token_stream(),
            "macros cannot be translated to CUDA; write the expression out".into(),
        ),
        Expr::Unsafe(x) => (
            x.unsafe_token.to_token_stream(),
            "`unsafe` blocks are not supported".into(),
        ),
        Expr::Let(x) => (
            x.let_token.to_token_stream(),
            "`let` expressions are not supported".into(),
        ),
        _ => {
            let what = match e {
                Expr::Async(_) | Expr::Await(_) => "async code",
                Expr::Range(_) => "ranges (outside `for` loops)",
                Expr::Tuple(_) => "tuples",
                Expr::Const(_) => "const blocks",
                Expr::TryBlock(_) => "try blocks",
                Expr::Yield(_) => "yield",
                Expr::Infer(_) => "`_`",
                _ => "this expression",
            };
            (
                e.to_token_stream(),
                format!("{what} cannot be translated to CUDA ({SUBSET})"),
            )
        }
    };
    err(tokens, msg)
}

/// A constant of `std::f32::consts` or `std::f64::consts` (`s` a float type), as the literal of
/// its value.
fn float_constant<'a>(s: Scalar, name: &str) -> Option<Kind<'a>> {
    macro_rules! consts {
        ($t:ident, $v:ident) => {{
            use std::$t::consts::*;
            let value = match name {
                "PI" => PI,
                "TAU" => TAU,
                "E" => E,
                "SQRT_2" => SQRT_2,
                "FRAC_1_SQRT_2" => FRAC_1_SQRT_2,
                "LN_2" => LN_2,
                "LN_10" => LN_10,
                "LOG2_E" => LOG2_E,
                "LOG10_E" => LOG10_E,
                "LOG2_10" => LOG2_10,
                "LOG10_2" => LOG10_2,
                "FRAC_PI_2" => FRAC_PI_2,
                "FRAC_PI_3" => FRAC_PI_3,
                "FRAC_PI_4" => FRAC_PI_4,
                "FRAC_PI_6" => FRAC_PI_6,
                "FRAC_PI_8" => FRAC_PI_8,
                "FRAC_1_PI" => FRAC_1_PI,
                "FRAC_2_PI" => FRAC_2_PI,
                "FRAC_2_SQRT_PI" => FRAC_2_SQRT_PI,
                _ => return None,
            };
            Some(Kind::Float(FloatVal::$v(value)))
        }};
    }
    match s {
        Scalar::F32 => consts!(f32, F32),
        _ => consts!(f64, F64),
    }
}
