//! `bench`: the one-GPU benchmarks, a mode per experiment (see the crate docs).

fn main() {
    reduce_bench::bench_main()
}
