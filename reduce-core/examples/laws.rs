//! Checking a monoid with `reduce_core::laws` before trusting it to a GPU: a correct one passes,
//! a wrong one is caught with a counterexample.
//!
//!     cargo run --example laws -p reduce-core --features proptest

use proptest::prelude::*;
use reduce_core::{laws, Monoid};

/// Affine maps mod 2^32: associative, not commutative.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
struct Affine {
    a: u32,
    b: u32,
}

/// Affine maps composed in the opposite order (still a monoid) but falsely declared commutative,
/// which would let `Auto` reorder items: the law checker finds a counterexample.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Broken { a: 1, b: 0 },
         combine = |l, r| Broken { a: l.a.wrapping_mul(r.a), b: l.b.wrapping_add(r.b.wrapping_mul(l.a)) },
         commutative)]
struct Broken {
    a: u32,
    b: u32,
}

fn main() {
    let affine = (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Affine { a, b });
    match laws::verify(affine) {
        Ok(()) => println!("Affine: identity and associativity hold"),
        Err(failure) => panic!("Affine should be a monoid: {failure}"),
    }
    let broken = (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Broken { a, b });
    match laws::verify(broken) {
        Ok(()) => panic!("Broken must not pass"),
        Err(failure) => println!("Broken: {failure}"),
    }
}
