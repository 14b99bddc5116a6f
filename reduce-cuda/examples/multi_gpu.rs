//! Reductions over every local GPU, or one process per GPU: affine maps (not commutative)
//! reduced over shards, and a segmented "last event per user" whose users cross shard
//! boundaries — both equal to the sequential fold, bit for bit.
//!
//!     cargo run --release --features nccl --example multi_gpu                  # every local GPU, one process
//!     multi_gpu --rank R --world W --id-file PATH [--gpu G]                    # one process per GPU
//!
//! With one process per GPU, rank 0 creates the NCCL id and writes it to PATH (it must stay
//! alive: the id's rendezvous runs in its process); the other ranks wait for the file. Without
//! NCCL or a GPU it says why and runs the same sharded plan on the CPU.

use reduce_cuda::cluster::{Cluster, ClusterError, ClusterId, Placement};
use reduce_cuda::reduce_core::shard::{fold_sharded, fold_sharded_by_owner, Shards};
use reduce_cuda::reduce_core::{fold, fold_by_owner};
use reduce_cuda::{Algorithm, Gpu, Monoid, SegAlgorithm};
use std::time::{Duration, Instant};

/// x -> a*x + b (mod 2^32); `combine(l, r)` applies l first.
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = Affine { a: 1, b: 0 },
         combine = |l, r| Affine { a: l.a.wrapping_mul(r.a),
                                   b: l.b.wrapping_mul(r.a).wrapping_add(r.b) })]
struct Affine {
    a: u32,
    b: u32,
}

/// The last event that is set (unset events carry 0, the identity's value).
#[derive(Clone, Copy, Debug, PartialEq, Monoid)]
#[repr(C)]
#[monoid(identity = LastEvent { set: false, value: 0 },
         combine = |l, r| if r.set { r } else { l })]
struct LastEvent {
    set: bool,
    value: u32,
}

/// How this process takes part.
enum Mode {
    /// Every local GPU, one process.
    Local,
    /// One rank of a cluster with one process per GPU.
    Rank {
        rank: usize,
        world: usize,
        id_file: String,
        gpu: usize,
    },
}

fn parse_args() -> Mode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        return Mode::Local;
    }
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let number = |flag: &str| value(flag).and_then(|v| v.parse::<usize>().ok());
    match (number("--rank"), number("--world"), value("--id-file")) {
        (Some(rank), Some(world), Some(id_file)) => Mode::Rank {
            rank,
            world,
            id_file,
            gpu: number("--gpu").unwrap_or(rank),
        },
        _ => {
            eprintln!("usage: multi_gpu                                              (every local GPU)\n       multi_gpu --rank R --world W --id-file PATH [--gpu G]   (one process per GPU)");
            std::process::exit(2);
        }
    }
}

