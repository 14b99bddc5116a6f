use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Scaled { x: 0 },
    combine = |l, r| {
        let k = 3;
        Scaled { x: l.x.wrapping_mul(k).wrapping_add(r.x) }
    }
)]
struct Scaled {
    x: u64,
}

fn main() {}
