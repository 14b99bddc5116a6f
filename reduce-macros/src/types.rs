//! The types of the translated language: primitive scalars, arrays (of literal or symbolic
//! length), plain-data structs; the signatures of helper functions; and the [`World`] of structs
//! and functions a translation can see.

use std::collections::BTreeMap;
use syn::{Error, Expr, Member, Type};

/// The primitive types a value may have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scalar {
    Bool,
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    U64,
    I64,
    /// Only in expressions (indices, loop counters): never a field (its size depends on the
    /// host). 64 bits on the device, as on every host CUDA supports.
    Usize,
    F32,
    F64,
}

impl Scalar {
    pub const ALL: [Scalar; 12] = [
        Scalar::Bool,
        Scalar::U8,
        Scalar::I8,
        Scalar::U16,
        Scalar::I16,
        Scalar::U32,
        Scalar::I32,
        Scalar::U64,
        Scalar::I64,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
    ];

    pub fn from_rust(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.rust() == name)
    }

    /// The Rust spelling.
    pub fn rust(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U8 => "u8",
            Scalar::I8 => "i8",
            Scalar::U16 => "u16",
            Scalar::I16 => "i16",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
        }
    }

    /// The suffix of the prelude helpers (`r_add_i32`): `usize` uses the `u64` ones.
    pub fn helper(self) -> &'static str {
        match self {
            Scalar::Usize => "u64",
            s => s.rust(),
        }
    }

    /// The CUDA C++ spelling (`char` alone has an implementation-defined sign: never used).
    pub fn c(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::U8 => "unsigned char",
            Scalar::I8 => "signed char",
            Scalar::U16 => "unsigned short",
            Scalar::I16 => "short",
            Scalar::U32 => "unsigned int",
            Scalar::I32 => "int",
            Scalar::U64 | Scalar::Usize => "unsigned long long",
            Scalar::I64 => "long long",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
        }
    }

    /// Size in bytes; equal to the alignment for every scalar on the device.
    pub fn size(self) -> u64 {
        match self {
            Scalar::Bool | Scalar::U8 | Scalar::I8 => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            Scalar::U64 | Scalar::I64 | Scalar::Usize | Scalar::F64 => 8,
        }
    }

    pub fn bits(self) -> u32 {
        self.size() as u32 * 8
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Scalar::Bool | Scalar::F32 | Scalar::F64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        )
    }

    /// The unsigned integer type of the same width (`abs_diff`, `unsigned_abs`).
    pub fn unsigned(self) -> Scalar {
        match self {
            Scalar::I8 => Scalar::U8,
            Scalar::I16 => Scalar::U16,
            Scalar::I32 => Scalar::U32,
            Scalar::I64 => Scalar::U64,
            s => s,
        }
    }

    /// Integers narrower than `int`: C promotes them, so every result is cast back.
    pub fn is_narrow(self) -> bool {
        matches!(self, Scalar::U8 | Scalar::I8 | Scalar::U16 | Scalar::I16)
    }

    /// (MIN, MAX) of an integer type.
    pub fn int_range(self) -> (i128, i128) {
        let bits = self.bits();
        if self.is_signed() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }
}

/// An array length: a literal, or a `usize` constant known when the kernel text is generated (a
/// const generic parameter or a `const` item), by its Rust spelling.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Len {
    Lit(u64),
    Sym(String),
}

impl std::fmt::Display for Len {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Len::Lit(n) => write!(f, "{n}"),
            Len::Sym(s) => f.write_str(s),
        }
    }
}

/// The type of a field, a local or an expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Ty {
    Scalar(Scalar),
    Array(Box<Ty>, Len),
    /// A plain-data struct (the deriving one or a `#[derive(DeviceCopy)]` one), by name.
    Struct(String),
}

impl Ty {
    /// The Rust spelling, for messages.
    pub fn rust(&self) -> String {
        match self {
            Ty::Scalar(s) => s.rust().to_owned(),
            Ty::Array(elem, n) => format!("[{}; {n}]", elem.rust()),
            Ty::Struct(name) => name.clone(),
        }
    }

    /// Whether a struct type occurs in this type.
    pub fn mentions_struct(&self) -> bool {
        match self {
            Ty::Scalar(_) => false,
            Ty::Array(elem, _) => elem.mentions_struct(),
            Ty::Struct(_) => true,
        }
    }
}

