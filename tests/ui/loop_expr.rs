use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Last { x: 0 }, combine = |_l, r| loop { break r; })]
struct Last {
    x: u32,
}

fn main() {}
