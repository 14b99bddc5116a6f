//! One host thread per local rank, so that the ranks' launches are queued at the same time
//! rather than one GPU after another: with g GPUs driven from one thread, the last GPU starts
//! its reduction (g - 1) launch costs after the first, and a synchronous call waits for it.
//!
//! [`Crew::run`] runs a closure for every rank: rank 0's on the calling thread, the others' on
//! threads the crew keeps for the cluster's life. A thread spins for a while after each job
//! (the next call of a loop finds it awake) and then parks. `run` returns only when every job
//! has ended, so the jobs may borrow from the caller's stack; a panic in a job is raised again
//! on the calling thread, after the others have ended.

use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

/// How long a worker spins for the next job before it parks.
const SPIN: Duration = Duration::from_millis(2);

const IDLE: u32 = 0;
const POSTED: u32 = 1;
const DONE: u32 = 2;
const QUIT: u32 = 3;

/// A job with its borrows' lifetime erased (see the safety argument in [`Crew::run`]).
type Job = Box<dyn FnOnce() -> Option<Box<dyn Any + Send>> + Send + 'static>;

/// One worker's mailbox: the job, and what became of it.
struct Slot {
    state: AtomicU32,
    job: UnsafeCell<Option<Job>>,
    /// A panic of the last job.
    panic: UnsafeCell<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `job` and `panic` are handed over through `state`: the poster writes them only while
// the state is IDLE or DONE (the worker does not touch them), the worker only while POSTED.
unsafe impl Sync for Slot {}

struct Worker {
    slot: Arc<Slot>,
    thread: Thread,
    handle: Option<JoinHandle<()>>,
}

/// The launch threads of a cluster's local ranks after the first.
pub(crate) struct Crew {
    workers: Vec<Worker>,
    /// Held through [`Crew::run`]: one caller at a time posts to the workers (a `Cluster` is
    /// `Sync`, and not every call holds its state lock).
    posting: Mutex<()>,
}

impl Crew {
    /// Threads for `ranks` local ranks (none for one). If a thread cannot be started, the crew
    /// runs those ranks' jobs on the calling thread.
    pub fn new(ranks: usize) -> Crew {
        let mut workers = Vec::new();
        for i in 1..ranks {
            let slot = Arc::new(Slot {
                state: AtomicU32::new(IDLE),
                job: UnsafeCell::new(None),
                panic: UnsafeCell::new(None),
            });
            let theirs = slot.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("reduce-rank-{i}"))
                .spawn(move || work(&theirs));
            match spawned {
                Ok(handle) => workers.push(Worker {
                    slot,
                    thread: handle.thread().clone(),
                    handle: Some(handle),
                }),
                Err(_) => break,
            }
        }
        Crew {
            workers,
            posting: Mutex::new(()),
        }
    }

