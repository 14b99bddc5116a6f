use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Mixed { a: 0, b: 0 }, combine = |l, r| Mixed { a: l.a + r.b, b: l.b })]
struct Mixed {
    a: u32,
    b: u8,
}

fn main() {}
