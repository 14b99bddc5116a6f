use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Pair { p: (0, 0) }, combine = |_l, r| r)]
struct Pair {
    p: (u32, u32),
}

fn main() {}
