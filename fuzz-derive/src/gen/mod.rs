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

mod expr;
mod stmt;

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
