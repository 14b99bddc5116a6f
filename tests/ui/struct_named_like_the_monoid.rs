// Another module's struct named like the monoid: the translation knows structs by name, so it
// would take `geom::Acc` for the monoid `Acc` and build it with the monoid's field types.
use reduce_core::Monoid;

mod geom {
    pub struct Acc {
        pub a: i32,
        pub b: i32,
    }
}

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Acc { a: 0, b: 0 },
    combine = |l, r| {
        let k = geom::Acc { a: 1, b: 2 };
        Acc { a: l.a.wrapping_add(r.a), b: l.b.wrapping_add(((k.a - k.b) / 2) as u32) }
    }
)]
struct Acc {
    a: u32,
    b: u32,
}

fn main() {}
