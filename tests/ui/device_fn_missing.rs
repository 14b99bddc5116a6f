use reduce_core::Monoid;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Gcd { g: 0 }, combine = |l, r| Gcd { g: gcd(l.g, r.g) }, commutative)]
struct Gcd {
    g: u64,
}

fn main() {}
