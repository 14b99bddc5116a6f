//! The typed tree the checker produces and the emitter prints: expressions ([`TExpr`], with
//! their [`T`]ypes), statements ([`TStmt`]), `match` arms, operators ([`Op`]) and methods
//! ([`Method`]); and the simplifications the checker applies to it (projections of struct and
//! array literals), which must keep every expression that may fault ([`may_fault`]).

use crate::types::{Len, Scalar, Ty, World};
use syn::{BinOp, Expr};

/// The type of a checked expression. `Int`/`Float`: an unsuffixed literal (or an operation on
/// such literals) whose type the context decides, like rustc's `{integer}` and `{float}`.
#[derive(Clone, PartialEq, Debug)]
pub enum T {
    Known(Ty),
    Int,
    Float,
}

/// A float literal's value: its digits (parsed once its type is known, directly into that type,
/// as rustc does) or a named constant.
#[derive(Clone, Debug)]
pub enum FloatVal {
    Digits(String),
    F32(f32),
    F64(f64),
}

/// What a checked expression is, with its operands checked.
#[derive(Clone)]
pub enum Kind<'a> {
    /// An integer literal or constant, wrapped to its type when printed.
    Int(i128),
    Float(FloatVal),
    Bool(bool),
    /// A `usize` constant known when the kernel is generated: a const generic parameter or a
    /// `const` item, by its Rust path.
    Sym(String),
    /// A local, by its C++ name.
    Var(String),
    /// `base.member`, with the C++ member name.
    Field(Box<TExpr<'a>>, String),
    /// `base[i]` with a constant index known to be in bounds.
    Index(Box<TExpr<'a>>, u64),
    /// `base[i]` with a run-time index; `true`: checked against the length (`false`: the
    /// index is in bounds by construction, e.g. a loop counter over the array's range).
    DynIndex(Box<TExpr<'a>>, Box<TExpr<'a>>, Len, bool),
    Array(Vec<TExpr<'a>>),
    /// `[x; N]` with a symbolic `N`.
    Repeat(Box<TExpr<'a>>, Len),
    /// A struct literal: the struct's name and the field values in declaration order.
    Struct(String, Vec<TExpr<'a>>),
    Neg(Box<TExpr<'a>>),
    Not(Box<TExpr<'a>>),
    Binary(Op, Box<TExpr<'a>>, Box<TExpr<'a>>),
    Cast(Box<TExpr<'a>>),
    Method(Method, Box<TExpr<'a>>, Vec<TExpr<'a>>),
    /// A `#[device_fn]` call, by Rust name.
    Call(String, Vec<TExpr<'a>>),
    If(Box<TExpr<'a>>, Box<TExpr<'a>>, Box<TExpr<'a>>),
    Block(Vec<TStmt<'a>>, Box<TExpr<'a>>),
    Match(Box<TExpr<'a>>, Vec<Arm<'a, TExpr<'a>>>),
}

/// A type-checked expression.
#[derive(Clone)]
pub struct TExpr<'a> {
    pub kind: Kind<'a>,
    pub ty: T,
    /// The Rust expression it came from, for error spans.
    pub src: &'a Expr,
}

impl TExpr<'_> {
    pub fn scalar(&self) -> Scalar {
        match &self.ty {
            T::Known(Ty::Scalar(s)) => *s,
            _ => unreachable!("not a scalar after type checking"),
        }
    }

    pub fn known(&self) -> &Ty {
        match &self.ty {
            T::Known(t) => t,
            _ => unreachable!("an inferred type after type checking"),
        }
    }
}

/// One alternative of a `match` pattern on an integer or bool, with values of the scrutinee's
/// type: `Eq(v)`, or an inclusive range with open ends.
#[derive(Clone, Debug)]
pub enum PatTest {
    Any,
    Eq(i128),
    Range(Option<i128>, Option<i128>),
}

/// A `match` arm: the alternatives of its pattern, a binding of the scrutinee (`n => ..`), a
/// guard, and the body (an expression, or statements in a statement `match`).
#[derive(Clone)]
pub struct Arm<'a, B> {
    pub tests: Vec<PatTest>,
    pub binding: Option<String>,
    pub guard: Option<TExpr<'a>>,
    pub body: B,
}

/// A checked statement.
#[derive(Clone)]
pub enum TStmt<'a> {
    Let {
        cuda: String,
        ty: Ty,
        mutable: bool,
        value: Option<TExpr<'a>>,
    },
    /// `place = value` or `place op= value`.
    Assign {
        place: TExpr<'a>,
        op: Option<Op>,
        value: TExpr<'a>,
    },
    If {
        cond: TExpr<'a>,
        then: Vec<TStmt<'a>>,
        els: Option<Vec<TStmt<'a>>>,
    },
    Match {
        scrutinee: TExpr<'a>,
        arms: Vec<Arm<'a, Vec<TStmt<'a>>>>,
    },
    /// `for var in lo..hi` (`..=` when inclusive); `var` is `None` for `_`.
    For {
        var: Option<String>,
        ty: Scalar,
        lo: TExpr<'a>,
        hi: TExpr<'a>,
        inclusive: bool,
        body: Vec<TStmt<'a>>,
    },
    /// `for x in array`: `index` counts, `var` is bound to each element.
    ForEach {
        var: Option<String>,
        index: String,
        array: TExpr<'a>,
        len: Len,
        body: Vec<TStmt<'a>>,
    },
    Block(Vec<TStmt<'a>>),
    Break,
    Continue,
    Return(TExpr<'a>),
}

/// A binary operator (also the operator of a compound assignment).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl Op {
    pub fn c(self) -> &'static str {
        match self {
            Op::Add => "+",
            Op::Sub => "-",
            Op::Mul => "*",
            Op::Div => "/",
            Op::Rem => "%",
            Op::BitAnd => "&",
            Op::BitOr => "|",
            Op::BitXor => "^",
            Op::Shl => "<<",
            Op::Shr => ">>",
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::And => "&&",
            Op::Or => "||",
        }
    }

    pub fn is_arith(self) -> bool {
        matches!(self, Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem)
    }

    pub fn is_bit(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }

    pub fn is_cmp(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }

    /// The operator of `a op b` and of `a op= b` (`true` for the compound form).
    pub fn from_syn(op: &BinOp) -> Option<(Op, bool)> {
        Some(match op {
            BinOp::Add(_) => (Op::Add, false),
            BinOp::Sub(_) => (Op::Sub, false),
            BinOp::Mul(_) => (Op::Mul, false),
            BinOp::Div(_) => (Op::Div, false),
            BinOp::Rem(_) => (Op::Rem, false),
            BinOp::BitAnd(_) => (Op::BitAnd, false),
            BinOp::BitOr(_) => (Op::BitOr, false),
            BinOp::BitXor(_) => (Op::BitXor, false),
            BinOp::Shl(_) => (Op::Shl, false),
            BinOp::Shr(_) => (Op::Shr, false),
            BinOp::Eq(_) => (Op::Eq, false),
            BinOp::Ne(_) => (Op::Ne, false),
            BinOp::Lt(_) => (Op::Lt, false),
            BinOp::Le(_) => (Op::Le, false),
            BinOp::Gt(_) => (Op::Gt, false),
            BinOp::Ge(_) => (Op::Ge, false),
            BinOp::And(_) => (Op::And, false),
            BinOp::Or(_) => (Op::Or, false),
            BinOp::AddAssign(_) => (Op::Add, true),
            BinOp::SubAssign(_) => (Op::Sub, true),
            BinOp::MulAssign(_) => (Op::Mul, true),
            BinOp::DivAssign(_) => (Op::Div, true),
            BinOp::RemAssign(_) => (Op::Rem, true),
            BinOp::BitAndAssign(_) => (Op::BitAnd, true),
            BinOp::BitOrAssign(_) => (Op::BitOr, true),
            BinOp::BitXorAssign(_) => (Op::BitXor, true),
            BinOp::ShlAssign(_) => (Op::Shl, true),
            BinOp::ShrAssign(_) => (Op::Shr, true),
            _ => return None,
        })
    }
}

/// A method the language knows (by its Rust name in [`METHODS`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Method {
    Min,
    Max,
    Abs,
    Sqrt,
    MulAdd,
    IsNan,
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingNeg,
    WrappingDiv,
    WrappingRem,
    WrappingShl,
    WrappingShr,
    RotateLeft,
    RotateRight,
    CountOnes,
    LeadingZeros,
    TrailingZeros,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Powf,
    Powi,
    Tanh,
    Pow,
    SaturatingAdd,
    SaturatingSub,
    SaturatingMul,
    Clamp,
    Floor,
    Ceil,
    Trunc,
    Round,
    RoundTiesEven,
    Fract,
    Signum,
    Copysign,
    Recip,
    IsFinite,
    IsInfinite,
    IsSignPositive,
    IsSignNegative,
    ToBits,
    /// `f32::from_bits(u)`, `f64::from_bits(u)`: called through the float type only; the
    /// receiver is the integer.
    FromBits,
    AbsDiff,
    UnsignedAbs,
    WrappingAbs,
    WrappingPow,
    IsPowerOfTwo,
    CountZeros,
    LeadingOnes,
    TrailingOnes,
    ReverseBits,
    SwapBytes,
    SaturatingPow,
    SaturatingNeg,
    SaturatingAbs,
    IsPositive,
    IsNegative,
    RemEuclid,
    DivEuclid,
    Ln1p,
    ExpM1,
}

/// The methods by Rust name (also callable through their type: `f32::max(a, b)`).
pub const METHODS: &[(&str, Method)] = &[
    ("min", Method::Min),
    ("max", Method::Max),
    ("abs", Method::Abs),
    ("sqrt", Method::Sqrt),
    ("mul_add", Method::MulAdd),
    ("is_nan", Method::IsNan),
    ("wrapping_add", Method::WrappingAdd),
    ("wrapping_sub", Method::WrappingSub),
    ("wrapping_mul", Method::WrappingMul),
    ("wrapping_neg", Method::WrappingNeg),
    ("wrapping_div", Method::WrappingDiv),
    ("wrapping_rem", Method::WrappingRem),
    ("wrapping_shl", Method::WrappingShl),
    ("wrapping_shr", Method::WrappingShr),
    ("rotate_left", Method::RotateLeft),
    ("rotate_right", Method::RotateRight),
    ("count_ones", Method::CountOnes),
    ("leading_zeros", Method::LeadingZeros),
    ("trailing_zeros", Method::TrailingZeros),
    ("exp", Method::Exp),
    ("exp2", Method::Exp2),
    ("ln", Method::Ln),
    ("log2", Method::Log2),
    ("log10", Method::Log10),
    ("powf", Method::Powf),
    ("powi", Method::Powi),
    ("tanh", Method::Tanh),
    ("pow", Method::Pow),
    ("saturating_add", Method::SaturatingAdd),
    ("saturating_sub", Method::SaturatingSub),
    ("saturating_mul", Method::SaturatingMul),
    ("clamp", Method::Clamp),
    ("floor", Method::Floor),
    ("ceil", Method::Ceil),
    ("trunc", Method::Trunc),
    ("round", Method::Round),
    ("round_ties_even", Method::RoundTiesEven),
    ("fract", Method::Fract),
    ("signum", Method::Signum),
    ("copysign", Method::Copysign),
    ("recip", Method::Recip),
    ("is_finite", Method::IsFinite),
    ("is_infinite", Method::IsInfinite),
    ("is_sign_positive", Method::IsSignPositive),
    ("is_sign_negative", Method::IsSignNegative),
    ("to_bits", Method::ToBits),
    ("abs_diff", Method::AbsDiff),
    ("unsigned_abs", Method::UnsignedAbs),
    ("wrapping_abs", Method::WrappingAbs),
    ("wrapping_pow", Method::WrappingPow),
    ("is_power_of_two", Method::IsPowerOfTwo),
    ("count_zeros", Method::CountZeros),
    ("leading_ones", Method::LeadingOnes),
    ("trailing_ones", Method::TrailingOnes),
    ("reverse_bits", Method::ReverseBits),
    ("swap_bytes", Method::SwapBytes),
    ("saturating_pow", Method::SaturatingPow),
    ("saturating_neg", Method::SaturatingNeg),
    ("saturating_abs", Method::SaturatingAbs),
    ("is_positive", Method::IsPositive),
    ("is_negative", Method::IsNegative),
    ("rem_euclid", Method::RemEuclid),
    ("div_euclid", Method::DivEuclid),
    ("ln_1p", Method::Ln1p),
    ("exp_m1", Method::ExpM1),
];

impl Method {
    /// The Rust name (`from_bits`, called only through its type, has none in [`METHODS`]).
    pub fn rust_name(self) -> &'static str {
        METHODS
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("from_bits", |(name, _)| name)
    }
}

/// The method of this name, if the language knows it.
pub(super) fn lookup_method(name: &syn::Ident) -> Option<Method> {
    let name = name.to_string();
    METHODS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

/// The value of an integer literal (possibly negated) as its type holds it: wrapped to the
/// type, as rustc does with `overflowing_literals` allowed (`255i8` is -1). `None` for anything
/// else, and for a literal whose type is not known yet that would not be the same value in
/// every integer type (outside -128..=127).
pub fn int_literal(e: &TExpr) -> Option<i128> {
    int_literal_in(e, None)
}

/// [`int_literal`], an untyped literal taking the type `context` (the other operand's) if given.
fn int_literal_in(e: &TExpr, context: Option<Scalar>) -> Option<i128> {
    let v = match &e.kind {
        Kind::Int(v) => *v,
        Kind::Neg(inner) => match inner.kind {
            Kind::Int(v) => -v,
            _ => return None,
        },
        _ => return None,
    };
    let ty = match (&e.ty, context) {
        (T::Int, Some(s)) => Some(s),
        (T::Known(Ty::Scalar(s)), _) => Some(*s),
        _ => None,
    };
    match (ty, &e.ty) {
        (Some(s), _) if s.is_int() => {
            let bits = s.bits();
            let wrapped = v.rem_euclid(1i128 << bits);
            Some(if s.is_signed() && wrapped >= 1i128 << (bits - 1) {
                wrapped - (1i128 << bits)
            } else {
                wrapped
            })
        }
        (None, T::Int) if (-128..=127).contains(&v) => Some(v),
        _ => None,
    }
}

/// Whether `divisor` is a literal other than 0 and -1 in its type, so that an integer division
/// by it never faults (by zero, or MIN / -1).
pub fn safe_divisor(divisor: &TExpr) -> bool {
    int_literal(divisor).is_some_and(|v| v != 0 && v != -1)
}

/// Whether `a op b` (or `a.wrapping_op(b)`) is an integer division or remainder that may fault.
pub fn division_may_fault(op: Op, a: &TExpr, b: &TExpr) -> bool {
    let float = |t: &TExpr| {
        matches!(
            t.ty,
            T::Float | T::Known(Ty::Scalar(Scalar::F32 | Scalar::F64))
        )
    };
    let context = match a.ty {
        T::Known(Ty::Scalar(s)) => Some(s),
        _ => None,
    };
    let safe = int_literal_in(b, context).is_some_and(|v| v != 0 && v != -1);
    matches!(op, Op::Div | Op::Rem) && !float(a) && !float(b) && !safe
}

/// Whether evaluating `e` may record a fault (a run-time index, an integer division by a value
/// that may be 0 or -1, or a helper call, which may index): such an expression is never dropped
/// by a simplification.
pub fn may_fault(e: &TExpr) -> bool {
    match &e.kind {
        Kind::Binary(op, a, b) if division_may_fault(*op, a, b) => true,
        Kind::Method(
            Method::WrappingDiv | Method::WrappingRem | Method::RemEuclid | Method::DivEuclid,
            a,
            b,
        ) if a.scalar().is_int() && !safe_divisor(&b[0]) => true,
        Kind::Int(_) | Kind::Float(_) | Kind::Bool(_) | Kind::Sym(_) | Kind::Var(_) => false,
        Kind::DynIndex(b, i, _, checked) => *checked || may_fault(b) || may_fault(i),
        Kind::Call(..) => true,
        Kind::Block(..) | Kind::Match(..) => true,
        Kind::Field(b, _) | Kind::Index(b, _) | Kind::Repeat(b, _) => may_fault(b),
        Kind::Neg(b) | Kind::Not(b) | Kind::Cast(b) => may_fault(b),
        Kind::Array(v) | Kind::Struct(_, v) => v.iter().any(may_fault),
        Kind::Binary(_, a, b) => may_fault(a) || may_fault(b),
        Kind::Method(_, r, args) => may_fault(r) || args.iter().any(may_fault),
        Kind::If(c, a, b) => may_fault(c) || may_fault(a) || may_fault(b),
    }
}

/// `base.field` (field `idx` of struct type), simplified where `base` is a struct literal
/// whose other fields cannot fault, an `if` or a block.
pub fn project_field<'a>(world: &World, base: TExpr<'a>, idx: usize) -> TExpr<'a> {
    let src = base.src;
    let T::Known(Ty::Struct(name)) = &base.ty else {
        unreachable!("field of a non-struct")
    };
    let field = &world.strukt(name).fields[idx];
    let (ty, member) = (field.ty.clone(), field.cuda_name.clone());
    let kind = match base.kind {
        Kind::Struct(_, vals)
            if vals
                .iter()
                .enumerate()
                .all(|(i, v)| i == idx || !may_fault(v)) =>
        {
            return vals.into_iter().nth(idx).expect("field index in range");
        }
        Kind::If(c, a, b) => Kind::If(
            c,
            Box::new(project_field(world, *a, idx)),
            Box::new(project_field(world, *b, idx)),
        ),
        Kind::Block(stmts, tail) => Kind::Block(stmts, Box::new(project_field(world, *tail, idx))),
        kind => Kind::Field(
            Box::new(TExpr {
                kind,
                ty: base.ty,
                src,
            }),
            member,
        ),
    };
    TExpr {
        kind,
        ty: T::Known(ty),
        src,
    }
}

/// `base[i]` for a constant in-bounds `i`, simplified where `base` is an array literal whose
/// other elements cannot fault, an `if` or a block.
pub fn project_elem(base: TExpr<'_>, i: u64) -> TExpr<'_> {
    let src = base.src;
    let T::Known(Ty::Array(elem, _)) = &base.ty else {
        unreachable!("index of a non-array")
    };
    let elem = (**elem).clone();
    let kind = match base.kind {
        Kind::Array(vals)
            if vals
                .iter()
                .enumerate()
                .all(|(k, v)| k as u64 == i || !may_fault(v)) =>
        {
            return vals.into_iter().nth(i as usize).expect("index in range");
        }
        Kind::If(c, a, b) => Kind::If(
            c,
            Box::new(project_elem(*a, i)),
            Box::new(project_elem(*b, i)),
        ),
        Kind::Block(stmts, tail) => Kind::Block(stmts, Box::new(project_elem(*tail, i))),
        kind => Kind::Index(
            Box::new(TExpr {
                kind,
                ty: base.ty,
                src,
            }),
            i,
        ),
    };
    TExpr {
        kind,
        ty: T::Known(elem),
        src,
    }
}
