//! Names: the reserved ones are refused, and the derive's documentation lists exactly the names
//! the code knows (reserved names, methods).

use crate::names;

/// A section (`# TITLE` up to the next one) of the derive's documentation.
fn doc_section(title: &str) -> &'static str {
    const DOC: &str = include_str!("../../doc/monoid.md");
    let start = DOC
        .find(&format!("\n# {title}\n"))
        .unwrap_or_else(|| panic!("doc/monoid.md has no section `{title}`"));
    let section = &DOC[start + 1..];
    &section[..section[1..]
        .find("\n# ")
        .map_or(section.len(), |end| end + 1)]
}

#[test]
fn every_method_is_documented() {
    let section = doc_section("The translated language");
    let words: Vec<&str> = section
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    for (name, _) in crate::check::METHODS {
        assert!(
            words.contains(name),
            "doc/monoid.md's language does not list the method `{name}`"
        );
    }
}

#[test]
fn every_reserved_name_is_documented() {
    let section = doc_section("Reserved names");
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
    for name in ["class", "new", "a__b", "_X", "R_W", "R_BLOCK"] {
        assert!(names::cpp_clash(name).is_some(), "{name}");
    }
    assert!(names::cpp_clash("M").is_none(), "a field may be called M");
    for name in ["vec", "format", "a__b"] {
        assert!(names::reserved_fn_name(name).is_some(), "{name}");
    }
    assert!(names::reserved_fn_name("mat_mul").is_none());
}
