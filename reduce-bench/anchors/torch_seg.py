# PyTorch on the layouts `bench seglayouts` wrote (u32 offsets files <layout>@<n>.u32), f32 sum:
# torch.segment_reduce (lengths: the offsets form) and index_add_ (owners: the owner form).
# Run on the GPU machine: python3 torch_seg.py DIR
# Prints "torch_segment_reduce <layout>@<n> segs <S> ms <median>" and "torch_index_add_owner ...".
import os
import sys

import numpy as np
import torch

dev = torch.device("cuda")


def median_ms(fn, reps=10):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]


folder = sys.argv[1]
print("device", torch.cuda.get_device_name(0))
files = sorted(f for f in os.listdir(folder) if f.endswith(".u32"))
max_n = max(int(np.fromfile(os.path.join(folder, f), dtype=np.uint32)[-1]) for f in files)
values = torch.randint(0, 8, (max_n,), device=dev).float()
for f in files:
    layout = f[: -len(".u32")]
    offsets = torch.from_numpy(np.fromfile(os.path.join(folder, f), dtype=np.uint32).astype(np.int64)).to(dev)
    n = int(offsets[-1])
    segs = offsets.numel() - 1
    vals = values[:n]
    lengths = offsets[1:] - offsets[:-1]
    ms = median_ms(lambda: torch.segment_reduce(vals, "sum", lengths=lengths))
    print(f"torch_segment_reduce {layout} segs {segs} ms {ms:.5f}", flush=True)
    owner = torch.repeat_interleave(torch.arange(segs, device=dev), lengths)
    out = torch.zeros(segs, device=dev)
    ms = median_ms(lambda: out.zero_().index_add_(0, owner, vals))
    print(f"torch_index_add_owner {layout} segs {segs} ms {ms:.5f}", flush=True)
    del owner, out, lengths, offsets
print("done")
