use reduce_core::Monoid;

#[derive(Clone, Copy)]
#[repr(C)]
struct Point {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Sum { p: Point { x: 0.0, y: 0.0 } }, combine = |l, r| r)]
struct Sum {
    p: Point,
}

fn main() {}
