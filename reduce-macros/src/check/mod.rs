//! Type checking: `syn` trees of the accepted Rust into typed trees ([`TExpr`], [`TStmt`]) in
//! which every node has its Rust type.
//!
//! Unsuffixed literals start as `{integer}`/`{float}` ([`T::Int`]/[`T::Float`]) and take their
//! type from the context (the other operand, a field, a `let` annotation, a parameter), as in
//! rustc. `tree.rs` holds the typed tree; this file the [`Checker`] (scopes, literal inference,
//! bounds of indices); `expr.rs` checks expressions, `ops.rs` operators, casts and methods,
//! `call.rs` struct literals and calls, `stmt.rs` blocks, statements, loops and assignments,
//! `matching.rs` `match`.
//!
//! Purity. A block with a value may assign only to variables declared inside it (a statement
//! block may assign to anything in scope), so every expression is free of side effects but one:
//! a run-time index out of bounds records a fault, which is idempotent. The emitter may therefore
//! duplicate an expression; it never drops one that may fault ([`may_fault`]).

mod call;
mod expr;
mod matching;
mod ops;
mod stmt;
mod tree;

use crate::types::{Len, Scalar, Ty, World};
use std::collections::HashSet;
use syn::{Error, Expr, Result};

#[cfg(test)]
pub use tree::METHODS;
pub use tree::{
    may_fault, safe_divisor, Arm, FloatVal, Kind, Method, Op, PatTest, TExpr, TStmt, T,
};

/// What a translated body needs besides its text: whether it indexes at run time, the helpers
/// it calls and the structs and constants it names (as the user spelled them, for the generated
/// Rust code to reach their definitions).
#[derive(Default)]
pub struct Uses {
    pub faults: bool,
    pub calls: Vec<syn::Path>,
    pub structs: Vec<syn::Path>,
    pub consts: Vec<syn::Path>,
}

impl Uses {
    fn add(list: &mut Vec<syn::Path>, path: &syn::Path) {
        let key = crate::tokens::tokens_to_string(path);
        if !list
            .iter()
            .any(|p| crate::tokens::tokens_to_string(p) == key)
        {
            list.push(path.clone());
        }
    }

    pub fn merge(&mut self, other: Uses) {
        self.faults |= other.faults;
        for p in &other.calls {
            Uses::add(&mut self.calls, p);
        }
        for p in &other.structs {
            Uses::add(&mut self.structs, p);
        }
        for p in &other.consts {
            Uses::add(&mut self.consts, p);
        }
    }
}

struct Binding {
    rust: String,
    cuda: String,
    ty: Ty,
    mutable: bool,
    /// The values a loop counter takes: `[lo, hi)`.
    range: Option<(i128, Bound)>,
}

/// The exclusive upper end of a loop counter's range.
#[derive(Clone, Debug, PartialEq)]
enum Bound {
    Lit(i128),
    /// A `usize` constant (`for k in 0..K`).
    Sym(String),
}

/// The values an index expression takes: `[lo, hi]`, or below a symbolic bound.
enum Interval {
    Num(i128, i128),
    Below(String),
}

/// The type checker of one function body.
pub struct Checker<'a> {
    pub world: &'a World,
    /// Innermost last.
    scopes: Vec<Binding>,
    /// C++ names of locals already used in this function.
    taken: HashSet<String>,
    /// Bindings below this index are outside the innermost block with a value: not assignable.
    barrier: usize,
    /// Enclosing loops that `break`/`continue` may leave (0 inside a block with a value).
    loops: usize,
    /// Whether `return` may appear (not inside a block with a value).
    returns: bool,
    /// The function's return type.
    ret: Ty,
    /// The name of the function being checked (a `#[device_fn]` may not call itself).
    this_fn: Option<String>,
    pub uses: Uses,
}

pub const SUBSET: &str = "see the `Monoid` derive documentation for the supported language";

