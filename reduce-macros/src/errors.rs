//! The error collector every stage reports into (after serde_derive's `internals/ctxt.rs`), in
//! its own module so that the stages import it and not each other.

use syn::Error;

/// Collects errors so that one derive reports all the mistakes it can find at once.
#[derive(Default)]
pub struct Errors(Option<Error>);

impl Errors {
    pub fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(existing) => existing.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn into_error(self) -> Option<Error> {
        self.0
    }
}
