use reduce_core::Monoid;

// Every independent mistake is reported at once.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Stats { n: 0, sum: 0.0 },
    combine = |l, r| Stats { n: l.n.wrapping_add(r.n), sum: l.sum + r.sum },
    commutative = true,
    combine = |l, r| l,
)]
struct Stats {
    n: u32,
    sum: f32,
    when: usize,
}

fn main() {}
