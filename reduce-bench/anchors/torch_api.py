# PyTorch's equivalents of `bench api`'s calls, as users call them, by the host clock around the
# call and a synchronisation (median of 50 after 3): x.sum().item(), torch.argmax(x).item(), and
# torch.segment_reduce with its output allocated on the layouts `bench seglayouts` wrote (f32).
# Run on the GPU machine: python3 torch_api.py [LAYOUTS_DIR]
# Prints "api torch_api <call> <monoid> <layout>@<n> us <median us>".
import os
import sys
import time

import numpy as np
import torch

dev = torch.device("cuda")


def host_median_us(fn, reps=50):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - start) * 1e6)
    return sorted(ts)[len(ts) // 2]


print("device", torch.cuda.get_device_name(0))
for log in (10, 16, 20, 24, 28):
    n = 1 << log
    x = torch.rand(n, device=dev) + 1.0
    us = host_median_us(lambda: x.sum().item())
    print(f"api torch_api reduce f32_sum plain@{n} us {us:.2f}", flush=True)
    us = host_median_us(lambda: torch.argmax(x).item())
    print(f"api torch_api reduce_lifted argmax_f32 plain@{n} us {us:.2f}", flush=True)
    del x
if len(sys.argv) > 1:
    folder = sys.argv[1]
    for f in sorted(f for f in os.listdir(folder) if f.endswith(".u32")):
        layout = f[: -len(".u32")]
        offsets = np.fromfile(os.path.join(folder, f), dtype=np.uint32).astype(np.int64)
        n = int(offsets[-1])
        if n != 1 << 26 or "mean_" in layout:
            continue
        vals = torch.rand(n, device=dev) + 1.0
        lengths = torch.from_numpy(offsets[1:] - offsets[:-1]).to(dev)
        us = host_median_us(lambda: torch.segment_reduce(vals, "sum", lengths=lengths))
        print(f"api torch_api reduce_segments f32_sum {layout} us {us:.2f}", flush=True)
        del vals, lengths
print("done")