fn main() {
    let cluster = match parse_args() {
        Mode::Local => {
            let gpus = (0..16).take_while(|&i| Gpu::new(i).is_ok()).count();
            if gpus == 0 {
                let why = Gpu::new(0).err().map(|e| e.to_string()).unwrap_or_default();
                return cpu_fallback(&format!("no GPU could be opened: {why}"));
            }
            Cluster::new(&(0..gpus).collect::<Vec<_>>())
        }
        Mode::Rank {
            rank,
            world,
            id_file,
            gpu,
        } => rendezvous(rank, &id_file).and_then(|id| Cluster::join(&id, rank, world, gpu)),
    };
    let cluster = match cluster {
        Ok(cluster) => cluster,
        Err(e @ (ClusterError::NcclMissing | ClusterError::Gpu(_))) => {
            return cpu_fallback(&e.to_string())
        }
        Err(e) => {
            eprintln!("could not start the cluster: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = run(&cluster) {
        eprintln!("failed: {e}");
        std::process::exit(1);
    }
}

/// Rank 0 creates the id and publishes it in `path` (written whole, then renamed); the others
/// wait for the file.
fn rendezvous(rank: usize, path: &str) -> Result<ClusterId, ClusterError> {
    if rank == 0 {
        let id = ClusterId::new()?;
        let partial = format!("{path}.partial");
        if let Err(e) =
            std::fs::write(&partial, id.to_hex()).and_then(|()| std::fs::rename(&partial, path))
        {
            eprintln!("could not write the id file {path}: {e}");
            std::process::exit(1);
        }
        return Ok(id);
    }
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            return ClusterId::from_hex(&text);
        }
        if start.elapsed() > Cluster::DEFAULT_TIMEOUT {
            return Err(ClusterError::Timeout {
                during: "waiting for rank 0's id file",
                waited: Cluster::DEFAULT_TIMEOUT,
            });
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The example's data: `n` affine maps; events of users with `u % 13` events each.
fn data() -> (Vec<Affine>, Vec<LastEvent>, Vec<u32>, usize) {
    let maps = (0..10_000_000u32)
        .map(|i| Affine {
            a: i.wrapping_mul(2_654_435_761) | 1,
            b: i,
        })
        .collect();
    let users = 1_000_000usize;
    let (mut events, mut owner) = (Vec::new(), Vec::new());
    for u in 0..users as u32 {
        for e in 0..u % 13 {
            let set = (u + e) % 4 != 0;
            owner.push(u);
            events.push(LastEvent {
                set,
                value: if set { u * 100 + e } else { 0 },
            });
        }
    }
    (maps, events, owner, users)
}

fn run(cluster: &Cluster) -> Result<(), ClusterError> {
    let (maps, events, owner, users) = data();
    let local = cluster.local_ranks();
    println!(
        "cluster: {} rank(s), this process drives {:?} on {}; exchange {:?} {}",
        cluster.world_size(),
        local,
        cluster
            .gpu(local[0])
            .map(|g| g.info().name.clone())
            .unwrap_or_default(),
        cluster.exchange(),
        match cluster.nccl_version().as_str() {
            "" => String::new(),
            version => format!("(NCCL {version})"),
        }
    );

    // Plain: even shards, one per rank; the partials are joined in rank order.
    let xs = cluster.scatter(&maps)?;
    let start = Instant::now();
    let total = cluster.reduce(&xs, Algorithm::Auto)?;
    println!(
        "reduced {} affine maps over shards {:?} in {:?}: {total:?}, equal to the sequential fold: {}",
        maps.len(),
        xs.shards().lens(),
        start.elapsed(),
        total == fold(&maps)
    );

    // Segmented: users cross shard boundaries; every rank gets every user's last event.
    let items = cluster.scatter(&events)?;
    let owners = cluster.scatter(&owner)?;
    let last =
        cluster.reduce_by_owner(&items, &owners, users, SegAlgorithm::Auto, Placement::All)?;
    let part = &last.parts()[0];
    let values = cluster
        .gpu(part.rank)
        .expect("a local rank")
        .download(&part.values)?;
    let expected = fold_by_owner(&events, &owner, users).expect("a valid layout");
    println!(
        "last event of {users} users over {} events: user 12's is {:?}; rank {} owns users {:?}; equal to the sequential fold: {}",
        events.len(),
        values[12],
        part.rank,
        last.plan().owned(part.rank),
        values == expected
    );
    Ok(())
}

/// Without NCCL or a GPU: the same shards and the same rank-order join, on the CPU.
fn cpu_fallback(why: &str) {
    println!("no cluster: {why}\nrunning the same sharded plan on the CPU (4 shards) instead");
    let (maps, events, owner, users) = data();
    let shards = Shards::even(maps.len(), 4).expect("4 ranks");
    let total = fold_sharded(&shards, &maps).expect("matching lengths");
    println!(
        "reduced {} affine maps over shards {:?}: {total:?}, equal to the sequential fold: {}",
        maps.len(),
        shards.lens(),
        total == fold(&maps)
    );
    let shards = Shards::even(events.len(), 4).expect("4 ranks");
    let owned = fold_sharded_by_owner(&shards, &events, &owner, users).expect("a valid layout");
    println!(
        "last event of {users} users over {} events, owned per shard: {:?} users; equal to the sequential fold: {}",
        events.len(),
        owned.iter().map(Vec::len).collect::<Vec<_>>(),
        owned.concat() == fold_by_owner(&events, &owner, users).expect("a valid layout")
    );
}
