# Replays fuzz-derive mismatch reports on the GPU through NVRTC (CuPy): for each program p<N>.cu
# (its translation) and each reported input, runs m_combine with the given prelude and prints
# whether the bytes equal Rust's. Run in a folder holding the reports (fuzz-K.txt), the
# programs' CUDA text (pN.cu) and prelude files:  python3 fuzz_replay.py prelude.cuh
# (NVX_OPTS=-G adds NVRTC options). Used for the NVRTC 13.0 miscompiles in
# docs/decisions/0037-nvrtc-miscompiles.md.
import cupy as cp, numpy as np, re, struct, glob, sys, os
SIZES = {'u8':1,'i8':1,'bool':1,'u16':2,'i16':2,'u32':4,'i32':4,'f32':4,'u64':8,'i64':8,'f64':8}
def parse_fields(text):
    out = []
    for m in re.finditer(r'(\w+)@(\d+)=(\S+)', text):
        ty, off, val = m.group(1), int(m.group(2)), m.group(3)
        h = re.search(r'\((0x[0-9a-f]+)\)', val)
        v = int(h.group(1), 16) if h else int(val, 16)
        out.append((ty, off, v))
    return out
def to_bytes(fields, size):
    b = bytearray(size)
    for ty, off, v in fields:
        n = SIZES[ty]
        b[off:off+n] = (v & ((1 << (8*n)) - 1)).to_bytes(n, 'little')
    return bytes(b)
cases = {}
for f in sorted(glob.glob('fuzz-[0-9].txt')):
    t = open(f).read()
    for blk in re.split(r'\n(?=p\d{5}: combine)', t):
        m = re.match(r'(p\d{5}): combine\(\s*l = (.*?)\n\s*r = (.*?)\)\n\s*Rust:\s*(.*?)\n\s*translation:\s*(.*?)\n', blk + '\n', re.S)
        if m:
            cases.setdefault(m.group(1), []).append(tuple(parse_fields(m.group(i)) for i in range(2, 6)))
variant = sys.argv[1] if len(sys.argv) > 1 else 'prelude.cuh'
prelude = open(variant).read()
total = fixed = 0
for name, cs in sorted(cases.items()):
    num = str(int(name[1:]))
    src = open(f'p{num}.cu').read()
    size = int(re.search(r'static_assert\(sizeof\(S\) == (\d+)', src).group(1))
    head = '__device__ unsigned int r_fuzz_faults[64];\n#define R_ON_FAULT(kind, i, n) (r_fuzz_faults[threadIdx.x] = 1u)\n'
    text = head + prelude + f'namespace {name} {{\n{src}}}\n' + \
        f'extern "C" __global__ void k(const {name}::M* a, const {name}::M* b, {name}::M* out, unsigned int n) {{ unsigned t = blockIdx.x * 32 + threadIdx.x; if (t < n) out[t] = {name}::m_combine(a[t], b[t]); }}\n'
    mod = cp.RawModule(code=text, options=('--fmad=false', '-arch=sm_90', '-std=c++17') + tuple(o for o in os.environ.get('NVX_OPTS', '').split() if o), name_expressions=None)
    k = mod.get_function('k')
    n = len(cs)
    a = np.frombuffer(b''.join(to_bytes(c[0], size) for c in cs), dtype=np.uint8)
    b = np.frombuffer(b''.join(to_bytes(c[1], size) for c in cs), dtype=np.uint8)
    da, db, do = cp.asarray(a), cp.asarray(b), cp.zeros(n * size, dtype=cp.uint8)
    k(((n + 31) // 32,), (32,), (da, db, do, np.uint32(n)))
    got = cp.asnumpy(do).tobytes()
    ok = 0
    for i, c in enumerate(cs):
        want = to_bytes(c[2], size)
        g = got[i*size:(i+1)*size]
        # compare only the fields the report lists
        same = all(g[off:off+SIZES[ty]] == want[off:off+SIZES[ty]] for ty, off, _ in c[2])
        ok += same
    total += n; fixed += ok
    print(f'{variant} {name}: {ok}/{n} equal to Rust')
print(f'{variant} total: {fixed}/{total} equal to Rust')
