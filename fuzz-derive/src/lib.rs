//! # fuzz-derive
//!
//! A differential fuzzer of `#[derive(Monoid)]`'s translation. `build.rs` writes random,
//! well-typed programs in the derive's language ([`gen`]) as Rust modules; the Rust compiler
//! gives the reference value of each `combine` (and `identity`), and the translated CUDA C++ runs
//! on the other side: NVRTC and the GPU ([`device`]), or a host C++ compiler with a small shim
//! ([`host`], which finds translation bugs without a GPU). Both sides get the same random
//! inputs, edge values first (0, -1, MIN, MAX, NaN, +-0, +-inf, subnormals), and are compared
//! leaf by leaf, bit for bit (any NaN equals any NaN: payloads are unspecified in Rust).
//!
//! An index out of bounds panics in Rust and must be a recorded fault on the other side; other
//! panics (division by zero, `MIN / -1`) are undefined on the device and skipped.
//!
//! `cargo run --release -p fuzz-derive --bin fuzz -- --backend host` runs it here;
//! `FUZZ_PROGRAMS=10000` at build time gives the GPU run's 10^4 programs.

pub mod device;
pub mod gen;
pub mod host;

use reduce_core::Monoid;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The generated programs.
#[allow(
    unused,
    unused_mut,
    unused_parens,
    unused_comparisons,
    unreachable_patterns,
    overlapping_range_endpoints,
    invalid_nan_comparisons,
    double_negations,
    overflowing_literals,
    arithmetic_overflow,
    unconditional_panic,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
pub mod programs {
    include!(concat!(env!("OUT_DIR"), "/programs.rs"));
}

/// (byte offset, scalar code) of a scalar leaf of a value.
pub type Leaf = (usize, u8);

/// What the other side computed for a batch: per program, the values (`n + 1` of them, the
/// identity last) and a fault flag per value.
pub struct Run {
    pub values: Vec<u8>,
    pub faults: Vec<u8>,
}

/// One generated program, as the harness sees it.
pub struct Program {
    /// Its index in the run (its source is `gen::program(programs::SEED, index)`).
    pub index: usize,
    /// Its module (`p00042`), also its C++ namespace.
    pub name: &'static str,
    /// `size_of::<S>()`.
    pub size: usize,
    /// (byte offset, scalar code) of every scalar leaf of `S`.
    pub leaves: &'static [Leaf],
    /// Rust's `combine` on two values given as bytes.
    pub combine: fn(&[Leaf], &[u8], &[u8]) -> Outcome,
    /// Rust's `identity`, as leaf bytes.
    pub identity: fn(&[Leaf]) -> Vec<u8>,
    /// The CUDA text.
    pub cuda: fn() -> String,
}

impl Program {
    /// The program's Rust source (regenerated).
    pub fn source(&self) -> String {
        gen::program(programs::SEED, self.index).source
    }
}

/// What Rust computed.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The leaf bytes of the result.
    Value(Vec<u8>),
    /// A panic the translation records as a fault (an index out of bounds, an integer
    /// division by zero, the operators' `MIN / -1`): the other side must record one.
    Fault,
    /// Another panic (an overflow of a debug build): not compared.
    Panic,
}

fn scalar(code: u8) -> gen::Sc {
    gen::FIELD_SCALARS[code as usize]
}

/// The leaf bytes of the value at `p` (only leaves: padding is never read).
///
/// # Safety
/// `p` points to a value with these leaves.
unsafe fn leaf_bytes(p: *const u8, leaves: &[Leaf]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(off, code) in leaves {
        for k in 0..scalar(code).size() {
            out.push(*p.add(off + k));
        }
    }
    out
}

