//! Checking operators, `as` casts and methods: the typing rules of Rust's primitive operations
//! (literal inference through operands, shift amounts, which methods exist on which types).

use super::tree::{
    division_may_fault, int_literal, lookup_method, safe_divisor, FloatVal, Kind, Method, Op,
    TExpr, METHODS, T,
};
use super::{err, resolve, Checker};
use crate::types::{Scalar, Ty};
use syn::spanned::Spanned;
use syn::{Error, Expr, Result, UnOp};

impl<'a> Checker<'a> {
    pub(super) fn unary(
        &mut self,
        u: &'a syn::ExprUnary,
        hint: Option<&Ty>,
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        let mk = |kind, ty| Ok(TExpr { kind, ty, src: e });
        let inner = self.check(&u.expr, hint)?;
        match u.op {
            UnOp::Neg(_) => {
                match &inner.ty {
                    T::Int | T::Float => {}
                    T::Known(Ty::Scalar(s)) if s.is_signed() => {}
                    T::Known(Ty::Scalar(s)) if s.is_int() => {
                        return Err(err(
                            e,
                            format!(
                                "cannot negate a value of the unsigned type `{}`; use \
                                 `wrapping_neg()`",
                                s.rust()
                            ),
                        ))
                    }
                    other => return Err(err(e, format!("cannot negate {}", self.ty_name(other)))),
                }
                let ty = inner.ty.clone();
                mk(Kind::Neg(Box::new(inner)), ty)
            }
            UnOp::Not(_) => {
                match &inner.ty {
                    T::Int => {}
                    T::Known(Ty::Scalar(s)) if !s.is_float() => {}
                    other => {
                        return Err(err(
                            e,
                            format!("`!` is not defined for {}", self.ty_name(other)),
                        ))
                    }
                }
                let ty = inner.ty.clone();
                mk(Kind::Not(Box::new(inner)), ty)
            }
            _ => Err(err(
                u.op,
                "dereferencing is not supported: the CUDA translation has no references",
            )),
        }
    }

