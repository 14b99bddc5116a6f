use reduce_core::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
struct Point {
    x: f32,
    y: f32,
}

fn main() {}
