//! The test monoids, each with the random values it is tested on ([`crate::Random`]).
//!
//! - [`standard`]: the set most files use, of every item size from 1 to 72 bytes.
//! - [`small`] and [`wide`]: shapes no standard monoid has (1 to 512 bytes: odd sizes,
//!   padding, over-alignment, tuple structs, nested structs, helpers, floats, const generics).
//! - [`lang`]: the derive's whole language (loops, mutation, run-time indices, `match`, lifts).
//! - [`fuzz_regressions`]: one monoid per root cause the differential fuzzer found.

pub mod fuzz_regressions;
pub mod lang;
pub mod small;
pub mod standard;
pub mod wide;
