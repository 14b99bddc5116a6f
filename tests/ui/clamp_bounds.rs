use reduce_core::Monoid;

// `clamp` needs literal bounds in order: Rust panics where min > max, which the device cannot.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Unit { x: 0.0 }, combine = |l, r| Unit { x: (l.x + r.x).clamp(l.x, 1.0) })]
struct Unit {
    x: f32,
}

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Band { x: 0 }, combine = |l, r| Band { x: (l.x + r.x).clamp(5, -5) })]
struct Band {
    x: i32,
}

fn main() {}
