//! The CUDA text of each generated item: struct definitions with their layout checks, the
//! monoid's `M`, `m_identity`, `m_combine` and `m_lift`, and `#[device_fn]` functions. Each
//! body is type-checked (`check`) and printed (`emit`) here.

use crate::ast::{Closure, Param};
use crate::check::{Checker, Uses};
use crate::emit::{Emitter, Hole, Holes};
use crate::tokens::unraw;
use crate::types::{StructDef, Ty, World};
use std::fmt::Write as _;
use syn::{Expr, Result};

/// A text with holes (`\u{1}INDEX\u{2}` markers), and what its code needs.
pub struct Text {
    pub text: String,
    pub holes: Vec<Hole>,
    pub uses: Uses,
}

/// The definition of a struct, with `static_assert`s that the CUDA layout equals the Rust one
/// (the numbers are holes: `size_of`, `align_of`, `offset_of!` in the user's crate).
pub fn struct_def(world: &World, def: &StructDef) -> Text {
    let holes = Holes::default();
    let emit = Emitter::new(world, &holes);
    let name = &def.name;
    let mut text = String::new();
    let align = match def.align {
        Some(a) => format!("alignas({a}) "),
        None => String::new(),
    };
    let _ = writeln!(text, "struct {align}{name} {{");
    for f in &def.fields {
        let _ = writeln!(text, "    {} {};", emit.cty(&f.ty), f.cuda_name);
    }
    text.push_str("};\n");
    let _ = writeln!(
        text,
        "static_assert(sizeof({name}) == {}, \"{name}: CUDA size differs from Rust size_of\");",
        holes.mark(Hole::SizeOf)
    );
    let _ = writeln!(
        text,
        "static_assert(alignof({name}) == {}, \"{name}: CUDA alignment differs from Rust \
         align_of\");",
        holes.mark(Hole::AlignOf)
    );
    // The first field is at offset 0 in both languages: no check needed.
    for f in def.fields.iter().skip(1) {
        let _ = writeln!(
            text,
            "static_assert(r_offsetof({name}, {}) == {}, \"{name}.{}: CUDA offset differs from \
             Rust offset_of\");",
            f.cuda_name,
            holes.mark(Hole::OffsetOf(f.rust_name.clone())),
            f.rust_name
        );
    }
    Text {
        text,
        holes: holes.into_vec(),
        uses: Uses::default(),
    }
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
        // Spaces and tabs only: other whitespace is not one byte (a slice inside it panics).
        .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
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

/// Binds the closure parameters under fixed C++ names (`l`, `r`; `x`, `i`).
fn bind_params(checker: &mut Checker, closure: &Closure, cuda: [&str; 2], tys: [Ty; 2]) {
    for ((param, _), (cuda, ty)) in closure.params.iter().zip(cuda.into_iter().zip(tys)) {
        if let Param::Named { ident, mutable } = param {
            checker.param(unraw(ident), cuda.to_owned(), ty, *mutable);
        }
    }
}

/// Checks the closure parameters' written types against the expected ones.
fn check_param_types(world: &World, closure: &Closure, tys: &[Ty; 2]) -> Result<()> {
    for ((_, written), want) in closure.params.iter().zip(tys) {
        if let Some(t) = written {
            let have = world.ty(t, false)?;
            if have != *want {
                return Err(syn::Error::new_spanned(
                    t,
                    format!("this parameter has the type `{}`", want.rust()),
                ));
            }
        }
    }
    Ok(())
}

/// A function body: type-checked, then printed as statements ending in `return`.
fn body_text(checker: Checker, e: &Expr, world: &World) -> Result<Text> {
    let mut checker = checker;
    let t = checker.body(e)?;
    let holes = Holes::default();
    let mut out = String::new();
    Emitter::new(world, &holes).body(&t, 1, &mut out);
    Ok(Text {
        text: out,
        holes: holes.into_vec(),
        uses: checker.uses,
    })
}

/// What the monoid's section is made of.
pub struct MonoidParts<'i> {
    pub world: &'i World,
    pub name: &'i str,
    pub const_params: &'i [String],
    pub commutative: bool,
    pub identity: &'i Expr,
    pub combine: Option<&'i Closure>,
    /// `cuda = "..."`: the hand-written body of `m_combine`.
    pub hand_written: Option<String>,
}

