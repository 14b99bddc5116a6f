use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(combine = |l, r| Max { x: l.x.max(r.x) })]
struct Max {
    x: u32,
}

fn main() {}
