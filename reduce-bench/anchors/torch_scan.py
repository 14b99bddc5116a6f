# torch.cumsum on f32 at the sizes of `bench scan`, in the same device command:
#   python3 reduce-bench/anchors/torch_scan.py
# into a preallocated output (out=), like our scan_into. Prints
# "torch_cumsum_f32_inclusive n=<N> ms <median ms>" (torch has no exclusive cumsum).
import torch

def median_ms(f, reps=20):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        f()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]

print("device", torch.cuda.get_device_name(0), "torch", torch.__version__)
for lg in (20, 24, 28):
    n = 1 << lg
    x = torch.rand(n, device="cuda", dtype=torch.float32) + 1.0
    y = torch.empty_like(x)
    ms = median_ms(lambda: torch.cumsum(x, 0, out=y))
    print(f"torch_cumsum_f32_inclusive n={n} ms {ms:.4f}", flush=True)
