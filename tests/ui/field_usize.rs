use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Count { n: 0 }, combine = |l, r| Count { n: l.n + r.n })]
struct Count {
    n: usize,
}

fn main() {}
