//! The Rust subset -> CUDA C++ translation.
//!
//! Two steps. [`Checker`] type-checks a `syn::Expr` into a [`TExpr`] tree in which every node has
//! its Rust type; unsuffixed literals start as `{integer}`/`{float}` ([`T::Int`]/[`T::Float`]) and
//! take their type from the context (the other operand, a struct field, a `let` annotation, a
//! method receiver), as in rustc. [`Emitter`] then prints C++ whose value is, bit for bit, the
//! value of the Rust expression in a release build: integer arithmetic wraps (signed arithmetic
//! goes through the unsigned type, narrow types are cast back after C's promotion), shift amounts
//! are masked to the type width, float->int `as` saturates. The helpers it calls are the `r_*`
//! functions of `reduce-core/src/cuda/prelude.cuh`.
//!
//! Array values never exist in the C++ as expressions (C arrays cannot be copied): an
//! array-typed expression is only ever emitted as a brace initializer, element by element, by
//! projecting `[a, b][i]`, `(if c { x } else { y })[i]` and `{ let ..; x }[i]` onto their parts.
//! Every expression of the subset is pure, so duplicating a sub-expression never changes a value.

use crate::ast::{strip_parens, tokens_to_string, unraw, Combine, Input, Param, Scalar, Style, Ty};
use quote::ToTokens;
use std::collections::HashSet;
use std::fmt::Write as _;
use syn::spanned::Spanned;
use syn::{BinOp, Error, Expr, Lit, Member, Pat, Result, Stmt, UnOp};

/// The type of a checked expression. `Int`/`Float`: an unsuffixed literal (or an operation on
/// such literals) whose type the context decides, like rustc's `{integer}` and `{float}`.
#[derive(Clone, PartialEq, Debug)]
enum T {
    Known(Ty),
    Int,
    Float,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
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
    fn c(self) -> &'static str {
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

    fn is_arith(self) -> bool {
        matches!(self, Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Rem)
    }

    fn is_bit(self) -> bool {
        matches!(self, Op::BitAnd | Op::BitOr | Op::BitXor)
    }

