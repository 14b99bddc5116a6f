//! The reserved names: each list the derive checks is the one its documentation shows, and each
//! kind of name is refused.

use crate::names;

/// The derive's documentation, whose section "Reserved names" lists them for users.
const DOC: &str = include_str!("../../doc/monoid.md");

#[test]
fn every_reserved_name_is_documented() {
    let start = DOC
        .find("\n# Reserved names\n")
        .expect("the section exists");
    let section = &DOC[start + 1..];
    let section = &section[..section.find("\n# ").unwrap_or(section.len())];
    for list in [
        names::CUDA_NAMES,
        names::VECTOR_BASES,
        names::PREFIXES,
        names::STD_MACROS,
    ] {
        for name in list {
            assert!(
                section.contains(&format!("`{name}`")),
                "doc/monoid.md's reserved names do not include `{name}`"
            );
        }
    }
}

#[test]
fn reserved_names_are_refused() {
    for name in [
        "M",
        "int",
        "float2",
        "m_combine",
        "fn_x",
        "__y",
        "_Z",
        "threadIdx",
    ] {
        assert!(names::struct_name_clash(name).is_some(), "{name}");
    }
    for name in ["Affine", "Mat2", "float5", "intx", "ma"] {
        assert!(names::struct_name_clash(name).is_none(), "{name}");
    }
    for name in ["class", "new", "a__b", "_X"] {
        assert!(names::cpp_clash(name).is_some(), "{name}");
    }
    assert!(names::cpp_clash("M").is_none(), "a field may be called M");
    for name in ["vec", "format", "a__b"] {
        assert!(names::reserved_fn_name(name).is_some(), "{name}");
    }
    assert!(names::reserved_fn_name("mat_mul").is_none());
}
