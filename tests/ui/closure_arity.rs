use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Max { x: 0 }, combine = |l, r, s| Max { x: l.x.max(r.x).max(s.x) })]
struct Max {
    x: u32,
}

fn main() {}
