use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Max { x: 0 },
    combine = |l, r| Max { x: l.x.max(r.x) },
    commutative,
    identity = Max { x: 1 },
)]
struct Max {
    x: u32,
}

fn main() {}