/// Rust's `M::combine` on two inputs given as bytes (valid values: see [`inputs`]).
pub fn combine_bytes<M: Monoid>(leaves: &[Leaf], a: &[u8], b: &[u8]) -> Outcome {
    assert!(a.len() == std::mem::size_of::<M>() && b.len() == a.len());
    // SAFETY: the inputs hold valid values of M (bools 0 or 1, zero padding).
    let (a, b): (M, M) = unsafe {
        (
            std::ptr::read_unaligned(a.as_ptr().cast()),
            std::ptr::read_unaligned(b.as_ptr().cast()),
        )
    };
    match catch_unwind(AssertUnwindSafe(|| M::combine(a, b))) {
        // SAFETY: a value of M, read at its leaves only.
        Ok(v) => Outcome::Value(unsafe { leaf_bytes((&v as *const M).cast(), leaves) }),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            // The panics the translation turns into a recorded fault: an index out of bounds,
            // an integer division by zero and the operators' MIN / -1.
            if msg.contains("index out of bounds")
                || msg == "attempt to divide by zero"
                || msg == "attempt to calculate the remainder with a divisor of zero"
                || msg == "attempt to divide with overflow"
                || msg == "attempt to calculate the remainder with overflow"
            {
                Outcome::Fault
            } else {
                Outcome::Panic
            }
        }
    }
}

/// Rust's `M::identity()`, as leaf bytes.
pub fn identity_bytes<M: Monoid>(leaves: &[Leaf]) -> Vec<u8> {
    let v = M::identity();
    // SAFETY: a value of M, read at its leaves only.
    unsafe { leaf_bytes((&v as *const M).cast(), leaves) }
}

/// The bits of one random value of scalar type `s`, edge values first.
fn edge_bits(rng: &mut gen::Rng, s: gen::Sc) -> u64 {
    use gen::Sc;
    let bits = s.size() * 8;
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    match s {
        Sc::Bool => rng.below(2),
        Sc::F32 => {
            const EDGES: [u32; 16] = [
                0,
                0x8000_0000,
                0x3f80_0000,
                0xbf80_0000,
                0x7fc0_0000,
                0xffc0_0001,
                0x7f80_0000,
                0xff80_0000,
                0x0080_0000,
                0x0000_0001,
                0x007f_ffff,
                0x7f7f_ffff,
                0xff7f_ffff,
                0x3400_0000,
                0x4f00_0000,
                0xcf00_0001,
            ];
            match rng.below(4) {
                0 | 1 => u64::from(EDGES[rng.below(16) as usize]),
                2 => u64::from(((rng.below(64) as f32) * 0.5 - 16.0).to_bits()),
                _ => rng.next_u64() & mask,
            }
        }
        Sc::F64 => {
            const EDGES: [u64; 14] = [
                0,
                0x8000_0000_0000_0000,
                0x3ff0_0000_0000_0000,
                0xbff0_0000_0000_0000,
                0x7ff8_0000_0000_0000,
                0xfff8_0000_0000_0001,
                0x7ff0_0000_0000_0000,
                0xfff0_0000_0000_0000,
                0x0010_0000_0000_0000,
                0x0000_0000_0000_0001,
                0x000f_ffff_ffff_ffff,
                0x7fef_ffff_ffff_ffff,
                0x43e0_0000_0000_0000,
                0xc3e0_0000_0000_0001,
            ];
            match rng.below(4) {
                0 | 1 => EDGES[rng.below(14) as usize],
                2 => ((rng.below(64) as f64) * 0.5 - 16.0).to_bits(),
                _ => rng.next_u64(),
            }
        }
        _ => {
            let min = if s.is_signed() { 1u64 << (bits - 1) } else { 0 };
            let max = if s.is_signed() { min - 1 } else { mask };
            let v = match rng.below(10) {
                0 => 0,
                1 => 1,
                2 => mask, // -1
                3 => min,
                4 => max,
                5 => min.wrapping_add(1),
                6 => max.wrapping_sub(1),
                7 => rng.below(16),
                _ => rng.next_u64(),
            };
            v & mask
        }
    }
}

