//! Compile-fail tests of `#[derive(Monoid)]`: each `ui/*.rs` must fail to compile with exactly the
//! error in the `.stderr` beside it (regenerate with `TRYBUILD=overwrite` and review the diff).

#[test]
fn derive_ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
