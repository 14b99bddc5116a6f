use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C, packed)]
#[monoid(identity = Pair { a: 0, b: 0 }, combine = |l, r| r)]
struct Pair {
    a: u8,
    b: u32,
}

fn main() {}
