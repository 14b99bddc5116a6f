use reduce_core::Monoid;

// `return` is a statement; inside a block with a value it is refused.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = First { x: 0, set: false },
    combine = |l, r| {
        let x = if l.set {
            return l;
        } else {
            r.x
        };
        First { x, set: r.set }
    }
)]
struct First {
    x: u32,
    set: bool,
}

fn main() {}
