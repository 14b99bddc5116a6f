use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Acc { x: 0 },
    combine = |l, r| {
        let x = l.x;
        x += r.x;
        Acc { x }
    }
)]
struct Acc {
    x: u32,
}

fn main() {}
