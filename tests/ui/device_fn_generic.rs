use reduce_core::device_fn;

#[device_fn]
fn first<const N: usize>(a: [u32; N]) -> u32 {
    a[0]
}

fn main() {
    let _ = first([1, 2]);
}
