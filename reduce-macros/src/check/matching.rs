//! Checking `match` on integers and bools, as a value or as a statement: the scrutinee, the
//! patterns of each arm (literals, byte literals, ranges, `MIN`/`MAX` constants, `_`, `|`), a
//! binding of the whole arm, guards.

use super::ops::constant;
use super::tree::{Arm, Kind, PatTest, TExpr, TStmt, T};
use super::{err, resolve, Checker};
use crate::tokens::{is_const_path, strip_parens, unraw};
use crate::types::{Scalar, Ty};
use syn::{Expr, Pat, Result};

impl<'a> Checker<'a> {
    /// The scrutinee of a `match`: an integer or a bool.
    fn scrutinee(&mut self, m: &'a syn::ExprMatch) -> Result<(TExpr<'a>, Scalar)> {
        let s = self.check(&m.expr, None)?;
        let s = match s.ty {
            T::Int => resolve(s, Scalar::I32)?,
            _ => s,
        };
        match s.ty.clone() {
            T::Known(Ty::Scalar(k)) if !k.is_float() => Ok((s, k)),
            other => Err(err(
                &m.expr,
                format!(
                    "`match` is supported on integers and bools, not on {}; use `if`/`else`",
                    self.ty_name(&other)
                ),
            )),
        }
    }

    /// The pattern, binding and guard of an arm, in a scope where the binding is visible.
    fn arm_head(
        &mut self,
        arm: &'a syn::Arm,
        scrutinee: Scalar,
    ) -> Result<(Vec<PatTest>, Option<String>, Option<TExpr<'a>>)> {
        let (tests, binding) = match &arm.pat {
            Pat::Ident(p) if p.subpat.is_none() && !is_const_path(&p.ident.clone().into()) => {
                if p.by_ref.is_some() || p.mutability.is_some() {
                    return Err(err(&arm.pat, "bind the value by name (`n => ...`)"));
                }
                let cuda = self.bind(unraw(&p.ident), Ty::Scalar(scrutinee), false);
                (vec![PatTest::Any], Some(cuda))
            }
            pat => (self.pattern(pat, scrutinee)?, None),
        };
        let guard = match &arm.guard {
            Some((_, g)) => {
                let g = self.check(g, None)?;
                Some(self.coerce(g, &Ty::Scalar(Scalar::Bool))?)
            }
            None => None,
        };
        Ok((tests, binding, guard))
    }

    pub(super) fn match_value(
        &mut self,
        m: &'a syn::ExprMatch,
        hint: Option<&Ty>,
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        let (scrutinee, s) = self.scrutinee(m)?;
        let mut arms: Vec<Arm<'a, TExpr<'a>>> = Vec::new();
        for arm in &m.arms {
            let (tests, binding, guard, body) = self.scope(|c| {
                let (tests, binding, guard) = c.arm_head(arm, s)?;
                let body = c.check(&arm.body, hint)?;
                Ok::<_, syn::Error>((tests, binding, guard, body))
            })?;
            arms.push(Arm {
                tests,
                binding,
                guard,
                body,
            });
        }
        if arms.is_empty() {
            return Err(err(e, "a `match` needs at least one arm"));
        }
        // One type for every arm: the first known one, or the hint.
        let ty = hint.cloned().or_else(|| {
            arms.iter().find_map(|a| match &a.body.ty {
                T::Known(t) => Some(t.clone()),
                _ => None,
            })
        });
        let ty = match ty {
            Some(ty) => {
                for a in &mut arms {
                    a.body = self.coerce(a.body.clone(), &ty)?;
                }
                T::Known(ty)
            }
            None => {
                let first = arms[0].body.ty.clone();
                if arms.iter().any(|a| a.body.ty != first) {
                    return Err(err(e, "the arms of this `match` have different types"));
                }
                first
            }
        };
        Ok(TExpr {
            kind: Kind::Match(Box::new(scrutinee), arms),
            ty,
            src: e,
        })
    }

