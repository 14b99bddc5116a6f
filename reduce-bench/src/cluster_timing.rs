//! What `bench_cluster`'s sections share: medians of interleaved wall times, and how a
//! cluster's exchange is named in the reports.

use reduce_cuda::cluster::{Cluster, Exchange};
use std::time::Instant;

pub(crate) type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Warm-up 3 rounds, then `reps` rounds of every call in turn: the median wall time (ms) of
/// each. Interleaving makes a drift of the clocks during the run weigh on all of them alike.
pub(crate) fn interleaved_medians(
    reps: usize,
    calls: &mut [Box<dyn FnMut() -> Result<()> + '_>],
) -> Result<Vec<f64>> {
    let mut times = vec![Vec::with_capacity(reps); calls.len()];
    for round in 0..reps.max(1) + 3 {
        for (call, times) in calls.iter_mut().zip(&mut times) {
            let start = Instant::now();
            call()?;
            if round >= 3 {
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    Ok(times.into_iter().map(median).collect())
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Warm-up 3, then the median wall time (ms) of `reps` runs.
pub(crate) fn median_wall_ms<E: Into<Box<dyn std::error::Error>>>(
    reps: usize,
    mut run: impl FnMut() -> std::result::Result<(), E>,
) -> Result<f64> {
    for _ in 0..3 {
        run().map_err(Into::into)?;
    }
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let start = Instant::now();
        run().map_err(Into::into)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(median(times))
}

/// The short name of a cluster's exchange, as the reports print it.
pub(crate) fn exchange_name(cluster: &Cluster) -> &'static str {
    match cluster.exchange() {
        Exchange::PeerAccess => "peer",
        _ => "nccl",
    }
}
