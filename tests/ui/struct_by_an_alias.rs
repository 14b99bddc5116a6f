// A struct imported under another name: the translation knows structs by their own names, and
// `Point` would be taken for `geom::Point`, which `Seg` brings, with its fields in another order.
use reduce_core::Monoid;

mod geom {
    #[derive(Clone, Copy, reduce_core::DeviceCopy)]
    #[repr(C)]
    pub struct Point {
        pub x: f32,
        pub y: f32,
    }
    #[derive(Clone, Copy, reduce_core::DeviceCopy)]
    #[repr(C)]
    pub struct Seg {
        pub a: Point,
    }
}

mod other {
    #[derive(Clone, Copy, reduce_core::DeviceCopy)]
    #[repr(C)]
    pub struct Vec2 {
        pub y: f32,
        pub x: f32,
    }
}

use geom::Seg;
use other::Vec2 as Point;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Acc { s: Seg { a: geom::Point { x: 0.0, y: 0.0 } }, q: Point { x: 0.0, y: 0.0 } },
    combine = |l, r| Acc { s: l.s, q: Point { x: l.q.x + r.q.x, y: l.q.y.max(r.q.y) } }
)]
struct Acc {
    s: Seg,
    q: Point,
}

fn main() {}
