//! Emission: typed trees to CUDA C++ whose value is, bit for bit, the value of the Rust code in a
//! release build. Integer arithmetic wraps (signed arithmetic goes through the unsigned type,
//! narrow types are cast back after C's promotion), shift amounts are masked to the type width,
//! float->int `as` saturates, run-time indices are checked (`r_ix`). The helpers it calls are
//! the `r_*` functions of `reduce-core/src/cuda/prelude/`.
//!
//! Arrays are `r_array<T, N>` values (a struct around a C array: copyable, returnable, same
//! layout). Symbolic lengths and `usize` constants are holes, filled in by the user's crate when
//! the text is generated (see [`Holes`]). This file prints expressions, `stmt.rs` statements and
//! function bodies, `lit.rs` literals.

mod lit;
mod stmt;

use crate::check::{safe_divisor, Kind, Method, Op, TExpr, T};
use crate::types::{Len, Scalar, Ty, World};
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;

use lit::float_lit;
pub use lit::int_lit;

/// A value the user's crate computes when it generates the text.
#[derive(Clone, Debug, PartialEq)]
pub enum Hole {
    /// A `usize` constant: a const generic parameter or a `const` item, by its Rust path.
    Sym(String),
    /// `size_of::<Self>()`.
    SizeOf,
    /// `align_of::<Self>()`.
    AlignOf,
    /// `offset_of!(Self, member)`, by the member's Rust spelling (`a`, `0`).
    OffsetOf(String),
}

/// The holes of a text. A hole is written into the text as `\u{1}INDEX\u{2}`.
#[derive(Default)]
pub struct Holes(RefCell<Vec<Hole>>);

impl Holes {
    /// The marker for `hole` (one index per distinct hole).
    pub fn mark(&self, hole: Hole) -> String {
        let mut holes = self.0.borrow_mut();
        let i = match holes.iter().position(|h| *h == hole) {
            Some(i) => i,
            None => {
                holes.push(hole);
                holes.len() - 1
            }
        };
        format!("\u{1}{i}\u{2}")
    }

    pub fn into_vec(self) -> Vec<Hole> {
        self.0.into_inner()
    }
}

/// Prints the C++ of checked trees.
pub struct Emitter<'w> {
    pub world: &'w World,
    pub holes: &'w Holes,
    /// Indentation of the statement being printed (for lambdas inside expressions).
    indent: Cell<usize>,
    /// Counter for the emitter's own temporaries (`r_m1`, `r_k2`).
    temps: Cell<usize>,
}

/// `(s)`, unless at the top of an expression (initializer, argument, return).
fn wrap(s: String, top: bool) -> String {
    if top {
        s
    } else {
        format!("({s})")
    }
}

impl<'w> Emitter<'w> {
    pub fn new(world: &'w World, holes: &'w Holes) -> Self {
        Emitter {
            world,
            holes,
            indent: Cell::new(0),
            temps: Cell::new(0),
        }
    }

    fn temp(&self, base: &str) -> String {
        self.temps.set(self.temps.get() + 1);
        format!("r_{base}{}", self.temps.get())
    }

    /// An array length in C++: the number, or its hole.
    pub fn len(&self, len: &Len) -> String {
        match len {
            Len::Lit(n) => n.to_string(),
            Len::Sym(s) => self.holes.mark(Hole::Sym(s.clone())),
        }
    }

    /// The C++ type.
    pub fn cty(&self, ty: &Ty) -> String {
        match ty {
            Ty::Scalar(s) => s.c().to_owned(),
            Ty::Struct(name) => name.clone(),
            Ty::Array(elem, len) => format!("r_array<{}, {}>", self.cty(elem), self.len(len)),
        }
    }

    fn known_cty(&self, ty: &T) -> String {
        match ty {
            T::Known(ty) => self.cty(ty),
            _ => unreachable!("an inferred type after type checking"),
        }
    }

    /// An initializer: a brace list for array literals (usable to initialize a declaration, a
    /// member, a parameter or a return value), an expression otherwise.
    pub fn init(&self, e: &TExpr) -> String {
        match &e.kind {
            // Arrays whose length a constant names, from wherever: `r_make` takes their own
            // types (a brace list would need the type spelled, with the constant as this site
            // names it).
            Kind::Array(vals) if made(e) => {
                let items: Vec<String> = vals.iter().map(|v| self.init(v)).collect();
                format!("r_make({})", items.join(", "))
            }
            Kind::Array(vals) => {
                let nested = matches!(e.ty, T::Known(Ty::Array(ref elem, _)) if matches!(**elem, Ty::Array(..)));
                let items: Vec<String> = vals.iter().map(|v| self.init(v)).collect();
                if nested {
                    // `{{ {a, b}, {c, d} }}`: the outer braces for r_array, the inner for its
                    // member array, each element braced on its own.
                    format!("{{{{{}}}}}", items.join(", "))
                } else {
                    // `{a, b}`: brace elision initializes the member array.
                    format!("{{{}}}", items.join(", "))
                }
            }
            _ => self.expr(e, true),
        }
    }

