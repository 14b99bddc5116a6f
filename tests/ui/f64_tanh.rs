use reduce_core::Monoid;

// `tanh` is f32 only: reduce_core::math has no f64 form within 1 ulp yet.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = P { x: 0.0 }, combine = |a, b| P { x: a.x + b.x.tanh() })]
struct P {
    x: f64,
}

fn main() {}
