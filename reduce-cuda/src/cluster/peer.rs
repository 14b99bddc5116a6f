//! The exchange of a cluster whose ranks are all in this process and can read and write each
//! other's memory (NVLink or PCIe peer access): the same collectives as NCCL's ([`Op`]), run by
//! one small kernel per rank (`shard_exchange` of `kernels/shard.cu`) that the streams queue
//! behind the ranks' own reductions — no host round trip, no NCCL group to post.
//!
//! Each rank's memory pool is opened to every other rank, so a kernel reads its peers' send
//! buffers where they are. The ranks meet in mailboxes (one per rank, in its memory; slot t
//! written by rank t, two sets used in turn): a rank announces its send buffer and exchange
//! number, and copies its sources once all have announced. A send buffer is read until the
//! next exchange has begun on every rank: it may be rewritten only by work queued after the
//! rank's next exchange, or after the host has waited for every rank (`kernels/shard.cu` says
//! why). Every wait on the device is bounded by the cluster's timeout and by an abort word the
//! host sets; a launch that gives up stores its reason in a status word the host reads after
//! the streams are idle.

use super::comm::{bind, Deadline, Op};
use super::error::{ClusterError, Result};
use super::kernels::{launch_shard, load_shard, ExchangeArgs, SHARD_EXCHANGE};
use crate::device::{DeviceVec, Pinned};
use crate::gpu::Gpu;
use reduce_core::{CudaMonoid, Sum};
use std::time::Duration;

/// The most ranks the exchange kernel serves (one thread of a block per rank).
pub(crate) const MAX_RANKS: usize = 32;
/// `root` of an all-gather.
const ALL: u64 = u64::MAX;
/// Bytes one thread of the exchange copies, about: sets the grid of large exchanges.
const BYTES_PER_THREAD: usize = 64;
/// The exchange kernel's block size (`launch_over`'s, which its grid assumes).
pub(crate) const BLOCK: u32 = 256;
/// How long the host waits for kernels told to abort.
const ABORT_WAIT: Duration = Duration::from_secs(10);

/// One local rank's side of the exchange.
struct Side {
    /// `4 * world` u64: two sets of slots {address, seq} its peers write.
    mailbox: DeviceVec<u64>,
    /// Every rank's mailbox address, in rank order.
    mailboxes: DeviceVec<u64>,
    /// Set by the host to make waiting launches give up.
    abort: Pinned,
    /// 0, or why a launch gave up (1: timed out, 2: aborted).
    status: Pinned,
}

/// The peer-access exchange of an all-local cluster, rank i on `gpus[i]`.
pub(crate) struct Peers {
    gpus: Vec<Gpu>,
    sides: Vec<Side>,
    /// The number of the last exchange (the same on every rank: calls are collective).
    seq: u64,
}

impl Peers {
    /// The exchange between `gpus` (rank i on `gpus[i]`), or `None` when some pair of devices
    /// cannot access each other's memory (or there are more ranks than it serves).
    pub fn open(gpus: &[&Gpu]) -> Result<Option<Peers>> {
        if gpus.is_empty() || gpus.len() > MAX_RANKS {
            return Ok(None);
        }
        for a in gpus {
            for b in gpus {
                if a.info().ordinal != b.info().ordinal && !a.device().can_access(b.device())? {
                    return Ok(None);
                }
            }
        }
        for a in gpus {
            bind(a)?;
            for b in gpus {
                if a.info().ordinal != b.info().ordinal {
                    a.device().open_memory_to(b.device())?;
                }
            }
        }
        let world = gpus.len();
        let mut sides = Vec::with_capacity(world);
        for gpu in gpus {
            bind(gpu)?;
            load_shard::<Sum<u32>, _>(gpu, SHARD_EXCHANGE, BLOCK)?;
            let ctx = &gpu.device().ctx;
            sides.push(Side {
                mailbox: gpu.zeroed::<u64>(4 * world)?,
                mailboxes: gpu.zeroed::<u64>(world)?,
                abort: Pinned::zeroed(ctx, 4)?,
                status: Pinned::zeroed(ctx, 4)?,
            });
        }
        let addresses: Vec<u64> = sides.iter().map(|s| s.mailbox.address()).collect();
        for (gpu, side) in gpus.iter().zip(&mut sides) {
            gpu.upload_into(&mut side.mailboxes, &addresses)?;
        }
        for gpu in gpus {
            gpu.synchronize()?;
        }
        Ok(Some(Peers {
            gpus: gpus.iter().map(|&g| g.clone()).collect(),
            sides,
            seq: 0,
        }))
    }

    /// Queues every rank's collectives (rank i runs `ops[i]`; every rank lists the same kinds,
    /// sizes and roots, in the same order) and, with `wait`, waits for them. Without `wait`,
    /// a send buffer may be rewritten only by work a rank queues after its next exchange
    /// (`kernels/shard.cu` says why).
    pub fn run(
        &mut self,
        ops: &[Vec<Op>],
        during: &'static str,
        timeout: Duration,
        wait: bool,
    ) -> Result<()> {
        let count = ops.first().map_or(0, Vec::len);
        if ops.len() != self.sides.len() || ops.iter().any(|o| o.len() != count) {
            return Err(ClusterError::Gpu(crate::Error::Internal(
                "the ranks' collectives differ".into(),
            )));
        }
        let first = self.reserve(count);
        for j in 0..count {
            for (rank, ops) in ops.iter().enumerate() {
                self.launch::<Sum<u32>>(rank, first + j as u64, ops[j], None, timeout)?;
            }
        }
        if wait {
            self.wait_all(during, timeout)?;
        }
        Ok(())
    }

