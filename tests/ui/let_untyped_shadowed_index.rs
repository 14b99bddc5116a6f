use reduce_core::Monoid;

// `i` is used as an index only through a later binding of the same name: the first `i` is
// rustc's `i32`, which the translation cannot tell from its uses, so it asks for a type.
#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(
    identity = Pick { x: 0.0, t: [0.0; 4] },
    combine = |l, r| {
        let i = 3;
        let x = (i - 5) as f32;
        let i = 2usize;
        Pick { x: l.x + r.x + x + l.t[i], t: r.t }
    }
)]
struct Pick {
    x: f32,
    t: [f32; 4],
}

fn main() {}
