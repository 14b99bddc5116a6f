//! Generating expressions: literals (edge values first), places, operators, casts, methods,
//! `if`/`match` expressions, blocks, helper calls and run-time indices.

use super::{GTy, Gen, Place, Rng, Sc, FIELD_SCALARS};

const INT_BINOPS: [&str; 10] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];
const INT_METHODS: [&str; 10] = [
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_div",
    "wrapping_rem",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "min",
    "max",
];

impl Gen<'_> {
    pub(super) fn field_ty(&mut self, nested_ok: bool) -> GTy {
        let r = self.rng.below(100);
        if nested_ok && !self.nested.is_empty() && r < 15 {
            let i = self.rng.below(self.nested.len() as u64) as usize;
            if self.rng.chance(30) {
                return GTy::Arr(Box::new(GTy::N(i)), 2);
            }
            return GTy::N(i);
        }
        let s = *self.rng.pick(&FIELD_SCALARS);
        if r < 40 {
            let n = 1 + self.rng.below(4) as usize;
            if self.rng.chance(10) {
                let m = 1 + self.rng.below(3) as usize;
                return GTy::Arr(Box::new(GTy::Arr(Box::new(GTy::S(s)), m)), n);
            }
            return GTy::Arr(Box::new(GTy::S(s)), n);
        }
        GTy::S(s)
    }

    /// The fields of a struct type (`usize::MAX`: `S`).
    pub(super) fn fields_of(&self, i: usize) -> Vec<GTy> {
        if i == usize::MAX {
            self.fields.clone()
        } else {
            self.nested[i].fields.clone()
        }
    }

    pub(super) fn field_name(&self, i: usize, k: usize) -> String {
        if i == usize::MAX {
            format!("f{k}")
        } else if self.nested[i].tuple {
            format!("{k}")
        } else {
            format!("a{k}")
        }
    }

    /// A struct value from field values: `N0 { a0: x, a1: y }` or `N0(x, y)`.
    pub(super) fn struct_value(&mut self, i: usize, values: Vec<String>) -> String {
        let name = Self::struct_name(i);
        if i != usize::MAX && self.nested[i].tuple {
            return format!("{name}({})", values.join(", "));
        }
        let mut items: Vec<String> = values
            .into_iter()
            .enumerate()
            .map(|(k, v)| format!("{}: {v}", self.field_name(i, k)))
            .collect();
        // Fields in any order.
        if items.len() > 1 && self.rng.chance(30) {
            items.reverse();
        }
        format!("{name} {{ {} }}", items.join(", "))
    }

    pub(super) fn struct_name(i: usize) -> String {
        if i == usize::MAX {
            "S".into()
        } else {
            format!("N{i}")
        }
    }

    /// Every place of scalar type `want` reachable from the scope with constant indices, and
    /// the arrays of element type `want` (for run-time indexing).
    pub(super) fn places(&self, want: Sc) -> (Vec<Place>, Vec<(Place, usize)>) {
        let mut scalars = Vec::new();
        let mut arrays = Vec::new();
        for p in &self.scope {
            self.walk(p.clone(), want, &mut scalars, &mut arrays, 0);
        }
        (scalars, arrays)
    }

    pub(super) fn walk(
        &self,
        p: Place,
        want: Sc,
        scalars: &mut Vec<Place>,
        arrays: &mut Vec<(Place, usize)>,
        depth: usize,
    ) {
        match p.ty.clone() {
            GTy::S(s) if s == want => scalars.push(p),
            GTy::S(_) => {}
            GTy::Arr(e, n) => {
                if *e == GTy::S(want) {
                    arrays.push((p.clone(), n));
                }
                if depth < 3 {
                    for k in 0..n {
                        self.walk(
                            Place {
                                path: format!("{}[{k}]", p.path),
                                ty: (*e).clone(),
                                mutable: p.mutable,
                                range: None,
                            },
                            want,
                            scalars,
                            arrays,
                            depth + 1,
                        );
                    }
                }
            }
            GTy::N(i) => {
                for (k, f) in self.fields_of(i).into_iter().enumerate() {
                    self.walk(
                        Place {
                            path: format!("{}.{}", p.path, self.field_name(i, k)),
                            ty: f,
                            mutable: p.mutable,
                            range: None,
                        },
                        want,
                        scalars,
                        arrays,
                        depth + 1,
                    );
                }
            }
        }
    }

    pub(super) fn literal(&mut self, s: Sc) -> String {
        match s {
            Sc::Bool => if self.rng.chance(50) { "true" } else { "false" }.into(),
            Sc::F32 | Sc::F64 => {
                let t = s.rust();
                match self.rng.below(16) {
                    0 => format!("{t}::NAN"),
                    1 => format!("{t}::INFINITY"),
                    2 => format!("{t}::NEG_INFINITY"),
                    3 => format!("{t}::MAX"),
                    4 => format!("{t}::MIN"),
                    5 => format!("{t}::MIN_POSITIVE"),
                    6 => format!("{t}::EPSILON"),
                    7 => format!("0.0{t}"),
                    8 => format!("-0.0{t}"),
                    9 if s == Sc::F32 => "1e-45f32".into(),
                    9 => "5e-324f64".into(),
                    10 => format!("1.0{t}"),
                    11 => format!("-1.5{t}"),
                    _ => {
                        let x = (self.rng.next_u64() % 2_000_000) as f64 / 1000.0 - 1000.0;
                        if s == Sc::F32 {
                            let x = x as f32;
                            if x < 0.0 {
                                format!("-{:?}f32", -x)
                            } else {
                                format!("{x:?}f32")
                            }
                        } else if x < 0.0 {
                            format!("-{:?}f64", -x)
                        } else {
                            format!("{x:?}f64")
                        }
                    }
                }
            }
            _ => {
                let t = s.rust();
                let bits = s.bits();
                let max: u128 = if s.is_signed() {
                    (1u128 << (bits - 1)) - 1
                } else {
                    (1u128 << bits) - 1
                };
                match self.rng.below(10) {
                    0 => format!("{t}::MAX"),
                    1 if s.is_signed() => format!("{t}::MIN"),
                    1 => format!("0{t}"),
                    2 => format!("0{t}"),
                    3 => format!("1{t}"),
                    4 if s.is_signed() => format!("-1{t}"),
                    4 => format!("{}{t}", max - 1),
                    5 => format!("{}{t}", self.rng.below(16)),
                    6 if s.is_signed() => format!("-{}{t}", 1 + self.rng.below(100)),
                    _ => {
                        let v = u128::from(self.rng.next_u64()) % (max + 1);
                        format!("{v}{t}")
                    }
                }
            }
        }
    }

    /// A constant value of a field type (for the identity).
    pub(super) fn literal_of(&mut self, ty: &GTy) -> String {
        match ty {
            GTy::S(s) => self.literal(*s),
            GTy::Arr(e, n) => {
                if self.rng.chance(30) {
                    format!("[{}; {n}]", self.literal_of(e))
                } else {
                    let items: Vec<String> = (0..*n).map(|_| self.literal_of(e)).collect();
                    format!("[{}]", items.join(", "))
                }
            }
            GTy::N(i) => {
                let fields = self.fields_of(*i);
                let values: Vec<String> = fields.iter().map(|f| self.literal_of(f)).collect();
                self.struct_value(*i, values)
            }
        }
    }

    /// A value of a field type built from expressions.
    pub(super) fn value_of(&mut self, ty: &GTy, depth: usize) -> String {
        // A place of exactly this type, sometimes.
        if self.rng.chance(25) {
            let found: Vec<Place> = self
                .scope
                .iter()
                .flat_map(|p| self.all_places(p.clone(), 0))
                .filter(|p| p.ty == *ty)
                .collect();
            if !found.is_empty() {
                return self.rng.pick(&found).path.clone();
            }
        }
        match ty {
            GTy::S(s) => self.expr(*s, depth),
            GTy::Arr(e, n) => {
                if self.rng.chance(20) {
                    format!("[{}; {n}]", self.value_of(e, depth))
                } else {
                    let items: Vec<String> = (0..*n).map(|_| self.value_of(e, depth)).collect();
                    format!("[{}]", items.join(", "))
                }
            }
            GTy::N(i) => {
                let fields = self.fields_of(*i);
                let values: Vec<String> = fields.iter().map(|f| self.value_of(f, depth)).collect();
                self.struct_value(*i, values)
            }
        }
    }

    pub(super) fn literal_struct_expr(&mut self) -> String {
        self.value_of(&GTy::N(usize::MAX), 3)
    }

    pub(super) fn all_places(&self, p: Place, depth: usize) -> Vec<Place> {
        let mut out = vec![p.clone()];
        if depth > 2 {
            return out;
        }
        match p.ty.clone() {
            GTy::S(_) => {}
            GTy::Arr(e, n) => {
                for k in 0..n {
                    out.extend(self.all_places(
                        Place {
                            path: format!("{}[{k}]", p.path),
                            ty: (*e).clone(),
                            mutable: p.mutable,
                            range: None,
                        },
                        depth + 1,
                    ));
                }
            }
            GTy::N(i) => {
                for (k, f) in self.fields_of(i).into_iter().enumerate() {
                    out.extend(self.all_places(
                        Place {
                            path: format!("{}.{}", p.path, self.field_name(i, k)),
                            ty: f,
                            mutable: p.mutable,
                            range: None,
                        },
                        depth + 1,
                    ));
                }
            }
        }
        out
    }

    /// An index into an array of length `n`: mostly in bounds, sometimes not.
    pub(super) fn index(&mut self, n: usize, depth: usize) -> String {
        let counters: Vec<Place> = self
            .scope
            .iter()
            .filter(|p| p.range.is_some_and(|hi| hi <= n))
            .cloned()
            .collect();
        if !counters.is_empty() && self.rng.chance(40) {
            let v = self.rng.pick(&counters).path.clone();
            return match self.rng.below(4) {
                // in bounds by construction: not checked on the device
                0 => format!("({} - 1 - {v})", n),
                1 => format!("(({v} + {}) % {n})", self.rng.below(5)),
                2 => format!("(({v} * 2) % {n})"),
                _ => v,
            };
        }
        let s = *self
            .rng
            .pick(&[Sc::U8, Sc::I32, Sc::U32, Sc::U64, Sc::I64, Sc::F32]);
        let e = self.expr(s, depth);
        match self.rng.below(10) {
            // possibly out of bounds: `& (next power of two - 1)`, or a raw small value
            0 => format!("(({e}) as usize & {})", n.next_power_of_two() * 2 - 1),
            1 => format!("(({e}) as usize % {})", n + 1),
            _ => format!("(({e}) as usize % {n})"),
        }
    }

    /// An expression of scalar type `s`.
    pub(super) fn expr(&mut self, s: Sc, depth: usize) -> String {
        if s == Sc::Usize {
            let inner = *self.rng.pick(&[Sc::U8, Sc::U32, Sc::I64, Sc::U64, Sc::F64]);
            return format!("(({}) as usize)", self.expr(inner, depth.saturating_sub(1)));
        }
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(s, depth);
        }
        let d = depth - 1;
        let r = self.rng.below(100);
        match r {
            0..=29 => self.binary(s, d),
            30..=39 => self.cast(s, d),
            40..=49 => self.method(s, d),
            50..=55 => self.unary(s, d),
            56..=62 => {
                let c = self.expr(Sc::Bool, d);
                let a = self.expr(s, d);
                let b = self.expr(s, d);
                format!("(if {c} {{ {a} }} else {{ {b} }})")
            }
            63..=67 => self.match_expr(s, d),
            68..=72 => {
                // a block with a local
                let t = *self.rng.pick(&FIELD_SCALARS);
                let v = self.fresh();
                let init = self.expr(t, d);
                self.scope.push(Place {
                    path: v.clone(),
                    ty: GTy::S(t),
                    mutable: false,
                    range: None,
                });
                let body = self.expr(s, d);
                self.scope.pop();
                format!("{{ let {v}: {} = {init}; {body} }}", t.rust())
            }
            73..=79 => self.call(s, d).unwrap_or_else(|| self.leaf(s, d)),
            80..=89 => self.dyn_index(s, d).unwrap_or_else(|| self.leaf(s, d)),
            _ if s == Sc::Bool => self.compare(d),
            _ => self.leaf(s, d),
        }
    }

    pub(super) fn fresh(&mut self) -> String {
        self.locals += 1;
        format!("v{}", self.locals)
    }

    pub(super) fn leaf(&mut self, s: Sc, depth: usize) -> String {
        let (places, _) = self.places(s);
        if !places.is_empty() && self.rng.chance(75) {
            return self.rng.pick(&places).path.clone();
        }
        if s == Sc::Bool && depth > 0 && self.rng.chance(50) {
            return self.compare(depth - 1);
        }
        self.literal(s)
    }

    pub(super) fn compare(&mut self, d: usize) -> String {
        let t = *self.rng.pick(&FIELD_SCALARS);
        let op = *self.rng.pick(&["==", "!=", "<", "<=", ">", ">="]);
        // whole arrays compare with == and != (element by element, IEEE for floats)
        if matches!(op, "==" | "!=") && self.rng.chance(15) {
            let (_, arrays) = self.places(t);
            if !arrays.is_empty() {
                let (a, _) = self.rng.pick(&arrays).clone();
                let (b, _) = self.rng.pick(&arrays).clone();
                if a.ty == b.ty {
                    return format!("({} {op} {})", a.path, b.path);
                }
            }
        }
        let a = self.expr(t, d);
        let b = self.expr(t, d);
        format!("({a} {op} {b})")
    }

    pub(super) fn binary(&mut self, s: Sc, d: usize) -> String {
        match s {
            Sc::Bool => {
                let op = *self.rng.pick(&["&&", "||", "&", "|", "^"]);
                let a = self.expr(Sc::Bool, d);
                let b = self.expr(Sc::Bool, d);
                format!("({a} {op} {b})")
            }
            _ if s.is_float() => {
                let op = *self.rng.pick(&["+", "-", "*", "/", "%"]);
                let a = self.expr(s, d);
                let b = if self.rng.chance(20) {
                    // an unsuffixed literal typed by the other operand
                    format!("{}.5", self.rng.below(10))
                } else {
                    self.expr(s, d)
                };
                format!("({a} {op} {b})")
            }
            _ => {
                let op = *self.rng.pick(&INT_BINOPS);
                let a = self.expr(s, d);
                match op {
                    "/" | "%" => {
                        // mostly never zero; else any divisor: zero and MIN / -1 are faults on
                        // both sides
                        let b = self.expr(s, d);
                        if self.rng.chance(30) {
                            format!("({a} {op} {b})")
                        } else {
                            format!("({a} {op} ({b} | 1))")
                        }
                    }
                    "<<" | ">>" => {
                        // any integer type, any value: the amount is masked
                        let t =
                            *self
                                .rng
                                .pick(&[Sc::U8, Sc::I8, Sc::U32, Sc::I32, Sc::U64, Sc::I64]);
                        let b = self.expr(t, d);
                        format!("({a} {op} {b})")
                    }
                    _ => {
                        let b = if self.rng.chance(15) {
                            format!("{}", self.rng.below(200))
                        } else {
                            self.expr(s, d)
                        };
                        format!("({a} {op} {b})")
                    }
                }
            }
        }
    }

    pub(super) fn cast(&mut self, s: Sc, d: usize) -> String {
        if s == Sc::Bool {
            return self.compare(d);
        }
        let from = *self.rng.pick(&FIELD_SCALARS);
        if from == Sc::Bool && s.is_float() {
            return format!("(({}) as u8 as {})", self.expr(Sc::Bool, d), s.rust());
        }
        format!("(({}) as {})", self.expr(from, d), s.rust())
    }

    pub(super) fn method(&mut self, s: Sc, d: usize) -> String {
        match s {
            Sc::Bool => self.test_method(d),
            _ if s.is_float() => self.float_method(s, d),
            _ => self.int_method(s, d),
        }
    }

    /// A `bool` from a float's class or sign, or an unsigned integer's `is_power_of_two`. A
    /// NaN's sign differs between CPU and GPU, so the sign tests see NaN as neither.
    fn test_method(&mut self, d: usize) -> String {
        let f = *self.rng.pick(&[Sc::F32, Sc::F64]);
        let x = self.expr(f, d);
        match self.rng.below(4) {
            0 => {
                let m = *self.rng.pick(&["is_nan", "is_finite", "is_infinite"]);
                format!("({x}).{m}()")
            }
            1 => {
                let m = *self.rng.pick(&["is_sign_positive", "is_sign_negative"]);
                format!("{{ let t: {} = {x}; !t.is_nan() && t.{m}() }}", f.rust())
            }
            2 => {
                let u = *self.rng.pick(&[Sc::U8, Sc::U16, Sc::U32, Sc::U64]);
                format!("({}).is_power_of_two()", self.expr(u, d))
            }
            3 if self.rng.chance(50) => {
                let i = *self.rng.pick(&[Sc::I8, Sc::I16, Sc::I32, Sc::I64]);
                let m = *self.rng.pick(&["is_positive", "is_negative"]);
                format!("({}).{m}()", self.expr(i, d))
            }
            _ => format!("({x}).is_nan()"),
        }
    }

    fn float_method(&mut self, s: Sc, d: usize) -> String {
        let t = s.rust();
        let a = self.expr(s, d);
        match self.rng.below(11) {
            0 => format!("({a}).sqrt()"),
            1 => format!("({a}).abs()"),
            2 => {
                let b = self.expr(s, d);
                let c = self.expr(s, d);
                format!("({a}).mul_add({b}, {c})")
            }
            // reduce_core::math's functions (the prelude's on the device)
            3 => {
                let f = *self.rng.pick(&[
                    "exp", "exp2", "ln", "log2", "log10", "tanh", "ln_1p", "exp_m1",
                ]);
                format!("({a}).{f}()")
            }
            4 => {
                let b = self.expr(s, d);
                format!("({a}).powf({b})")
            }
            5 => {
                let n = self.expr(Sc::I32, d);
                format!("({a}).powi({n})")
            }
            // the exact methods
            6 => {
                let m = *self.rng.pick(&[
                    "floor",
                    "ceil",
                    "trunc",
                    "round",
                    "round_ties_even",
                    "fract",
                    "signum",
                    "recip",
                ]);
                format!("({a}).{m}()")
            }
            // the sign of a NaN differs between CPU and GPU: never copied from one
            7 => {
                let b = self.expr(s, d);
                format!(
                    "({a}).copysign({{ let t: {t} = {b}; if t.is_nan() {{ 1.0 }} else {{ t }} }})"
                )
            }
            8 => {
                let (lo, hi) = self.float_bounds();
                format!("({a}).clamp({lo}{t}, {hi}{t})")
            }
            9 if self.rng.chance(50) => {
                let m = *self.rng.pick(&["rem_euclid", "div_euclid"]);
                let b = self.expr(s, d);
                format!("({a}).{m}({b})")
            }
            9 => {
                // a lossless conversion, or std's constants
                let c = *self.rng.pick(&["PI", "E", "LN_2", "FRAC_1_SQRT_2"]);
                let from = if s == Sc::F64 {
                    *self
                        .rng
                        .pick(&[Sc::F32, Sc::I32, Sc::U32, Sc::U16, Sc::I8, Sc::Bool])
                } else {
                    *self.rng.pick(&[Sc::I16, Sc::U16, Sc::U8, Sc::Bool])
                };
                format!(
                    "(({t}::from({}) * std::{t}::consts::{c}) + {a})",
                    self.expr(from, d)
                )
            }
            _ => {
                let u = if s == Sc::F32 { Sc::U32 } else { Sc::U64 };
                format!("{t}::from_bits({})", self.expr(u, d))
            }
        }
    }

    /// Two float literals in order (`clamp` takes literal bounds only).
    fn float_bounds(&mut self) -> (String, String) {
        let v = |rng: &mut Rng| (rng.next_u64() % 2_000_000) as f64 / 1000.0 - 1000.0;
        let (a, b) = (v(self.rng), v(self.rng));
        let (lo, hi) = (a.min(b), a.max(b));
        (format!("{lo:?}"), format!("{hi:?}"))
    }

    fn int_method(&mut self, s: Sc, d: usize) -> String {
        let t = s.rust();
        if s == Sc::U32 && self.rng.chance(15) {
            // Bit counts of any integer type, as u32.
            let ints: Vec<Sc> = FIELD_SCALARS.into_iter().filter(|s| s.is_int()).collect();
            let t = *self.rng.pick(&ints);
            let x = self.expr(t, d);
            let m = *self.rng.pick(&[
                "count_ones",
                "count_zeros",
                "leading_zeros",
                "leading_ones",
                "trailing_zeros",
                "trailing_ones",
            ]);
            return format!("({x}).{m}()");
        }
        // The signed type of an unsigned one's width: abs_diff and unsigned_abs give `s` from it.
        let signed = match s {
            Sc::U8 => Some(Sc::I8),
            Sc::U16 => Some(Sc::I16),
            Sc::U32 => Some(Sc::I32),
            Sc::U64 => Some(Sc::I64),
            _ => None,
        };
        if let Some(w) = signed.filter(|_| self.rng.chance(10)) {
            let x = self.expr(w, d);
            return match self.rng.below(3) {
                0 => format!("({x}).abs_diff({})", self.expr(w, d)),
                1 => format!("({x}).unsigned_abs()"),
                _ => format!("({}).abs_diff({})", self.expr(s, d), self.expr(s, d)),
            };
        }
        if matches!(s, Sc::U32 | Sc::U64) && self.rng.chance(8) {
            // to_bits of a float of the width; a NaN's bits differ between CPU and GPU
            let f = if s == Sc::U32 { Sc::F32 } else { Sc::F64 };
            let x = self.expr(f, d);
            return format!(
                "{{ let t: {} = {x}; if t.is_nan() {{ 0 }} else {{ t.to_bits() }} }}",
                f.rust()
            );
        }
        let a = self.expr(s, d);
        match self.rng.below(9) {
            0 | 1 => {
                let m = *self.rng.pick(&INT_METHODS);
                let b = self.expr(s, d);
                let b = if (m.ends_with("div") || m.ends_with("rem")) && !self.rng.chance(30) {
                    format!("({b} | 1)")
                } else {
                    b
                };
                format!("({a}).{m}({b})")
            }
            2 => {
                let m = *self.rng.pick(&[
                    "rotate_left",
                    "rotate_right",
                    "wrapping_shl",
                    "wrapping_shr",
                    "pow",
                    "wrapping_pow",
                    "saturating_pow",
                ]);
                let b = self.expr(Sc::U32, d);
                format!("({a}).{m}({b})")
            }
            3 => format!("({a}).wrapping_neg()"),
            4 if s.is_signed() => {
                let m = *self.rng.pick(&[
                    "abs",
                    "wrapping_abs",
                    "saturating_abs",
                    "saturating_neg",
                    "signum",
                ]);
                format!("({a}).{m}()")
            }
            4 => {
                // any divisor: zero and MIN by -1 are faults on both sides
                let m = *self.rng.pick(&["rem_euclid", "div_euclid"]);
                format!("({a}).{m}({})", self.expr(s, d))
            }
            5 => {
                let m = *self.rng.pick(&["reverse_bits", "swap_bytes"]);
                format!("({a}).{m}()")
            }
            6 => {
                let (lo, hi) = if s.is_signed() {
                    let (x, y) = (
                        self.rng.below(200) as i64 - 100,
                        self.rng.below(200) as i64 - 100,
                    );
                    (x.min(y), x.max(y))
                } else {
                    let (x, y) = (self.rng.below(200) as i64, self.rng.below(200) as i64);
                    (x.min(y), x.max(y))
                };
                format!("({a}).clamp({lo}{t}, {hi}{t})")
            }
            _ => {
                let b = self.expr(s, d);
                format!("{t}::max({a}, {b})")
            }
        }
    }

    pub(super) fn unary(&mut self, s: Sc, d: usize) -> String {
        let x = self.expr(s, d);
        let neg = s.is_float() || (s.is_signed() && self.rng.chance(50));
        match (s, neg) {
            (Sc::Bool, _) => format!("!{x}"),
            // `-(-1)`, not `--1`
            (_, true) if x.starts_with('-') => format!("(-({x}))"),
            (_, true) => format!("(-{x})"),
            _ => format!("(!{x})"),
        }
    }

    pub(super) fn match_expr(&mut self, s: Sc, d: usize) -> String {
        let t = *self
            .rng
            .pick(&[Sc::U8, Sc::I8, Sc::U32, Sc::I32, Sc::Bool, Sc::I64]);
        let scrutinee = self.expr(t, d);
        let mut arms = Vec::new();
        if t == Sc::Bool {
            arms.push(format!("true => {}", self.expr(s, d)));
            arms.push(format!("false => {}", self.expr(s, d)));
        } else {
            for _ in 0..1 + self.rng.below(3) {
                let pat = self.pattern(t);
                arms.push(format!("{pat} => {}", self.expr(s, d)));
            }
            if self.rng.chance(30) {
                let v = self.fresh();
                self.scope.push(Place {
                    path: v.clone(),
                    ty: GTy::S(t),
                    mutable: false,
                    range: None,
                });
                let guard = self.expr(Sc::Bool, d);
                let body = self.expr(s, d);
                self.scope.pop();
                arms.push(format!("{v} if {guard} => {body}"));
            }
            arms.push(format!("_ => {}", self.expr(s, d)));
        }
        format!("(match {scrutinee} {{ {} }})", arms.join(", "))
    }

    pub(super) fn pattern(&mut self, t: Sc) -> String {
        let small = |rng: &mut Rng| -> i64 {
            if t.is_signed() {
                rng.below(40) as i64 - 20
            } else {
                rng.below(40) as i64
            }
        };
        match self.rng.below(4) {
            0 => {
                let (a, b) = (small(self.rng), small(self.rng));
                let (lo, hi) = (a.min(b), a.max(b));
                format!("{lo}..={hi}")
            }
            1 => {
                let (a, b) = (small(self.rng), small(self.rng));
                format!("{a} | {b}")
            }
            2 if t.is_signed() => format!("{}::MIN..=-1", t.rust()),
            2 => format!("200..={}::MAX", t.rust()),
            _ => format!("{}", small(self.rng)),
        }
    }

    pub(super) fn call(&mut self, s: Sc, d: usize) -> Option<String> {
        let candidates: Vec<usize> = (0..self.helpers.len())
            .filter(|&h| self.helpers[h].ret == s)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let h = *self.rng.pick(&candidates);
        let params = self.helpers[h].params.clone();
        let args: Vec<String> = params.iter().map(|p| self.value_of(p, d)).collect();
        Some(format!("h{h}({})", args.join(", ")))
    }

    pub(super) fn dyn_index(&mut self, s: Sc, d: usize) -> Option<String> {
        let (_, arrays) = self.places(s);
        if arrays.is_empty() {
            return None;
        }
        let (p, n) = self.rng.pick(&arrays).clone();
        let i = self.index(n, d);
        Some(format!("{}[{i}]", p.path))
    }
}
