// Two different structs with one name: the translation knows structs by name, so one would
// stand for the other in the CUDA text.
use reduce_core::Monoid;

pub mod a {
    #[derive(Clone, Copy, Debug, PartialEq, reduce_core::DeviceCopy)]
    #[repr(C)]
    pub struct Point {
        pub x: f32,
        pub y: f32,
    }
}

pub mod b {
    #[derive(Clone, Copy, Debug, PartialEq, reduce_core::DeviceCopy)]
    #[repr(C)]
    pub struct Point {
        pub y: f32,
        pub x: f32,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(
    identity = Both { p: a::Point { x: 0.0, y: 0.0 }, q: b::Point { y: 0.0, x: 0.0 } },
    combine = |_l, r| r
)]
pub struct Both {
    pub p: a::Point,
    pub q: b::Point,
}

fn main() {}
