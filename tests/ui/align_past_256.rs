use reduce_core::Monoid;

// Device memory is allocated at 256-byte boundaries: a value aligned past it is refused.
#[derive(Clone, Copy, Monoid)]
#[repr(C, align(512))]
#[monoid(identity = Wide { v: 0 }, combine = |l, r| Wide { v: l.v + r.v })]
struct Wide {
    v: u32,
}

fn main() {}
