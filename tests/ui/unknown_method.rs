use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Sum { x: 0 }, combine = |l, r| Sum { x: l.x.saturating_add(r.x) })]
struct Sum {
    x: u32,
}

fn main() {}
