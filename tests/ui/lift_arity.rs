use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Count { n: 0 },
    combine = |l, r| Count { n: l.n.wrapping_add(r.n) },
    lift(u8) = |_x| Count { n: 1 }
)]
struct Count {
    n: u64,
}

fn main() {}
