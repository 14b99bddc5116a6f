use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Power { x: 1, n: 0 },
    combine = |l, r| {
        let mut x = l.x;
        for _ in 0..r.n {
            x = x.wrapping_mul(l.x);
        }
        Power { x, n: l.n.wrapping_add(r.n) }
    }
)]
struct Power {
    x: u32,
    n: u32,
}

// No follow-up errors here: the derive still emits (stub) impls.
fn total(xs: &[Power]) -> Power {
    xs.iter().fold(Power::identity(), |a, &b| Power::combine(a, b))
}

fn main() {
    let _ = total(&[]);
}
