use reduce_core::Monoid;

#[derive(Clone, Monoid)]
#[repr(C)]
#[monoid(identity = Text { s: String::new() }, combine = |l, r| r)]
struct Text {
    s: String,
}

fn main() {}