    /// Numbers `count` exchanges: the first one's number (the others follow it).
    pub fn reserve(&mut self, count: usize) -> u64 {
        self.seq += count as u64;
        self.seq + 1 - count as u64
    }

    /// Queues rank `rank`'s part of exchange number `seq` ([`Peers::reserve`]), collective `op`
    /// (every rank queues its part of every exchange, in number order). With `fold_into`, `op`
    /// is an all-gather of one value of `M` per rank, which the same launch then folds in rank
    /// order into that address (its kernel loaded beforehand: [`load_shard`]); without, `M` is
    /// any monoid (the kernel combines nothing).
    pub fn launch<M: CudaMonoid>(
        &self,
        rank: usize,
        seq: u64,
        op: Op,
        fold_into: Option<u64>,
        timeout: Duration,
    ) -> Result<()> {
        let (gpu, side) = (&self.gpus[rank], &self.sides[rank]);
        let (send, recv, bytes, root, moved) = match op {
            Op::AllGather { send, recv, bytes } => {
                (send, recv, bytes, ALL, bytes * self.sides.len())
            }
            Op::Broadcast {
                send,
                recv,
                bytes,
                root,
            } => (send, recv, bytes, root as u64, bytes),
        };
        if root != ALL && root as usize >= self.sides.len() {
            return Err(ClusterError::Gpu(crate::Error::Internal(format!(
                "a broadcast from rank {root} of {}",
                self.sides.len()
            ))));
        }
        let args = ExchangeArgs {
            rank: rank as u64,
            world: self.sides.len() as u64,
            root,
            seq,
            send,
            bytes: bytes as u64,
            recv,
            out: fold_into.unwrap_or(0),
            mailbox: side.mailbox.address(),
            mailboxes: side.mailboxes.address(),
            timeout_ns: u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX),
            abort: side.abort.device_address(),
            status: side.status.device_address(),
        };
        bind(gpu)?;
        // The fold needs every value in one block; otherwise the grid grows with the bytes.
        let threads = match fold_into {
            Some(_) => None,
            None => Some(moved.div_ceil(BYTES_PER_THREAD).max(1) as u64),
        };
        launch_shard::<M, _>(gpu, SHARD_EXCHANGE, BLOCK, threads, args)
    }

    /// Waits until every rank's stream is idle (at most `timeout`), then reports an exchange
    /// that gave up. The streams are polled in turn, so that a rank's failure is seen at once
    /// (its peers' exchanges wait for it; the caller aborts them).
    pub fn wait_all(&self, during: &'static str, timeout: Duration) -> Result<()> {
        let deadline = Deadline::new(timeout);
        let mut busy: Vec<&Gpu> = self.gpus.iter().collect();
        while !busy.is_empty() {
            let mut still = Vec::with_capacity(busy.len());
            for gpu in busy {
                if !gpu.device().is_idle(during)? {
                    still.push(gpu);
                }
            }
            busy = still;
            if !busy.is_empty() {
                deadline.check(during)?;
                deadline.pause();
            }
        }
        for side in &self.sides {
            // SAFETY: a live pinned word; the launches that store into it have completed.
            if unsafe { side.status.read::<u32>() } != 0 {
                return Err(ClusterError::Timeout {
                    during,
                    waited: timeout,
                });
            }
        }
        Ok(())
    }

    /// Makes every waiting exchange launch give up, and waits (at most `ABORT_WAIT`) for the
    /// streams; whether they are idle.
    pub fn abort(&mut self) -> bool {
        for side in &self.sides {
            // SAFETY: a live pinned word; the kernels only read it.
            unsafe { side.abort.write(1u32) };
        }
        self.settle()
    }

    /// Waits at most `ABORT_WAIT` for every stream to be idle (a lost context counts as idle:
    /// nothing runs there any more); whether they are.
    fn settle(&self) -> bool {
        let deadline = Deadline::new(ABORT_WAIT);
        self.gpus.iter().all(|gpu| loop {
            match gpu.device().is_idle("ending the exchange") {
                Ok(false) if deadline.check("ending the exchange").is_ok() => deadline.pause(),
                Ok(false) => return false,
                _ => return true,
            }
        })
    }
}

