//! The program generator: random, well-typed monoids in the derive's language, as Rust source.
//!
//! Each program is a module with 0-2 `#[derive(DeviceCopy)]` structs, 0-2 `#[device_fn]`
//! helpers and one `#[derive(Monoid)]` struct `S` whose `combine` is a block of random
//! statements (`let`, `let mut`, assignments and compound assignments to locals, fields and
//! array elements, `if`, `for` over constant ranges with `break`/`continue`, `match`) ending in
//! a value of `S`. Expressions cover every operator, cast, method and constant of the language,
//! checked and unchecked run-time indices, helper calls, `if`/`match` expressions and blocks;
//! literals favour edge values (0, -1, MIN, MAX, NaN, +-0, +-inf, subnormals). The identity is
//! a random constant: the fuzzer tests the translation, not the monoid laws.
//!
//! Everything is typed by construction. The generator avoids what Rust rejects at compile time
//! (constant overflow is allowed by lints, empty ranges are not generated) and float `min`/`max`
//! (the sign of a zero they return is unspecified in Rust). Used by `build.rs` (which writes the
//! programs) and by the library (which re-creates a program's source to report it).

use std::fmt::Write as _;

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `p` percent.
    pub fn chance(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

/// The scalar types; `Usize` appears in expressions only.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sc {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
    Usize,
}

pub const FIELD_SCALARS: [Sc; 11] = [
    Sc::Bool,
    Sc::U8,
    Sc::I8,
    Sc::U16,
    Sc::I16,
    Sc::U32,
    Sc::I32,
    Sc::U64,
    Sc::I64,
    Sc::F32,
    Sc::F64,
];

impl Sc {
    pub fn rust(self) -> &'static str {
        match self {
            Sc::Bool => "bool",
            Sc::U8 => "u8",
            Sc::I8 => "i8",
            Sc::U16 => "u16",
            Sc::I16 => "i16",
            Sc::U32 => "u32",
            Sc::I32 => "i32",
            Sc::U64 => "u64",
            Sc::I64 => "i64",
            Sc::F32 => "f32",
            Sc::F64 => "f64",
            Sc::Usize => "usize",
        }
    }

    pub fn size(self) -> usize {
        match self {
            Sc::Bool | Sc::U8 | Sc::I8 => 1,
            Sc::U16 | Sc::I16 => 2,
            Sc::U32 | Sc::I32 | Sc::F32 => 4,
            _ => 8,
        }
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Sc::Bool | Sc::F32 | Sc::F64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Sc::F32 | Sc::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Sc::I8 | Sc::I16 | Sc::I32 | Sc::I64)
    }

    /// A code for the leaf table (the index in [`FIELD_SCALARS`]).
    pub fn code(self) -> u8 {
        FIELD_SCALARS.iter().position(|&s| s == self).unwrap_or(0) as u8
    }

    fn bits(self) -> u32 {
        self.size() as u32 * 8
    }
}

/// A field or parameter type.
#[derive(Clone, PartialEq, Debug)]
pub enum GTy {
    S(Sc),
    Arr(Box<GTy>, usize),
    /// A nested struct of the program, by index.
    N(usize),
}

/// One generated program.
pub struct Program {
    pub index: usize,
    /// The module's Rust source.
    pub source: String,
    /// The scalar leaves of `S`: (byte offset, scalar), in declaration order.
    pub leaves: Vec<(usize, Sc)>,
    pub size: usize,
}

struct Nested {
    fields: Vec<GTy>,
    /// A tuple struct (`N0(u8, f32)`, fields `.0`, `.1`).
    tuple: bool,
}

struct Helper {
    params: Vec<GTy>,
    ret: Sc,
}

/// A value in scope: a Rust expression (a path) and its type.
#[derive(Clone)]
struct Place {
    path: String,
    ty: GTy,
    /// A local that may be assigned.
    mutable: bool,
    /// A loop counter over `0..hi` (usize).
    range: Option<usize>,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    nested: Vec<Nested>,
    helpers: Vec<Helper>,
    fields: Vec<GTy>,
    scope: Vec<Place>,
    locals: usize,
    /// Loops enclosing the statement being generated (for `break`/`continue`).
    loops: usize,
    /// The return type of the function being generated (for `return`).
    ret: GTy,
}

fn layout(nested: &[Nested], ty: &GTy) -> (usize, usize) {
    match ty {
        GTy::S(s) => (s.size(), s.size()),
        GTy::Arr(e, n) => {
            let (s, a) = layout(nested, e);
            (s * n, a)
        }
        GTy::N(i) => struct_layout(nested, &nested[*i].fields),
    }
}

