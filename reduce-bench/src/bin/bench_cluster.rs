//! `bench_cluster`: reductions over several GPUs in one process (feature `nccl`; see the crate
//! docs).

fn main() {
    reduce_bench::bench_cluster_main()
}
