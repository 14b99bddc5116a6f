# torch.argmax on the sizes of `bench argmax`, in the same device command:
#   python3 reduce-bench/anchors/argmax_torch.py
# Prints "torch_argmax_f32 n=<N> ms <median ms> index <i>" (f32 in [1, 2), buffers rotated over
# more than 4x the L2, as the other sides).
import torch

dev = torch.device("cuda")
torch.manual_seed(0)
l2 = torch.cuda.get_device_properties(0).L2_cache_size


def median_ms(fn, reps=20):
    for i in range(3):
        fn(i)
    torch.cuda.synchronize()
    ts = []
    for i in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn(i)
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]


print("device", torch.cuda.get_device_name(0))
for lg in (20, 24, 28):
    n = 1 << lg
    rotation = max(1, min(16, -(-4 * l2 // (n * 4))))
    bufs = [torch.rand(n, device=dev) + 1.0 for _ in range(rotation)]
    ms = median_ms(lambda i: torch.argmax(bufs[i % rotation]))
    index = int(torch.argmax(bufs[0]).item())
    print(f"torch_argmax_f32 n={n} ms {ms:.5f} GBs {n * 4 / ms / 1e6:.1f} index {index}")
    del bufs
