//! cudarc's driver errors as reduce-cuda's, for the few driver calls the harness makes itself.

use reduce_cuda::cudarc::driver::DriverError;
use reduce_cuda::Error;

/// Wraps a driver error with what the harness was doing: `.map_err(driver("..."))`.
pub fn driver(during: &'static str) -> impl Fn(DriverError) -> Error {
    move |source| Error::Driver { during, source }
}