pub fn err(tokens: impl quote::ToTokens, msg: impl std::fmt::Display) -> Error {
    Error::new_spanned(tokens, msg)
}

impl<'a> Checker<'a> {
    /// A checker for a body returning `ret`, inside a function named `this_fn` if a helper.
    pub fn new(world: &'a World, ret: Ty, this_fn: Option<String>) -> Self {
        Checker {
            world,
            scopes: Vec::new(),
            taken: HashSet::new(),
            barrier: 0,
            loops: 0,
            returns: true,
            ret,
            this_fn,
            uses: Uses::default(),
        }
    }

    /// Binds a parameter under its C++ name.
    pub fn param(&mut self, rust: String, cuda: String, ty: Ty, mutable: bool) {
        self.taken.insert(cuda.clone());
        self.scopes.push(Binding {
            rust,
            cuda,
            ty,
            mutable,
            range: None,
        });
    }

    /// Checks a whole function body: an expression of the return type.
    pub fn body(&mut self, e: &'a Expr) -> Result<TExpr<'a>> {
        let ret = self.ret.clone();
        let t = match crate::tokens::strip_parens(e) {
            // The outermost block is emitted as statements: `return`, and assignments to
            // `mut` parameters, are fine in it.
            Expr::Block(b) if b.label.is_none() => self.block_value(&b.block, Some(&ret), e)?,
            _ => self.check(e, Some(&ret))?,
        };
        self.coerce(t, &ret)
    }

    fn ty_name(&self, t: &T) -> String {
        match t {
            T::Known(ty) => format!("`{}`", ty.rust()),
            T::Int => "an integer literal".to_owned(),
            T::Float => "a float literal".to_owned(),
        }
    }

    /// A C++ name for a Rust local: `v_x`, `v_x_2` when shadowed.
    fn fresh(&mut self, name: &str) -> String {
        let base = format!("v_{name}");
        let mut candidate = base.clone();
        let mut k = 2;
        while self.taken.contains(&candidate) {
            candidate = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(candidate.clone());
        candidate
    }

    fn bind(&mut self, rust: String, ty: Ty, mutable: bool) -> String {
        let cuda = self.fresh(&rust);
        self.scopes.push(Binding {
            rust,
            cuda: cuda.clone(),
            ty,
            mutable,
            range: None,
        });
        cuda
    }

    /// Whether an index is in bounds by construction: an interval of loop counters and
    /// constants inside `[0, len)`.
    fn in_bounds(&self, index: &TExpr, len: &Len) -> bool {
        match (self.interval(index), len) {
            (Some(Interval::Num(lo, hi)), Len::Lit(n)) => lo >= 0 && hi < i128::from(*n),
            (Some(Interval::Below(s)), Len::Sym(n)) => s == *n,
            _ => false,
        }
    }

    /// The values an integer expression of loop counters and constants takes (no wrapping:
    /// any result outside its type's range gives up).
    fn interval(&self, e: &TExpr) -> Option<Interval> {
        use Interval::*;
        let num = |t: &TExpr| match self.interval(t)? {
            Num(lo, hi) => Some((lo, hi)),
            Below(_) => None,
        };
        let out = match &e.kind {
            Kind::Int(v) => Num(*v, *v),
            Kind::Var(cuda) => {
                let b = self.scopes.iter().rev().find(|b| b.cuda == *cuda)?;
                match b.range.clone()? {
                    (lo, Bound::Lit(hi)) if hi > lo => Num(lo, hi - 1),
                    (0, Bound::Sym(s)) => Below(s),
                    _ => return None,
                }
            }
            Kind::Cast(inner) => match self.interval(inner)? {
                Num(lo, hi) if lo >= 0 => Num(lo, hi),
                Below(s) if e.scalar() == Scalar::Usize => Below(s),
                _ => return None,
            },
            Kind::Binary(..) | Kind::Method(..) => {
                let (op, a, b) = operands(&e.kind)?;
                let (blo, bhi) = num(b)?;
                // `x % c` and `x & c` of an unsigned x need nothing of x.
                let unsigned = !e.scalar().is_signed();
                match op {
                    Op::Rem if unsigned && blo > 0 => return Some(Num(0, bhi - 1)),
                    Op::BitAnd if unsigned && blo >= 0 && blo == bhi => return Some(Num(0, blo)),
                    _ => {}
                }
                let (alo, ahi) = num(a)?;
                match op {
                    Op::Add => Num(alo + blo, ahi + bhi),
                    Op::Sub => Num(alo - bhi, ahi - blo),
                    Op::Mul if alo >= 0 && blo >= 0 => {
                        Num(alo.checked_mul(blo)?, ahi.checked_mul(bhi)?)
                    }
                    Op::Div if alo >= 0 && blo > 0 => Num(alo / bhi, ahi / blo),
                    Op::Rem if alo >= 0 && blo > 0 => Num(0, (bhi - 1).min(ahi)),
                    Op::BitAnd if blo >= 0 && blo == bhi => Num(0, blo),
                    Op::BitAnd if alo >= 0 && alo == ahi => Num(0, alo),
                    _ => return None,
                }
            }
            _ => return None,
        };
        // Give up where the type would wrap.
        if let (Num(lo, hi), T::Known(Ty::Scalar(s))) = (&out, &e.ty) {
            let (min, max) = s.int_range();
            if *lo < min || *hi > max {
                return None;
            }
        }
        Some(out)
    }

    /// Runs `f` in a block with a value: assignments to outer variables, `break`, `continue`
    /// and `return` are refused inside (the emitter may turn it into a C++ lambda).
    fn value_scope<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let saved = (self.barrier, self.loops, self.returns, self.scopes.len());
        self.barrier = self.scopes.len();
        self.loops = 0;
        self.returns = false;
        let out = f(self);
        self.barrier = saved.0;
        self.loops = saved.1;
        self.returns = saved.2;
        self.scopes.truncate(saved.3);
        out
    }

    /// Runs `f` in a nested statement scope (locals declared inside are dropped after).
    fn scope<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let depth = self.scopes.len();
        let out = f(self);
        self.scopes.truncate(depth);
        out
    }