    pub(super) fn binary(&mut self, b: &'a syn::ExprBinary, e: &'a Expr) -> Result<TExpr<'a>> {
        let op = match Op::from_syn(&b.op) {
            Some((op, false)) => op,
            _ => {
                return Err(err(
                    b.op,
                    "compound assignment is a statement: write it on its own, ending with `;`",
                ))
            }
        };
        let l = self.check(&b.left, None)?;
        let r = self.check(&b.right, None)?;
        self.operation(op, l, r, b.op.span(), e)
    }

    /// Types `l op r` (also used for `place op= value`).
    pub(super) fn operation(
        &mut self,
        op: Op,
        l: TExpr<'a>,
        r: TExpr<'a>,
        op_span: proc_macro2::Span,
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        // An integer division by a value that may be 0 (or -1) records a fault where Rust panics.
        self.uses.faults |= division_may_fault(op, &l, &r);
        let bool_ty = Ty::Scalar(Scalar::Bool);
        let mk = |kind, ty| Ok(TExpr { kind, ty, src: e });
        match op {
            Op::And | Op::Or => {
                let l = self.coerce(l, &bool_ty)?;
                let r = self.coerce(r, &bool_ty)?;
                mk(
                    Kind::Binary(op, Box::new(l), Box::new(r)),
                    T::Known(bool_ty),
                )
            }
            Op::Shl | Op::Shr => {
                let int_like = |t: &T| match t {
                    T::Int => true,
                    T::Known(Ty::Scalar(s)) => s.is_int(),
                    _ => false,
                };
                if !int_like(&l.ty) {
                    return Err(err(
                        l.src,
                        format!(
                            "`{}` needs an integer on the left, found {}",
                            op.c(),
                            self.ty_name(&l.ty)
                        ),
                    ));
                }
                if !int_like(&r.ty) {
                    return Err(err(
                        r.src,
                        format!(
                            "the shift amount must be an integer, found {}",
                            self.ty_name(&r.ty)
                        ),
                    ));
                }
                // An unsuffixed shift amount falls back to i32, as in rustc (its value is masked
                // anyway).
                let r = if r.ty == T::Int {
                    resolve(r, Scalar::I32)?
                } else {
                    r
                };
                let ty = l.ty.clone();
                mk(Kind::Binary(op, Box::new(l), Box::new(r)), ty)
            }
            _ => {
                let (l, r, ty) = self.unify(l, r, op_span, || {
                    format!("mismatched operand types for `{}`", op.c())
                })?;
                let ok = match &ty {
                    T::Int => true,
                    T::Float => !op.is_bit(),
                    T::Known(Ty::Scalar(s)) => {
                        if op.is_arith() {
                            *s != Scalar::Bool
                        } else if op.is_bit() {
                            !s.is_float()
                        } else {
                            true
                        }
                    }
                    T::Known(Ty::Array(elem, _)) => {
                        matches!(op, Op::Eq | Op::Ne) && !elem.mentions_struct()
                    }
                    T::Known(Ty::Struct(_)) => false,
                };
                if !ok {
                    let extra = if matches!(ty, T::Known(Ty::Struct(_)) | T::Known(Ty::Array(..)))
                        && op.is_cmp()
                    {
                        "; compare the fields one by one"
                    } else {
                        ""
                    };
                    return Err(Error::new(
                        op_span,
                        format!(
                            "`{}` is not supported for {}{extra}",
                            op.c(),
                            self.ty_name(&ty)
                        ),
                    ));
                }
                if op.is_cmp() {
                    if matches!(ty, T::Int | T::Float) {
                        return Err(err(
                            e,
                            "cannot infer the type of the literals in this comparison: add a \
                             suffix (`1u32`)",
                        ));
                    }
                    mk(
                        Kind::Binary(op, Box::new(l), Box::new(r)),
                        T::Known(bool_ty),
                    )
                } else {
                    mk(Kind::Binary(op, Box::new(l), Box::new(r)), ty)
                }
            }
        }
    }

    pub(super) fn cast(&mut self, c: &'a syn::ExprCast, e: &'a Expr) -> Result<TExpr<'a>> {
        let to = match self.world.ty(&c.ty, false) {
            Ok(Ty::Scalar(s)) => s,
            Ok(_) => {
                return Err(err(
                    &c.ty,
                    "`as` casts are supported between primitive types only",
                ))
            }
            Err(e) => return Err(e),
        };
        let inner = self.check(&c.expr, None)?;
        let inner = match inner.ty {
            T::Known(_) => inner,
            // rustc types a literal cast to an integer type as that type; other literals fall
            // back to i32 / f64.
            T::Int | T::Float if literal_like(&inner) => {
                let s = match (&inner.ty, to.is_int(), to.is_float()) {
                    (T::Int, true, _) => to,
                    (T::Int, _, _) => Scalar::I32,
                    (_, _, true) => to,
                    _ => Scalar::F64,
                };
                resolve(inner, s)?
            }
            _ => {
                return Err(err(
                    &c.expr,
                    "cannot infer the type of the literals in this expression: add a suffix \
                     (`1u32`, `1.0f32`) before casting",
                ))
            }
        };
        let from = match &inner.ty {
            T::Known(Ty::Scalar(s)) => *s,
            other => {
                return Err(err(
                    &c.expr,
                    format!("cannot cast {} with `as`", self.ty_name(other)),
                ))
            }
        };
        let ok = match (from, to) {
            (a, b) if a == b => true,
            (_, Scalar::Bool) => false,
            (Scalar::Bool, b) => b.is_int(),
            _ => true,
        };
        if !ok {
            return Err(err(
                e,
                format!(
                    "cannot cast `{}` as `{}` (Rust rejects it too)",
                    from.rust(),
                    to.rust()
                ),
            ));
        }
        Ok(TExpr {
            kind: Kind::Cast(Box::new(inner)),
            ty: T::Known(Ty::Scalar(to)),
            src: e,
        })
    }

    pub(super) fn method(&mut self, m: &'a syn::ExprMethodCall, e: &'a Expr) -> Result<TExpr<'a>> {
        if let Some(t) = &m.turbofish {
            return Err(err(t, "generic arguments are not supported"));
        }
        let Some(method) = lookup_method(&m.method) else {
            return Err(err(
                &m.method,
                format!(
                    "method `{}` cannot be translated to CUDA{}; supported methods: {}",
                    m.method,
                    method_hint(&m.method.to_string()),
                    METHODS
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        let recv = self.check(&m.receiver, None)?;
        if matches!(recv.ty, T::Int | T::Float) {
            return Err(err(
                &m.receiver,
                format!(
                    "cannot call `{}` on a literal of ambiguous type: add a suffix (`2u32`, \
                     `2.0f32`)",
                    m.method
                ),
            ));
        }
        let args: Vec<&'a Expr> = m.args.iter().collect();
        self.method_call(method, &m.method, recv, &args, e)
    }

    pub(super) fn method_call(
        &mut self,
        method: Method,
        name: &syn::Ident,
        recv: TExpr<'a>,
        args: &[&'a Expr],
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        let s = match &recv.ty {
            T::Known(Ty::Scalar(s)) if *s != Scalar::Bool => *s,
            other => {
                return Err(err(
                    name,
                    format!("`{name}` is not supported on {}", self.ty_name(other)),
                ))
            }
        };
        let Some((arg_tys, result)) = signature(method, s) else {
            return Err(err(
                name,
                format!("`{name}` is not a method of `{}`", s.rust()),
            ));
        };
        if args.len() != arg_tys.len() {
            return Err(err(
                e,
                format!(
                    "`{name}` takes {} argument(s), {} given",
                    arg_tys.len(),
                    args.len()
                ),
            ));
        }
        let mut targs = Vec::new();
        for (a, t) in args.iter().zip(arg_tys) {
            let v = self.check(a, Some(&Ty::Scalar(t)))?;
            targs.push(self.coerce(v, &Ty::Scalar(t))?);
        }
        if method == Method::Clamp {
            check_clamp_bounds(name, &targs)?;
        }
        let divides = matches!(
            method,
            Method::WrappingDiv | Method::WrappingRem | Method::RemEuclid | Method::DivEuclid
        );
        if divides && s.is_int() {
            self.uses.faults |= !safe_divisor(&targs[0]);
        }
        Ok(TExpr {
            kind: Kind::Method(method, Box::new(recv), targs),
            ty: T::Known(Ty::Scalar(result)),
            src: e,
        })
    }
}

/// What to write instead of a method the language lacks, where there is a near one.
fn method_hint(name: &str) -> &'static str {
    match name {
        "into" | "try_into" => " (write `u64::from(x)` for a lossless conversion, or `x as u64`)",
        n if n.starts_with("checked_") || n.starts_with("overflowing_") => {
            " (the device has no `Option` or tuples: use the `wrapping_` or `saturating_` form)"
        }
        "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "atan2" | "sinh" | "cosh" | "asinh"
        | "acosh" | "atanh" | "cbrt" | "hypot" | "sin_cos" => {
            " (the elementary functions with the same bits on the CPU and the GPU are exp, exp2, \
             exp_m1, ln, ln_1p, log2, log10, powf, powi, tanh and sqrt)"
        }
        "max_by" | "min_by" | "total_cmp" | "partial_cmp" | "cmp" => {
            " (compare with `<` or use `min` / `max`)"
        }
        _ => "",
    }
}

/// The argument types and the result type of `method` called on a `s`, or `None` where `s` has
/// no such method (Rust's: `abs` and `signum` only on signed types, `is_power_of_two` only on
/// unsigned ones, `abs_diff` and `unsigned_abs` give the unsigned type of the same width).
fn signature(method: Method, s: Scalar) -> Option<(Vec<Scalar>, Scalar)> {
    use Method::*;
    let (float, int, signed) = (s.is_float(), s.is_int(), s.is_int() && s.is_signed());
    let bits = if s == Scalar::F32 {
        Scalar::U32
    } else {
        Scalar::U64
    };
    let sig = |args: &[Scalar], result: Scalar| Some((args.to_vec(), result));
    match method {
        Min | Max => sig(&[s], s),
        Clamp => sig(&[s, s], s),
        Abs | Signum if float || signed => sig(&[], s),
        Sqrt | Exp | Exp2 | Ln | Log2 | Log10 | Tanh | Ln1p | ExpM1 | Floor | Ceil | Trunc
        | Round | RoundTiesEven | Fract | Recip
            if float =>
        {
            sig(&[], s)
        }
        Powf | Copysign if float => sig(&[s], s),
        RemEuclid | DivEuclid => sig(&[s], s),
        IsPositive | IsNegative if signed => sig(&[], Scalar::Bool),
        Powi if float => sig(&[Scalar::I32], s),
        MulAdd if float => sig(&[s, s], s),
        IsNan | IsFinite | IsInfinite | IsSignPositive | IsSignNegative if float => {
            sig(&[], Scalar::Bool)
        }
        ToBits if float => sig(&[], bits),
        WrappingAdd | WrappingSub | WrappingMul | WrappingDiv | WrappingRem | SaturatingAdd
        | SaturatingSub | SaturatingMul
            if int =>
        {
            sig(&[s], s)
        }
        WrappingNeg | ReverseBits | SwapBytes if int => sig(&[], s),
        WrappingShl | WrappingShr | RotateLeft | RotateRight | Pow | WrappingPow
        | SaturatingPow
            if int =>
        {
            sig(&[Scalar::U32], s)
        }
        CountOnes | CountZeros | LeadingZeros | LeadingOnes | TrailingZeros | TrailingOnes
            if int =>
        {
            sig(&[], Scalar::U32)
        }
        AbsDiff if int => sig(&[s], s.unsigned()),
        UnsignedAbs if signed => sig(&[], s.unsigned()),
        WrappingAbs | SaturatingNeg | SaturatingAbs if signed => sig(&[], s),
        IsPowerOfTwo if int && !signed => sig(&[], Scalar::Bool),
        _ => None,
    }
}

/// `clamp`'s bounds: Rust panics where `min > max` (or either is NaN), which the device cannot,
/// so both must be literals (or constants such as `f32::MAX`) in order: integers compared as
/// their type holds them, floats as floats.
fn check_clamp_bounds(name: &syn::Ident, args: &[TExpr<'_>]) -> Result<()> {
    let float = |t: &TExpr| -> Option<f64> {
        let (negated, t) = match &t.kind {
            Kind::Neg(inner) => (true, &**inner),
            _ => (false, t),
        };
        let v = match &t.kind {
            Kind::Float(FloatVal::F32(v)) => f64::from(*v),
            Kind::Float(FloatVal::F64(v)) => *v,
            Kind::Float(FloatVal::Digits(d)) => d.parse().ok()?,
            _ => return None,
        };
        Some(if negated { -v } else { v })
    };
    let in_order = match (int_literal(&args[0]), int_literal(&args[1])) {
        (Some(lo), Some(hi)) => Some(lo <= hi),
        _ => match (float(&args[0]), float(&args[1])) {
            (Some(lo), Some(hi)) => Some(lo <= hi),
            _ => None,
        },
    };
    match in_order {
        Some(true) => Ok(()),
        Some(false) => Err(err(
            name,
            format!("`{name}`'s bounds are out of order (or NaN): Rust panics on them"),
        )),
        None => Err(err(
            name,
            format!(
                "`{name}` needs literal bounds (Rust panics where min > max, which the device \
                 cannot): write `if x < lo {{ lo }} else if x > hi {{ hi }} else {{ x }}`"
            ),
        )),
    }
}

/// `u32::MAX`, `f32::INFINITY`...: the value and its type.
pub fn constant<'a>(s: Scalar, name: &str) -> Option<(Kind<'a>, Scalar)> {
    if s.is_int() {
        let (min, max) = s.int_range();
        return match name {
            "MAX" => Some((Kind::Int(max), s)),
            "MIN" => Some((Kind::Int(min), s)),
            "BITS" => Some((Kind::Int(i128::from(s.bits())), Scalar::U32)),
            _ => None,
        };
    }
    macro_rules! float_consts {
        ($t:ident, $v:ident) => {
            match name {
                "INFINITY" => Some($t::INFINITY),
                "NEG_INFINITY" => Some($t::NEG_INFINITY),
                "NAN" => Some($t::NAN),
                "MAX" => Some($t::MAX),
                "MIN" => Some($t::MIN),
                "MIN_POSITIVE" => Some($t::MIN_POSITIVE),
                "EPSILON" => Some($t::EPSILON),
                _ => None,
            }
            .map(|v| (Kind::Float(FloatVal::$v(v)), s))
        };
    }
    match s {
        Scalar::F32 => float_consts!(f32, F32),
        Scalar::F64 => float_consts!(f64, F64),
        _ => None,
    }
}

/// A literal, possibly negated: the operand forms whose type rustc takes from an `as` target.
fn literal_like(t: &TExpr) -> bool {
    match &t.kind {
        Kind::Int(_) | Kind::Float(_) => true,
        Kind::Neg(inner) => literal_like(inner),
        _ => false,
    }
}