fn struct_layout(nested: &[Nested], fields: &[GTy]) -> (usize, usize) {
    let mut size = 0usize;
    let mut align = 1usize;
    for f in fields {
        let (s, a) = layout(nested, f);
        size = size.div_ceil(a) * a + s;
        align = align.max(a);
    }
    (size.div_ceil(align) * align, align)
}

/// The scalar leaves of a value of type `ty` at `offset`.
fn leaves(nested: &[Nested], ty: &GTy, offset: usize, out: &mut Vec<(usize, Sc)>) {
    match ty {
        GTy::S(s) => out.push((offset, *s)),
        GTy::Arr(e, n) => {
            let (s, _) = layout(nested, e);
            for k in 0..*n {
                leaves(nested, e, offset + k * s, out);
            }
        }
        GTy::N(i) => struct_leaves(nested, &nested[*i].fields, offset, out),
    }
}

fn struct_leaves(nested: &[Nested], fields: &[GTy], base: usize, out: &mut Vec<(usize, Sc)>) {
    let mut off = 0usize;
    for f in fields {
        let (s, a) = layout(nested, f);
        off = off.div_ceil(a) * a;
        leaves(nested, f, base + off, out);
        off += s;
    }
}

fn rust_ty(ty: &GTy) -> String {
    match ty {
        GTy::S(s) => s.rust().to_owned(),
        GTy::Arr(e, n) => format!("[{}; {n}]", rust_ty(e)),
        GTy::N(i) => format!("N{i}"),
    }
}