    /// `job(i)` for every rank i below `ranks`, at the same time; the results in rank order.
    pub fn run<T: Send>(&self, ranks: usize, job: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let _posting = self.posting.lock().unwrap_or_else(|e| e.into_inner());
        let mut results: Vec<Option<T>> = (0..ranks).map(|_| None).collect();
        let (first, rest) = results.split_at_mut(1.min(ranks));
        let mut posted = Vec::new();
        let mut inline = Vec::new();
        for (k, out) in rest.iter_mut().enumerate() {
            let i = k + 1;
            let Some(worker) = self.workers.get(k) else {
                inline.push((i, out));
                continue;
            };
            let job = &job;
            let task: Box<dyn FnOnce() -> Option<Box<dyn Any + Send>> + Send + '_> =
                Box::new(move || catch_unwind(AssertUnwindSafe(|| *out = Some(job(i)))).err());
            // SAFETY: the task borrows `job` and `results` from this frame; this function does
            // not return (nor unwind: every job's panic is caught) before the worker has
            // marked the task DONE, after which it no longer touches them.
            let task: Job = unsafe { std::mem::transmute(task) };
            // SAFETY: the worker is IDLE (every earlier task was waited for): it does not
            // touch the cell until it sees POSTED.
            unsafe { *worker.slot.job.get() = Some(task) };
            worker.slot.state.store(POSTED, Ordering::Release);
            worker.thread.unpark();
            posted.push(worker);
        }
        let mut panic = None;
        if let Some(out) = first.first_mut() {
            panic = catch_unwind(AssertUnwindSafe(|| *out = Some(job(0)))).err();
        }
        for (i, out) in inline {
            let caught = catch_unwind(AssertUnwindSafe(|| *out = Some(job(i)))).err();
            panic = panic.or(caught);
        }
        for worker in posted {
            let mut spins = 0u32;
            while worker.slot.state.load(Ordering::Acquire) != DONE {
                // Spin while a launch is likely to end soon; yield through a long job.
                spins = spins.saturating_add(1);
                if spins < 1 << 12 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
            // SAFETY: DONE: the worker has stored the panic and does not touch it again.
            let caught = unsafe { (*worker.slot.panic.get()).take() };
            worker.slot.state.store(IDLE, Ordering::Relaxed);
            panic = panic.or(caught);
        }
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
        results
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect()
    }
}

/// A worker: runs each posted job, spinning for the next one for `SPIN`, then parking.
fn work(slot: &Slot) {
    let mut idle_since = Instant::now();
    loop {
        match slot.state.load(Ordering::Acquire) {
            POSTED => {
                // SAFETY: POSTED: the poster has written the job and waits for DONE.
                let job = unsafe { (*slot.job.get()).take() };
                let caught = job.and_then(|job| job());
                // SAFETY: still POSTED: the poster reads the panic only after DONE.
                unsafe { *slot.panic.get() = caught };
                slot.state.store(DONE, Ordering::Release);
                idle_since = Instant::now();
            }
            QUIT => return,
            _ if idle_since.elapsed() < SPIN => std::hint::spin_loop(),
            _ => std::thread::park_timeout(Duration::from_millis(100)),
        }
    }
}

impl Drop for Crew {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            worker.slot.state.store(QUIT, Ordering::Release);
            worker.thread.unpark();
            if let Some(handle) = worker.handle.take() {
                let _ = handle.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rank_runs_once_in_order_and_borrows_work() {
        let crew = Crew::new(4);
        let base = [10u64, 20, 30, 40];
        for round in 0..200u64 {
            let got = crew.run(4, |i| base[i] + round);
            assert_eq!(got, vec![10 + round, 20 + round, 30 + round, 40 + round]);
        }
        // More ranks than workers: the rest run on the calling thread.
        assert_eq!(crew.run(6, |i| i * 2), vec![0, 2, 4, 6, 8, 10]);
        assert_eq!(crew.run(1, |i| i), vec![0]);
        assert_eq!(crew.run(0, |i| i), Vec::<usize>::new());
        // After the workers have parked.
        std::thread::sleep(SPIN * 3);
        assert_eq!(crew.run(4, |i| i), vec![0, 1, 2, 3]);
    }

    #[test]
    fn callers_on_several_threads_take_turns() {
        let crew = Crew::new(3);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let crew = &crew;
                s.spawn(move || {
                    for round in 0..300u64 {
                        let got = crew.run(3, |i| (t, round, i));
                        assert_eq!(got, vec![(t, round, 0), (t, round, 1), (t, round, 2)]);
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_job_is_raised_on_the_caller_after_the_others_end() {
        let crew = Crew::new(3);
        let ended = std::sync::atomic::AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            crew.run(3, |i| {
                if i == 1 {
                    panic!("rank 1");
                }
                std::thread::sleep(Duration::from_millis(20));
                ended.fetch_add(1, Ordering::SeqCst);
            })
        }));
        assert!(caught.is_err());
        assert_eq!(ended.load(Ordering::SeqCst), 2);
        assert_eq!(crew.run(3, |i| i + 1), vec![1, 2, 3]);
    }
}
