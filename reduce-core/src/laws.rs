//! Checking the monoid laws of a user's type with proptest (feature `proptest`).
//!
//! Every algorithm in this project relies on associativity and on the identity; the
//! order-free kernels rely on commutativity, which is used only when
//! [`Monoid::COMMUTATIVE`] promises it. Test your monoid once with:
//!
//! ```
//! use proptest::prelude::*;
//! use reduce_core::{laws, Monoid};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, Monoid)]
//! #[repr(C)]
//! #[monoid(identity = Affine { a: 1, b: 0 },
//!          combine = |l, r| Affine { a: l.a.wrapping_mul(r.a),
//!                                    b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
//! struct Affine { a: u32, b: u32 }
//!
//! let affine = (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Affine { a, b });
//! laws::assert_monoid(affine);
//! ```

use crate::Monoid;
use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestError, TestRunner};
use std::fmt::Debug;

/// A law that failed, with the smallest counterexample proptest found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LawFailure {
    /// Which law: "left identity", "right identity", "associativity" or "commutativity", or
    /// "(combine or identity panicked)" where a case panicked (`detail` holds its message).
    pub law: &'static str,
    /// The counterexample and both sides of the broken equation, formatted with `Debug`.
    pub detail: String,
}

impl std::fmt::Display for LawFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} does not hold: {}", self.law, self.detail)
    }
}

impl std::error::Error for LawFailure {}

/// Checks identity, associativity and (if declared) commutativity with `==`.
pub fn verify<M, S>(values: S) -> Result<(), LawFailure>
where
    M: Monoid + PartialEq + Debug,
    S: Strategy<Value = M>,
{
    let config = Config {
        failure_persistence: None,
        ..Config::default()
    };
    verify_with(values, config, |a: &M, b: &M| a == b)
}

/// Like [`verify`] with your own proptest configuration and equality (for example a bitwise
/// comparison of floats, or a tolerance where the monoid is only approximately associative).
pub fn verify_with<M, S, E>(values: S, config: Config, eq: E) -> Result<(), LawFailure>
where
    M: Monoid + Debug,
    S: Strategy<Value = M>,
    E: Fn(&M, &M) -> bool,
{
    let mut runner = TestRunner::new(config);
    // The failure's message starts with the law's name; a case that panicked (an overflow in
    // `combine`, say) has proptest's message instead.
    const LAWS: [&str; 4] = [
        "left identity",
        "right identity",
        "associativity",
        "commutativity (declared with `commutative`)",
    ];
    let outcome = runner.run(&(&values, &values, &values), |(a, b, c)| {
        let holds = |name: &'static str, left: M, right: M, what: String| {
            if eq(&left, &right) {
                Ok(())
            } else {
                Err(TestCaseError::fail(format!(
                    "{name}: {what}: {left:?} != {right:?}"
                )))
            }
        };
        let e = M::identity();
        holds(
            LAWS[0],
            M::combine(e, a),
            a,
            format!("combine(identity, {a:?})"),
        )?;
        holds(
            LAWS[1],
            M::combine(a, e),
            a,
            format!("combine({a:?}, identity)"),
        )?;
        holds(
            LAWS[2],
            M::combine(M::combine(a, b), c),
            M::combine(a, M::combine(b, c)),
            format!("a = {a:?}, b = {b:?}, c = {c:?}: (a.b).c vs a.(b.c)"),
        )?;
        if M::COMMUTATIVE {
            holds(
                LAWS[3],
                M::combine(a, b),
                M::combine(b, a),
                format!("a = {a:?}, b = {b:?}: a.b vs b.a"),
            )?;
        }
        Ok(())
    });
    match outcome {
        Ok(()) => Ok(()),
        Err(TestError::Fail(reason, _)) => {
            let reason = reason.to_string();
            let named = LAWS.iter().find_map(|&law| {
                let detail = reason.strip_prefix(law)?.strip_prefix(": ")?;
                Some((law, detail.to_string()))
            });
            let (law, detail) = named.unwrap_or(("(combine or identity panicked)", reason));
            Err(LawFailure { law, detail })
        }
        Err(TestError::Abort(reason)) => Err(LawFailure {
            law: "(proptest aborted)",
            detail: reason.to_string(),
        }),
    }
}