/// Generates program `index` of the run seeded with `seed`.
pub fn program(seed: u64, index: usize) -> Program {
    let mut rng = Rng::new(seed ^ (index as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut g = Gen {
        rng: &mut rng,
        nested: Vec::new(),
        helpers: Vec::new(),
        fields: Vec::new(),
        scope: Vec::new(),
        locals: 0,
        loops: 0,
        ret: GTy::N(usize::MAX),
    };
    let mut src = String::new();
    let _ = writeln!(src, "pub mod p{index:05} {{");
    src.push_str("    use reduce_core::{device_fn, DeviceCopy, Monoid};\n\n");

    for i in 0..g.rng.below(3) as usize {
        let n = 1 + g.rng.below(3) as usize;
        let fields: Vec<GTy> = (0..n).map(|_| g.field_ty(false)).collect();
        let tuple = g.rng.chance(30);
        src.push_str("    #[derive(Clone, Copy, Debug, DeviceCopy)]\n    #[repr(C)]\n");
        if tuple {
            let types: Vec<String> = fields
                .iter()
                .map(|f| format!("pub {}", rust_ty(f)))
                .collect();
            let _ = writeln!(src, "    pub struct N{i}({});\n", types.join(", "));
        } else {
            let _ = writeln!(src, "    pub struct N{i} {{");
            for (k, f) in fields.iter().enumerate() {
                let _ = writeln!(src, "        pub a{k}: {},", rust_ty(f));
            }
            src.push_str("    }\n\n");
        }
        g.nested.push(Nested { fields, tuple });
    }

    for h in 0..g.rng.below(3) as usize {
        let n = 1 + g.rng.below(3) as usize;
        let params: Vec<GTy> = (0..n).map(|_| g.field_ty(true)).collect();
        let ret = *g.rng.pick(&FIELD_SCALARS);
        g.ret = GTy::S(ret);
        g.scope.clear();
        g.locals = 0;
        let mut sig = Vec::new();
        for (k, p) in params.iter().enumerate() {
            let mutable = g.rng.chance(20);
            let m = if mutable { "mut " } else { "" };
            sig.push(format!("{m}q{k}: {}", rust_ty(p)));
            g.scope.push(Place {
                path: format!("q{k}"),
                ty: p.clone(),
                mutable,
                range: None,
            });
        }
        let mut body = String::new();
        g.stmts(&mut body, 2, 2);
        let value = g.expr(ret, 3);
        let _ = writeln!(
            src,
            "    #[device_fn]\n    pub fn h{h}({}) -> {} {{\n{body}        {value}\n    }}\n",
            sig.join(", "),
            ret.rust()
        );
        g.helpers.push(Helper { params, ret });
    }

    let n = 1 + g.rng.below(5) as usize;
    g.fields = (0..n).map(|_| g.field_ty(true)).collect();
    let fields = g.fields.clone();
    g.scope.clear();
    g.locals = 0;
    g.ret = GTy::N(usize::MAX);
    let identity = g.literal_of(&GTy::N(usize::MAX));
    for p in ["l", "r"] {
        g.scope.push(Place {
            path: p.to_owned(),
            ty: GTy::N(usize::MAX),
            mutable: false,
            range: None,
        });
    }
    let mut body = String::new();
    let out = g.rng.chance(60);
    if out {
        let from = if g.rng.chance(50) { "l" } else { "r" };
        let _ = writeln!(body, "            let mut out = {from};");
        g.scope.push(Place {
            path: "out".into(),
            ty: GTy::N(usize::MAX),
            mutable: true,
            range: None,
        });
    }
    for _ in 0..g.rng.below(6) {
        g.stmt(&mut body, 3, 3);
    }
    let value = if out && g.rng.chance(50) {
        "out".to_owned()
    } else {
        g.literal_struct_expr()
    };
    let _ = writeln!(
        src,
        "    #[derive(Clone, Copy, Debug, Monoid)]\n    #[repr(C)]\n    #[monoid(\n        identity = {identity},\n        combine = |l, r| {{\n{body}            {value}\n        }}\n    )]\n    pub struct S {{"
    );
    for (k, f) in fields.iter().enumerate() {
        let _ = writeln!(src, "        pub f{k}: {},", rust_ty(f));
    }
    src.push_str("    }\n}\n");

    let mut out_leaves = Vec::new();
    struct_leaves(&g.nested, &fields, 0, &mut out_leaves);
    let (size, _) = struct_layout(&g.nested, &fields);
    Program {
        index,
        source: src,
        leaves: out_leaves,
        size,
    }
}

const INT_BINOPS: [&str; 10] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"];
const INT_METHODS: [&str; 7] = [
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_div",
    "wrapping_rem",
    "min",
    "max",
];

impl Gen<'_> {
    fn field_ty(&mut self, nested_ok: bool) -> GTy {
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
    fn fields_of(&self, i: usize) -> Vec<GTy> {
        if i == usize::MAX {
            self.fields.clone()
        } else {
            self.nested[i].fields.clone()
        }
    }

    fn field_name(&self, i: usize, k: usize) -> String {
        if i == usize::MAX {
            format!("f{k}")
        } else if self.nested[i].tuple {
            format!("{k}")
        } else {
            format!("a{k}")
        }
    }

    /// A struct value from field values: `N0 { a0: x, a1: y }` or `N0(x, y)`.
    fn struct_value(&mut self, i: usize, values: Vec<String>) -> String {
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

    fn struct_name(i: usize) -> String {
        if i == usize::MAX {
            "S".into()
        } else {
            format!("N{i}")
        }
    }

    /// Every place of scalar type `want` reachable from the scope with constant indices, and
    /// the arrays of element type `want` (for run-time indexing).
    fn places(&self, want: Sc) -> (Vec<Place>, Vec<(Place, usize)>) {
        let mut scalars = Vec::new();
        let mut arrays = Vec::new();
        for p in &self.scope {
            self.walk(p.clone(), want, &mut scalars, &mut arrays, 0);
        }
        (scalars, arrays)
    }

    fn walk(
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

    fn literal(&mut self, s: Sc) -> String {
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
    fn literal_of(&mut self, ty: &GTy) -> String {
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
    fn value_of(&mut self, ty: &GTy, depth: usize) -> String {
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

    fn literal_struct_expr(&mut self) -> String {
        self.value_of(&GTy::N(usize::MAX), 3)
    }

    fn all_places(&self, p: Place, depth: usize) -> Vec<Place> {
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
    fn index(&mut self, n: usize, depth: usize) -> String {
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
    fn expr(&mut self, s: Sc, depth: usize) -> String {
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

    fn fresh(&mut self) -> String {
        self.locals += 1;
        format!("v{}", self.locals)
    }

    fn leaf(&mut self, s: Sc, depth: usize) -> String {
        let (places, _) = self.places(s);
        if !places.is_empty() && self.rng.chance(75) {
            return self.rng.pick(&places).path.clone();
        }
        if s == Sc::Bool && depth > 0 && self.rng.chance(50) {
            return self.compare(depth - 1);
        }
        self.literal(s)
    }

    fn compare(&mut self, d: usize) -> String {
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

    fn binary(&mut self, s: Sc, d: usize) -> String {
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
                        // never zero; MIN / -1 panics in Rust (skipped by the comparison)
                        let b = self.expr(s, d);
                        format!("({a} {op} ({b} | 1))")
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

    fn cast(&mut self, s: Sc, d: usize) -> String {
        if s == Sc::Bool {
            return self.compare(d);
        }
        let from = *self.rng.pick(&FIELD_SCALARS);
        if from == Sc::Bool && s.is_float() {
            return format!("(({}) as u8 as {})", self.expr(Sc::Bool, d), s.rust());
        }
        format!("(({}) as {})", self.expr(from, d), s.rust())
    }

    fn method(&mut self, s: Sc, d: usize) -> String {
        match s {
            Sc::Bool => {
                let f = *self.rng.pick(&[Sc::F32, Sc::F64]);
                format!("({}).is_nan()", self.expr(f, d))
            }
            _ if s.is_float() => {
                let a = self.expr(s, d);
                match self.rng.below(3) {
                    0 => format!("({a}).sqrt()"),
                    1 => format!("({a}).abs()"),
                    _ => {
                        let b = self.expr(s, d);
                        let c = self.expr(s, d);
                        format!("({a}).mul_add({b}, {c})")
                    }
                }
            }
            _ => {
                let a = self.expr(s, d);
                match self.rng.below(6) {
                    0 | 1 => {
                        let m = *self.rng.pick(&INT_METHODS);
                        let b = self.expr(s, d);
                        let b = if m.ends_with("div") || m.ends_with("rem") {
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
                        ]);
                        let b = self.expr(Sc::U32, d);
                        format!("({a}).{m}({b})")
                    }
                    3 => format!("({a}).wrapping_neg()"),
                    4 if s.is_signed() => format!("({a}).abs()"),
                    _ => {
                        let b = self.expr(s, d);
                        format!("{}::max({a}, {b})", s.rust())
                    }
                }
            }
        }
    }

    fn unary(&mut self, s: Sc, d: usize) -> String {
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

    fn match_expr(&mut self, s: Sc, d: usize) -> String {
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

    fn pattern(&mut self, t: Sc) -> String {
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

    fn call(&mut self, s: Sc, d: usize) -> Option<String> {
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

    fn dyn_index(&mut self, s: Sc, d: usize) -> Option<String> {
        let (_, arrays) = self.places(s);
        if arrays.is_empty() {
            return None;
        }
        let (p, n) = self.rng.pick(&arrays).clone();
        let i = self.index(n, d);
        Some(format!("{}[{i}]", p.path))
    }

    /// Statements into `out`, at indentation `indent` (levels of 4 spaces), nesting `depth`.
    fn stmts(&mut self, out: &mut String, indent: usize, depth: usize) {
        let n = self.rng.below(if depth == 0 { 3 } else { 5 });
        let mark = self.scope.len();
        for _ in 0..n {
            self.stmt(out, indent, depth);
        }
        self.scope.truncate(mark);
    }

    fn stmt(&mut self, out: &mut String, indent: usize, depth: usize) {
        let pad = "    ".repeat(indent);
        let r = self.rng.below(100);
        match r {
            0..=29 => {
                let t = *self.rng.pick(&FIELD_SCALARS);
                let v = self.fresh();
                let mutable = self.rng.chance(60);
                let value = self.expr(t, 3);
                let m = if mutable { "mut " } else { "" };
                let _ = writeln!(out, "{pad}let {m}{v}: {} = {value};", t.rust());
                self.scope.push(Place {
                    path: v,
                    ty: GTy::S(t),
                    mutable,
                    range: None,
                });
            }
            30..=59 => self.assign(out, &pad),
            60..=71 if depth > 0 => {
                let c = self.expr(Sc::Bool, 2);
                let _ = writeln!(out, "{pad}if {c} {{");
                self.loop_exit(out, indent + 1);
                self.stmts(out, indent + 1, depth - 1);
                if self.rng.chance(40) {
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.stmts(out, indent + 1, depth - 1);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            72..=85 if depth > 0 => {
                let v = self.fresh();
                let (head, range) = match self.rng.below(6) {
                    0 => {
                        let lo = 250 + self.rng.below(6);
                        (format!("for {v} in {lo}u8..=255 {{"), None)
                    }
                    1 => {
                        let hi = self.rng.below(4);
                        (format!("for {v} in 0..={hi} {{"), Some(hi as usize + 1))
                    }
                    _ => {
                        let hi = 1 + self.rng.below(4);
                        (format!("for {v} in 0..{hi} {{"), Some(hi as usize))
                    }
                };
                let ty = if range.is_some() {
                    GTy::S(Sc::Usize)
                } else {
                    GTy::S(Sc::U8)
                };
                let _ = writeln!(out, "{pad}{head}");
                self.scope.push(Place {
                    path: v.clone(),
                    ty,
                    mutable: false,
                    range,
                });
                self.loops += 1;
                self.loop_exit(out, indent + 1);
                self.stmts(out, indent + 1, depth - 1);
                self.loops -= 1;
                self.scope.pop();
                let _ = writeln!(out, "{pad}}}");
            }
            86..=89 if depth > 0 => {
                // `for x in array`
                let arrays: Vec<Place> = self
                    .scope
                    .iter()
                    .flat_map(|p| self.all_places(p.clone(), 0))
                    .filter(|p| matches!(p.ty, GTy::Arr(..)))
                    .collect();
                if arrays.is_empty() {
                    return;
                }
                let a = self.rng.pick(&arrays).clone();
                let GTy::Arr(elem, _) = a.ty.clone() else {
                    unreachable!()
                };
                let v = self.fresh();
                let _ = writeln!(out, "{pad}for {v} in {} {{", a.path);
                self.scope.push(Place {
                    path: v,
                    ty: *elem,
                    mutable: false,
                    range: None,
                });
                self.loops += 1;
                self.loop_exit(out, indent + 1);
                self.stmts(out, indent + 1, depth - 1);
                self.loops -= 1;
                self.scope.pop();
                let _ = writeln!(out, "{pad}}}");
            }
            90..=92 => {
                // an early `return`, under a condition
                let c = self.expr(Sc::Bool, 2);
                let ret = self.ret.clone();
                let v = self.value_of(&ret, 2);
                let _ = writeln!(out, "{pad}if {c} {{\n{pad}    return {v};\n{pad}}}");
            }
            93..=99 if depth > 0 => {
                let t = *self.rng.pick(&[Sc::U8, Sc::I16, Sc::U32, Sc::I32, Sc::U64]);
                let e = self.expr(t, 2);
                let _ = writeln!(out, "{pad}match {e} {{");
                for _ in 0..1 + self.rng.below(3) {
                    let pat = self.pattern(t);
                    let _ = writeln!(out, "{pad}    {pat} => {{");
                    self.stmts(out, indent + 2, depth - 1);
                    let _ = writeln!(out, "{pad}    }}");
                }
                let _ = writeln!(out, "{pad}    _ => {{");
                self.stmts(out, indent + 2, depth - 1);
                let _ = writeln!(out, "{pad}    }}");
                let _ = writeln!(out, "{pad}}}");
            }
            _ => self.assign(out, &pad),
        }
    }

    /// Sometimes, inside a loop: `if c { break; }` or `continue`.
    fn loop_exit(&mut self, out: &mut String, indent: usize) {
        if self.loops > 0 && self.rng.chance(20) {
            let pad = "    ".repeat(indent);
            let c = self.expr(Sc::Bool, 2);
            let kw = if self.rng.chance(50) {
                "break"
            } else {
                "continue"
            };
            let _ = writeln!(out, "{pad}if {c} {{\n{pad}    {kw};\n{pad}}}");
        }
    }

    fn assign(&mut self, out: &mut String, pad: &str) {
        let targets: Vec<Place> = self
            .scope
            .iter()
            .filter(|p| p.mutable)
            .flat_map(|p| self.all_places(p.clone(), 0))
            .collect();
        if targets.is_empty() {
            return;
        }
        let target = self.rng.pick(&targets).clone();
        // An element by a run-time index, sometimes.
        if let GTy::Arr(e, n) = &target.ty {
            if let GTy::S(s) = **e {
                if self.rng.chance(50) {
                    let i = self.index(*n, 2);
                    let (op, v) = self.compound(s);
                    let _ = writeln!(out, "{pad}{}[{i}] {op}= {v};", target.path);
                    return;
                }
            }
        }
        match target.ty.clone() {
            GTy::S(s) => {
                let (op, v) = self.compound(s);
                let _ = writeln!(out, "{pad}{} {op}= {v};", target.path);
            }
            ty => {
                let v = self.value_of(&ty, 2);
                let _ = writeln!(out, "{pad}{} = {v};", target.path);
            }
        }
    }

    /// A compound operator for type `s` ("" for plain assignment) and its right-hand side.
    fn compound(&mut self, s: Sc) -> (&'static str, String) {
        let op = if self.rng.chance(40) {
            ""
        } else {
            match s {
                Sc::Bool => *self.rng.pick(&["&", "|", "^"]),
                _ if s.is_float() => *self.rng.pick(&["+", "-", "*", "/", "%"]),
                _ => *self
                    .rng
                    .pick(&["+", "-", "*", "&", "|", "^", "<<", ">>", "/", "%"]),
            }
        };
        let v = match op {
            "/" | "%" if s.is_int() => format!("({} | 1)", self.expr(s, 3)),
            "<<" | ">>" => {
                let t = *self.rng.pick(&[Sc::U8, Sc::I32, Sc::U64]);
                self.expr(t, 3)
            }
            _ => self.expr(s, 3),
        };
        (op, v)
    }
}
