use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Top { v: [0; K] }, combine = |_l, r| r)]
struct Top<const K: u32> {
    v: [u32; 4],
}

fn main() {}