impl Drop for Peers {
    /// Queued exchanges finish first (all ranks' parts are queued), and only what still waits
    /// after that is aborted. No launch may still use the mailboxes or the pinned words when
    /// they are freed: if the streams do not empty even then, they are left allocated.
    fn drop(&mut self) {
        if self.settle() || self.abort() {
            return;
        }
        for side in std::mem::take(&mut self.sides) {
            std::mem::forget(side);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// Two ranks on GPUs `first` and `second` (two streams of one context when they are the
    /// same), or `None` without them (a failure with `REDUCE_REQUIRE_GPU=1` when GPU 0 is
    /// missing; a second GPU is only asked for where the test needs one).
    fn two_ranks(first: usize, second: usize) -> Option<(Gpu, Gpu)> {
        match (Gpu::new(first), Gpu::new(second)) {
            (Ok(a), Ok(b)) => Some((a, b)),
            (Err(e), _) | (_, Err(e)) => {
                assert!(
                    std::env::var("REDUCE_REQUIRE_GPU").map_or(true, |v| v != "1")
                        || Gpu::new(0).is_ok(),
                    "REDUCE_REQUIRE_GPU=1 but {e}"
                );
                eprintln!("skipped: GPUs {first} and {second}: {e}");
                None
            }
        }
    }

    /// A rank whose peer never launches its part gives up on the device at the timeout, and
    /// the host reports a timeout; a second wait is stopped by the host's abort.
    #[test]
    fn a_missing_peer_is_a_timeout_on_the_device_and_abort_stops_the_wait() {
        // Rank 1 never launches: both ranks may share a device.
        let Some((a, b)) = two_ranks(0, 0) else {
            return;
        };
        let mut peers = Peers::open(&[&a, &b]).unwrap().expect("one device");
        let send = a.upload(&[7u64]).unwrap();
        let recv = a.zeroed::<u64>(2).unwrap();
        let op = Op::AllGather {
            send: send.address(),
            recv: recv.address(),
            bytes: 8,
        };
        let seq = peers.reserve(1);
        let start = Instant::now();
        peers
            .launch::<Sum<u32>>(0, seq, op, None, Duration::from_millis(200))
            .unwrap();
        let waited = peers.wait_all("a test exchange", Duration::from_secs(20));
        assert!(
            matches!(waited, Err(ClusterError::Timeout { .. })),
            "{waited:?}"
        );
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(200) && took < Duration::from_secs(10),
            "{took:?}"
        );

        let mut peers = Peers::open(&[&a, &b]).unwrap().expect("one device");
        let seq = peers.reserve(1);
        peers
            .launch::<Sum<u32>>(0, seq, op, None, Duration::from_secs(60))
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let start = Instant::now();
        peers.abort();
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(a.device().is_idle("test").unwrap());
        // SAFETY: the launch has completed.
        assert_eq!(unsafe { peers.sides[0].status.read::<u32>() }, 2);
    }

    /// Two ranks exchange in order: each gets both values, rank order. On two devices: ranks
    /// that share a context could wait for each other through a context-wide wait of another
    /// test (a cluster has one rank per device).
    #[test]
    fn two_ranks_gather_and_broadcast() {
        let Some((a, b)) = two_ranks(0, 1) else {
            return;
        };
        let Some(mut peers) = Peers::open(&[&a, &b]).unwrap() else {
            eprintln!("skipped: GPUs 0 and 1 cannot access each other's memory");
            return;
        };
        let sends = [
            a.upload(&[1u32, 2, 3]).unwrap(),
            b.upload(&[4u32, 5, 6]).unwrap(),
        ];
        let recvs = [a.zeroed::<u32>(8).unwrap(), b.zeroed::<u32>(8).unwrap()];
        for round in 0..50 {
            let ops: Vec<Vec<Op>> = (0..2)
                .map(|r| {
                    vec![
                        Op::AllGather {
                            send: sends[r].address(),
                            recv: recvs[r].address(),
                            bytes: 12,
                        },
                        Op::Broadcast {
                            send: sends[r].address(),
                            recv: recvs[r].address() + 24,
                            bytes: 8,
                            root: round % 2,
                        },
                    ]
                })
                .collect();
            let wait = round % 10 == 9;
            peers
                .run(&ops, "a test exchange", Duration::from_secs(20), wait)
                .unwrap();
        }
        peers
            .wait_all("a test exchange", Duration::from_secs(20))
            .unwrap();
        // The last broadcast's root is rank 1.
        for (gpu, recv) in [(&a, &recvs[0]), (&b, &recvs[1])] {
            assert_eq!(gpu.download(recv).unwrap(), vec![1, 2, 3, 4, 5, 6, 4, 5]);
        }
        // An all-gather of one value per rank, folded by the same launch: 1 + 4 on both.
        let seq = peers.reserve(1);
        let outs = [a.zeroed::<u32>(1).unwrap(), b.zeroed::<u32>(1).unwrap()];
        for rank in 0..2 {
            let op = Op::AllGather {
                send: sends[rank].address(),
                recv: recvs[rank].address(),
                bytes: 4,
            };
            let out = Some(outs[rank].address());
            peers
                .launch::<Sum<u32>>(rank, seq, op, out, Duration::from_secs(20))
                .unwrap();
        }
        peers
            .wait_all("a test exchange", Duration::from_secs(20))
            .unwrap();
        for (gpu, out) in [(&a, &outs[0]), (&b, &outs[1])] {
            assert_eq!(gpu.download(out).unwrap(), vec![5]);
        }
    }
}