/// A field of a struct the translation knows.
#[derive(Clone, Debug)]
pub struct FieldDef {
    /// How Rust names it: `a` or `0`.
    pub member: Member,
    /// The name in messages (`a`, `0`).
    pub rust_name: String,
    /// The CUDA member: the Rust name, or `f0, f1, ...` for tuple structs.
    pub cuda_name: String,
    pub ty: Ty,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Style {
    Named,
    Tuple,
}

/// A `#[repr(C)]` plain-data struct.
#[derive(Clone, Debug)]
pub struct StructDef {
    pub name: String,
    pub style: Style,
    pub fields: Vec<FieldDef>,
    /// `#[repr(C, align(N))]`.
    pub align: Option<u64>,
}

impl StructDef {
    pub fn field(&self, member: &Member) -> Option<usize> {
        match member {
            Member::Named(id) => {
                let name = crate::tokens::unraw(id);
                self.fields.iter().position(
                    |f| matches!(&f.member, Member::Named(m) if crate::tokens::unraw(m) == name),
                )
            }
            Member::Unnamed(i) if self.style == Style::Tuple => {
                Some(i.index as usize).filter(|&i| i < self.fields.len())
            }
            Member::Unnamed(_) => None,
        }
    }
}

/// The signature of a `#[device_fn]` helper.
#[derive(Clone, Debug)]
pub struct FnSig {
    pub name: String,
    pub params: Vec<Ty>,
    pub ret: Ty,
}

/// Everything a translation can name: structs and helper functions, by Rust name.
#[derive(Default, Clone, Debug)]
pub struct World {
    pub structs: BTreeMap<String, StructDef>,
    pub fns: BTreeMap<String, FnSig>,
    /// The struct `Self` means (a monoid's own struct), if any.
    pub self_name: Option<String>,
    /// Const generic parameters in scope (all `usize`).
    pub const_params: Vec<String>,
}

impl World {
    pub fn strukt(&self, name: &str) -> &StructDef {
        &self.structs[name]
    }

    /// Device layout (size, align) of a type, repr(C) rules; `None` when a length is symbolic.
    pub fn layout(&self, ty: &Ty) -> Option<(u64, u64)> {
        match ty {
            Ty::Scalar(s) => Some((s.size(), s.size())),
            Ty::Array(elem, Len::Lit(n)) => {
                let (size, align) = self.layout(elem)?;
                Some((size.checked_mul(*n)?, align))
            }
            Ty::Array(_, Len::Sym(_)) => None,
            Ty::Struct(name) => self.struct_layout(self.structs.get(name)?),
        }
    }

    pub fn struct_layout(&self, def: &StructDef) -> Option<(u64, u64)> {
        let mut size = 0u64;
        let mut align = def.align.unwrap_or(1);
        for f in &def.fields {
            let (s, a) = self.layout(&f.ty)?;
            size = size.div_ceil(a).checked_mul(a)?.checked_add(s)?;
            align = align.max(a);
        }
        Some((size.div_ceil(align).checked_mul(align)?, align))
    }

    /// The error for a path of several segments that ends in the monoid's name (another
    /// module's struct named like it: structs are known by name, so it would be taken for the
    /// monoid), if `path` is one.
    pub fn named_like_self(&self, path: &syn::Path) -> Option<Error> {
        let last = path.segments.last()?;
        let name = crate::tokens::unraw(&last.ident);
        let single = path.segments.len() == 1 && path.leading_colon.is_none();
        (!single && self.self_name.as_deref() == Some(name.as_str())).then(|| {
            Error::new_spanned(
                path,
                format!(
                    "`{}` is named like the monoid `{name}`, and the translation knows structs \
                     by name: write `{name}` or `Self` for the monoid, or rename the other struct",
                    crate::tokens::tokens_to_string(path)
                ),
            )
        })
    }

    /// Parses a type. Struct names must be known; `Self` and the monoid's own name (with its
    /// const parameters) mean [`World::self_name`]. `field`: `usize` is rejected.
    pub fn ty(&self, ty: &Type, field: bool) -> syn::Result<Ty> {
        match ty {
            Type::Paren(p) => self.ty(&p.elem, field),
            Type::Group(g) => self.ty(&g.elem, field),
            Type::Path(p) if p.qself.is_none() => {
                let last = p.path.segments.last().expect("a path has a segment");
                let name = crate::tokens::unraw(&last.ident);
                let single = p.path.segments.len() == 1 && p.path.leading_colon.is_none();
                let plain = p.path.segments.iter().all(|s| s.arguments.is_none());
                if single {
                    if let Some(why) = unsupported_std(&name) {
                        return Err(Error::new_spanned(
                            ty,
                            format!(
                                "unsupported type `{name}`: {why} (the translation takes \
                                 `{name}` for the standard library's; a struct of your own by \
                                 that name needs another)"
                            ),
                        ));
                    }
                }
                if single && plain {
                    if let Some(s) = Scalar::from_rust(&name) {
                        if field && s == Scalar::Usize {
                            return Err(Error::new_spanned(
                                ty,
                                format!("unsupported type `{name}`: {}", USIZE_FIELD),
                            ));
                        }
                        return Ok(Ty::Scalar(s));
                    }
                    if name == "Self" {
                        if let Some(s) = &self.self_name {
                            return Ok(Ty::Struct(s.clone()));
                        }
                    }
                    if let Some(why) = unsupported_primitive(&name) {
                        return Err(Error::new_spanned(
                            ty,
                            format!("unsupported type `{name}`: {why}"),
                        ));
                    }
                }
                if let Some(e) = self.named_like_self(&p.path) {
                    return Err(e);
                }
                if self.structs.contains_key(&name) && self.struct_args_ok(&name, last) {
                    return Ok(Ty::Struct(name));
                }
                Err(Error::new_spanned(
                    ty,
                    format!(
                        "unsupported type `{}`: {FIELD_TYPES}",
                        crate::tokens::tokens_to_string(ty)
                    ),
                ))
            }
            Type::Array(a) => {
                let elem = self.ty(&a.elem, field)?;
                let len = self.len(&a.len)?;
                Ok(Ty::Array(Box::new(elem), len))
            }
            Type::Reference(_) | Type::Ptr(_) => Err(Error::new_spanned(
                ty,
                "references and pointers cannot be copied to the device; use values \
                 (primitive numbers, bool, arrays, #[derive(DeviceCopy)] structs)",
            )),
            Type::Tuple(t) if t.elems.is_empty() => Err(Error::new_spanned(
                ty,
                format!("unsupported type `()`: {FIELD_TYPES}"),
            )),
            Type::Tuple(_) => Err(Error::new_spanned(
                ty,
                "tuples are not supported: Rust does not fix their layout; use a \
                 #[repr(C)] #[derive(DeviceCopy)] struct",
            )),
            _ => Err(Error::new_spanned(
                ty,
                format!(
                    "unsupported type `{}`: {FIELD_TYPES}",
                    crate::tokens::tokens_to_string(ty)
                ),
            )),
        }
    }

