use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Diff { x: 0 }, combine = |l, r| Diff { x: l.x + -r.x })]
struct Diff {
    x: u32,
}

fn main() {}