/// `count` random values of the program's `S`, as bytes (zero padding, valid bools).
pub fn inputs(p: &Program, count: usize, salt: u64) -> Vec<u8> {
    let mut rng =
        gen::Rng::new(programs::SEED ^ salt ^ (p.index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut out = vec![0u8; p.size * count];
    for v in 0..count {
        for &(off, code) in p.leaves {
            let s = scalar(code);
            let bits = edge_bits(&mut rng, s);
            let at = v * p.size + off;
            out[at..at + s.size()].copy_from_slice(&bits.to_le_bytes()[..s.size()]);
        }
    }
    out
}

/// What the other side computed for one input: the value's bytes and whether it faulted.
pub struct Other<'a> {
    pub value: &'a [u8],
    pub fault: bool,
}

/// Whether two leaf byte strings agree: bit for bit, any NaN equal to any NaN.
fn same_leaves(leaves: &[Leaf], rust: &[u8], value_bytes: &[u8]) -> bool {
    let mut at = 0;
    for &(off, code) in leaves {
        let s = scalar(code);
        let n = s.size();
        let a = &rust[at..at + n];
        let b = &value_bytes[off..off + n];
        let equal = a == b
            || match s {
                gen::Sc::F32 => {
                    let x = f32::from_le_bytes(a.try_into().unwrap());
                    let y = f32::from_le_bytes(b.try_into().unwrap());
                    x.is_nan() && y.is_nan()
                }
                gen::Sc::F64 => {
                    let x = f64::from_le_bytes(a.try_into().unwrap());
                    let y = f64::from_le_bytes(b.try_into().unwrap());
                    x.is_nan() && y.is_nan()
                }
                _ => false,
            };
        if !equal {
            return false;
        }
        at += n;
    }
    true
}

/// The tally of a run.
#[derive(Default, Debug)]
pub struct Summary {
    pub programs: usize,
    pub inputs: usize,
    /// Values compared bit for bit (results and identities).
    pub compared: usize,
    /// Index-out-of-bounds panics matched by a recorded fault.
    pub faults: usize,
    /// Inputs where Rust panicked otherwise (not compared).
    pub skipped: usize,
    pub mismatches: usize,
    /// Reports of the first mismatches.
    pub reports: Vec<String>,
}

impl Summary {
    pub fn merge(&mut self, o: Summary) {
        self.programs += o.programs;
        self.inputs += o.inputs;
        self.compared += o.compared;
        self.faults += o.faults;
        self.skipped += o.skipped;
        self.mismatches += o.mismatches;
        for r in o.reports {
            if self.reports.len() < 20 {
                self.reports.push(r);
            }
        }
    }

    pub fn line(&self) -> String {
        format!(
            "programs={} inputs/program={} compared={} faults_matched={} skipped_panics={} mismatches={}",
            self.programs,
            self.inputs.checked_div(self.programs).unwrap_or(0),
            self.compared,
            self.faults,
            self.skipped,
            self.mismatches
        )
    }
}

fn describe(p: &Program, bytes: &[u8]) -> String {
    let mut s = String::new();
    for &(off, code) in p.leaves {
        let sc = scalar(code);
        let mut b = [0u8; 8];
        b[..sc.size()].copy_from_slice(&bytes[off..off + sc.size()]);
        let v = u64::from_le_bytes(b);
        let _ = write!(s, "{}@{off}=", sc.rust());
        let _ = match sc {
            gen::Sc::F32 => write!(s, "{:?}({v:#x}) ", f32::from_bits(v as u32)),
            gen::Sc::F64 => write!(s, "{:?}({v:#x}) ", f64::from_bits(v)),
            _ => write!(s, "{v:#x} "),
        };
    }
    s
}

/// Leaf bytes back at their offsets (for descriptions).
fn spread(p: &Program, leaf_bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; p.size];
    let mut at = 0;
    for &(off, code) in p.leaves {
        let n = scalar(code).size();
        out[off..off + n].copy_from_slice(&leaf_bytes[at..at + n]);
        at += n;
    }
    out
}

