use reduce_core::Monoid;

// `powf` is f32 only: reduce_core::math has no f64 form within 1 ulp.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = P { x: 1.0 }, combine = |a, b| P { x: a.x.powf(b.x) })]
struct P {
    x: f64,
}

fn main() {}
