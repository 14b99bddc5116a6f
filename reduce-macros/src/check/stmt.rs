//! Checking blocks and statements: `let` (and `let mut`), assignment and compound assignment,
//! `if` without `else`, `for` over constant ranges and over arrays, `break`, `continue`,
//! `return` (`match` is in `matching.rs`).

use super::expr::unsupported;
use super::tree::{Kind, Op, TExpr, TStmt, T};
use super::{err, Bound, Checker};
use crate::tokens::{strip_parens, unraw};
use crate::types::{Scalar, Ty};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat, Result, Stmt};

/// Whether an expression in statement position is a statement (has type `()`), judged by its
/// form as rustc would type it.
fn is_unit(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_unit(&p.expr),
        Expr::Group(g) => is_unit(&g.expr),
        Expr::Assign(_)
        | Expr::ForLoop(_)
        | Expr::While(_)
        | Expr::Loop(_)
        | Expr::Break(_)
        | Expr::Continue(_)
        | Expr::Return(_) => true,
        Expr::Binary(b) => matches!(Op::from_syn(&b.op), Some((_, true))),
        Expr::If(i) => i.else_branch.is_none() || is_unit_block(&i.then_branch),
        Expr::Match(m) => m.arms.iter().all(|a| is_unit(&a.body)),
        Expr::Block(b) => is_unit_block(&b.block),
        Expr::Tuple(t) => t.elems.is_empty(),
        _ => false,
    }
}

fn is_unit_block(b: &syn::Block) -> bool {
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => is_unit(e),
        _ => true,
    }
}

/// Whether `name` is used inside an index expression (`t[i]`, `t[i * 3 + k]`), which makes
/// rustc infer `usize` for it — the binding itself, not another of the same name that shadows it
/// (a later `let`, a loop variable, a `match` arm's or a closure's binding).
fn used_as_index<'s>(name: &str, stmts: impl IntoIterator<Item = &'s Stmt>) -> bool {
    struct Finder<'n> {
        name: &'n str,
        found: bool,
    }
    fn spine(e: &Expr, name: &str) -> bool {
        match e {
            Expr::Paren(p) => spine(&p.expr, name),
            Expr::Group(g) => spine(&g.expr, name),
            Expr::Path(p) => p.path.get_ident().is_some_and(|id| unraw(id) == name),
            Expr::Unary(u) => spine(&u.expr, name),
            Expr::Binary(b) => match Op::from_syn(&b.op) {
                Some((Op::Shl | Op::Shr, false)) => spine(&b.left, name),
                Some((op, false)) if op.is_arith() || op.is_bit() => {
                    spine(&b.left, name) || spine(&b.right, name)
                }
                _ => false,
            },
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                (method.starts_with("wrapping_") || method == "min" || method == "max")
                    && (spine(&m.receiver, name) || m.args.iter().any(|a| spine(a, name)))
            }
            _ => false,
        }
    }
    /// Whether `pat` binds `name` (a new binding that shadows it).
    fn binds(pat: &Pat, name: &str) -> bool {
        struct Binds<'n> {
            name: &'n str,
            found: bool,
        }
        impl<'ast> Visit<'ast> for Binds<'_> {
            fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
                self.found |= unraw(&i.ident) == self.name;
                syn::visit::visit_pat_ident(self, i);
            }
        }
        let mut b = Binds { name, found: false };
        b.visit_pat(pat);
        b.found
    }
    impl Finder<'_> {
        /// Statements in order, up to one that binds the name anew (its initializer still
        /// reads the old binding): past it the name is another variable.
        fn visit_stmts<'ast>(&mut self, stmts: impl IntoIterator<Item = &'ast Stmt>) {
            for s in stmts {
                if let Stmt::Local(l) = s {
                    if let Some(init) = &l.init {
                        self.visit_expr(&init.expr);
                        if let Some((_, diverge)) = &init.diverge {
                            self.visit_expr(diverge);
                        }
                    }
                    if binds(&l.pat, self.name) {
                        return;
                    }
                } else {
                    self.visit_stmt(s);
                }
            }
        }
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_expr_index(&mut self, i: &'ast syn::ExprIndex) {
            self.found |= spine(&i.index, self.name);
            syn::visit::visit_expr_index(self, i);
        }
        fn visit_block(&mut self, b: &'ast syn::Block) {
            self.visit_stmts(&b.stmts);
        }
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            self.visit_expr(&f.expr);
            if !binds(&f.pat, self.name) {
                self.visit_block(&f.body);
            }
        }
        fn visit_arm(&mut self, a: &'ast syn::Arm) {
            if !binds(&a.pat, self.name) {
                syn::visit::visit_arm(self, a);
            }
        }
        fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
            if !c.inputs.iter().any(|p| binds(p, self.name)) {
                syn::visit::visit_expr_closure(self, c);
            }
        }
    }
    let mut finder = Finder { name, found: false };
    finder.visit_stmts(stmts);
    finder.found
}