    /// `init`, with a long array initializer broken into lines.
    pub fn init_lines(&self, e: &TExpr, indent: usize) -> String {
        let one = self.init(e);
        let Kind::Array(vals) = &e.kind else {
            return one;
        };
        if made(e) || one.len() + 4 * indent <= 96 || one.contains('\n') {
            return one;
        }
        let nested = one.starts_with("{{");
        let pad = "    ".repeat(indent);
        let items: Vec<String> = vals
            .iter()
            .map(|v| self.init_lines(v, indent + 1))
            .collect();
        let mut s = if nested { "{{\n" } else { "{\n" }.to_owned();
        if items.iter().all(|item| item.len() <= 20) {
            // Short items (`(short)0`): fill lines instead of one per line.
            let mut line = String::new();
            for item in items {
                if !line.is_empty() && pad.len() + 4 + line.len() + item.len() + 2 > 96 {
                    let _ = writeln!(s, "{pad}    {}", line.trim_end());
                    line.clear();
                }
                let _ = write!(line, "{item}, ");
            }
            let _ = writeln!(s, "{pad}    {}", line.trim_end());
        } else {
            for item in items {
                let _ = writeln!(s, "{pad}    {item},");
            }
        }
        s.push_str(&pad);
        s.push_str(if nested { "}}" } else { "}" });
        s
    }

    /// An expression.
    pub fn expr(&self, e: &TExpr, top: bool) -> String {
        match &e.kind {
            Kind::Int(v) => int_lit(*v, e.scalar()),
            Kind::Float(v) => float_lit(v, e.scalar(), false),
            Kind::Bool(b) => b.to_string(),
            Kind::Sym(path) => format!("{}ull", self.holes.mark(Hole::Sym(path.clone()))),
            Kind::Var(name) => name.clone(),
            Kind::Field(base, member) => format!("{}.{member}", self.expr(base, false)),
            Kind::Index(base, i) => format!("{}[{i}]", self.expr(base, false)),
            // A length named by a constant is checked against the array's own length (its
            // `r_array`'s N, from where its type was written): the same name at this monoid's
            // site may be another constant.
            Kind::DynIndex(base, i, Len::Sym(_), true) => {
                format!("{}.at({})", self.expr(base, false), self.expr(i, true))
            }
            // Proved below the loop bound `s`, which is the array's length by name: `within`
            // refuses to compile where the constant `s` here passes the array's own length.
            Kind::DynIndex(base, i, Len::Sym(s), false) => format!(
                "{}.within<{}>({})",
                self.expr(base, false),
                self.holes.mark(Hole::Sym(s.clone())),
                self.expr(i, true)
            ),
            Kind::DynIndex(base, i, len, true) => format!(
                "{}[r_ix({}, {})]",
                self.expr(base, false),
                self.expr(i, true),
                self.len(len)
            ),
            Kind::DynIndex(base, i, _, false) => {
                let i = self.expr(i, true);
                // `a[[&]() ...]` would open a C++ attribute
                let i = if i.starts_with('[') {
                    format!("({i})")
                } else {
                    i
                };
                format!("{}[{i}]", self.expr(base, false))
            }
            Kind::Array(_) if made(e) => self.init(e),
            Kind::Array(_) => format!("{}{}", self.known_cty(&e.ty), self.init(e)),
            Kind::Repeat(x, len) => {
                let T::Known(Ty::Array(elem, _)) = &e.ty else {
                    unreachable!()
                };
                format!(
                    "r_fill<{}, {}>({})",
                    self.cty(elem),
                    self.len(len),
                    self.expr(x, true)
                )
            }
            Kind::Struct(name, vals) => {
                let items: Vec<String> = vals.iter().map(|v| self.init(v)).collect();
                format!("{name}{{{}}}", items.join(", "))
            }
            Kind::Neg(inner) => {
                let s = e.scalar();
                if let Some(lit) = negated_literal(inner, s) {
                    return lit;
                }
                if s.is_float() {
                    wrap(format!("-{}", self.expr(inner, false)), top)
                } else {
                    format!("r_neg_{}({})", s.helper(), self.expr(inner, true))
                }
            }
            Kind::Not(inner) => {
                let s = e.scalar();
                let a = self.expr(inner, false);
                if s == Scalar::Bool {
                    wrap(format!("!{a}"), top)
                } else if s.is_narrow() {
                    wrap(format!("({})~{a}", s.c()), top)
                } else {
                    wrap(format!("~{a}"), top)
                }
            }
            Kind::Binary(op, l, r) => self.binary(*op, l, r, top),
            Kind::Cast(inner) => {
                let from = inner.scalar();
                let to = e.scalar();
                if from.c() == to.c() {
                    self.expr(inner, top)
                } else if from.is_float() && to.is_int() {
                    format!(
                        "r_{}_as_{}({})",
                        from.rust(),
                        to.helper(),
                        self.expr(inner, true)
                    )
                } else {
                    wrap(format!("({}){}", to.c(), self.expr(inner, false)), top)
                }
            }
            Kind::Method(m, recv, args) => self.method(*m, recv, args, top),
            Kind::Call(name, args) => {
                let args: Vec<String> = args.iter().map(|a| self.init(a)).collect();
                format!("fn_{name}({})", args.join(", "))
            }
            Kind::If(c, a, b) => wrap(
                format!(
                    "{} ? {} : {}",
                    self.expr(c, false),
                    self.expr(a, false),
                    self.expr(b, false)
                ),
                top,
            ),
            Kind::Block(..) | Kind::Match(..) => self.lambda(e),
        }
    }

