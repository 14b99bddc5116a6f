use reduce_core::Monoid;

// A struct update whose base adds no field: Rust evaluates `r` anyway; the translation refuses
// it rather than drop the base's evaluation (an index in it may fault).
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Pair { a: 0, b: 0 },
    combine = |l, r| Pair { a: l.a.wrapping_add(r.a), b: r.b, ..r }
)]
struct Pair {
    a: u32,
    b: u32,
}

fn main() {}
