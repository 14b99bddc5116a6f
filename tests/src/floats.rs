//! Float test data for the portable mode, whose results must have the CPU reference's bits:
//! inputs whose sums every grouping rounds differently ([`hard_f32`]), and bit equality that
//! lets any NaN match any NaN (payloads differ between CPU and GPU: [`SameBits`]).

use crate::TestRng;
use reduce_bench::monoids::LogSumExp;
use reduce_core::Sum;
use std::fmt::Debug;

/// Random f32 of magnitudes 2^-10 to 2^14, both signs, with cancelling pairs, zeros of both
/// signs, subnormals and (when `special`) infinities and NaN sprinkled in.
pub fn hard_f32(n: usize, seed: u64, special: bool) -> Vec<f32> {
    let mut rng = TestRng::new(seed);
    let mut last = 1.0f32;
    (0..n)
        .map(|i| {
            let e = rng.range(117, 141) as u32;
            let x = f32::from_bits((rng.next_u64() as u32 & 0x807f_ffff) | (e << 23));
            let x = match i % 97 {
                3 => -last * 1.000_000_1,
                10 => -0.0,
                11 => 0.0,
                12 => f32::from_bits(rng.range(1, 0x80_0000) as u32),
                50 if special && i % 4099 == 50 => f32::INFINITY,
                60 if special && i % 3001 == 60 => f32::NAN,
                _ => x,
            };
            last = x;
            x
        })
        .collect()
}

/// Float bits equal, any NaN matching any NaN.
pub fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// A value whose floats must have the same bits (any NaN matching any NaN).
pub trait SameBits: Copy + Debug {
    fn same_bits(&self, other: &Self) -> bool;
}

impl SameBits for Sum<f32> {
    fn same_bits(&self, other: &Self) -> bool {
        same_f32(self.0, other.0)
    }
}

impl SameBits for Sum<f64> {
    fn same_bits(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits() || (self.0.is_nan() && other.0.is_nan())
    }
}

impl SameBits for LogSumExp {
    fn same_bits(&self, other: &Self) -> bool {
        same_f32(self.m, other.m) && same_f32(self.s, other.s)
    }
}

/// `got` has `want`'s values bit for bit; else panics naming `what` and the first that differs.
pub fn assert_same_bits<M: SameBits>(got: &[M], want: &[M], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(i) = (0..got.len()).find(|&i| !got[i].same_bits(&want[i])) {
        panic!("{what}: value {i}: {:?} != {:?}", got[i], want[i]);
    }
}