/// Panics with the counterexample if [`verify`] finds a broken law. For use in `#[test]`s.
#[track_caller]
pub fn assert_monoid<M, S>(values: S)
where
    M: Monoid + PartialEq + Debug,
    S: Strategy<Value = M>,
{
    if let Err(failure) = verify(values) {
        panic!("{failure}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Max, Sum};
    use proptest::prelude::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Subtract(i32);
    impl Monoid for Subtract {
        fn identity() -> Self {
            Subtract(0)
        }
        fn combine(l: Self, r: Self) -> Self {
            Subtract(l.0.wrapping_sub(r.0))
        }
    }

    /// A sum that panics on overflow.
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Checked(u8);
    impl Monoid for Checked {
        fn identity() -> Self {
            Checked(0)
        }
        fn combine(l: Self, r: Self) -> Self {
            Checked(l.0.checked_add(r.0).expect("u8 overflow"))
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq)]
    struct KeepFirstClaimedCommutative(u8);
    impl Monoid for KeepFirstClaimedCommutative {
        fn identity() -> Self {
            Self(0)
        }
        fn combine(l: Self, r: Self) -> Self {
            if l.0 == 0 {
                r
            } else {
                l
            }
        }
        const COMMUTATIVE: bool = true;
    }

    #[test]
    fn lawful_monoids_pass() {
        verify(any::<u64>().prop_map(Sum)).unwrap();
        verify(any::<i16>().prop_map(Max)).unwrap();
    }

    #[test]
    fn verify_with_takes_the_callers_equality_and_configuration() {
        let config = Config {
            cases: 64,
            failure_persistence: None,
            ..Config::default()
        };
        // f32 sums of small integers are exact: lawful under a bitwise equality
        let small = (0u8..100).prop_map(|v| Sum(v as f32));
        let bits = |a: &Sum<f32>, b: &Sum<f32>| a.0.to_bits() == b.0.to_bits();
        verify_with(small, config.clone(), bits).unwrap();
        // 1.0 + 2^-24 + 2^-24 rounds differently by grouping: caught under the same equality
        // (each case draws a breaking triple, (1, 2^-24, 2^-24) or (2^-24, 2^-24, 1), with odds
        // 1/4: 512 cases miss both about once in 10^64)
        let tiny = prop_oneof![Just(Sum(1.0f32)), Just(Sum(f32::EPSILON / 2.0))];
        let many = Config {
            cases: 512,
            ..config.clone()
        };
        let failure = verify_with(tiny, many, bits).unwrap_err();
        assert_eq!(failure.law, "associativity", "{failure}");
        // and accepted by a tolerance
        let tiny = prop_oneof![Just(Sum(1.0f32)), Just(Sum(f32::EPSILON / 2.0))];
        verify_with(tiny, config, |a, b| (a.0 - b.0).abs() <= 4.0 * f32::EPSILON).unwrap();
    }

    #[test]
    fn subtraction_is_caught() {
        let failure = verify(any::<i32>().prop_map(Subtract)).unwrap_err();
        assert!(["right identity", "left identity", "associativity"].contains(&failure.law));
    }

    #[test]
    fn a_panicking_combine_is_named_as_such() {
        let failure = verify(any::<u8>().prop_map(Checked)).unwrap_err();
        assert_eq!(failure.law, "(combine or identity panicked)", "{failure}");
        assert!(failure.detail.contains("u8 overflow"), "{failure}");
    }

    #[test]
    fn a_false_commutativity_promise_is_caught() {
        let failure = verify(any::<u8>().prop_map(KeepFirstClaimedCommutative)).unwrap_err();
        assert!(failure.law.starts_with("commutativity"), "{failure}");
    }
}
