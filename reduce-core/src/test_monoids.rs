//! Monoids the unit tests of this crate share (the integration tests have their own, in the
//! `tests` crate).

use crate::Monoid;

/// A non-commutative, exactly associative monoid: x -> a*x + b (mod 2^32), applied left first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Affine(pub u32, pub u32);

impl Monoid for Affine {
    fn identity() -> Self {
        Affine(1, 0)
    }
    fn combine(l: Self, r: Self) -> Self {
        Affine(
            l.0.wrapping_mul(r.0),
            l.1.wrapping_mul(r.0).wrapping_add(r.1),
        )
    }
}

/// `n` affine maps with odd multipliers: a non-commutative sequence for the scans' tests.
pub(crate) fn affine_items(n: u32) -> Vec<Affine> {
    (0..n)
        .map(|i| Affine(i.wrapping_mul(2654435761) | 1, i ^ 0x5bd1e995))
        .collect()
}
