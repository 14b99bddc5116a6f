use reduce_core::device_fn;

#[device_fn]
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn main() {
    let _ = gcd(4, 6);
}