    /// The head of an immediately invoked lambda returning `ty`: `[&]() -> T `, or `[&]() ` (the
    /// type its returns give) where an array length in `ty` is a constant, which may mean
    /// another value at this site than where the array's type was written.
    pub fn lambda_head(&self, ty: &Ty) -> String {
        match has_named_len(ty) {
            true => "[&]() ".to_owned(),
            false => format!("[&]() -> {} ", self.cty(ty)),
        }
    }

    /// An immediately invoked lambda computing `e` with statements: `[&]() -> T { ... }()`.
    fn lambda(&self, e: &TExpr) -> String {
        let head = self.lambda_head(e.known());
        if let Kind::Block(stmts, tail) = &e.kind {
            if stmts.iter().all(|s| self.is_simple_let(s)) {
                let mut s = format!("{head}{{ ");
                for st in stmts {
                    let mut line = String::new();
                    self.stmt(st, 0, &mut line);
                    let _ = write!(s, "{} ", line.trim());
                }
                let _ = write!(s, "return {}; }}()", self.init(tail));
                return s;
            }
        }
        let indent = self.indent.get();
        let pad = "    ".repeat(indent);
        let mut body = String::new();
        self.body(e, indent + 1, &mut body);
        format!("{head}{{\n{body}{pad}}}()")
    }