    /// `TopK<K>` names the monoid itself when the arguments are its own const parameters.
    fn struct_args_ok(&self, name: &str, seg: &syn::PathSegment) -> bool {
        match &seg.arguments {
            syn::PathArguments::None => true,
            syn::PathArguments::AngleBracketed(args) => {
                self.self_name.as_deref() == Some(name)
                    && args.args.len() == self.const_params.len()
                    && args.args.iter().zip(&self.const_params).all(|(a, p)| {
                        let text = crate::tokens::tokens_to_string(a);
                        text == *p || text == format!("{{ {p} }}")
                    })
            }
            syn::PathArguments::Parenthesized(_) => false,
        }
    }

    /// An array length: an integer literal, a const generic parameter or a `usize` const item.
    pub fn len(&self, e: &Expr) -> syn::Result<Len> {
        match crate::tokens::strip_parens(e) {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) if n.suffix().is_empty() || n.suffix() == "usize" => {
                let n = n.base10_parse::<u64>()?;
                if n == 0 {
                    return Err(Error::new_spanned(
                        e,
                        "zero-length arrays are not supported (CUDA C++ has no zero-size arrays)",
                    ));
                }
                Ok(Len::Lit(n))
            }
            Expr::Path(p) if p.qself.is_none() && crate::tokens::is_const_path(&p.path) => {
                Ok(Len::Sym(crate::tokens::tokens_to_string(&p.path)))
            }
            Expr::Block(b) if b.block.stmts.len() == 1 => match &b.block.stmts[0] {
                syn::Stmt::Expr(inner, None) => self.len(inner),
                _ => Err(len_error(e)),
            },
            _ => Err(len_error(e)),
        }
    }
}

fn len_error(e: &Expr) -> Error {
    Error::new_spanned(
        e,
        "an array length must be an integer literal, a const generic parameter or a `usize` \
         const (the CUDA text needs its value when the kernel is generated)",
    )
}

const USIZE_FIELD: &str = "its size depends on the host; use u32/u64 (or i32/i64) so that Rust \
                           and CUDA agree (usize is accepted in expressions, as an index)";

pub const FIELD_TYPES: &str = "fields must be u8, i8, u16, i16, u32, i32, u64, i64, f32, f64, \
                               bool, fixed-size arrays, or #[repr(C)] structs with \
                               #[derive(DeviceCopy)]";

/// Standard types that are not plain data (checked before any lookup of the name).
pub fn unsupported_std(name: &str) -> Option<&'static str> {
    Some(match name {
        "String" | "str" | "Vec" | "Box" | "Rc" | "Arc" | "HashMap" | "BTreeMap" => {
            "it owns heap memory, which a device cannot read; use fixed-size arrays"
        }
        "Option" | "Result" => "use a #[repr(C)] struct with a flag field",
        "Cell" | "RefCell" | "PhantomData" => "fields must be plain data",
        _ => return None,
    })
}

fn unsupported_primitive(name: &str) -> Option<&'static str> {
    if let Some(why) = unsupported_std(name) {
        return Some(why);
    }
    Some(match name {
        "isize" => "use i32/i64 (isize is not supported, usize only in expressions)",
        "u128" | "i128" => "CUDA C++ has no portable 128-bit integer; use two u64 fields",
        "char" => "CUDA C++ has no Unicode scalar type; store the code point as u32",
        "f16" | "f128" => "only f32 and f64 floats are supported",
        _ => return None,
    })
}
