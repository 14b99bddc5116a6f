//! Checks on the parsed input that do not need type checking: required keys, and names that
//! would clash in the generated CUDA C++ (the rules are in `names`).

use crate::ast::StructInput;
use crate::errors::Errors;
use crate::names;
use syn::Error;

/// Checks a monoid's required keys and the names of its struct.
pub fn check(input: &StructInput, errors: &mut Errors) {
    check_names(input, errors);

    let Some(attr) = &input.attrs.first else {
        errors.push(Error::new(
            input.ident.span(),
            format!(
                "#[derive(Monoid)] needs an attribute #[monoid(identity = EXPR, combine = |l, r| \
                 EXPR)], e.g. #[monoid(identity = {0} {{ ... }}, combine = |l, r| {0} {{ ... }})]",
                input.name
            ),
        ));
        return;
    };
    if input.attrs.identity.is_none() {
        errors.push(Error::new_spanned(
            attr,
            format!(
                "#[monoid(...)] is missing `identity = EXPR`, the identity element, e.g. \
                 `identity = {} {{ ... }}`",
                input.name
            ),
        ));
    }
    if input.attrs.combine.is_none() {
        errors.push(Error::new_spanned(
            attr,
            format!(
                "#[monoid(...)] is missing `combine = |l, r| EXPR`, e.g. `combine = |l, r| {} \
                 {{ ... }}`",
                input.name
            ),
        ));
    }
}

/// Checks the struct's and the fields' names against C++ and the generated code's names.
pub fn check_names(input: &StructInput, errors: &mut Errors) {
    let name = input.name.as_str();
    if let Some(why) = names::struct_name_clash(name) {
        errors.push(Error::new(
            input.ident.span(),
            format!("the struct name `{name}` {why}; rename the struct"),
        ));
    }
    for f in &input.fields {
        if let Some(why) = names::cpp_clash(&f.cuda_name) {
            errors.push(Error::new(
                f.span,
                format!(
                    "the field name `{}` {why}, so it cannot name the CUDA struct member; \
                     rename the field",
                    f.cuda_name
                ),
            ));
        }
    }
}
