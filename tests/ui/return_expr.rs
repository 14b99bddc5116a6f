use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = First { x: 0, set: false },
    combine = |l, r| {
        if l.set {
            return l;
        }
        r
    }
)]
struct First {
    x: u32,
    set: bool,
}

fn main() {}
