use reduce_core::Monoid;

#[derive(Clone, Copy, Monoid)]
#[repr(C)]
#[monoid(identity = Last { x: T::default() }, combine = |_l, r| r)]
struct Last<T: Copy + Default> {
    x: T,
}

fn main() {}