/// The value of an integer literal, possibly negated.
fn literal_value(t: &TExpr) -> Option<i128> {
    match &t.kind {
        Kind::Int(v) => Some(*v),
        Kind::Neg(inner) => literal_value(inner).map(|v| -v),
        _ => None,
    }
}

/// A value known when the kernel is generated: literals and `usize` constants, with operators.
fn generation_constant(t: &TExpr) -> bool {
    match &t.kind {
        Kind::Int(_) | Kind::Sym(_) => true,
        Kind::Neg(x) | Kind::Not(x) | Kind::Cast(x) => generation_constant(x),
        Kind::Binary(op, a, b) => {
            (op.is_arith() || op.is_bit() || matches!(op, Op::Shl | Op::Shr))
                && generation_constant(a)
                && generation_constant(b)
        }
        _ => false,
    }
}

impl<'a> Checker<'a> {
    /// A block with a value: its statements, then its final expression.
    pub(super) fn block_value(
        &mut self,
        b: &'a syn::Block,
        hint: Option<&Ty>,
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        self.scope(|c| {
            let (stmts, tail) = match b.stmts.split_last() {
                Some((Stmt::Expr(x, None), rest)) if !is_unit(x) => (rest, Some(x)),
                _ => (&b.stmts[..], None),
            };
            let checked = c.stmts(stmts)?;
            let Some(tail) = tail else {
                return Err(match b.stmts.last() {
                    Some(Stmt::Local(l)) => err(
                        l,
                        "this block ends with a `let`; it needs a final expression (its value)",
                    ),
                    Some(Stmt::Expr(x, Some(semi))) if !is_unit(x) => err(
                        semi,
                        "this block ends with `;`, so it has no value; remove the `;` after the \
                         final expression",
                    ),
                    _ => err(e, "this block has no final expression, so it has no value"),
                });
            };
            let tail = c.check(tail, hint)?;
            if checked.is_empty() {
                return Ok(tail);
            }
            let ty = tail.ty.clone();
            Ok(TExpr {
                kind: Kind::Block(checked, Box::new(tail)),
                ty,
                src: e,
            })
        })
    }

