use reduce_core::Monoid;

#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = float2 { x: 0.0, y: 0.0 }, combine = |l, r| float2 { x: l.x + r.x, y: l.y + r.y })]
struct float2 {
    x: f32,
    y: f32,
}

fn main() {}
