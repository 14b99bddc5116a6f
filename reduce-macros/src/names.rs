//! Names the generated CUDA C++ reserves: C++ keywords and reserved identifiers, the names of
//! the kernels' environment (NVRTC built-ins, the monoid contract, the math functions the
//! translation calls), and the prefixes of generated names. `valid` applies them to structs and
//! fields, `ast` to `#[device_fn]` names. Locals and parameters need no rule: they are renamed
//! (`v_x`).

/// C++ keywords and alternative tokens that a Rust identifier can spell.
#[rustfmt::skip]
const CPP_KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break",
    "case", "catch", "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept",
    "const", "consteval", "constexpr", "constinit", "const_cast", "continue", "co_await",
    "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast",
    "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto",
    "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register",
    "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static",
    "static_assert", "static_cast", "struct", "switch", "template", "this", "thread_local",
    "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using",
    "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
];

/// Names the CUDA compilation environment (NVRTC built-ins, the kernel templates' contract)
/// already defines.
#[rustfmt::skip]
pub const CUDA_NAMES: &[&str] = &[
    // the monoid contract and the kernel parameters (`m_lift(r_in x, r_size i)`)
    "M", "l", "r", "x", "i", "m_identity", "m_combine", "m_lift", "r_in", "r_size",
    // built-in variables and types
    "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "size_t", "ptrdiff_t",
    "clock_t", "half", "nv_bfloat16", "cudaError_t", "cudaStream_t",
    // math functions the translation calls (a struct of the same name would shadow them)
    "min", "max", "abs", "fabs", "fabsf", "sqrt", "sqrtf", "fma", "fmaf", "fmin", "fminf",
    "fmax", "fmaxf", "fmod", "fmodf",
];

/// The CUDA vector types are these followed by 1 to 4 (`float2`, `uint4`).
#[rustfmt::skip]
pub const VECTOR_BASES: &[&str] = &[
    "char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong", "ulonglong",
    "float", "double",
];

fn is_cuda_vector_type(name: &str) -> bool {
    VECTOR_BASES.iter().any(|base| {
        name.strip_prefix(base)
            .is_some_and(|rest| matches!(rest, "1" | "2" | "3" | "4"))
    })
}

/// The prefixes of the names the generated CUDA code makes up (`r_` helpers and temporaries,
/// `m_` the monoid contract, `v_` locals, `fn_` helpers).
pub const PREFIXES: &[&str] = &["r_", "m_", "v_", "fn_"];

/// Why `name` cannot be a C++ identifier in the generated text, if it cannot (the rule for
/// field names, which name the CUDA struct members).
pub fn cpp_clash(name: &str) -> Option<&'static str> {
    if CPP_KEYWORDS.contains(&name) {
        Some("is a C++ keyword")
    } else if name.contains("__")
        || (name.starts_with('_') && name[1..].starts_with(char::is_uppercase))
    {
        Some("is reserved in C++ (double underscore, or underscore and capital letter)")
    } else if name.starts_with("R_") {
        Some("starts with `R_`, the prefix of the macros the kernels and their prelude define")
    } else {
        None
    }
}

/// The macros of the standard prelude, which a `#[device_fn]`'s hidden macro would shadow.
#[rustfmt::skip]
pub const STD_MACROS: &[&str] = &[
    "assert", "assert_eq", "assert_ne", "cfg", "column", "compile_error", "concat", "dbg",
    "debug_assert", "debug_assert_eq", "debug_assert_ne", "env", "eprint", "eprintln", "file",
    "format", "format_args", "include", "include_bytes", "include_str", "line", "matches",
    "module_path", "option_env", "panic", "print", "println", "stringify", "todo",
    "unimplemented", "unreachable", "vec", "write", "writeln",
];

/// Why a `#[device_fn]` cannot have this name (its CUDA name is `fn_<name>`; its reflection
/// macro is named like it, so it must not shadow a macro of the standard prelude).
pub fn reserved_fn_name(name: &str) -> Option<&'static str> {
    if STD_MACROS.contains(&name) {
        Some("it would shadow the standard macro of that name")
    } else if name.contains("__") {
        Some("double underscores are reserved in C++")
    } else {
        None
    }
}

/// Why a struct (monoid or `#[derive(DeviceCopy)]`) cannot have this name, if it cannot: its
/// CUDA struct is named like it.
pub fn struct_name_clash(name: &str) -> Option<&'static str> {
    if let Some(why) = cpp_clash(name) {
        Some(why)
    } else if CUDA_NAMES.contains(&name) {
        Some("is already defined in the CUDA text the kernels are compiled with")
    } else if is_cuda_vector_type(name) {
        Some("is a CUDA built-in vector type")
    } else if PREFIXES.iter().any(|p| name.starts_with(p)) {
        Some("starts with a prefix the generated CUDA code reserves (`r_`, `m_`, `v_`, `fn_`)")
    } else {
        None
    }
}
