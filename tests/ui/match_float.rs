use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Sign { s: 0.0 },
    combine = |l, r| Sign { s: match r.s { _ => l.s } }
)]
struct Sign {
    s: f32,
}

fn main() {}