/// The monoid's section: a header comment (first), and after the definitions of the structs
/// and helpers, `typedef NAME M;`, `m_identity`, `m_combine`.
pub fn monoid(parts: &MonoidParts) -> Result<(Text, Text)> {
    let world = parts.world;
    let self_ty = Ty::Struct(parts.name.to_owned());
    let identity = body_text(
        Checker::new(world, self_ty.clone(), None),
        parts.identity,
        world,
    )?;
    let combine = match (&parts.hand_written, parts.combine) {
        (Some(text), _) => Text {
            text: format!(
                "    // hand-written: #[monoid(cuda = \"...\")]\n{}",
                indent_user_text(text)
            ),
            holes: Vec::new(),
            uses: Uses::default(),
        },
        (None, Some(c)) => {
            let tys = [self_ty.clone(), self_ty.clone()];
            check_param_types(world, c, &tys)?;
            let mut checker = Checker::new(world, self_ty, None);
            bind_params(&mut checker, c, ["l", "r"], tys);
            body_text(checker, &c.body, world)?
        }
        (None, None) => unreachable!("checked: combine is present"),
    };
    let name = parts.name;
    let mut text = String::new();
    let commutative = if parts.commutative {
        " (commutative)"
    } else {
        ""
    };
    let holes = Holes::default();
    let params = if parts.const_params.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = parts
            .const_params
            .iter()
            .map(|p| format!("{p} = {}", holes.mark(Hole::Sym(p.clone()))))
            .collect();
        format!(" ({})", list.join(", "))
    };
    let _ = writeln!(
        text,
        "// monoid {name}{params}{commutative}, generated by #[derive(Monoid)]"
    );
    let header = Text {
        text,
        holes: holes.into_vec(),
        uses: Uses::default(),
    };
    let typedef = Text {
        text: format!("typedef {name} M;\n"),
        holes: Vec::new(),
        uses: Uses::default(),
    };
    let identity = Text {
        text: function("M m_identity()", &identity.text, true),
        ..identity
    };
    let combine = Text {
        text: function("M m_combine(M l, M r)", &combine.text, false),
        ..combine
    };
    Ok((header, concat(concat(typedef, identity), combine)))
}

/// `typedef X r_in;` and `m_lift(x, i)`, which builds a monoid value from an input item and
/// its global index.
pub fn lift(world: &World, name: &str, input: &Ty, closure: &Closure) -> Result<Text> {
    let tys = [input.clone(), Ty::Scalar(crate::types::Scalar::U64)];
    check_param_types(world, closure, &tys)?;
    let mut checker = Checker::new(world, Ty::Struct(name.to_owned()), None);
    bind_params(&mut checker, closure, ["x", "i"], tys);
    let body = body_text(checker, &closure.body, world)?;
    let holes = Holes::default();
    let input_c = Emitter::new(world, &holes).cty(input);
    let head = Text {
        text: format!("typedef {input_c} r_in;\n"),
        holes: holes.into_vec(),
        uses: Uses::default(),
    };
    let body = Text {
        text: function("M m_lift(r_in x, unsigned long long i)", &body.text, true),
        ..body
    };
    Ok(concat(head, body))
}

/// A `#[device_fn]`: `__device__ inline RET fn_NAME(PARAMS) { BODY }`.
pub fn device_fn(
    world: &World,
    name: &str,
    params: &[(String, Ty, bool)],
    ret: &Ty,
    body: &Expr,
) -> Result<Text> {
    let mut checker = Checker::new(world, ret.clone(), Some(name.to_owned()));
    let holes = Holes::default();
    let emit = Emitter::new(world, &holes);
    let mut sig = Vec::new();
    for (rust, ty, mutable) in params {
        let cuda = format!("v_{rust}");
        let constness = if *mutable { "" } else { "const " };
        sig.push(format!("{constness}{} {cuda}", emit.cty(ty)));
        checker.param(rust.clone(), cuda, ty.clone(), *mutable);
    }
    let head = format!(
        "__device__ inline {} fn_{name}({})",
        emit.cty(ret),
        sig.join(", ")
    );
    let head = Text {
        text: head,
        holes: holes.into_vec(),
        uses: Uses::default(),
    };
    let body = body_text(checker, body, world)?;
    let body = Text {
        text: format!(" {{\n{}}}\n", body.text),
        ..body
    };
    Ok(concat(head, body))
}

/// `a` followed by `b`, with `b`'s holes renumbered after `a`'s.
pub fn concat(a: Text, b: Text) -> Text {
    let mut holes = a.holes;
    let mut text = a.text;
    let mut map = Vec::new();
    for h in b.holes {
        let i = match holes.iter().position(|x| *x == h) {
            Some(i) => i,
            None => {
                holes.push(h);
                holes.len() - 1
            }
        };
        map.push(i);
    }
    let mut rest = b.text.as_str();
    while let Some(start) = rest.find('\u{1}') {
        let end = rest[start..].find('\u{2}').expect("a marker ends") + start;
        let old: usize = rest[start + 1..end]
            .parse()
            .expect("a marker holds an index");
        text.push_str(&rest[..start]);
        let _ = write!(text, "\u{1}{}\u{2}", map[old]);
        rest = &rest[end + 1..];
    }
    text.push_str(rest);
    let mut uses = a.uses;
    uses.merge(b.uses);
    Text { text, holes, uses }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_spaces_and_tabs_are_common_indentation() {
        // A no-break space (two bytes) is text, not indentation: nothing is cut inside it.
        assert_eq!(
            super::indent_user_text("  a\n\u{a0}b"),
            "      a\n    \u{a0}b\n"
        );
        assert_eq!(super::indent_user_text("\t  a\n\t  b"), "    a\n    b\n");
    }
}
