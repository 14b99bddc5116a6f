//! Emission of statements and function bodies.

use super::{has_named_len, int_lit, made, Emitter};
use crate::check::{Arm, Kind, PatTest, TExpr, TStmt, T};
use crate::types::{Len, Scalar, Ty};
use std::fmt::Write as _;

/// Whether an expression reads better as C++ statements (`if (...) { ... } else { ... }`) than
/// as an expression: a block with statements, a `match`, an `if` with such branches.
fn statement_like(e: &TExpr) -> bool {
    match &e.kind {
        Kind::Block(..) | Kind::Match(..) => true,
        Kind::If(_, a, b) => statement_like(a) || statement_like(b),
        _ => false,
    }
}

/// A place or a literal: cheap and pure to repeat (a scrutinee or an array to loop over).
fn repeatable(e: &TExpr) -> bool {
    match &e.kind {
        Kind::Var(_) | Kind::Int(_) | Kind::Bool(_) => true,
        Kind::Field(b, _) | Kind::Index(b, _) => repeatable(b),
        _ => false,
    }
}

impl Emitter<'_> {
    /// Statements computing `e` and returning it, at indentation level `indent`.
    pub fn body(&self, e: &TExpr, indent: usize, out: &mut String) {
        let pad = "    ".repeat(indent);
        match &e.kind {
            Kind::Block(stmts, tail) => {
                for s in stmts {
                    self.stmt(s, indent, out);
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
            Kind::Match(scrutinee, arms) => {
                let complete =
                    self.match_chain(scrutinee, arms, indent, out, &mut |body, indent, out| {
                        self.body(body, indent, out)
                    });
                if !complete {
                    // Unreachable (rustc checks that the arms are exhaustive): a value for C++.
                    let last = &arms.last().expect("a match has arms").body;
                    self.body(last, indent, out);
                }
            }
            _ => {
                self.indent.set(indent);
                let line = format!("{pad}return {};", self.init(e));
                match &e.kind {
                    Kind::Struct(name, vals) if line.len() > 100 => {
                        let def = self.world.strukt(name);
                        let _ = writeln!(out, "{pad}return {name}{{");
                        for (v, f) in vals.iter().zip(&def.fields) {
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

    /// Whether a statement is a `let` of a plain expression (fits on one line in a lambda).
    pub(super) fn is_simple_let(&self, s: &TStmt) -> bool {
        matches!(s, TStmt::Let { value: Some(v), .. } if !statement_like(v) && !self.init(v).contains('\n'))
    }

    pub fn stmt(&self, s: &TStmt, indent: usize, out: &mut String) {
        let pad = "    ".repeat(indent);
        self.indent.set(indent);
        match s {
            TStmt::Let {
                cuda,
                ty,
                mutable,
                value,
            } => {
                let constness = if *mutable { "" } else { "const " };
                // An array whose length a constant names takes its value's type: the constant
                // was written where the array's type was (a helper struct's module, say), and
                // may mean another value at this monoid's site. (An array literal is written
                // here, where its constants are this site's, and prints as a brace list, which
                // `auto` cannot take.)
                let cty = match value.as_ref().is_some_and(takes_auto) && has_named_len(ty) {
                    true => "auto".to_owned(),
                    false => self.cty(ty),
                };
                let decl = format!("{cty} {cuda}");
                match value {
                    None => {
                        let _ = writeln!(out, "{pad}{decl};");
                    }
                    Some(v) if statement_like(v) => {
                        // A nested block: an immediately invoked lambda, laid out as statements.
                        let head = self.lambda_head(ty);
                        let _ = writeln!(out, "{pad}{constness}{decl} = {head}{{");
                        self.body(v, indent + 1, out);
                        let _ = writeln!(out, "{pad}}}();");
                    }
                    Some(v) => {
                        let value = self.init_lines(v, indent);
                        let _ = writeln!(out, "{pad}{constness}{decl} = {value};");
                    }
                }
            }
            TStmt::Assign { place, op, value } => {
                let p = self.expr(place, true);
                let line = match op {
                    None => format!("{p} = {};", self.init(value)),
                    Some(op) => {
                        let full = self.binary(*op, place, value, true);
                        let plain = format!(
                            "{} {} {}",
                            self.expr(place, false),
                            op.c(),
                            self.expr(value, false)
                        );
                        if full == plain {
                            format!("{p} {}= {};", op.c(), self.expr(value, true))
                        } else {
                            format!("{p} = {full};")
                        }
                    }
                };
                let _ = writeln!(out, "{pad}{line}");
            }
            TStmt::If { cond, then, els } => {
                let _ = writeln!(out, "{pad}if ({}) {{", self.expr(cond, true));
                self.stmts(then, indent + 1, out);
                match els.as_deref() {
                    None => {
                        let _ = writeln!(out, "{pad}}}");
                    }
                    Some([nested @ TStmt::If { .. }]) => {
                        let mut inner = String::new();
                        self.stmt(nested, indent, &mut inner);
                        let _ = write!(out, "{pad}}} else {}", inner.trim_start());
                    }
                    Some(els) => {
                        let _ = writeln!(out, "{pad}}} else {{");
                        self.stmts(els, indent + 1, out);
                        let _ = writeln!(out, "{pad}}}");
                    }
                }
            }
            TStmt::Match { scrutinee, arms } => {
                self.match_chain(scrutinee, arms, indent, out, &mut |body, indent, out| {
                    self.stmts(body, indent, out)
                });
            }
            TStmt::For {
                var,
                ty,
                lo,
                hi,
                inclusive,
                body,
            } => self.for_range(var.as_deref(), *ty, lo, hi, *inclusive, body, indent, out),
            TStmt::ForEach {
                var,
                index,
                array,
                len,
                body,
            } => {
                let T::Known(Ty::Array(elem, _)) = &array.ty else {
                    unreachable!()
                };
                // Rust iterates over a copy of the array: the body may assign to the original.
                // A length a constant names is the copy's own (see `TStmt::Let`).
                let named = takes_auto(array) && has_named_len(array.known());
                let source = self.temp("a");
                let _ = writeln!(
                    out,
                    "{pad}const {} {source} = {};",
                    if named {
                        "auto".to_owned()
                    } else {
                        self.cty(array.known())
                    },
                    self.init(array)
                );
                let n = match (named, len) {
                    (true, Len::Sym(_)) => format!("{source}.size()"),
                    _ => self.len(len),
                };
                let _ = writeln!(
                    out,
                    "{pad}for (unsigned long long {index} = 0; {index} < {n}; ++{index}) {{"
                );
                if let Some(var) = var {
                    let _ = writeln!(
                        out,
                        "{pad}    const {} {var} = {source}[{index}];",
                        if has_named_len(elem) {
                            "auto".to_owned()
                        } else {
                            self.cty(elem)
                        }
                    );
                }
                self.stmts(body, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            TStmt::Block(stmts) => {
                let _ = writeln!(out, "{pad}{{");
                self.stmts(stmts, indent + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            TStmt::Break => {
                let _ = writeln!(out, "{pad}break;");
            }
            TStmt::Continue => {
                let _ = writeln!(out, "{pad}continue;");
            }
            TStmt::Return(e) => {
                let _ = writeln!(out, "{pad}return {};", self.init(e));
            }
        }
    }

    pub fn stmts(&self, stmts: &[TStmt], indent: usize, out: &mut String) {
        for s in stmts {
            self.stmt(s, indent, out);
        }
    }

    /// `for v in lo..hi` / `lo..=hi`. An inclusive range up to the type's MAX never overflows
    /// the counter: the loop stops before incrementing past `hi`.
    #[allow(clippy::too_many_arguments)]
    fn for_range(
        &self,
        var: Option<&str>,
        ty: Scalar,
        lo: &TExpr,
        hi: &TExpr,
        inclusive: bool,
        body: &[TStmt],
        indent: usize,
        out: &mut String,
    ) {
        let pad = "    ".repeat(indent);
        let temp;
        let v = match var {
            Some(v) => v,
            None => {
                temp = self.temp("k");
                &temp
            }
        };
        let c = ty.c();
        let lo_text = self.expr(lo, true);
        let hi_text = self.expr(hi, false);
        let (head, outer) = match (&hi.kind, inclusive) {
            (_, false) => (
                format!("for ({c} {v} = {lo_text}; {v} < {hi_text}; ++{v})"),
                false,
            ),
            (Kind::Int(h), true) if *h < ty.int_range().1 => {
                let end = int_lit(h + 1, ty);
                (
                    format!("for ({c} {v} = {lo_text}; {v} < {end}; ++{v})"),
                    false,
                )
            }
            _ => {
                let go = self.temp("go");
                let _ = writeln!(out, "{pad}{{");
                let _ = writeln!(out, "{pad}{c} {v} = {lo_text};");
                (
                    format!(
                        "for (bool {go} = {v} <= {hi_text}; {go}; \
                         {go} = {v} != {hi_text} && (++{v}, true))"
                    ),
                    true,
                )
            }
        };
        let _ = writeln!(out, "{pad}{head} {{");
        self.stmts(body, indent + 1, out);
        let _ = writeln!(out, "{pad}}}");
        if outer {
            let _ = writeln!(out, "{pad}}}");
        }
    }

    /// The `if` chain of a `match`: the scrutinee once in a temporary, bindings declared up
    /// front (a binding is the scrutinee's value), one branch per arm. An arm that matches
    /// everything, or the last arm without a guard, is the final `else` (rustc checks that the
    /// arms are exhaustive). Returns whether the chain ends with such an arm.
    fn match_chain<B>(
        &self,
        scrutinee: &TExpr,
        arms: &[Arm<B>],
        indent: usize,
        out: &mut String,
        body: &mut dyn FnMut(&B, usize, &mut String),
    ) -> bool {
        let pad = "    ".repeat(indent);
        let s = scrutinee.scalar();
        let value = if repeatable(scrutinee) {
            self.expr(scrutinee, false)
        } else {
            let temp = self.temp("m");
            let _ = writeln!(
                out,
                "{pad}const {} {temp} = {};",
                s.c(),
                self.expr(scrutinee, true)
            );
            temp
        };
        for arm in arms {
            if let Some(b) = &arm.binding {
                let _ = writeln!(out, "{pad}const {} {b} = {value};", s.c());
            }
        }
        for (i, arm) in arms.iter().enumerate() {
            let test = self.arm_test(&value, s, &arm.tests);
            let cond = match (&arm.guard, test) {
                (None, None) => None,
                (Some(g), None) => Some(self.expr(g, true)),
                (None, Some(t)) => Some(t),
                (Some(g), Some(t)) => Some(format!("({t}) && {}", self.expr(g, false))),
            };
            let last = i + 1 == arms.len();
            let unconditional = cond.is_none() || (last && arm.guard.is_none());
            let head = match (i, unconditional) {
                (0, true) => format!("{pad}{{"),
                (0, false) => format!("{pad}if ({}) {{", cond.unwrap_or_default()),
                (_, true) => format!("{pad}}} else {{"),
                (_, false) => format!("{pad}}} else if ({}) {{", cond.unwrap_or_default()),
            };
            let _ = writeln!(out, "{head}");
            body(&arm.body, indent + 1, out);
            if unconditional {
                let _ = writeln!(out, "{pad}}}");
                return true;
            }
        }
        let _ = writeln!(out, "{pad}}}");
        false
    }

    /// The condition of one arm's alternatives, or `None` when it matches everything.
    fn arm_test(&self, value: &str, s: Scalar, tests: &[PatTest]) -> Option<String> {
        let lit = |v: i128| {
            if s == Scalar::Bool {
                (v != 0).to_string()
            } else {
                int_lit(v, s)
            }
        };
        let mut parts = Vec::new();
        for t in tests {
            match t {
                PatTest::Any => return None,
                PatTest::Eq(v) => parts.push(format!("{value} == {}", lit(*v))),
                PatTest::Range(lo, hi) => {
                    let mut p = Vec::new();
                    if let Some(lo) = lo {
                        p.push(format!("{value} >= {}", lit(*lo)));
                    }
                    if let Some(hi) = hi {
                        p.push(format!("{value} <= {}", lit(*hi)));
                    }
                    if p.is_empty() {
                        return None;
                    }
                    parts.push(p.join(" && "));
                }
            }
        }
        Some(if parts.len() == 1 {
            parts.remove(0)
        } else {
            parts
                .iter()
                .map(|p| format!("({p})"))
                .collect::<Vec<_>>()
                .join(" || ")
        })
    }
}

/// Whether a declaration of `value` may take its type with `auto`: not an array literal that
/// prints as a brace list.
fn takes_auto(value: &TExpr) -> bool {
    !matches!(value.kind, Kind::Array(_)) || made(value)
}
