use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[monoid(identity = Sum { x: 0 }, combine = |l, r| Sum { x: l.x.wrapping_add(r.x) })]
struct Sum {
    x: u32,
}

fn main() {}