    /// A block used as a statement (a loop body, an `if` branch): no value.
    pub(super) fn block_unit(&mut self, b: &'a syn::Block) -> Result<Vec<TStmt<'a>>> {
        if let Some(Stmt::Expr(x, None)) = b.stmts.last() {
            if !is_unit(x) {
                self.check(x, None)?;
                return Err(err(
                    x,
                    "this block is a statement, so its final expression is unused; end it with \
                     `;` or use the value",
                ));
            }
        }
        self.scope(|c| c.stmts(&b.stmts))
    }

    fn stmts(&mut self, stmts: &'a [Stmt]) -> Result<Vec<TStmt<'a>>> {
        let mut out = Vec::new();
        for (i, stmt) in stmts.iter().enumerate() {
            match stmt {
                Stmt::Local(local) if is_tuple_let(local) => out.extend(self.tuple_let(local)?),
                Stmt::Local(local) => out.push(self.local(local, &stmts[i + 1..])?),
                Stmt::Expr(x, semi) => {
                    if !is_unit(x) {
                        // A construct outside the language is the better message.
                        self.check(x, None)?;
                        return Err(match semi {
                            Some(_) => err(
                                x,
                                "this expression's value is unused: statements are `let`, \
                                 assignments, `if`, `for`, `match`, `break`, `continue` and \
                                 `return`",
                            ),
                            None => unsupported(x),
                        });
                    }
                    out.push(self.stmt_expr(x)?);
                }
                Stmt::Item(item) => {
                    return Err(err(
                        item,
                        "items (fn, const, struct, use, ...) inside translated code are not \
                         supported; define a #[device_fn] function outside",
                    ))
                }
                Stmt::Macro(m) => {
                    return Err(err(
                        &m.mac,
                        "macros cannot be translated to CUDA; write the expression out",
                    ))
                }
            }
        }
        Ok(out)
    }

    /// `let [mut] name[: T] [= value];`; `rest` are the statements after it (for inference).
    fn local(&mut self, local: &'a syn::Local, rest: &'a [Stmt]) -> Result<TStmt<'a>> {
        let (ident, mutable, annot) = self.let_pattern(&local.pat)?;
        let Some(init) = &local.init else {
            let Some(ty) = annot else {
                return Err(err(
                    local,
                    "`let` without a value needs a type annotation: `let x: u32;`",
                ));
            };
            let cuda = self.bind(ident, ty.clone(), mutable);
            return Ok(TStmt::Let {
                cuda,
                ty,
                mutable,
                value: None,
            });
        };
        if let Some((else_token, _)) = &init.diverge {
            return Err(err(else_token, "`let ... else` is not supported"));
        }
        let value = self.check(&init.expr, annot.as_ref())?;
        let value = match &annot {
            Some(t) => self.coerce(value, t)?,
            None => match value.ty {
                T::Known(_) => value,
                T::Int if used_as_index(&ident, rest) => {
                    self.coerce(value, &Ty::Scalar(Scalar::Usize))?
                }
                _ => {
                    return Err(err(
                        &init.expr,
                        format!(
                            "cannot infer the type of `{ident}`: Rust would infer it from its \
                             later uses, which the translation does not follow; add a suffix to \
                             the literal (`1u32`, `1.0f32`) or annotate the binding (`let \
                             {ident}: u32 = ...`)"
                        ),
                    ))
                }
            },
        };
        let ty = value.known().clone();
        let cuda = self.bind(ident, ty.clone(), mutable);
        Ok(TStmt::Let {
            cuda,
            ty,
            mutable,
            value: Some(value),
        })
    }

    /// `let (a, mut b, _) = (x, y, z);` (optionally `: (T, U, V)`): one `let` per name, every
    /// value computed before any name is bound, as Rust's tuple is (`let (a, b) = (b, a);`
    /// swaps). Tuples are not values in the language: the right side must be a tuple of the
    /// same length, written out.
    fn tuple_let(&mut self, local: &'a syn::Local) -> Result<Vec<TStmt<'a>>> {
        let (pat, annot) = match &local.pat {
            Pat::Type(t) => (&*t.pat, Some(&*t.ty)),
            pat => (pat, None),
        };
        let Pat::Tuple(pat) = pat else {
            unreachable!("is_tuple_let")
        };
        let annots: Vec<Option<Ty>> = match annot {
            None => vec![None; pat.elems.len()],
            Some(syn::Type::Tuple(t)) if t.elems.len() == pat.elems.len() => (t.elems.iter())
                .map(|t| self.world.ty(t, false).map(Some))
                .collect::<Result<_>>()?,
            Some(other) => {
                return Err(err(
                    other,
                    "a tuple pattern's type must be a tuple of as many types",
                ))
            }
        };
        let values = match local.init.as_ref().map(|i| (&*i.expr, &i.diverge)) {
            Some((Expr::Tuple(t), None)) if t.elems.len() == pat.elems.len() => &t.elems,
            _ => {
                return Err(err(
                    local,
                    format!(
                        "a tuple pattern needs a tuple of {} values written out: `let (a, b) = \
                         (x, y);` (tuples are not values in the translated language)",
                        pat.elems.len()
                    ),
                ))
            }
        };
        let mut typed = Vec::new();
        for (value, annot) in values.iter().zip(&annots) {
            let v = self.check(value, annot.as_ref())?;
            let v = match annot {
                Some(t) => self.coerce(v, t)?,
                None if matches!(v.ty, T::Known(_)) => v,
                None => {
                    return Err(err(
                        value,
                        "cannot infer the type of this value: add a suffix to the literal \
                         (`1u32`, `1.0f32`) or annotate the tuple (`let (a, b): (u32, f32) = \
                         ...`)",
                    ))
                }
            };
            typed.push(v);
        }
        let mut out = Vec::new();
        for (elem, value) in pat.elems.iter().zip(typed) {
            let ty = value.known().clone();
            let (cuda, mutable) = match elem {
                // evaluated (it may fault), never named
                Pat::Wild(_) => (self.fresh("discarded"), false),
                other => {
                    let (name, mutable, annot) = self.let_pattern(other)?;
                    if annot.is_some() {
                        return Err(err(other, "annotate the tuple, not its elements"));
                    }
                    (self.bind(name, ty.clone(), mutable), mutable)
                }
            };
            out.push(TStmt::Let {
                cuda,
                ty,
                mutable,
                value: Some(value),
            });
        }
        Ok(out)
    }

    fn let_pattern(&self, pat: &Pat) -> Result<(String, bool, Option<Ty>)> {
        match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                Ok((unraw(&p.ident), p.mutability.is_some(), None))
            }
            Pat::Type(t) => {
                let (name, mutable, _) = self.let_pattern(&t.pat)?;
                let ty = self.world.ty(&t.ty, false)?;
                Ok((name, mutable, Some(ty)))
            }
            other => Err(err(
                other,
                "`let` patterns are not supported: bind a plain name (`let x = ...;`, `let mut \
                 x = ...;`)",
            )),
        }
    }