    /// `l op r` with Rust's semantics (see the module documentation).
    pub fn binary(&self, op: Op, l: &TExpr, r: &TExpr, top: bool) -> String {
        let s = match &l.ty {
            T::Known(Ty::Array(..)) => {
                let eq = format!("r_eq({}, {})", self.expr(l, true), self.expr(r, true));
                return if op == Op::Eq {
                    eq
                } else {
                    wrap(format!("!{eq}"), top)
                };
            }
            _ => l.scalar(),
        };
        let a = || self.expr(l, false);
        let b = || self.expr(r, false);
        let call = |name: &str| format!("{name}({}, {})", self.expr(l, true), self.expr(r, true));
        let plain = |sym: &str| wrap(format!("{} {sym} {}", a(), b()), top);
        let native = matches!(s, Scalar::U32 | Scalar::U64 | Scalar::Usize);
        match op {
            Op::Add | Op::Sub | Op::Mul => {
                if s.is_float() || native {
                    plain(op.c())
                } else {
                    call(&format!("r_{}_{}", helper_name(op), s.helper()))
                }
            }
            Op::Div | Op::Rem => {
                if s.is_float() {
                    if op == Op::Div {
                        // Not `/`: NVRTC's front end folds `(c / c) != (c / c)` on constants to
                        // false even where c / c is NaN (found by fuzz-derive: docs/decisions/0037-nvrtc-miscompiles.md); the
                        // IEEE round-to-nearest intrinsics are what `/` computes, never folded.
                        call(if s == Scalar::F32 {
                            "__fdiv_rn"
                        } else {
                            "__ddiv_rn"
                        })
                    } else {
                        call(if s == Scalar::F32 { "fmodf" } else { "fmod" })
                    }
                } else if native && safe_divisor(r) {
                    plain(op.c())
                } else {
                    // the prelude's checked division (a fault by zero, and by the operators' MIN / -1)
                    call(&format!("r_{}_{}", helper_name(op), s.helper()))
                }
            }
            Op::BitAnd | Op::BitOr | Op::BitXor => {
                if s == Scalar::Bool && op != Op::BitXor && crate::check::may_fault(r) {
                    // Rust's `&` and `|` evaluate both sides: so must C++ (a fault on the right)
                    format!("(bool)({} {} {})", a(), op.c(), b())
                } else if s == Scalar::Bool {
                    plain(match op {
                        Op::BitAnd => "&&",
                        Op::BitOr => "||",
                        _ => "!=",
                    })
                } else if s.is_narrow() {
                    wrap(format!("({})({} {} {})", s.c(), a(), op.c(), b()), top)
                } else {
                    plain(op.c())
                }
            }
            Op::Shl | Op::Shr => self.shift(op, l, r, s, top),
            Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge if s.is_float() => {
                // Not the operator: NVVM (NVRTC 13.0) folds a comparison of two identical
                // constant operations it cannot evaluate (`inf - inf`, `0 * inf` of constants,
                // also after inlining) as if they were ordered and equal, NaN or not. The
                // prelude's r_f<op> hides an operand from the optimizer (see the prelude's base.cuh).
                call(&format!("r_f{}", cmp_name(op)))
            }
            _ => plain(op.c()),
        }
    }

    fn shift(&self, op: Op, l: &TExpr, r: &TExpr, s: Scalar, top: bool) -> String {
        let mask = i128::from(s.bits() - 1);
        // A literal amount on a 32/64-bit type where C's operator already means Rust's: fold
        // the mask in and keep the operator (left shifts of signed values go through the helper).
        if let Kind::Int(k) = r.kind {
            let direct = !s.is_narrow() && (op == Op::Shr || !s.is_signed());
            if direct {
                return wrap(
                    format!("{} {} {}", self.expr(l, false), op.c(), k & mask),
                    top,
                );
            }
        }
        format!(
            "r_{}_{}({}, {})",
            helper_name(op),
            s.helper(),
            self.expr(l, true),
            self.expr(r, true)
        )
    }