    /// Gives two operands one type, resolving an unsuffixed literal side to the other side's type.
    fn unify(
        &self,
        l: TExpr<'a>,
        r: TExpr<'a>,
        span: proc_macro2::Span,
        what: impl Fn() -> String,
    ) -> Result<(TExpr<'a>, TExpr<'a>, T)> {
        match (&l.ty, &r.ty) {
            (T::Known(a), T::Known(b)) => {
                if a != b {
                    return Err(Error::new(
                        span,
                        format!(
                            "{}: {} and {} (Rust needs both to have the same type; convert \
                             one with `as`)",
                            what(),
                            self.ty_name(&l.ty),
                            self.ty_name(&r.ty)
                        ),
                    ));
                }
                let ty = l.ty.clone();
                Ok((l, r, ty))
            }
            (T::Known(a), _) => {
                let a = a.clone();
                let r = self.coerce(r, &a)?;
                Ok((l, r, T::Known(a)))
            }
            (_, T::Known(b)) => {
                let b = b.clone();
                let l = self.coerce(l, &b)?;
                Ok((l, r, T::Known(b)))
            }
            (T::Int, T::Int) => Ok((l, r, T::Int)),
            (T::Float, T::Float) => Ok((l, r, T::Float)),
            _ => Err(Error::new(
                span,
                format!("{}: an integer and a float literal", what()),
            )),
        }
    }

