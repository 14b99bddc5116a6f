use reduce_core::device_fn;

// The body is checked like a combine's: this one uses a tuple.
#[device_fn]
fn swap(a: u32, b: u32) -> u32 {
    let t = (b, a);
    t.0
}

fn main() {
    let _ = swap(1, 2);
}
