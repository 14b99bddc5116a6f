# PyTorch's reductions along axes on the shapes of `bench axes`, in the same device command:
#   python3 reduce-bench/anchors/torch_axes.py [LOG2]
# f32 sums: torch.sum(x.view(shape), dim, out=) over 2^LOG2 items (default 26, as `bench axes
# --log2`) (the rows and columns of (R, C)
# and the middle axis of (B, K, C)); per row of logits torch.argmax and torch.logsumexp. Prints
# "torch_<op>:<shape>:<axes> n=<items> ms <median ms> correct yes|NO", shape as AxB, axes as in
# bench axes (the reduced dims, space-free: 0 or 1); `correct` compares with a float64 sum.
import sys

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

def report(op, shape, dim, n, ms, ok):
    label = "x".join(str(e) for e in shape)
    print(f"torch_{op}:{label}:{dim} n={n} ms {ms:.5f} correct {'yes' if ok else 'NO'}", flush=True)

print("device", torch.cuda.get_device_name(0), "torch", torch.__version__)
n = 1 << (int(sys.argv[1]) if len(sys.argv) > 1 else 26)
x = torch.rand(n, device="cuda", dtype=torch.float32) - 0.5
shapes = []
for c in (1, 2, 4, 8, 16, 64, 256, 4096, 1 << 16, 1 << 20, n):
    shapes += [((n // c, c), 1), ((n // c, c), 0)]
for b, k, c in ((64, 1024, 1024), (1024, 64, 1024), (16, 4096, 1024), (4096, 16, 1024), (1024, 1024, 64)):
    shapes.append(((b * n // (1 << 26), k, c), 1))  # B scaled as bench axes does
for shape, dim in shapes:
    v = x.view(shape)
    out = torch.empty([e for i, e in enumerate(shape) if i != dim], device="cuda")
    ms = median_ms(lambda: torch.sum(v, dim, out=out))
    ok = torch.allclose(out.double(), v.double().sum(dim), rtol=1e-4, atol=1e-2)
    report("sum", shape, dim, n, ms, ok)
for rows, vocab in ((min(n >> 15, 4096), 32000), (32, 128000), (1 << 20, 64)):
    v = x[: rows * vocab].view(rows, vocab)
    idx = torch.empty(rows, dtype=torch.int64, device="cuda")
    ms = median_ms(lambda: torch.argmax(v, 1, out=idx))
    ok = bool((v.gather(1, idx[:, None]).squeeze(1) == v.max(1).values).all())
    report("argmax", (rows, vocab), 1, rows * vocab, ms, ok)
    lse = torch.empty(rows, device="cuda")
    ms = median_ms(lambda: torch.logsumexp(v, 1, out=lse))
    ok = torch.allclose(lse.double(), torch.logsumexp(v.double(), 1), rtol=1e-5, atol=1e-5)
    report("logsumexp", (rows, vocab), 1, rows * vocab, ms, ok)