    pub(super) fn match_unit(&mut self, m: &'a syn::ExprMatch) -> Result<TStmt<'a>> {
        let (scrutinee, s) = self.scrutinee(m)?;
        let mut arms = Vec::new();
        for arm in &m.arms {
            let arm = self.scope(|c| {
                let (tests, binding, guard) = c.arm_head(arm, s)?;
                let body = match strip_parens(&arm.body) {
                    Expr::Block(b) if b.label.is_none() => c.block_unit(&b.block)?,
                    other => vec![c.stmt_expr(other)?],
                };
                Ok::<_, syn::Error>(Arm {
                    tests,
                    binding,
                    guard,
                    body,
                })
            })?;
            arms.push(arm);
        }
        Ok(TStmt::Match { scrutinee, arms })
    }

    /// The alternatives a pattern matches, as values of the scrutinee's type.
    fn pattern(&self, pat: &Pat, s: Scalar) -> Result<Vec<PatTest>> {
        match pat {
            Pat::Paren(p) => self.pattern(&p.pat, s),
            Pat::Or(o) => {
                let mut out = Vec::new();
                for case in &o.cases {
                    out.extend(self.pattern(case, s)?);
                }
                Ok(out)
            }
            Pat::Wild(_) => Ok(vec![PatTest::Any]),
            Pat::Lit(l) => Ok(vec![PatTest::Eq(self.pattern_value(&l.lit, l, s)?)]),
            Pat::Path(p) => Ok(vec![PatTest::Eq(self.pattern_const(&p.path, pat, s)?)]),
            Pat::Range(r) => {
                let bound = |e: &Option<Box<Expr>>| -> Result<Option<i128>> {
                    match e.as_deref().map(strip_parens) {
                        None => Ok(None),
                        Some(Expr::Lit(l)) => self.pattern_value(&l.lit, l, s).map(Some),
                        Some(Expr::Path(p)) => self.pattern_const(&p.path, p, s).map(Some),
                        Some(other) => Err(err(
                            other,
                            "range bounds in patterns must be literals or constants such as \
                             `u8::MAX`",
                        )),
                    }
                };
                let lo = bound(&r.start)?;
                let hi = bound(&r.end)?;
                let hi = match (&r.limits, hi) {
                    (syn::RangeLimits::HalfOpen(_), Some(h)) => Some(h - 1),
                    (_, h) => h,
                };
                Ok(vec![PatTest::Range(lo, hi)])
            }
            Pat::Ident(p) => Err(err(
                p,
                "a binding is allowed only as a whole arm's pattern (`n => ...`); constants \
                 named in patterns are not supported (use a guard: `n if n == N => ...`)",
            )),
            other => Err(err(
                other,
                "patterns on integers and bools are literals (`3`, `b'a'`, `true`), ranges \
                 (`1..=9`), `_`, a name, and `|` of these",
            )),
        }
    }

    fn pattern_value(&self, lit: &syn::Lit, at: impl quote::ToTokens, s: Scalar) -> Result<i128> {
        let v = match (lit, s) {
            (syn::Lit::Bool(b), Scalar::Bool) => i128::from(b.value),
            (syn::Lit::Byte(b), Scalar::U8) => i128::from(b.value()),
            (syn::Lit::Int(n), s) if s.is_int() => {
                if !(n.suffix().is_empty() || n.suffix() == s.rust()) {
                    return Err(err(
                        at,
                        format!(
                            "this pattern has the suffix `{}`, the value is `{}`",
                            n.suffix(),
                            s.rust()
                        ),
                    ));
                }
                n.base10_parse::<i128>()?
            }
            _ => {
                return Err(err(
                    at,
                    format!("this pattern does not match a value of type `{}`", s.rust()),
                ))
            }
        };
        let (min, max) = if s == Scalar::Bool {
            (0, 1)
        } else {
            s.int_range()
        };
        if v < min || v > max {
            return Err(err(
                at,
                format!("the pattern {v} is out of the range of `{}`", s.rust()),
            ));
        }
        Ok(v)
    }

    fn pattern_const(&self, path: &syn::Path, at: impl quote::ToTokens, s: Scalar) -> Result<i128> {
        if path.segments.len() == 2 && path.leading_colon.is_none() {
            if let Some(ty) = Scalar::from_rust(&path.segments[0].ident.to_string()) {
                if let Some((Kind::Int(v), t)) = constant(ty, &path.segments[1].ident.to_string()) {
                    if t == s {
                        return Ok(v);
                    }
                }
            }
        }
        Err(err(
            at,
            "constants in patterns must be `MIN`, `MAX` of the scrutinee's type; use a guard \
             for others (`n if n == LIMIT => ...`)",
        ))
    }
}