    /// A statement written as an expression (see [`is_unit`]).
    pub(super) fn stmt_expr(&mut self, x: &'a Expr) -> Result<TStmt<'a>> {
        match x {
            Expr::Paren(p) => self.stmt_expr(&p.expr),
            Expr::Group(g) => self.stmt_expr(&g.expr),
            Expr::Assign(a) => {
                let place = self.place(&a.left)?;
                let ty = place.known().clone();
                let value = self.check(&a.right, Some(&ty))?;
                let value = self.coerce(value, &ty)?;
                Ok(TStmt::Assign {
                    place,
                    op: None,
                    value,
                })
            }
            Expr::Binary(b) => {
                let Some((op, true)) = Op::from_syn(&b.op) else {
                    unreachable!("only compound assignments are statements")
                };
                let place = self.place(&b.left)?;
                let ty = place.known().clone();
                let hint = if matches!(op, Op::Shl | Op::Shr) {
                    None
                } else {
                    Some(&ty)
                };
                let value = self.check(&b.right, hint)?;
                // Typed as `place op value`, which must keep the place's type.
                let typed = self.operation(op, place.clone(), value, b.op.span(), x)?;
                if *typed.known() != ty {
                    return Err(err(
                        b.op,
                        format!("`{}=` must keep the type `{}`", op.c(), ty.rust()),
                    ));
                }
                let Kind::Binary(_, _, value) = typed.kind else {
                    unreachable!()
                };
                Ok(TStmt::Assign {
                    place,
                    op: Some(op),
                    value: *value,
                })
            }
            Expr::If(i) => {
                if let Expr::Let(l) = &*i.cond {
                    return Err(err(
                        l.let_token,
                        "`if let` is not supported; use a plain condition",
                    ));
                }
                let cond = self.check(&i.cond, None)?;
                let cond = self.coerce(cond, &Ty::Scalar(Scalar::Bool))?;
                let then = self.block_unit(&i.then_branch)?;
                let els = match &i.else_branch {
                    None => None,
                    Some((_, e)) => Some(match strip_parens(e) {
                        Expr::Block(b) => self.block_unit(&b.block)?,
                        other => vec![self.stmt_expr(other)?],
                    }),
                };
                Ok(TStmt::If { cond, then, els })
            }
            Expr::Block(b) => {
                if let Some(label) = &b.label {
                    return Err(err(label, "labelled blocks are not supported"));
                }
                Ok(TStmt::Block(self.block_unit(&b.block)?))
            }
            Expr::ForLoop(f) => self.for_loop(f),
            Expr::Match(m) => self.match_unit(m),
            Expr::Break(b) if self.loops > 0 && b.label.is_none() && b.expr.is_none() => {
                Ok(TStmt::Break)
            }
            Expr::Continue(c) if self.loops > 0 && c.label.is_none() => Ok(TStmt::Continue),
            Expr::Return(r) if self.returns => {
                let Some(value) = &r.expr else {
                    return Err(err(r, "`return` needs a value here"));
                };
                let ret = self.ret.clone();
                let v = self.check(value, Some(&ret))?;
                Ok(TStmt::Return(self.coerce(v, &ret)?))
            }
            Expr::Tuple(t) if t.elems.is_empty() => Ok(TStmt::Block(Vec::new())),
            _ => Err(unsupported(x)),
        }
    }

    /// An assignable place: a `mut` local, its fields and elements.
    fn place(&mut self, e: &'a Expr) -> Result<TExpr<'a>> {
        match e {
            Expr::Paren(p) => self.place(&p.expr),
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let name = unraw(p.path.get_ident().unwrap());
                let Some(pos) = self.scopes.iter().rposition(|b| b.rust == name) else {
                    return self.check(e, None);
                };
                let b = &self.scopes[pos];
                if !b.mutable {
                    return Err(err(
                        e,
                        format!("cannot assign to `{name}`: declare it with `let mut {name}`"),
                    ));
                }
                if pos < self.barrier {
                    return Err(err(
                        e,
                        format!(
                            "this block has a value, so it may not assign to `{name}`, which is \
                             declared outside it: assign in a statement before (the translation \
                             keeps expressions free of side effects)"
                        ),
                    ));
                }
                Ok(TExpr {
                    kind: Kind::Var(b.cuda.clone()),
                    ty: T::Known(b.ty.clone()),
                    src: e,
                })
            }
            Expr::Field(f) => {
                let base = self.place(&f.base)?;
                self.field(base, &f.member)
            }
            Expr::Index(i) => {
                let base = self.place(&i.expr)?;
                self.index_of(base, i, e)
            }
            other => Err(err(
                other,
                "only local variables, their fields and their elements can be assigned",
            )),
        }
    }

    fn for_loop(&mut self, f: &'a syn::ExprForLoop) -> Result<TStmt<'a>> {
        if let Some(label) = &f.label {
            return Err(err(label, "loop labels are not supported"));
        }
        let var = match &*f.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() && p.mutability.is_none() => {
                Some(unraw(&p.ident))
            }
            Pat::Wild(_) => None,
            other => return Err(err(other, "the loop variable must be a plain name or `_`")),
        };
        if let Expr::Range(r) = strip_parens(&f.expr) {
            let (Some(start), Some(end)) = (&r.start, &r.end) else {
                return Err(err(
                    &f.expr,
                    "a `for` range needs both bounds (`A..B` or `A..=B`)",
                ));
            };
            let lo = self.check(start, None)?;
            let hi = self.check(end, None)?;
            for bound in [&lo, &hi] {
                if !generation_constant(bound) {
                    return Err(err(
                        bound.src,
                        "the bounds of a `for` range must be known when the kernel is \
                         generated: integer literals, const generic parameters and `usize` \
                         consts, with operators; bound the loop by a constant and `break` out",
                    ));
                }
            }
            let (lo, hi, ty) = self.unify(lo, hi, r.limits.span(), || {
                "the bounds of this range have different types".to_owned()
            })?;
            let s = match ty {
                T::Known(Ty::Scalar(s)) if s.is_int() => s,
                T::Int => match &var {
                    Some(v) if used_as_index(v, &f.body.stmts) => Scalar::Usize,
                    _ => Scalar::I32,
                },
                other => {
                    return Err(err(
                        &f.expr,
                        format!(
                            "a `for` range must be over integers, not {}",
                            self.ty_name(&other)
                        ),
                    ))
                }
            };
            let lo = self.coerce(lo, &Ty::Scalar(s))?;
            let hi = self.coerce(hi, &Ty::Scalar(s))?;
            let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
            let range = match (literal_value(&lo), &hi.kind, inclusive) {
                (Some(lo), Kind::Sym(n), false) => Some((lo, Bound::Sym(n.clone()))),
                (Some(lo), _, _) => {
                    literal_value(&hi).map(|h| (lo, Bound::Lit(if inclusive { h + 1 } else { h })))
                }
                _ => None,
            };
            let (var, body) = self.loop_body(var, Ty::Scalar(s), range, &f.body)?;
            return Ok(TStmt::For {
                var,
                ty: s,
                lo,
                hi,
                inclusive,
                body,
            });
        }
        let array = self.check(&f.expr, None)?;
        let (elem, len) = match array.known() {
            Ty::Array(elem, len) => ((**elem).clone(), len.clone()),
            other => {
                return Err(err(
                    &f.expr,
                    format!(
                        "`for` loops go over a constant range (`0..N`) or an array, not `{}`",
                        other.rust()
                    ),
                ))
            }
        };
        let index = self.fresh("index");
        let (var, body) = self.loop_body(var, elem, None, &f.body)?;
        Ok(TStmt::ForEach {
            var,
            index,
            array,
            len,
            body,
        })
    }

    fn loop_body(
        &mut self,
        var: Option<String>,
        ty: Ty,
        range: Option<(i128, Bound)>,
        body: &'a syn::Block,
    ) -> Result<(Option<String>, Vec<TStmt<'a>>)> {
        self.scope(|c| {
            let cuda = var.map(|v| {
                let cuda = c.bind(v, ty, false);
                c.scopes.last_mut().expect("just bound").range = range;
                cuda
            });
            c.loops += 1;
            let body = c.block_unit(body);
            c.loops -= 1;
            Ok((cuda, body?))
        })
    }
}

/// Whether `local` binds a tuple pattern (`let (a, b) = ...`).
fn is_tuple_let(local: &syn::Local) -> bool {
    match &local.pat {
        Pat::Tuple(_) => true,
        Pat::Type(t) => matches!(&*t.pat, Pat::Tuple(_)),
        _ => false,
    }
}
