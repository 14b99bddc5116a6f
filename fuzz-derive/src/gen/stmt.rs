//! Generating statements: `let`, assignments and compound assignments, `if`, `for` (ranges,
//! arrays, with `break`/`continue`), `match` and early `return`s.

use super::{GTy, Gen, Place, Sc, FIELD_SCALARS};
use std::fmt::Write as _;

impl Gen<'_> {
    /// Statements into `out`, at indentation `indent` (levels of 4 spaces), nesting `depth`.
    pub(super) fn stmts(&mut self, out: &mut String, indent: usize, depth: usize) {
        let n = self.rng.below(if depth == 0 { 3 } else { 5 });
        let mark = self.scope.len();
        for _ in 0..n {
            self.stmt(out, indent, depth);
        }
        self.scope.truncate(mark);
    }

    pub(super) fn stmt(&mut self, out: &mut String, indent: usize, depth: usize) {
        let pad = "    ".repeat(indent);
        let r = self.rng.below(100);
        match r {
            0..=24 => {
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
            25..=29 => {
                // a tuple let of two fresh names
                let (t, u) = (
                    *self.rng.pick(&FIELD_SCALARS),
                    *self.rng.pick(&FIELD_SCALARS),
                );
                let (x, y) = (self.expr(t, 3), self.expr(u, 3));
                let (v, w) = (self.fresh(), self.fresh());
                let m = if self.rng.chance(50) { "mut " } else { "" };
                let _ = writeln!(
                    out,
                    "{pad}let ({m}{v}, {w}): ({}, {}) = ({x}, {y});",
                    t.rust(),
                    u.rust()
                );
                for (path, ty, mutable) in [(v, t, !m.is_empty()), (w, u, false)] {
                    self.scope.push(Place {
                        path,
                        ty: GTy::S(ty),
                        mutable,
                        range: None,
                    });
                }
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
    pub(super) fn loop_exit(&mut self, out: &mut String, indent: usize) {
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

    pub(super) fn assign(&mut self, out: &mut String, pad: &str) {
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
    pub(super) fn compound(&mut self, s: Sc) -> (&'static str, String) {
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
