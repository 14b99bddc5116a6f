use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Sum { x: 0 }, combine = |l, r| Sum { x: l.x.checked_add(r.x).unwrap_or(0) })]
struct Sum {
    x: u32,
}

fn main() {}