    fn method(&self, m: Method, recv: &TExpr, args: &[TExpr], top: bool) -> String {
        let s = recv.scalar();
        let f32 = s == Scalar::F32;
        let mut all = vec![self.expr(recv, true)];
        all.extend(args.iter().map(|a| self.expr(a, true)));
        let call = |name: &str| format!("{name}({})", all.join(", "));
        use Method::*;
        match m {
            Min | Max if s.is_float() => call(match (m, f32) {
                (Min, true) => "fminf",
                (Min, false) => "fmin",
                (_, true) => "fmaxf",
                _ => "fmax",
            }),
            Min | Max => call(&format!(
                "r_{}_{}",
                if m == Min { "min" } else { "max" },
                s.helper()
            )),
            Abs if s.is_float() => call(if f32 { "fabsf" } else { "fabs" }),
            Abs => call(&format!("r_abs_{}", s.helper())),
            Sqrt => call(if f32 { "sqrtf" } else { "sqrt" }),
            MulAdd => call(if f32 { "fmaf" } else { "fma" }),
            // `x != x` through r_fne (see `binary`)
            IsNan => call("r_isnan"),
            WrappingAdd => self.binary(Op::Add, recv, &args[0], top),
            WrappingSub => self.binary(Op::Sub, recv, &args[0], top),
            WrappingMul => self.binary(Op::Mul, recv, &args[0], top),
            // By a literal other than 0 and -1, the operator; else wrapping (MIN / -1 is MIN, a
            // fault only by zero).
            WrappingDiv | WrappingRem if safe_divisor(&args[0]) => {
                let op = if m == WrappingDiv { Op::Div } else { Op::Rem };
                self.binary(op, recv, &args[0], top)
            }
            WrappingDiv => call(&format!("r_wdiv_{}", s.helper())),
            WrappingRem => call(&format!("r_wrem_{}", s.helper())),
            WrappingShl => self.shift(Op::Shl, recv, &args[0], s, top),
            WrappingShr => self.shift(Op::Shr, recv, &args[0], s, top),
            WrappingNeg => call(&format!("r_neg_{}", s.helper())),
            RotateLeft => call(&format!("r_rotl_{}", s.helper())),
            RotateRight => call(&format!("r_rotr_{}", s.helper())),
            CountOnes => call(&format!("r_popc_{}", s.helper())),
            LeadingZeros => call(&format!("r_clz_{}", s.helper())),
            TrailingZeros => call(&format!("r_ctz_{}", s.helper())),
            // reduce_core::math's routines, written again in the prelude (the Rust side calls
            // them through reduce_core::math::Math, see expand/rust_side.rs)
            Exp | Exp2 | Ln | Log2 | Log10 | Powf | Powi | Tanh | Ln1p | ExpM1 => call(&format!(
                "r_{}_{}",
                m.rust_name(),
                if f32 { "f32" } else { "f64" }
            )),
            Pow => call(&format!("r_pow_{}", s.helper())),
            SaturatingAdd => call(&format!("r_sat_add_{}", s.helper())),
            SaturatingSub => call(&format!("r_sat_sub_{}", s.helper())),
            SaturatingMul => call(&format!("r_sat_mul_{}", s.helper())),
            // `1.0 / x`, through the division's IEEE intrinsic (see `binary`)
            Recip => format!(
                "{}({}, {})",
                if f32 { "__fdiv_rn" } else { "__ddiv_rn" },
                if f32 { "1.0f" } else { "1.0" },
                all[0]
            ),
            FromBits => call(if s == Scalar::U32 {
                "r_f32_from_bits"
            } else {
                "r_f64_from_bits"
            }),
            WrappingAbs => call(&format!("r_abs_{}", s.helper())),
            WrappingPow => call(&format!("r_pow_{}", s.helper())),
            // The rest are the prelude's helpers named after the method: r_floor_f32,
            // r_abs_diff_i8, r_reverse_bits_u64, ...
            Clamp | Floor | Ceil | Trunc | Round | RoundTiesEven | Fract | Signum | Copysign
            | IsFinite | IsInfinite | IsSignPositive | IsSignNegative | ToBits | AbsDiff
            | UnsignedAbs | IsPowerOfTwo | CountZeros | LeadingOnes | TrailingOnes
            | ReverseBits | SwapBytes | SaturatingPow | SaturatingNeg | SaturatingAbs
            | IsPositive | IsNegative | RemEuclid | DivEuclid => {
                call(&format!("r_{}_{}", m.rust_name(), s.helper()))
            }
        }
    }
}

/// `-lit` folded into one literal (so that `-1i32` prints as `(-1)`, not `r_neg_i32(1)`).
fn negated_literal(inner: &TExpr, s: Scalar) -> Option<String> {
    match &inner.kind {
        Kind::Int(v) => Some(int_lit(-*v, s)),
        Kind::Float(v) => Some(float_lit(v, s, true)),
        _ => None,
    }
}

/// The prelude's float comparison helper of `op`: r_feq, r_fne, r_flt, ...
fn cmp_name(op: Op) -> &'static str {
    match op {
        Op::Eq => "eq",
        Op::Ne => "ne",
        Op::Lt => "lt",
        Op::Le => "le",
        Op::Gt => "gt",
        Op::Ge => "ge",
        _ => unreachable!("not a comparison: {op:?}"),
    }
}

fn helper_name(op: Op) -> &'static str {
    match op {
        Op::Add => "add",
        Op::Sub => "sub",
        Op::Mul => "mul",
        Op::Div => "div",
        Op::Rem => "rem",
        Op::Shl => "shl",
        Op::Shr => "shr",
        _ => unreachable!("no helper for {op:?}"),
    }
}

/// Whether `e` is an array literal of arrays whose length a constant names, which [`Emitter::init`]
/// prints as `r_make(..)` (its type from its elements), not as a brace list.
pub(super) fn made(e: &TExpr) -> bool {
    matches!(e.kind, Kind::Array(_))
        && matches!(&e.ty, T::Known(Ty::Array(elem, _)) if has_named_len(elem))
}

/// Whether `ty` holds an array whose length a constant names (at any depth).
pub(super) fn has_named_len(ty: &Ty) -> bool {
    match ty {
        Ty::Array(_, Len::Sym(_)) => true,
        Ty::Array(elem, Len::Lit(_)) => has_named_len(elem),
        Ty::Scalar(_) | Ty::Struct(_) => false,
    }
}