    fn is_cmp(self) -> bool {
        matches!(self, Op::Eq | Op::Ne | Op::Lt | Op::Le | Op::Gt | Op::Ge)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Method {
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
}

const METHODS: &[(&str, Method)] = &[
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
];

/// A float literal's value: its digits (parsed once its type is known, directly into that type,
/// as rustc does) or a named constant.
#[derive(Clone, Debug)]
enum FloatVal {
    Digits(String),
    F32(f32),
    F64(f64),
}

#[derive(Clone)]
enum Kind<'a> {
    /// An integer literal or constant, wrapped to its type when printed.
    Int(i128),
    Float(FloatVal),
    Bool(bool),
    Var(String),
    Field(Box<TExpr<'a>>, usize),
    Index(Box<TExpr<'a>>, usize),
    Array(Vec<TExpr<'a>>),
    /// Field values in declaration order.
    Struct(Vec<TExpr<'a>>),
    Neg(Box<TExpr<'a>>),
    Not(Box<TExpr<'a>>),
    Binary(Op, Box<TExpr<'a>>, Box<TExpr<'a>>),
    Cast(Box<TExpr<'a>>),
    Method(Method, Box<TExpr<'a>>, Vec<TExpr<'a>>),
    If(Box<TExpr<'a>>, Box<TExpr<'a>>, Box<TExpr<'a>>),
    Block(Vec<Let<'a>>, Box<TExpr<'a>>),
}

#[derive(Clone)]
struct Let<'a> {
    cuda: String,
    value: TExpr<'a>,
}

/// A type-checked expression.
#[derive(Clone)]
struct TExpr<'a> {
    kind: Kind<'a>,
    ty: T,
    /// The Rust expression it came from, for error spans.
    src: &'a Expr,
}

impl TExpr<'_> {
    fn scalar(&self) -> Scalar {
        match &self.ty {
            T::Known(Ty::Scalar(s)) => *s,
            _ => unreachable!("not a scalar after type checking"),
        }
    }
}

/// The piece of the CUDA text the derive produces; the numbers are only known to the user's crate
/// (`size_of::<Self>()`...), so they are filled in at run time by `format!`.
#[derive(Debug, PartialEq)]
pub enum Piece {
    Text(String),
    SizeOf,
    AlignOf,
    /// `offset_of!(Self, field)` of the field with this index.
    OffsetOf(usize),
}

/// The body of `m_identity()`: C++ statements ending in `return`.
pub fn identity(input: &Input, expr: &Expr) -> Result<String> {
    let mut checker = Checker::new(input);
    let t = checker.check(expr, Some(&Ty::Struct))?;
    let t = checker.coerce(t, &Ty::Struct)?;
    let mut out = String::new();
    Emitter { input }.body(&t, 1, &mut out);
    Ok(out)
}

/// The body of `m_combine(M l, M r)`: C++ statements ending in `return`.
pub fn combine(input: &Input, combine: &Combine) -> Result<String> {
    let mut checker = Checker::new(input);
    for (param, cuda) in [(&combine.left, "l"), (&combine.right, "r")] {
        if let Param::Named(id) = param {
            checker.scopes.push(Binding {
                rust: unraw(id),
                cuda: cuda.to_owned(),
                ty: Ty::Struct,
            });
        }
    }
    let t = checker.check(&combine.body, Some(&Ty::Struct))?;
    let t = checker.coerce(t, &Ty::Struct)?;
    let mut out = String::new();
    Emitter { input }.body(&t, 1, &mut out);
    Ok(out)
}

/// The whole CUDA text: struct definition, layout checks, `M`, `m_identity`, `m_combine`.
/// `combine_body` is translated C++ or the user's `cuda = "..."` text (`hand_written`).
pub fn cuda_text(
    input: &Input,
    identity_body: &str,
    combine_body: &str,
    hand_written: bool,
) -> Vec<Piece> {
    let name = &input.name;
    let mut pieces = Vec::new();
    let mut text = String::new();
    let commutative = if input.attrs.commutative.is_some() {
        " (commutative)"
    } else {
        ""
    };
    let _ = writeln!(
        text,
        "// monoid {name}{commutative}, generated by #[derive(Monoid)]"
    );
    let align = match input.align {
        Some(a) => format!("alignas({a}) "),
        None => String::new(),
    };
    let _ = writeln!(text, "struct {align}{name} {{");
    for f in &input.fields {
        let _ = writeln!(text, "    {};", declarator(&f.ty, &f.cuda_name, name));
    }
    text.push_str("};\n");
    let mut flush = |text: &mut String, piece: Piece| {
        pieces.push(Piece::Text(std::mem::take(text)));
        pieces.push(piece);
    };
    text.push_str(&format!("static_assert(sizeof({name}) == "));
    flush(&mut text, Piece::SizeOf);
    let _ = writeln!(text, ", \"{name}: CUDA size differs from Rust size_of\");");
    text.push_str(&format!("static_assert(alignof({name}) == "));
    flush(&mut text, Piece::AlignOf);
    let _ = writeln!(
        text,
        ", \"{name}: CUDA alignment differs from Rust align_of\");"
    );
    // The first field is at offset 0 in both languages: no check needed.
    for (i, f) in input.fields.iter().enumerate().skip(1) {
        text.push_str(&format!(
            "static_assert(r_offsetof({name}, {}) == ",
            f.cuda_name
        ));
        flush(&mut text, Piece::OffsetOf(i));
        let _ = writeln!(
            text,
            ", \"{name}.{}: CUDA offset differs from Rust offset_of\");",
            f.rust_name
        );
    }
    let _ = writeln!(text, "typedef {name} M;");
    text.push_str(&function("M m_identity()", identity_body, true));
    if hand_written {
        let body = format!(
            "    // hand-written: #[monoid(cuda = \"...\")]\n{}",
            indent_user_text(combine_body)
        );
        text.push_str(&function("M m_combine(M l, M r)", &body, false));
    } else {
        text.push_str(&function("M m_combine(M l, M r)", combine_body, false));
    }
    pieces.push(Piece::Text(text));
    pieces
}

/// `__device__ __forceinline__ SIG { BODY }`, on one line if allowed and the body is one short
/// statement.
fn function(signature: &str, body: &str, one_line: bool) -> String {
    let head = format!("__device__ __forceinline__ {signature}");
    let single = one_line && body.lines().count() == 1;
    let line = format!("{head} {{ {} }}\n", body.trim());
    if single && line.len() <= 100 {
        line
    } else {
        format!("{head} {{\n{body}}}\n")
    }
}

/// The user's `cuda = "..."` text, re-indented by four spaces (common indentation removed).
fn indent_user_text(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = String::new();
    for l in lines {
        if l.trim().is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "    {}", l[common..].trim_end());
        }
    }
    out
}

/// `unsigned int m[4]`, `float x`, `Affine v_t`.
fn declarator(ty: &Ty, name: &str, struct_name: &str) -> String {
    let mut dims = String::new();
    let mut t = ty;
    while let Ty::Array(elem, n) = t {
        let _ = write!(dims, "[{n}]");
        t = elem;
    }
    let base = match t {
        Ty::Scalar(s) => s.c(),
        Ty::Struct => struct_name,
        Ty::Array(..) => unreachable!(),
    };
    format!("{base} {name}{dims}")
}

// ---------------------------------------------------------------------------------------------
// Type checking
// ---------------------------------------------------------------------------------------------

struct Binding {
    rust: String,
    cuda: String,
    ty: Ty,
}

struct Checker<'a> {
    input: &'a Input,
    /// Innermost last.
    scopes: Vec<Binding>,
    /// C++ names of locals already used in this function.
    taken: HashSet<String>,
}

const SUBSET: &str = "see the `Monoid` derive documentation for the supported subset";

fn err(tokens: impl quote::ToTokens, msg: impl std::fmt::Display) -> Error {
    Error::new_spanned(tokens, msg)
}

impl<'a> Checker<'a> {
    fn new(input: &'a Input) -> Self {
        Checker {
            input,
            scopes: Vec::new(),
            taken: HashSet::new(),
        }
    }

    fn ty_name(&self, t: &T) -> String {
        match t {
            T::Known(ty) => format!("`{}`", ty.rust(&self.input.name)),
            T::Int => "an integer literal".to_owned(),
            T::Float => "a float literal".to_owned(),
        }
    }

    fn check(&mut self, e: &'a Expr, hint: Option<&Ty>) -> Result<TExpr<'a>> {
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
            Expr::Index(i) => {
                let base = self.check(&i.expr, None)?;
                let (elem, len) = match &base.ty {
                    T::Known(Ty::Array(elem, len)) => ((**elem).clone(), *len),
                    other => {
                        return Err(err(
                            &i.expr,
                            format!(
                                "only arrays can be indexed; this is {}",
                                self.ty_name(other)
                            ),
                        ))
                    }
                };
                let index = match strip_parens(&i.index) {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Int(n), ..
                    }) if n.suffix().is_empty() || n.suffix() == "usize" => n
                        .base10_parse::<usize>()
                        .map_err(|_| err(n, "array index too large"))?,
                    other => {
                        return Err(err(
                            other,
                            "array indices must be integer literals (`m[0]`): indexing with a \
                             value computed at run time is not supported",
                        ))
                    }
                };
                if index >= len {
                    return Err(err(
                        &i.index,
                        format!("index {index} is out of bounds for an array of length {len}"),
                    ));
                }
                Ok(project_elem(base, index, elem))
            }
            Expr::Array(a) => {
                let elem_hint = match hint {
                    Some(Ty::Array(elem, _)) => Some((**elem).clone()),
                    _ => None,
                };
                if a.elems.is_empty() {
                    return Err(err(e, "empty arrays are not supported"));
                }
                let elems = a
                    .elems
                    .iter()
                    .map(|x| self.check(x, elem_hint.as_ref()))
                    .collect::<Result<Vec<_>>>()?;
                let elem_ty = self.array_elem_ty(&elems, elem_hint, e)?;
                let elems = elems
                    .into_iter()
                    .map(|x| self.coerce(x, &elem_ty))
                    .collect::<Result<Vec<_>>>()?;
                let n = elems.len();
                mk(
                    Kind::Array(elems),
                    T::Known(Ty::Array(Box::new(elem_ty), n)),
                )
            }
            Expr::Repeat(r) => {
                let n = match strip_parens(&r.len) {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Int(n), ..
                    }) if n.suffix().is_empty() || n.suffix() == "usize" => {
                        n.base10_parse::<usize>()?
                    }
                    other => {
                        return Err(err(
                            other,
                            "the length of `[x; N]` must be an integer literal",
                        ))
                    }
                };
                if n == 0 {
                    return Err(err(&r.len, "empty arrays are not supported"));
                }
                let elem_hint = match hint {
                    Some(Ty::Array(elem, _)) => Some((**elem).clone()),
                    _ => None,
                };
                let x = self.check(&r.expr, elem_hint.as_ref())?;
                let elem_ty = self.array_elem_ty(std::slice::from_ref(&x), elem_hint, e)?;
                let x = self.coerce(x, &elem_ty)?;
                mk(
                    Kind::Array(vec![x; n]),
                    T::Known(Ty::Array(Box::new(elem_ty), n)),
                )
            }
            Expr::Struct(s) => self.struct_lit(s, e),
            Expr::Call(c) => self.call(c, e),
            Expr::Unary(u) => {
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
                            other => {
                                return Err(err(
                                    e,
                                    format!("cannot negate {}", self.ty_name(other)),
                                ))
                            }
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
            Expr::Binary(b) => self.binary(b, e),
            Expr::Cast(c) => self.cast(c, e),
            Expr::MethodCall(m) => self.method(m, e),
            Expr::If(i) => self.if_expr(i, hint, e),
            Expr::Block(b) => {
                if let Some(label) = &b.label {
                    return Err(err(label, "labelled blocks are not supported"));
                }
                self.block(&b.block, hint, e)
            }
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
                                     i16, u32, i32, u64, i64, f32, f64"
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
                 u32 code point",
            )),
            _ => Err(err(lit, "this literal cannot be translated to CUDA")),
        }
    }

    fn path(&self, p: &'a syn::ExprPath, e: &'a Expr) -> Result<TExpr<'a>> {
        let mk = |kind, ty| Ok(TExpr { kind, ty, src: e });
        if p.qself.is_some() {
            return Err(err(e, "qualified paths are not supported"));
        }
        let segs = &p.path.segments;
        if segs.iter().any(|s| !s.arguments.is_none()) {
            return Err(err(e, "generic arguments are not supported"));
        }
        if segs.len() == 1 && p.path.leading_colon.is_none() {
            let id = &segs[0].ident;
            let name = unraw(id);
            if let Some(b) = self.scopes.iter().rev().find(|b| b.rust == name) {
                return mk(Kind::Var(b.cuda.clone()), T::Known(b.ty.clone()));
            }
            if name == "Self" || name == self.input.name {
                return Err(err(
                    e,
                    format!(
                        "`{name}` is a type here, not a value; write a struct literal `{name} {{ \
                         ... }}`"
                    ),
                ));
            }
            return Err(err(
                e,
                format!(
                    "cannot find `{name}`: the CUDA translation knows only the closure's two \
                     parameters and `let` bindings (global constants, statics and functions are \
                     not supported; write the value in place)"
                ),
            ));
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
        Err(err(
            e,
            format!(
                "unsupported path `{}`: only the closure parameters, `let` bindings and \
                 constants such as `u32::MAX` or `f32::INFINITY` can be translated",
                tokens_to_string(&p.path)
            ),
        ))
    }

    fn field(&self, base: TExpr<'a>, member: &Member) -> Result<TExpr<'a>> {
        if base.ty != T::Known(Ty::Struct) {
            return Err(err(
                member,
                format!(
                    "field access is supported only on `{}` values; this is {}",
                    self.input.name,
                    self.ty_name(&base.ty)
                ),
            ));
        }
        let idx = self.field_index(member)?;
        let ty = self.input.fields[idx].ty.clone();
        Ok(project_field(base, idx, ty))
    }

    fn field_index(&self, member: &Member) -> Result<usize> {
        let found = match member {
            Member::Named(id) => {
                let name = unraw(id);
                self.input
                    .fields
                    .iter()
                    .position(|f| matches!(&f.member, Member::Named(fid) if unraw(fid) == name))
            }
            Member::Unnamed(i) if self.input.style == Style::Tuple => {
                Some(i.index as usize).filter(|&i| i < self.input.fields.len())
            }
            Member::Unnamed(_) => None,
        };
        found.ok_or_else(|| {
            err(
                member,
                format!(
                    "no field `{}` on `{}`",
                    tokens_to_string(member),
                    self.input.name
                ),
            )
        })
    }

    fn is_self_path(&self, path: &syn::Path) -> bool {
        path.leading_colon.is_none()
            && path.segments.len() == 1
            && path.segments[0].arguments.is_none()
            && {
                let name = unraw(&path.segments[0].ident);
                name == "Self" || name == self.input.name
            }
    }

    fn struct_lit(&mut self, s: &'a syn::ExprStruct, e: &'a Expr) -> Result<TExpr<'a>> {
        if s.qself.is_some() || !self.is_self_path(&s.path) {
            return Err(err(
                &s.path,
                format!(
                    "only struct literals of `{0}` (or `Self`) can be translated; other and \
                     nested structs are not supported",
                    self.input.name
                ),
            ));
        }
        let n = self.input.fields.len();
        let mut vals: Vec<Option<TExpr<'a>>> = vec![None; n];
        for fv in &s.fields {
            let idx = self.field_index(&fv.member)?;
            if vals[idx].is_some() {
                return Err(err(
                    &fv.member,
                    format!(
                        "field `{}` specified more than once",
                        self.input.fields[idx].rust_name
                    ),
                ));
            }
            let ty = self.input.fields[idx].ty.clone();
            let v = self.check(&fv.expr, Some(&ty))?;
            vals[idx] = Some(self.coerce(v, &ty)?);
        }
        if let Some(rest) = &s.rest {
            let base = self.check(rest, Some(&Ty::Struct))?;
            let base = self.coerce(base, &Ty::Struct)?;
            for (i, v) in vals.iter_mut().enumerate() {
                if v.is_none() {
                    *v = Some(project_field(
                        base.clone(),
                        i,
                        self.input.fields[i].ty.clone(),
                    ));
                }
            }
        } else if s.dot2_token.is_some() {
            return Err(err(s.dot2_token, "`..` needs a base value: `..l`"));
        }
        let missing: Vec<&str> = vals
            .iter()
            .zip(&self.input.fields)
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
            kind: Kind::Struct(vals.into_iter().map(Option::unwrap).collect()),
            ty: T::Known(Ty::Struct),
            src: e,
        })
    }

    fn call(&mut self, c: &'a syn::ExprCall, e: &'a Expr) -> Result<TExpr<'a>> {
        if let Expr::Path(p) = strip_parens(&c.func) {
            if p.qself.is_none() && self.is_self_path(&p.path) {
                if self.input.style != Style::Tuple {
                    return Err(err(
                        &c.func,
                        format!(
                            "`{}` has named fields: write `{0} {{ field: value, ... }}`",
                            self.input.name
                        ),
                    ));
                }
                let n = self.input.fields.len();
                if c.args.len() != n {
                    return Err(err(
                        e,
                        format!(
                            "`{}` has {n} fields but {} values are given",
                            self.input.name,
                            c.args.len()
                        ),
                    ));
                }
                let mut vals = Vec::new();
                for (i, a) in c.args.iter().enumerate() {
                    let ty = self.input.fields[i].ty.clone();
                    let v = self.check(a, Some(&ty))?;
                    vals.push(self.coerce(v, &ty)?);
                }
                return Ok(TExpr {
                    kind: Kind::Struct(vals),
                    ty: T::Known(Ty::Struct),
                    src: e,
                });
            }
            // `f32::max(a, b)`: a method called through its type.
            let segs = &p.path.segments;
            if p.qself.is_none() && segs.len() == 2 && p.path.leading_colon.is_none() {
                if let Some(s) = Scalar::from_rust(&segs[0].ident.to_string()) {
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
        }
        Err(err(
            &c.func,
            format!(
                "function calls cannot be translated to CUDA; write the computation with \
                 operators, `as` casts and the supported methods ({SUBSET})"
            ),
        ))
    }

    fn binary(&mut self, b: &'a syn::ExprBinary, e: &'a Expr) -> Result<TExpr<'a>> {
        let op = match b.op {
            BinOp::Add(_) => Op::Add,
            BinOp::Sub(_) => Op::Sub,
            BinOp::Mul(_) => Op::Mul,
            BinOp::Div(_) => Op::Div,
            BinOp::Rem(_) => Op::Rem,
            BinOp::BitAnd(_) => Op::BitAnd,
            BinOp::BitOr(_) => Op::BitOr,
            BinOp::BitXor(_) => Op::BitXor,
            BinOp::Shl(_) => Op::Shl,
            BinOp::Shr(_) => Op::Shr,
            BinOp::Eq(_) => Op::Eq,
            BinOp::Ne(_) => Op::Ne,
            BinOp::Lt(_) => Op::Lt,
            BinOp::Le(_) => Op::Le,
            BinOp::Gt(_) => Op::Gt,
            BinOp::Ge(_) => Op::Ge,
            BinOp::And(_) => Op::And,
            BinOp::Or(_) => Op::Or,
            _ => return Err(err(b.op, format!("assignment {NO_MUTATION}"))),
        };
        let l = self.check(&b.left, None)?;
        let r = self.check(&b.right, None)?;
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
                        &b.left,
                        format!(
                            "`{}` needs an integer on the left, found {}",
                            op.c(),
                            self.ty_name(&l.ty)
                        ),
                    ));
                }
                if !int_like(&r.ty) {
                    return Err(err(
                        &b.right,
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
                let (l, r, ty) = self.unify(l, r, b.op.span(), || {
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
                    T::Known(Ty::Array(..)) => matches!(op, Op::Eq | Op::Ne),
                    T::Known(Ty::Struct) => false,
                };
                if !ok {
                    let extra = if ty == T::Known(Ty::Struct) && op.is_cmp() {
                        "; compare the fields one by one"
                    } else {
                        ""
                    };
                    return Err(err(
                        b.op,
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
    fn coerce(&self, t: TExpr<'a>, ty: &Ty) -> Result<TExpr<'a>> {
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
            (have, want) => Err(err(
                t.src,
                format!(
                    "expected `{}`, found {}",
                    want.rust(&self.input.name),
                    self.ty_name(have)
                ),
            )),
        }
    }

    fn cast(&mut self, c: &'a syn::ExprCast, e: &'a Expr) -> Result<TExpr<'a>> {
        let to = match Ty::from_syn(&c.ty, &self.input.ident, false) {
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

    fn method(&mut self, m: &'a syn::ExprMethodCall, e: &'a Expr) -> Result<TExpr<'a>> {
        if let Some(t) = &m.turbofish {
            return Err(err(t, "generic arguments are not supported"));
        }
        let Some(method) = lookup_method(&m.method) else {
            return Err(err(
                &m.method,
                format!(
                    "method `{}` cannot be translated to CUDA; supported methods: {}",
                    m.method,
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

    fn method_call(
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
        use Method::*;
        let for_floats = matches!(method, Sqrt | MulAdd | IsNan);
        let for_ints = matches!(
            method,
            WrappingAdd
                | WrappingSub
                | WrappingMul
                | WrappingNeg
                | WrappingDiv
                | WrappingRem
                | WrappingShl
                | WrappingShr
                | RotateLeft
                | RotateRight
        );
        if (for_floats && !s.is_float())
            || (for_ints && !s.is_int())
            || (method == Abs && s.is_int() && !s.is_signed())
        {
            return Err(err(
                name,
                format!("`{name}` is not a method of `{}`", s.rust()),
            ));
        }
        let (arg_tys, result) = match method {
            Abs | Sqrt | WrappingNeg => (vec![], s),
            IsNan => (vec![], Scalar::Bool),
            Min | Max | WrappingAdd | WrappingSub | WrappingMul | WrappingDiv | WrappingRem => {
                (vec![s], s)
            }
            MulAdd => (vec![s, s], s),
            WrappingShl | WrappingShr | RotateLeft | RotateRight => (vec![Scalar::U32], s),
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
        Ok(TExpr {
            kind: Kind::Method(method, Box::new(recv), targs),
            ty: T::Known(Ty::Scalar(result)),
            src: e,
        })
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
        let then = self.block(&i.then_branch, hint, e)?;
        let Some((_, else_expr)) = &i.else_branch else {
            return Err(err(
                i.if_token,
                "`if` without `else` has no value; add an `else` branch",
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

    fn block(&mut self, b: &'a syn::Block, hint: Option<&Ty>, e: &'a Expr) -> Result<TExpr<'a>> {
        let depth = self.scopes.len();
        let result = self.block_inner(b, hint, e);
        self.scopes.truncate(depth);
        result
    }

    fn block_inner(
        &mut self,
        b: &'a syn::Block,
        hint: Option<&Ty>,
        e: &'a Expr,
    ) -> Result<TExpr<'a>> {
        let mut lets = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, stmt) in b.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                Stmt::Local(local) => {
                    let (ident, annot) = self.let_pattern(&local.pat)?;
                    let Some(init) = &local.init else {
                        return Err(err(local, "`let` needs a value: `let x = ...;`"));
                    };
                    if let Some((else_token, _)) = &init.diverge {
                        return Err(err(else_token, "`let ... else` is not supported"));
                    }
                    let value = self.check(&init.expr, annot.as_ref())?;
                    let value = match &annot {
                        Some(t) => self.coerce(value, t)?,
                        None => match value.ty {
                            T::Known(_) => value,
                            _ => {
                                return Err(err(
                                    &init.expr,
                                    format!(
                                        "cannot infer the type of `{ident}`: Rust would infer it \
                                         from its later uses, which the translation does not \
                                         follow; add a suffix to the literal (`1u32`, \
                                         `1.0f32`) or annotate the binding (`let {ident}: u32 = \
                                         ...`)"
                                    ),
                                ))
                            }
                        },
                    };
                    let T::Known(ty) = value.ty.clone() else {
                        unreachable!()
                    };
                    let cuda = self.fresh(&ident);
                    lets.push(Let {
                        cuda: cuda.clone(),
                        value,
                    });
                    self.scopes.push(Binding {
                        rust: ident,
                        cuda,
                        ty,
                    });
                    if last {
                        return Err(err(
                            stmt,
                            "this block ends with a `let`; it needs a final expression (its value)",
                        ));
                    }
                }
                Stmt::Expr(x, None) if last => tail = Some(x),
                Stmt::Expr(x, Some(semi)) => {
                    let msg = if last {
                        "this block ends with `;`, so it has no value; remove the `;` after the \
                         final expression"
                    } else {
                        "statements other than `let` have no effect without mutation; only `let \
                         name = value;` bindings and a final expression are supported"
                    };
                    // A construct outside the subset (`return x;`, `for ..`) is the better message.
                    self.check(x, None)?;
                    return Err(if last { err(semi, msg) } else { err(x, msg) });
                }
                Stmt::Expr(x, None) => {
                    // `if c { return l; }` as a statement: report what is inside first.
                    self.check(x, None)?;
                    return Err(unsupported(x));
                }
                Stmt::Item(item) => {
                    return Err(err(
                        item,
                        "items (fn, const, struct, use, ...) inside a monoid expression are not \
                         supported",
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
        let Some(tail) = tail else {
            return Err(err(
                e,
                "this block has no final expression, so it has no value",
            ));
        };
        let tail = self.check(tail, hint)?;
        if lets.is_empty() {
            return Ok(tail);
        }
        let ty = tail.ty.clone();
        Ok(TExpr {
            kind: Kind::Block(lets, Box::new(tail)),
            ty,
            src: e,
        })
    }

    fn let_pattern(&self, pat: &Pat) -> Result<(String, Option<Ty>)> {
        match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.mutability.is_none() && p.subpat.is_none() => {
                Ok((unraw(&p.ident), None))
            }
            Pat::Ident(p) if p.mutability.is_some() => Err(err(
                p.mutability,
                "`let mut` is not supported: the CUDA translation has no mutation",
            )),
            Pat::Type(t) => {
                let (name, _) = self.let_pattern(&t.pat)?;
                let ty = Ty::from_syn(&t.ty, &self.input.ident, true)?;
                Ok((name, Some(ty)))
            }
            other => Err(err(
                other,
                "`let` patterns are not supported: bind a plain name (`let x = ...;`)",
            )),
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
}

fn lookup_method(name: &syn::Ident) -> Option<Method> {
    let name = name.to_string();
    METHODS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

/// `u32::MAX`, `f32::INFINITY`...: the value and its type.
fn constant<'a>(s: Scalar, name: &str) -> Option<(Kind<'a>, Scalar)> {
    if s.is_int() {
        let bits = s.bits();
        let (min, max) = if s.is_signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        return match name {
            "MAX" => Some((Kind::Int(max), s)),
            "MIN" => Some((Kind::Int(min), s)),
            "BITS" => Some((Kind::Int(i128::from(bits)), Scalar::U32)),
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
        Kind::Block(lets, tail) => Kind::Block(lets, Box::new(resolve(*tail, s)?)),
        _ => unreachable!("only literal expressions have an inferred type"),
    };
    Ok(t)
}

/// `base.field`, simplified where `base` is a struct literal, an `if` or a block.
fn project_field(base: TExpr<'_>, idx: usize, ty: Ty) -> TExpr<'_> {
    let src = base.src;
    let kind = match base.kind {
        Kind::Struct(mut vals) => return vals.swap_remove(idx),
        Kind::If(c, a, b) => Kind::If(
            c,
            Box::new(project_field(*a, idx, ty.clone())),
            Box::new(project_field(*b, idx, ty.clone())),
        ),
        Kind::Block(lets, tail) => {
            Kind::Block(lets, Box::new(project_field(*tail, idx, ty.clone())))
        }
        kind => Kind::Field(
            Box::new(TExpr {
                kind,
                ty: base.ty,
                src,
            }),
            idx,
        ),
    };
    TExpr {
        kind,
        ty: T::Known(ty),
        src,
    }
}

/// `base[i]`, simplified where `base` is an array literal, an `if` or a block.
fn project_elem(base: TExpr<'_>, i: usize, elem: Ty) -> TExpr<'_> {
    let src = base.src;
    let kind = match base.kind {
        Kind::Array(mut vals) => return vals.swap_remove(i),
        Kind::If(c, a, b) => Kind::If(
            c,
            Box::new(project_elem(*a, i, elem.clone())),
            Box::new(project_elem(*b, i, elem.clone())),
        ),
        Kind::Block(lets, tail) => {
            Kind::Block(lets, Box::new(project_elem(*tail, i, elem.clone())))
        }
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

const NO_LOOPS: &str = "cannot be translated to CUDA; the combine must be one expression \
                        without loops";
const NO_MUTATION: &str = "is not supported: the CUDA translation has no mutation; bind a new \
                           name with `let` instead";

/// The error for a construct outside the subset, at its keyword or operator.
fn unsupported(e: &Expr) -> Error {
    let (tokens, msg): (proc_macro2::TokenStream, String) = match e {
        Expr::ForLoop(x) => (
            x.for_token.to_token_stream(),
            format!("`for` loops {NO_LOOPS}"),
        ),
        Expr::While(x) => (
            x.while_token.to_token_stream(),
            format!("`while` loops {NO_LOOPS}"),
        ),
        Expr::Loop(x) => (x.loop_token.to_token_stream(), format!("`loop` {NO_LOOPS}")),
        Expr::Return(x) => (
            x.return_token.to_token_stream(),
            "`return` is not supported: the closure's value is its final expression; use \
             `if`/`else` for early results"
                .to_owned(),
        ),
        Expr::Break(x) => (
            x.break_token.to_token_stream(),
            "`break` is not supported".into(),
        ),
        Expr::Continue(x) => (
            x.continue_token.to_token_stream(),
            "`continue` is not supported".into(),
        ),
        Expr::Match(x) => (
            x.match_token.to_token_stream(),
            "`match` cannot be translated to CUDA; use `if`/`else`".into(),
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
            format!("assignment {NO_MUTATION}"),
        ),
        Expr::Closure(x) => (
            x.or1_token.to_token_stream(),
            "closures cannot be translated to CUDA".into(),
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
                Expr::Range(_) => "ranges",
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

// ---------------------------------------------------------------------------------------------
// Emission
// ---------------------------------------------------------------------------------------------

struct Emitter<'a> {
    input: &'a Input,
}

/// `(s)`, unless at the top of an expression (initializer, argument, return).
fn wrap(s: String, top: bool) -> String {
    if top {
        s
    } else {
        format!("({s})")
    }
}

impl Emitter<'_> {
    /// Statements computing `e` and returning it, at indentation level `indent`.
    fn body(&self, e: &TExpr, indent: usize, out: &mut String) {
        let pad = "    ".repeat(indent);
        match &e.kind {
            Kind::Block(lets, tail) => {
                for l in lets {
                    let decl = self.declarator(l);
                    if statement_like(&l.value) && !matches!(l.value.ty, T::Known(Ty::Array(..))) {
                        // A nested block: an immediately invoked lambda, laid out as statements.
                        let ty = self.ctype(&l.value.ty);
                        let _ = writeln!(out, "{pad}const {decl} = [&]() -> {ty} {{");
                        self.body(&l.value, indent + 1, out);
                        let _ = writeln!(out, "{pad}}}();");
                    } else {
                        let value = self.init_lines(&l.value, indent);
                        let _ = writeln!(out, "{pad}const {decl} = {value};");
                    }
                }
                self.body(tail, indent, out);
            }
            Kind::If(..) if statement_like(e) => {
                let mut cur = e;
                let mut first = true;
                loop {
                    match &cur.kind {
                        Kind::If(c, a, b) => {
                            let kw = if first {
                                pad.clone()
                            } else {
                                " else ".to_owned()
                            };
                            let _ = writeln!(out, "{kw}if ({}) {{", self.expr(c, true));
                            self.body(a, indent + 1, out);
                            out.push_str(&pad);
                            out.push('}');
                            first = false;
                            cur = b;
                        }
                        _ => {
                            out.push_str(" else {\n");
                            self.body(cur, indent + 1, out);
                            let _ = writeln!(out, "{pad}}}");
                            break;
                        }
                    }
                }
            }
            _ => {
                let line = format!("{pad}return {};", self.expr(e, true));
                match &e.kind {
                    Kind::Struct(vals) if line.len() > 100 => {
                        let _ = writeln!(out, "{pad}return {}{{", self.input.name);
                        for (v, f) in vals.iter().zip(&self.input.fields) {
                            let value = self.init_lines(v, indent + 1);
                            let _ = writeln!(out, "{pad}    {value},  // {}", f.rust_name);
                        }
                        let _ = writeln!(out, "{pad}}};");
                    }
                    _ => {
                        out.push_str(&line);
                        out.push('\n');
                    }
                }
            }
        }
    }

    fn declarator(&self, l: &Let) -> String {
        let T::Known(ty) = &l.value.ty else {
            unreachable!()
        };
        declarator(ty, &l.cuda, &self.input.name)
    }

    /// An initializer: a brace list for arrays, an expression otherwise.
    fn init(&self, e: &TExpr) -> String {
        match &e.ty {
            T::Known(Ty::Array(elem, n)) => {
                let items: Vec<String> = (0..*n)
                    .map(|i| self.init(&project_elem(e.clone(), i, (**elem).clone())))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }
            _ => self.expr(e, true),
        }
    }

    /// `init`, with a long array initializer broken into one element per line.
    fn init_lines(&self, e: &TExpr, indent: usize) -> String {
        let one = self.init(e);
        let T::Known(Ty::Array(elem, n)) = &e.ty else {
            return one;
        };
        if one.len() + 4 * indent <= 96 {
            return one;
        }
        let pad = "    ".repeat(indent);
        let items: Vec<String> = (0..*n)
            .map(|i| self.init_lines(&project_elem(e.clone(), i, (**elem).clone()), indent + 1))
            .collect();
        let mut s = "{\n".to_owned();
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
        s.push('}');
        s
    }

    fn ctype(&self, ty: &T) -> String {
        match ty {
            T::Known(Ty::Scalar(s)) => s.c().to_owned(),
            T::Known(Ty::Struct) => self.input.name.clone(),
            _ => unreachable!("arrays are never C++ expression values"),
        }
    }

    /// A scalar- or struct-valued expression.
    fn expr(&self, e: &TExpr, top: bool) -> String {
        match &e.kind {
            Kind::Int(v) => int_lit(*v, e.scalar()),
            Kind::Float(v) => float_lit(v, e.scalar(), false),
            Kind::Bool(b) => b.to_string(),
            Kind::Var(name) => name.clone(),
            Kind::Field(base, idx) => {
                format!(
                    "{}.{}",
                    self.expr(base, false),
                    self.input.fields[*idx].cuda_name
                )
            }
            Kind::Index(base, i) => format!("{}[{i}]", self.expr(base, false)),
            Kind::Array(_) => unreachable!("arrays are emitted by `init`"),
            Kind::Struct(vals) => {
                let items: Vec<String> = vals.iter().map(|v| self.init(v)).collect();
                format!("{}{{{}}}", self.input.name, items.join(", "))
            }
            Kind::Neg(inner) => {
                let s = e.scalar();
                if let Some(lit) = self.negated_literal(inner, s) {
                    return lit;
                }
                let a = self.expr(inner, false);
                if s.is_float() {
                    wrap(format!("-{a}"), top)
                } else {
                    format!("r_neg_{}({})", s.rust(), self.expr(inner, true))
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
                if from == to {
                    self.expr(inner, top)
                } else if from.is_float() && to.is_int() {
                    format!(
                        "r_{}_as_{}({})",
                        from.rust(),
                        to.rust(),
                        self.expr(inner, true)
                    )
                } else {
                    wrap(format!("({}){}", to.c(), self.expr(inner, false)), top)
                }
            }
            Kind::Method(m, recv, args) => self.method(*m, recv, args, top),
            Kind::If(c, a, b) => wrap(
                format!(
                    "{} ? {} : {}",
                    self.expr(c, false),
                    self.expr(a, false),
                    self.expr(b, false)
                ),
                top,
            ),
            Kind::Block(lets, tail) => {
                let mut s = format!("[&]() -> {} {{ ", self.ctype(&tail.ty));
                for l in lets {
                    let _ = write!(
                        s,
                        "const {} = {}; ",
                        self.declarator(l),
                        self.init(&l.value)
                    );
                }
                let _ = write!(s, "return {}; }}()", self.expr(tail, true));
                s
            }
        }
    }

    /// `-lit` folded into one literal (so that `-1i32` prints as `(-1)`, not `r_neg_i32(1)`).
    fn negated_literal(&self, inner: &TExpr, s: Scalar) -> Option<String> {
        match &inner.kind {
            Kind::Int(v) => Some(int_lit(-*v, s)),
            Kind::Float(v) => Some(float_lit(v, s, true)),
            _ => None,
        }
    }

    fn binary(&self, op: Op, l: &TExpr, r: &TExpr, top: bool) -> String {
        let s = match &l.ty {
            T::Known(Ty::Array(..)) => return self.array_eq(op, l, r, top),
            _ => l.scalar(),
        };
        let a = || self.expr(l, false);
        let b = || self.expr(r, false);
        let call = |name: &str| format!("{name}({}, {})", self.expr(l, true), self.expr(r, true));
        let plain = |sym: &str| wrap(format!("{} {sym} {}", a(), b()), top);
        match op {
            Op::Add | Op::Sub | Op::Mul => {
                if s.is_float() || matches!(s, Scalar::U32 | Scalar::U64) {
                    plain(op.c())
                } else {
                    call(&format!("r_{}_{}", helper_name(op), s.rust()))
                }
            }
            Op::Div | Op::Rem => {
                if s.is_float() {
                    if op == Op::Div {
                        plain("/")
                    } else {
                        call(if s == Scalar::F32 { "fmodf" } else { "fmod" })
                    }
                } else if matches!(s, Scalar::U32 | Scalar::U64) {
                    plain(op.c())
                } else {
                    call(&format!("r_{}_{}", helper_name(op), s.rust()))
                }
            }
            Op::BitAnd | Op::BitOr | Op::BitXor => {
                if s == Scalar::Bool {
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
            s.rust(),
            self.expr(l, true),
            self.expr(r, true)
        )
    }

    /// `[a0, a1] == [b0, b1]` element by element.
    fn array_eq(&self, op: Op, l: &TExpr, r: &TExpr, top: bool) -> String {
        let (elem, n) = match &l.ty {
            T::Known(Ty::Array(elem, n)) => ((**elem).clone(), *n),
            _ => unreachable!(),
        };
        let parts: Vec<String> = (0..n)
            .map(|i| {
                let a = project_elem(l.clone(), i, elem.clone());
                let b = project_elem(r.clone(), i, elem.clone());
                self.binary(Op::Eq, &a, &b, false)
            })
            .collect();
        let all = parts.join(" && ");
        if op == Op::Eq {
            wrap(all, top)
        } else {
            wrap(format!("!({all})"), top)
        }
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
                s.rust()
            )),
            Abs if s.is_float() => call(if f32 { "fabsf" } else { "fabs" }),
            Abs => call(&format!("r_abs_{}", s.rust())),
            Sqrt => call(if f32 { "sqrtf" } else { "sqrt" }),
            MulAdd => call(if f32 { "fmaf" } else { "fma" }),
            IsNan => {
                let a = self.expr(recv, false);
                wrap(format!("{a} != {a}"), top)
            }
            WrappingAdd => self.binary(Op::Add, recv, &args[0], top),
            WrappingSub => self.binary(Op::Sub, recv, &args[0], top),
            WrappingMul => self.binary(Op::Mul, recv, &args[0], top),
            WrappingDiv => self.binary(Op::Div, recv, &args[0], top),
            WrappingRem => self.binary(Op::Rem, recv, &args[0], top),
            WrappingShl => self.shift(Op::Shl, recv, &args[0], s, top),
            WrappingShr => self.shift(Op::Shr, recv, &args[0], s, top),
            WrappingNeg => call(&format!("r_neg_{}", s.rust())),
            RotateLeft => call(&format!("r_rotl_{}", s.rust())),
            RotateRight => call(&format!("r_rotr_{}", s.rust())),
        }
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

/// Whether an expression reads better as C++ statements (`if (...) { ... } else { ... }`) than
/// as a `?:` expression: an `if` with a `let` block somewhere in its branches.
fn statement_like(e: &TExpr) -> bool {
    match &e.kind {
        Kind::Block(..) => true,
        Kind::If(_, a, b) => statement_like(a) || statement_like(b),
        _ => false,
    }
}

/// An integer literal of type `s`, wrapped to its width as Rust does with `overflowing_literals`
/// allowed; C's own literal type always equals `s`.
fn int_lit(v: i128, s: Scalar) -> String {
    let bits = s.bits();
    let u = (v as u128) & ((1u128 << bits) - 1);
    let value: i128 = if s.is_signed() && (u >> (bits - 1)) & 1 == 1 {
        u as i128 - (1i128 << bits)
    } else {
        u as i128
    };
    match s {
        Scalar::U32 => format!("{value}u"),
        Scalar::U64 => format!("{value}ull"),
        Scalar::I32 if value == i128::from(i32::MIN) => "(-2147483647 - 1)".to_owned(),
        Scalar::I32 if value < 0 => format!("({value})"),
        Scalar::I32 => value.to_string(),
        Scalar::I64 if value == i128::from(i64::MIN) => "(-9223372036854775807ll - 1)".to_owned(),
        Scalar::I64 if value < 0 => format!("({value}ll)"),
        Scalar::I64 => format!("{value}ll"),
        Scalar::U8 | Scalar::I8 | Scalar::U16 | Scalar::I16 => format!("({}){value}", s.c()),
        _ => unreachable!("not an integer type"),
    }
}

fn float_lit(v: &FloatVal, s: Scalar, negate: bool) -> String {
    match s {
        Scalar::F32 => {
            let x = match v {
                FloatVal::Digits(d) => d.parse::<f32>().unwrap_or(f32::NAN),
                FloatVal::F32(x) => *x,
                FloatVal::F64(x) => *x as f32,
            };
            fmt_f32(if negate { -x } else { x })
        }
        Scalar::F64 => {
            let x = match v {
                FloatVal::Digits(d) => d.parse::<f64>().unwrap_or(f64::NAN),
                FloatVal::F32(x) => f64::from(*x),
                FloatVal::F64(x) => *x,
            };
            fmt_f64(if negate { -x } else { x })
        }
        _ => unreachable!("not a float type"),
    }
}

/// Exact C++ text for an f32: Rust's shortest round-trip digits plus `f` when that text reads
/// back to the same float even through a double (so a compiler that parses via double cannot
/// round twice); a hexadecimal float otherwise; NaNs and infinities by their bits.
fn fmt_f32(x: f32) -> String {
    if !x.is_finite() {
        return format!("r_f32_from_bits(0x{:08x}u)", x.to_bits());
    }
    let s = format!("{x:?}");
    let safe = s
        .parse::<f64>()
        .is_ok_and(|d| (d as f32).to_bits() == x.to_bits());
    let text = if safe {
        format!("{s}f")
    } else {
        format!("{}f", hex_float(f64::from(x)))
    };
    if x.is_sign_negative() {
        format!("({text})")
    } else {
        text
    }
}

/// Exact C++ text for an f64: shortest round-trip digits; NaNs and infinities by their bits.
fn fmt_f64(x: f64) -> String {
    if !x.is_finite() {
        return format!("r_f64_from_bits(0x{:016x}ull)", x.to_bits());
    }
    let s = format!("{x:?}");
    if x.is_sign_negative() {
        format!("({s})")
    } else {
        s
    }
}

/// A C++17 hexadecimal floating literal (`0x1.8p+0`) for a finite f64.
fn hex_float(x: f64) -> String {
    let sign = if x.is_sign_negative() { "-" } else { "" };
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & ((1u64 << 52) - 1);
    if exp == 0 && mant == 0 {
        return format!("{sign}0x0p+0");
    }
    let (lead, e) = if exp == 0 {
        (0, -1022)
    } else {
        (1, exp - 1023)
    };
    let digits = format!("{mant:013x}");
    let digits = digits.trim_end_matches('0');
    let frac = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    format!("{sign}0x{lead}{frac}p{e:+}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Errors;
    use syn::parse_quote;

    fn input() -> Input {
        let node: syn::DeriveInput = parse_quote! {
            #[repr(C)]
            #[monoid(identity = 0, combine = |l, r| l)]
            struct S {
                a: u32, b: i32, c: u8, h: i16, w: u64, q: i64,
                x: f32, y: f64, flag: bool, m: [u32; 3], g: [[i8; 2]; 2],
            }
        };
        let mut errors = Errors::default();
        let input = Input::from_syn(&node, &mut errors);
        assert!(errors.into_error().is_none());
        input
    }

    /// The C++ for `expr` of Rust type `ty`, with `l` and `r` of type `S` in scope.
    fn try_cuda(expr: Expr, ty: &str) -> Result<String> {
        let input = input();
        let ty = Ty::from_syn(&syn::parse_str(ty).unwrap(), &input.ident, true).unwrap();
        let mut checker = Checker::new(&input);
        for p in ["l", "r"] {
            checker.scopes.push(Binding {
                rust: p.to_owned(),
                cuda: p.to_owned(),
                ty: Ty::Struct,
            });
        }
        let t = checker.check(&expr, Some(&ty))?;
        let t = checker.coerce(t, &ty)?;
        Ok(Emitter { input: &input }.init(&t))
    }

    fn cuda(expr: Expr, ty: &str) -> String {
        try_cuda(expr, ty).unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(expr: Expr, ty: &str) -> String {
        match try_cuda(expr, ty) {
            Ok(s) => panic!("expected an error, got `{s}`"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn integer_literals_take_their_type_from_the_context() {
        assert_eq!(cuda(parse_quote!(1), "u32"), "1u");
        assert_eq!(cuda(parse_quote!(1), "u64"), "1ull");
        assert_eq!(cuda(parse_quote!(1), "i32"), "1");
        assert_eq!(cuda(parse_quote!(-1), "i64"), "(-1ll)");
        assert_eq!(cuda(parse_quote!(7), "u8"), "(unsigned char)7");
        assert_eq!(cuda(parse_quote!(-7), "i8"), "(signed char)-7");
        assert_eq!(cuda(parse_quote!(7), "u16"), "(unsigned short)7");
        assert_eq!(cuda(parse_quote!(b'a'), "u8"), "(unsigned char)97");
        assert_eq!(cuda(parse_quote!(0xffu32), "u32"), "255u");
        // overflowing literals wrap, as they do in Rust with the lint allowed
        assert_eq!(cuda(parse_quote!(300), "u8"), "(unsigned char)44");
        assert_eq!(cuda(parse_quote!(-128), "i8"), "(signed char)-128");
        assert_eq!(cuda(parse_quote!(l.a + 1), "u32"), "l.a + 1u");
        assert_eq!(cuda(parse_quote!(2 * l.w), "u64"), "2ull * l.w");
        assert_eq!(cuda(parse_quote!([1, 2, 3]), "[u32; 3]"), "{1u, 2u, 3u}");
        assert_eq!(
            cuda(parse_quote!(if l.flag { 1 } else { 2 }), "i16"),
            "l.flag ? (short)1 : (short)2"
        );
    }

    #[test]
    fn constants() {
        assert_eq!(cuda(parse_quote!(i32::MIN), "i32"), "(-2147483647 - 1)");
        assert_eq!(
            cuda(parse_quote!(i64::MIN), "i64"),
            "(-9223372036854775807ll - 1)"
        );
        assert_eq!(
            cuda(parse_quote!(u64::MAX), "u64"),
            "18446744073709551615ull"
        );
        assert_eq!(cuda(parse_quote!(i8::MAX), "i8"), "(signed char)127");
        assert_eq!(cuda(parse_quote!(u8::BITS), "u32"), "8u");
        assert_eq!(
            cuda(parse_quote!(f32::INFINITY), "f32"),
            "r_f32_from_bits(0x7f800000u)"
        );
        assert_eq!(
            cuda(parse_quote!(f32::NEG_INFINITY), "f32"),
            "r_f32_from_bits(0xff800000u)"
        );
        assert_eq!(
            cuda(parse_quote!(f32::NAN), "f32"),
            "r_f32_from_bits(0x7fc00000u)"
        );
        assert_eq!(
            cuda(parse_quote!(f64::INFINITY), "f64"),
            "r_f64_from_bits(0x7ff0000000000000ull)"
        );
        assert_eq!(cuda(parse_quote!(f32::MAX), "f32"), "3.4028235e38f");
        assert_eq!(cuda(parse_quote!(f32::MIN), "f32"), "(-3.4028235e38f)");
        assert_eq!(
            cuda(parse_quote!(f64::EPSILON), "f64"),
            "2.220446049250313e-16"
        );
    }

    #[test]
    fn float_literals_are_exact() {
        assert_eq!(cuda(parse_quote!(1.5), "f32"), "1.5f");
        assert_eq!(cuda(parse_quote!(1f32), "f32"), "1.0f");
        assert_eq!(cuda(parse_quote!(0.1), "f64"), "0.1");
        assert_eq!(cuda(parse_quote!(1e-45), "f32"), "1e-45f");
        assert_eq!(cuda(parse_quote!(-0.0), "f32"), "(-0.0f)");
        assert_eq!(
            cuda(parse_quote!(1e39), "f32"),
            "r_f32_from_bits(0x7f800000u)"
        );
        assert_eq!(hex_float(1.5), "0x1.8p+0");
        assert_eq!(hex_float(-0.1), "-0x1.999999999999ap-4");
        assert_eq!(hex_float(f64::from(f32::from_bits(1))), "0x1p-149");
        assert_eq!(hex_float(f64::from_bits(1)), "0x0.0000000000001p-1022");
    }

    /// Parses what `fmt_f32` prints, the way a C++ compiler would (through a double).
    fn parse_c_f32(s: &str) -> f32 {
        let s = s.trim_start_matches('(').trim_end_matches(')');
        let (neg, s) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let s = s.strip_suffix('f').unwrap();
        let v = if let Some(hex) = s.strip_prefix("0x") {
            let (mant, exp) = hex.split_once('p').unwrap();
            let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
            let mut v = u64::from_str_radix(int, 16).unwrap() as f64;
            for (i, d) in frac.chars().enumerate() {
                v += f64::from(d.to_digit(16).unwrap()) * 16f64.powi(-(i as i32) - 1);
            }
            (v * 2f64.powi(exp.parse().unwrap())) as f32
        } else {
            s.parse::<f64>().unwrap() as f32
        };
        if neg {
            -v
        } else {
            v
        }
    }

    #[test]
    fn f32_text_reads_back_exactly_even_through_a_double() {
        let mut bits = 0x9e37_79b9u32;
        let specials = [
            0u32,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x3f80_0001,
            0x7f7f_ffff,
            0x8000_0001,
        ];
        for i in 0..200_000u32 {
            bits = bits.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let b = specials.get(i as usize).copied().unwrap_or(bits);
            let x = f32::from_bits(b);
            if !x.is_finite() {
                continue;
            }
            let text = fmt_f32(x);
            assert_eq!(parse_c_f32(&text).to_bits(), b, "{x:?} printed as {text}");
        }
    }

    #[test]
    fn integer_arithmetic_wraps() {
        assert_eq!(
            cuda(parse_quote!(l.a * r.a + l.a), "u32"),
            "(l.a * r.a) + l.a"
        );
        assert_eq!(cuda(parse_quote!(l.b + r.b), "i32"), "r_add_i32(l.b, r.b)");
        assert_eq!(
            cuda(parse_quote!(l.q.wrapping_mul(r.q)), "i64"),
            "r_mul_i64(l.q, r.q)"
        );
        assert_eq!(cuda(parse_quote!(l.c - r.c), "u8"), "r_sub_u8(l.c, r.c)");
        assert_eq!(
            cuda(parse_quote!(l.h.wrapping_neg()), "i16"),
            "r_neg_i16(l.h)"
        );
        assert_eq!(cuda(parse_quote!(-l.b), "i32"), "r_neg_i32(l.b)");
        assert_eq!(cuda(parse_quote!(l.a / r.a % 3), "u32"), "(l.a / r.a) % 3u");
        assert_eq!(cuda(parse_quote!(l.b / r.b), "i32"), "r_div_i32(l.b, r.b)");
        assert_eq!(
            cuda(parse_quote!(l.c & r.c), "u8"),
            "(unsigned char)(l.c & r.c)"
        );
        assert_eq!(cuda(parse_quote!(!l.c), "u8"), "(unsigned char)~l.c");
        assert_eq!(cuda(parse_quote!(!l.a), "u32"), "~l.a");
        assert_eq!(cuda(parse_quote!(l.w ^ r.w), "u64"), "l.w ^ r.w");
        assert_eq!(
            cuda(parse_quote!(l.a.rotate_left(3)), "u32"),
            "r_rotl_u32(l.a, 3u)"
        );
    }

    #[test]
    fn shift_amounts_are_masked() {
        assert_eq!(cuda(parse_quote!(l.a << 33), "u32"), "l.a << 1");
        assert_eq!(cuda(parse_quote!(l.b >> 40), "i32"), "l.b >> 8");
        assert_eq!(cuda(parse_quote!(l.b << 3), "i32"), "r_shl_i32(l.b, 3)");
        assert_eq!(cuda(parse_quote!(l.c << 9), "u8"), "r_shl_u8(l.c, 9)");
        assert_eq!(cuda(parse_quote!(l.w >> r.c), "u64"), "r_shr_u64(l.w, r.c)");
        assert_eq!(
            cuda(parse_quote!(l.a.wrapping_shl(r.a)), "u32"),
            "r_shl_u32(l.a, r.a)"
        );
    }

    #[test]
    fn floats() {
        assert_eq!(
            cuda(parse_quote!(l.x * r.x + 1.0), "f32"),
            "(l.x * r.x) + 1.0f"
        );
        assert_eq!(cuda(parse_quote!(l.x.min(r.x)), "f32"), "fminf(l.x, r.x)");
        assert_eq!(cuda(parse_quote!(l.y.max(r.y)), "f64"), "fmax(l.y, r.y)");
        assert_eq!(
            cuda(parse_quote!(f32::max(l.x, 0.0)), "f32"),
            "fmaxf(l.x, 0.0f)"
        );
        assert_eq!(
            cuda(parse_quote!(l.x.mul_add(2.0, r.x)), "f32"),
            "fmaf(l.x, 2.0f, r.x)"
        );
        assert_eq!(
            cuda(parse_quote!(l.y.sqrt().abs()), "f64"),
            "fabs(sqrt(l.y))"
        );
        assert_eq!(cuda(parse_quote!(l.x % r.x), "f32"), "fmodf(l.x, r.x)");
        assert_eq!(cuda(parse_quote!(-l.x), "f32"), "-l.x");
        assert_eq!(cuda(parse_quote!(l.x.is_nan()), "bool"), "l.x != l.x");
        assert_eq!(
            cuda(parse_quote!(l.a.min(r.a)), "u32"),
            "r_min_u32(l.a, r.a)"
        );
        assert_eq!(cuda(parse_quote!(l.h.abs()), "i16"), "r_abs_i16(l.h)");
    }

    #[test]
    fn casts() {
        assert_eq!(cuda(parse_quote!(l.x as i32), "i32"), "r_f32_as_i32(l.x)");
        assert_eq!(cuda(parse_quote!(l.y as u8), "u8"), "r_f64_as_u8(l.y)");
        assert_eq!(cuda(parse_quote!(l.a as f32), "f32"), "(float)l.a");
        assert_eq!(cuda(parse_quote!(l.y as f32), "f32"), "(float)l.y");
        assert_eq!(cuda(parse_quote!(l.w as u32), "u32"), "(unsigned int)l.w");
        assert_eq!(
            cuda(parse_quote!(l.flag as u8), "u8"),
            "(unsigned char)l.flag"
        );
        assert_eq!(cuda(parse_quote!(l.a as u32), "u32"), "l.a");
        // rustc: a literal cast to an integer type has that type; otherwise i32 / f64
        assert_eq!(cuda(parse_quote!(-1 as i8), "i8"), "(signed char)-1");
        assert_eq!(cuda(parse_quote!(2 as f32), "f32"), "(float)2");
        assert_eq!(cuda(parse_quote!(1.5 as u32), "u32"), "r_f64_as_u32(1.5)");
        assert_eq!(cuda(parse_quote!(0.1 as f32), "f32"), "0.1f");
    }

    #[test]
    fn conditions_and_blocks() {
        assert_eq!(
            cuda(
                parse_quote!(if l.a < r.a {
                    l.a
                } else if l.flag {
                    2
                } else {
                    r.a
                }),
                "u32"
            ),
            "(l.a < r.a) ? l.a : (l.flag ? 2u : r.a)"
        );
        assert_eq!(
            cuda(
                parse_quote!({
                    let t = l.a + 1;
                    t * t
                }),
                "u32"
            ),
            "[&]() -> unsigned int { const unsigned int v_t = l.a + 1u; return v_t * v_t; }()"
        );
        // shadowing gets a fresh C++ name
        assert_eq!(
            cuda(
                parse_quote!({
                    let t: u32 = 1;
                    let t = t + l.a;
                    t
                }),
                "u32"
            ),
            "[&]() -> unsigned int { const unsigned int v_t = 1u; const unsigned int v_t_2 = \
             v_t + l.a; return v_t_2; }()"
        );
        assert_eq!(
            cuda(parse_quote!(l.flag && !r.flag), "bool"),
            "l.flag && (!r.flag)"
        );
        assert_eq!(
            cuda(parse_quote!(l.flag ^ r.flag), "bool"),
            "l.flag != r.flag"
        );
    }

    #[test]
    fn arrays() {
        assert_eq!(cuda(parse_quote!(l.m[2]), "u32"), "l.m[2]");
        assert_eq!(cuda(parse_quote!(l.g[1][0]), "i8"), "l.g[1][0]");
        assert_eq!(cuda(parse_quote!([l.a, 2, 3][1]), "u32"), "2u");
        assert_eq!(
            cuda(parse_quote!(l.m), "[u32; 3]"),
            "{l.m[0], l.m[1], l.m[2]}"
        );
        assert_eq!(cuda(parse_quote!([0; 3]), "[u32; 3]"), "{0u, 0u, 0u}");
        assert_eq!(
            cuda(parse_quote!(if l.flag { l.m } else { r.m }), "[u32; 3]"),
            "{l.flag ? l.m[0] : r.m[0], l.flag ? l.m[1] : r.m[1], l.flag ? l.m[2] : r.m[2]}"
        );
        assert_eq!(
            cuda(parse_quote!([l.g[1], [1, 2]]), "[[i8; 2]; 2]"),
            "{{l.g[1][0], l.g[1][1]}, {(signed char)1, (signed char)2}}"
        );
        assert_eq!(
            cuda(parse_quote!(l.m == r.m), "bool"),
            "(l.m[0] == r.m[0]) && (l.m[1] == r.m[1]) && (l.m[2] == r.m[2])"
        );
    }

    #[test]
    fn struct_values() {
        assert_eq!(
            cuda(parse_quote!(if l.flag { l } else { r }), "Self"),
            "l.flag ? l : r"
        );
        assert_eq!(
            cuda(parse_quote!((if l.flag { l } else { r }).a), "u32"),
            "l.flag ? l.a : r.a"
        );
        assert_eq!(cuda(parse_quote!(S { a: 5, ..l }.a), "u32"), "5u");
        assert_eq!(cuda(parse_quote!(S { a: 5, ..l }.b), "i32"), "l.b");
    }

    #[test]
    fn type_errors() {
        let e = error(
            parse_quote!({
                let t = 1;
                t + l.a
            }),
            "u32",
        );
        assert!(e.contains("cannot infer the type of `t`"), "{e}");
        let e = error(parse_quote!(l.a + r.c), "u32");
        assert!(
            e.contains("mismatched operand types for `+`: `u32` and `u8`"),
            "{e}"
        );
        let e = error(parse_quote!(l.a), "i32");
        assert!(e.contains("expected `i32`, found `u32`"), "{e}");
        let e = error(parse_quote!(1), "f32");
        assert!(e.contains("write a float literal"), "{e}");
        let e = error(parse_quote!(-l.a), "u32");
        assert!(
            e.contains("cannot negate a value of the unsigned type `u32`"),
            "{e}"
        );
        let e = error(parse_quote!(-1 as u32), "u32");
        assert!(e.contains("cannot negate"), "{e}");
        let e = error(parse_quote!(1 < 2), "bool");
        assert!(e.contains("cannot infer the type of the literals"), "{e}");
        let e = error(parse_quote!(l.x & r.x), "f32");
        assert!(e.contains("`&` is not supported for `f32`"), "{e}");
        let e = error(parse_quote!(l.flag as f32), "f32");
        assert!(e.contains("cannot cast `bool` as `f32`"), "{e}");
        let e = error(parse_quote!((1 + 2) as u8), "u8");
        assert!(e.contains("add a suffix"), "{e}");
        let e = error(parse_quote!(2.0.max(l.x)), "f32");
        assert!(e.contains("ambiguous type"), "{e}");
        let e = error(parse_quote!(l == r), "bool");
        assert!(e.contains("compare the fields"), "{e}");
        let e = error(parse_quote!(l.a.abs()), "u32");
        assert!(e.contains("`abs` is not a method of `u32`"), "{e}");
        let e = error(parse_quote!(l.x.sqrt(1.0)), "f32");
        assert!(e.contains("takes 0 argument(s), 1 given"), "{e}");
    }

    #[test]
    fn subset_errors() {
        let cases: Vec<(Expr, &str)> = vec![
            (
                parse_quote!(l.m[l.a as usize]),
                "array indices must be integer literals",
            ),
            (parse_quote!(l.m[3]), "index 3 is out of bounds"),
            (parse_quote!(l.q2), "no field `q2` on `S`"),
            (
                parse_quote!(foo(l.a)),
                "function calls cannot be translated",
            ),
            (
                parse_quote!(l.a.count_ones()),
                "method `count_ones` cannot be translated",
            ),
            (parse_quote!(loop {}), "`loop` cannot be translated"),
            (
                parse_quote!(match l.a {
                    _ => 1,
                }),
                "`match` cannot be translated",
            ),
            (
                parse_quote!({
                    return l.a;
                }),
                "`return` is not supported",
            ),
            (parse_quote!(FOO), "cannot find `FOO`"),
            (parse_quote!(f32::consts::PI), "unsupported path"),
            (parse_quote!(f32::PI), "unsupported constant `f32::PI`"),
            (parse_quote!(1usize), "unsupported literal suffix `usize`"),
            (
                parse_quote!({
                    let mut t = l.a;
                    t
                }),
                "`let mut` is not supported",
            ),
            (
                parse_quote!({
                    let (p, q) = (l.a, r.a);
                    p
                }),
                "`let` patterns are not supported",
            ),
            (
                parse_quote!({
                    l.a;
                    r.a
                }),
                "statements other than `let`",
            ),
            (
                parse_quote!({
                    let t = l.a;
                }),
                "ends with a `let`",
            ),
            (
                parse_quote!(if l.flag {
                    l.a
                }),
                "`if` without `else`",
            ),
            (parse_quote!(&l.a), "references are not supported"),
            (parse_quote!(T { a: 1 }.a), "only struct literals of `S`"),
            (
                parse_quote!(S { a: 1 }.a),
                "missing fields in struct literal",
            ),
            (parse_quote!(println!("x")), "macros cannot be translated"),
            (parse_quote!('x' as u32), "char literals are not supported"),
        ];
        for (expr, want) in cases {
            let shown = tokens_to_string(&expr);
            let e = error(expr, "u32");
            assert!(e.contains(want), "`{shown}`: got `{e}`, want `{want}`");
        }
    }

    #[test]
    fn whole_functions() {
        let node: syn::DeriveInput = parse_quote! {
            #[repr(C)]
            #[monoid(
                identity = Affine { b: 0, a: 1 },
                combine = |x, y| {
                    let a = x.a.wrapping_mul(y.a);
                    Affine { a, b: x.b.wrapping_mul(y.a).wrapping_add(y.b) }
                }
            )]
            struct Affine { a: u32, b: u32 }
        };
        let mut errors = Errors::default();
        let input = Input::from_syn(&node, &mut errors);
        assert!(errors.into_error().is_none());
        let identity_body = identity(&input, input.attrs.identity.as_ref().unwrap()).unwrap();
        assert_eq!(identity_body, "    return Affine{1u, 0u};\n");
        let combine_body = combine(&input, input.combine.as_ref().unwrap()).unwrap();
        assert_eq!(
            combine_body,
            "    const unsigned int v_a = l.a * r.a;\n    return Affine{v_a, (l.b * r.a) + r.b};\n"
        );
        let pieces = cuda_text(&input, &identity_body, &combine_body, false);
        assert_eq!(pieces[1], Piece::SizeOf);
        assert_eq!(pieces[3], Piece::AlignOf);
        assert_eq!(pieces[5], Piece::OffsetOf(1));
        let Piece::Text(last) = pieces.last().unwrap() else {
            panic!()
        };
        assert!(last.contains("typedef Affine M;\n"));
        assert!(
            last.contains("__device__ __forceinline__ M m_identity() { return Affine{1u, 0u}; }")
        );
        assert!(last.contains("__device__ __forceinline__ M m_combine(M l, M r) {\n"));
    }

    #[test]
    fn statement_form_for_if_with_blocks() {
        let node: syn::DeriveInput = parse_quote! {
            #[repr(C)]
            #[monoid(
                identity = P(0),
                combine = |l, r| if l.0 > r.0 {
                    let d = l.0 - r.0;
                    P(d)
                } else if l.0 == 0 {
                    r
                } else {
                    l
                }
            )]
            struct P(u32);
        };
        let mut errors = Errors::default();
        let input = Input::from_syn(&node, &mut errors);
        let body = combine(&input, input.combine.as_ref().unwrap()).unwrap();
        assert_eq!(
            body,
            "    if (l.f0 > r.f0) {\n        const unsigned int v_d = l.f0 - r.f0;\n        \
             return P{v_d};\n    } else if (l.f0 == 0u) {\n        return r;\n    } else {\n        \
             return l;\n    }\n"
        );
    }
}