/// Compares one program: Rust's outcomes on `a[i], b[i]` (and its identity) against the other
/// side's values (`n + 1` of them, the identity last) and faults.
pub fn compare(p: &Program, a: &[u8], b: &[u8], other: &[Other]) -> Summary {
    let n = a.len() / p.size;
    let mut s = Summary {
        programs: 1,
        inputs: n,
        ..Summary::default()
    };
    let report = |s: &mut Summary, what: String| {
        s.mismatches += 1;
        if s.reports.len() < 3 {
            s.reports.push(what);
        }
    };
    for i in 0..=n {
        let o = &other[i];
        let (rust, inputs) = if i == n {
            (
                Outcome::Value((p.identity)(p.leaves)),
                "identity".to_owned(),
            )
        } else {
            let (x, y) = (&a[i * p.size..][..p.size], &b[i * p.size..][..p.size]);
            (
                (p.combine)(p.leaves, x, y),
                format!(
                    "combine(\n    l = {}\n    r = {})",
                    describe(p, x),
                    describe(p, y)
                ),
            )
        };
        match (&rust, o.fault) {
            (Outcome::Panic, _) => s.skipped += 1,
            (Outcome::Fault, true) => s.faults += 1,
            (Outcome::Fault, false) => report(
                &mut s,
                format!(
                    "{}: {inputs}\n  Rust: a fault (an index out of bounds or a division); translation: no fault, value {}",
                    p.name,
                    describe(p, o.value)
                ),
            ),
            (Outcome::Value(_), true) => report(
                &mut s,
                format!(
                    "{}: {inputs}\n  Rust: a value; translation: a fault",
                    p.name
                ),
            ),
            (Outcome::Value(v), false) => {
                s.compared += 1;
                if !same_leaves(p.leaves, v, o.value) {
                    report(
                        &mut s,
                        format!(
                            "{}: {inputs}\n  Rust:        {}\n  translation: {}",
                            p.name,
                            describe(p, &spread(p, v)),
                            describe(p, o.value)
                        ),
                    );
                }
            }
        }
    }
    s
}

/// The C++ of a batch of programs, each in its own namespace, with an entry per program made by
/// `entry(name)`; `head` comes before the prelude (it defines `R_ON_FAULT`).
pub fn batch_text(programs: &[&Program], head: &str, entry: impl Fn(&str) -> String) -> String {
    let mut text = String::from(head);
    text.push_str(reduce_core::CUDA_PRELUDE);
    for p in programs {
        let _ = writeln!(text, "namespace {} {{\n{}}}", p.name, (p.cuda)());
        text.push_str(&entry(p.name));
    }
    text
}

/// Runs `programs` with `inputs` random pairs each through `backend` (a function from a batch
/// and its inputs to the other side's values and faults), comparing with Rust.
pub fn run<B>(
    programs: &[Program],
    inputs: usize,
    batch: usize,
    mut backend: B,
) -> Result<Summary, String>
where
    B: FnMut(&[&Program], &[(Vec<u8>, Vec<u8>)]) -> Result<Vec<Run>, String>,
{
    use rayon::prelude::*;
    // Rust's panics are expected outcomes here: keep them quiet.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut total = Summary::default();
    let mut result = Ok(());
    for chunk in programs.chunks(batch.max(1)) {
        let refs: Vec<&Program> = chunk.iter().collect();
        let data: Vec<(Vec<u8>, Vec<u8>)> = refs
            .iter()
            .map(|p| (self::inputs(p, inputs, 1), self::inputs(p, inputs, 2)))
            .collect();
        let out = match backend(&refs, &data) {
            Ok(out) => out,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        let parts: Vec<Summary> = refs
            .par_iter()
            .zip(data.par_iter())
            .zip(out.par_iter())
            .map(|((p, (a, b)), run)| {
                let other: Vec<Other> = (0..=inputs)
                    .map(|i| Other {
                        value: &run.values[i * p.size..][..p.size],
                        fault: run.faults[i] != 0,
                    })
                    .collect();
                compare(p, a, b, &other)
            })
            .collect();
        for s in parts {
            total.merge(s);
        }
    }
    std::panic::set_hook(hook);
    result.map(|()| total)
}