    /// Checks that `t` has type `ty`, giving unsuffixed literals that type.
    pub(crate) fn coerce(&self, t: TExpr<'a>, ty: &Ty) -> Result<TExpr<'a>> {
        match (&t.ty, ty) {
            (T::Known(have), want) if have == want => Ok(t),
            (T::Int, Ty::Scalar(s)) if s.is_int() => resolve(t, *s),
            (T::Float, Ty::Scalar(s)) if s.is_float() => resolve(t, *s),
            (T::Int, Ty::Scalar(s)) if s.is_float() => Err(err(
                t.src,
                format!(
                    "expected `{}`, found an integer literal; write a float literal such as `1.0`",
                    s.rust()
                ),
            )),
            (T::Known(Ty::Scalar(have)), Ty::Scalar(Scalar::Usize)) if have.is_int() => Err(err(
                t.src,
                format!(
                    "expected `usize`, found `{}`: Rust indexes arrays with `usize`; write `... as \
                     usize`",
                    have.rust()
                ),
            )),
            (T::Known(Ty::Scalar(Scalar::Usize)), Ty::Scalar(want)) if want.is_int() => {
                let found = match &t.kind {
                    Kind::Sym(name) => format!(
                        "the constant `{name}`: constants named in capitals are translated as \
                         `usize` (lengths and loop bounds); write `{name} as {}`",
                        want.rust()
                    ),
                    _ => format!("`usize`; write `... as {}`", want.rust()),
                };
                Err(err(
                    t.src,
                    format!("expected `{}`, found {found}", want.rust()),
                ))
            }
            (have, want) => Err(err(
                t.src,
                format!("expected `{}`, found {}", want.rust(), self.ty_name(have)),
            )),
        }
    }
}

/// `a op b` and `a.wrapping_op(b)` as (op, a, b).
fn operands<'e, 'a>(kind: &'e Kind<'a>) -> Option<(Op, &'e TExpr<'a>, &'e TExpr<'a>)> {
    match kind {
        Kind::Binary(op, a, b) => Some((*op, a, b)),
        Kind::Method(m, recv, args) => {
            let op = match m {
                Method::WrappingAdd => Op::Add,
                Method::WrappingSub => Op::Sub,
                Method::WrappingMul => Op::Mul,
                Method::WrappingDiv => Op::Div,
                Method::WrappingRem => Op::Rem,
                _ => return None,
            };
            Some((op, recv, &args[0]))
        }
        _ => None,
    }
}

/// Gives an `{integer}`/`{float}` expression the concrete type `s`.
fn resolve(mut t: TExpr<'_>, s: Scalar) -> Result<TExpr<'_>> {
    if let T::Known(_) = t.ty {
        return Ok(t);
    }
    t.ty = T::Known(Ty::Scalar(s));
    t.kind = match t.kind {
        k @ (Kind::Int(_) | Kind::Float(_)) => k,
        Kind::Neg(inner) => {
            if !s.is_signed() {
                return Err(err(
                    t.src,
                    format!(
                        "cannot negate a value of the unsigned type `{}`; use `wrapping_neg()`",
                        s.rust()
                    ),
                ));
            }
            Kind::Neg(Box::new(resolve(*inner, s)?))
        }
        Kind::Not(inner) => Kind::Not(Box::new(resolve(*inner, s)?)),
        Kind::Binary(op, l, r) => {
            let r = if matches!(op, Op::Shl | Op::Shr) {
                *r
            } else {
                resolve(*r, s)?
            };
            Kind::Binary(op, Box::new(resolve(*l, s)?), Box::new(r))
        }
        Kind::If(c, a, b) => Kind::If(c, Box::new(resolve(*a, s)?), Box::new(resolve(*b, s)?)),
        Kind::Block(stmts, tail) => Kind::Block(stmts, Box::new(resolve(*tail, s)?)),
        Kind::Match(scrutinee, arms) => Kind::Match(
            scrutinee,
            arms.into_iter()
                .map(|a| {
                    Ok(Arm {
                        body: resolve(a.body, s)?,
                        ..a
                    })
                })
                .collect::<Result<_>>()?,
        ),
        _ => unreachable!("only literal expressions have an inferred type"),
    };
    Ok(t)
}
