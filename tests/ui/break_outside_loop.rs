use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = First { x: 0 },
    combine = |l, r| {
        if l.x != 0 {
            break;
        }
        r
    }
)]
struct First {
    x: u32,
}

fn main() {}
