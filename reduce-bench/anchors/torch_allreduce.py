# Anchor for bench_cluster: what a PyTorch user does to sum over several GPUs -- torch.sum on
# each GPU, then all_reduce over NCCL (torch.distributed), one process per GPU (mp.spawn).
# Commutative only: NCCL's operators cannot combine a non-commutative monoid (affine maps) in
# order, so there is no torch line for those.
#
# Run on the GPU machine, in the same device command as bench_cluster:
#   python3 torch_allreduce.py [--quick] > torch-allreduce.txt
# Prints, per world size and items per GPU (the slowest rank's median):
#   torch_allreduce world=G,n=N sync_ms S pipe_ms P
# sync: one sum + all_reduce + .item() (the value on the host, like Cluster::reduce);
# pipe: per call of 20 queued sum + all_reduce, then one synchronisation (like reduce_into).
import os

os.environ["NCCL_NVLS_ENABLE"] = "0"  # NVLink SHARP stays off on the shared host; before NCCL starts

import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

QUEUED = 20


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def median(xs):
    return sorted(xs)[len(xs) // 2]


def worker(rank, world, port, sizes):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=world)

    def aligned():
        dist.barrier(device_ids=[rank])
        torch.cuda.synchronize()

    for n, reps in sizes:
        x = torch.rand(n, device="cuda") + 1.0

        def once():
            s = x.sum()
            dist.all_reduce(s)
            return s

        for _ in range(3):
            once().item()
        sync = []
        for _ in range(reps):
            aligned()
            t0 = time.perf_counter()
            once().item()
            sync.append(time.perf_counter() - t0)
        pipe = []
        for _ in range(5):
            aligned()
            t0 = time.perf_counter()
            for _ in range(QUEUED):
                s = once()
            torch.cuda.synchronize()
            pipe.append((time.perf_counter() - t0) / QUEUED)
        slowest = torch.tensor([median(sync) * 1e3, median(pipe) * 1e3], device="cuda", dtype=torch.float64)
        dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(
                f"torch_allreduce world={world},n={n} sync_ms {slowest[0].item():.5f} pipe_ms {slowest[1].item():.5f}",
                flush=True,
            )
        del x
        torch.cuda.empty_cache()
    dist.destroy_process_group()


def main():
    quick = "--quick" in sys.argv
    gpus = torch.cuda.device_count()
    print("device", torch.cuda.get_device_name(0), "x", gpus, "torch", torch.__version__, "nccl", torch.cuda.nccl.version(), flush=True)
    big = [(1 << 24, 20)] if quick else [(1 << 28, 20), (1 << 30, 20)]
    small = [(1 << 10, 200), (1 << 16, 200), (1 << 20, 200)]
    for world in [w for w in (1, 2, 4) if w <= gpus]:
        mp.spawn(worker, args=(world, free_port(), big + small), nprocs=world, join=True)


if __name__ == "__main__":
    main()
