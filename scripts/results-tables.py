#!/usr/bin/env python3
"""Markdown tables of docs/results.md from the files the bench writes (python3, stdlib only).

    python3 scripts/results-tables.py TABLE [--data DIR]   print one table
    python3 scripts/results-tables.py --list                the tables and the file each reads
    python3 scripts/results-tables.py --write docs/results.md
    python3 scripts/results-tables.py --check docs/results.md

--write regenerates every block of FILE that sits between `<!-- results-tables: TABLE -->` and
`<!-- /results-tables -->`; --check exits 1 if a block differs from what the data gives. The data
folder (default docs/data) holds the latest file of each area under the name the bench gives it
(`bench plain` writes plain.csv, `bench segmented` segmented.csv, ...).
"""
import csv
import os
import re
import statistics
import sys

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "data")

N_SEG = 31457280  # bench segmented's 30 * 2^20
DISTRIBUTIONS = ["one_segment", "size_1", "size_3", "uniform_1_8", "random_10_50", "power_1.5",
                 "power_2", "power_3", "two_level", "equal_1000", "empty_90"]
PLAIN_ALGORITHMS = ["Tb2", "Tb4Warp", "Matrix", "PersistentMatrix", "DiffWarps", "Shuffle", "Auto"]
PLAIN_MONOIDS = [("f32_sum", "f32 sum"), ("affine_u32", "affine u32 (8 B)"), ("mat2_u32", "2×2 u32 (16 B)")]


def rows(name, data):
    with open(os.path.join(data, name), newline="") as f:
        return list(csv.DictReader(f))


def table(header, body):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(out)


def r2(x):
    """A ratio to a roof or to plain Shuffle."""
    return "–" if x in (None, "", "NaN") else f"{float(x):.2f}"


def r3(x):
    return "–" if x in (None, "", "NaN") else f"{float(x):.3f}"


def rx(x):
    """A speedup over another library (its time over ours)."""
    return "–" if x in (None, "", "NaN") else f"{float(x):.1f}"


def log2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n & (n - 1) == 0 else str(n)


# ---- plain reductions (bench plain: plain.csv) ----

def plain(data):
    by = {(r["monoid"], int(r["n"]), r["algorithm"]): r for r in rows("plain.csv", data)}
    n = 1 << 28
    body = []
    for alg in PLAIN_ALGORITHMS:
        f = by[("f32_sum", n, alg)]
        cells = [f"`{alg}`", f"{float(f['gbs']):.0f}"]
        for monoid, _ in PLAIN_MONOIDS:
            r = by[(monoid, n, alg)]
            cells += [r3(r["ratio_to_roof"]), r3(r["ratio_to_cub"])]
        body.append(cells)
    header = ["algorithm (2^28 items)", "f32 sum GB/s"]
    for _, label in PLAIN_MONOIDS:
        header += [f"{label} ×roof", "×CUB"]
    return table(header, body)


def plain_sizes(data):
    by = {(r["monoid"], int(r["n"]), r["algorithm"]): r for r in rows("plain.csv", data)}
    body = []
    for e in (10, 16, 20, 24, 28, 30):
        n = 1 << e
        cells = [f"2^{e}"]
        for monoid in ("f32_sum", "affine_u32"):
            r = by[(monoid, n, "Auto")]
            ms = float(r["median_ms"])
            cub_ms = ms * float(r["ratio_to_cub"])
            cells += [f"{ms * 1000:.1f} µs", f"{cub_ms * 1000:.1f} µs", r3(r["ratio_to_cub"]),
                      r3(r["ratio_to_roof"])]
        body.append(cells)
    header = ["N", "f32 sum `Auto`", "CUB `Sum`", "×CUB", "×roof",
              "affine `Auto`", "CUB `Reduce`", "×CUB", "×roof"]
    return table(header, body)


def fig4(data):
    by = {}
    for r in rows("fig4.csv", data):
        by[(r["algorithm"], int(r["m"]))] = float(r["gbs"])
    ms = (16, 24, 31)
    algs = [a for a in PLAIN_ALGORITHMS if (a, 16) in by]
    body = [[f"`{a}`"] + [f"{by[(a, m)]:.0f}" for m in ms] for a in algs]
    return table(["algorithm"] + [f"GB/s, N = {m}·2^20" for m in ms], body)


# ---- segmented reductions (bench segmented: segmented.csv) ----

def seg_index(data, n):
    return {(r["layout"], r["monoid"], r["form"], r["algorithm"]): r
            for r in rows("segmented.csv", data) if int(r["n"]) == n}


def seg_plain_gbs(by, monoid):
    """Plain Shuffle's GB/s in the same run, from any row's GB/s over its ratio."""
    r = by[("one_segment", monoid, "owner", "Auto trusted")]
    return float(r["gbs_moved"]) / float(r["of_plain_shuffle"])


def segmented_at(data, n):
    by = seg_index(data, n)
    body = []
    for d in DISTRIBUTIONS:
        cells = [d]
        for form in ("owner", "offsets"):
            t = by[(d, "f32_sum", form, "Auto trusted")]
            v = by[(d, "f32_sum", form, "Auto validated")]
            a = by[(d, "affine", form, "Auto trusted")]
            cells += [f"{r2(t['of_plain_shuffle'])} / {r2(v['of_plain_shuffle'])}",
                      rx(t["speedup_vs_cub"]), rx(t["speedup_vs_torch"]),
                      r2(a["of_plain_shuffle"]), rx(a["speedup_vs_cub"])]
        body.append(cells)
    header = ["distribution",
              "owner f32 ×plain (trusted / validated)", "×CUB `ReduceByKey`", "×torch `index_add_`",
              "owner affine ×plain", "×CUB",
              "offsets f32 ×plain (trusted / validated)", "×CUB `DeviceSegmentedReduce`",
              "×torch `segment_reduce`", "offsets affine ×plain", "×CUB"]
    note = (f"\n\nPlain `Shuffle` on the same items in the same run: "
            f"{seg_plain_gbs(by, 'f32_sum'):.0f} GB/s (f32), {seg_plain_gbs(by, 'affine'):.0f} GB/s (affine).")
    return table(header, body) + note


def segmented(data):
    return segmented_at(data, N_SEG)


def segmented_2p26(data):
    return segmented_at(data, 1 << 26)


def segmented_validated(data):
    """Validated minus trusted, % of trusted, for Auto at both sizes."""
    body = []
    for d in DISTRIBUTIONS:
        cells = [d]
        for n in (N_SEG, 1 << 26):
            by = seg_index(data, n)
            for form in ("owner", "offsets"):
                for monoid in ("f32_sum", "affine"):
                    t = float(by[(d, monoid, form, "Auto trusted")]["median_ms"])
                    v = float(by[(d, monoid, form, "Auto validated")]["median_ms"])
                    cells.append(f"{100 * (v - t) / t:+.1f}%")
        body.append(cells)
    header = ["distribution"]
    for n in ("30·2^20", "2^26"):
        header += [f"{n} owner f32", "owner affine", "offsets f32", "offsets affine"]
    return table(header, body)


def segmented_algorithms(data):
    by = seg_index(data, N_SEG)
    body = []
    for d in DISTRIBUTIONS:
        cells = [d]
        for form in ("owner", "offsets"):
            for monoid in ("f32_sum", "affine"):
                s = by[(d, monoid, form, "SegShuffle trusted")]
                m = by[(d, monoid, form, "SegMerge trusted")]
                cells.append(f"{r2(s['of_plain_shuffle'])} / {r2(m['of_plain_shuffle'])}")
        body.append(cells)
    header = ["distribution (×plain, SegShuffle / SegMerge, trusted)", "owner f32", "owner affine",
              "offsets f32", "offsets affine"]
    return table(header, body)


def fig5(data):
    gbs = {}
    for r in rows("fig5.csv", data):
        gbs.setdefault((r["algorithm"], r["scenario"]), []).append(float(r["gbs_moved"]))
    scenarios = ["one_segment", "random_10_50", "size_3"]
    algs = []
    for a, _ in gbs:
        if a not in algs:
            algs.append(a)
    body = [[f"`{a}`"] + [f"{statistics.mean(gbs[(a, s)]):.0f}" for s in scenarios] for a in algs]
    return table(["algorithm (mean GB/s moved over m = 16..31)", "(a) one segment",
                  "(b) random 10..50", "(c) size 3"], body)


def segsweep(data):
    gbs, lengths, series = {}, [], []
    for r in rows("segsweep.csv", data):
        m = int(r["mean_length"])
        if m not in lengths:
            lengths.append(m)
        if r["series"] not in series:
            series.append(r["series"])
        gbs[(r["series"], m)] = float(r["gbs_moved"])
    shown = [m for m in lengths if m in (1, 4, 16, 64, 256, 1024, 4096, 16384, 1 << 20)]
    body = [[s] + [f"{gbs[(s, m)]:.0f}" if (s, m) in gbs else "–" for m in shown] for s in series]
    return table(["GB/s moved, mean length"] + [log2(m) if m >= 1 << 20 else str(m) for m in shown], body)


# ---- lifted, u64, interop, JIT, cluster ----

def segargmax(data):
    by = {(r["layout"], r["variant"]): r for r in rows("segargmax.csv", data)}
    cols = [("lifted offsets Auto trusted", "ratio_to_roof", r2), ("lifted offsets Auto trusted", "speedup_vs_cub", rx),
            ("lifted offsets SegHeads trusted", "ratio_to_roof", r2),
            ("lifted offsets SegMerge trusted", "ratio_to_roof", r2), ("lifted owner Auto trusted", "ratio_to_roof", r2),
            ("materialised offsets Auto trusted", "ratio_to_roof", r2)]
    body = [[d] + [f(by[(d, v)][k]) for v, k, f in cols] for d in DISTRIBUTIONS]
    return table(["distribution", "lifted offsets `Auto` ×roof", "×CUB `DeviceSegmentedReduce::ArgMax`",
                  "lifted offsets SegHeads ×roof", "lifted offsets SegMerge ×roof", "lifted owner `Auto` ×roof",
                  "materialised (value, index) offsets ×roof"], body)


def segwide(data):
    by = {(r["layout"], r["form"], r["algorithm"], r["monoid"]): r for r in rows("segwide.csv", data)}
    # The run in docs/data predates Auto's cap of 12 items for u64 owners: its "u64 Auto" owner
    # rows ran the default 16, its "k12" rows what Auto runs now.
    cols = [("offsets", "u32 Auto trusted"), ("offsets", "u64 Auto trusted"), ("offsets", "u64 SegMerge trusted"),
            ("owner", "u32 Auto trusted"), ("owner", "u64 SegShuffle k12 trusted"), ("owner", "u64 Auto trusted"),
            ("owner", "u64 SegShuffle k8 trusted")]
    body = []
    for d in DISTRIBUTIONS:
        cells = [d] + [r2(by[(d, form, alg, "f32_sum")]["of_plain_shuffle"]) for form, alg in cols]
        cells.append(rx(by[(d, "offsets", "u64 Auto trusted", "f32_sum")]["speedup_vs_torch"]))
        body.append(cells)
    return table(["distribution (f32, ×plain, trusted)", "u32 offsets", "u64 offsets", "u64 offsets SegMerge",
                  "u32 owners", "u64 owners, 12 items (`Auto`)", "u64 owners, 16 items", "u64 owners, 8 items",
                  "u64 offsets ×torch `segment_reduce` (int64)"], body)


def interop(data):
    times = {}
    for r in rows("interop.csv", data):
        times.setdefault((r["config"], r["variant"]), []).append(float(r["ms"]))
    body = []
    for config in ("Auto", "Shuffle"):
        for variant in ("DeviceVec", "CudaSlice same stream", "CudaSlice other stream", "CudaView unaligned"):
            t = times[(config, variant)]
            ratios = [x / b for x, b in zip(t, times[(config, "DeviceVec")])]
            body.append([f"`{config}`", variant, f"{statistics.median(t):.4f} ms",
                         f"{min(ratios):.3f}–{max(ratios):.3f}" if variant != "DeviceVec" else "1"])
    return table(["algorithm", "input (f32 sum, 2^28)", "median of the rounds' medians",
                  "ratio to `DeviceVec`, per round"], body)


def views(data):
    def ratios(name):
        out = {}
        for r in rows(name, data):
            out.setdefault((r["call"], r["item"]), []).append(
                (float(r["odd_ms"]) / float(r["aligned_ms"]), float(r["aligned_ms"])))
        return out
    now, before = ratios("views.csv"), ratios("views-item-loads.csv")
    body = []
    for key, rs in now.items():
        med = statistics.median(r for r, _ in rs)
        old = statistics.median(r for r, _ in before[key])
        aligned = statistics.median(t for _, t in rs)
        body.append([key[0], key[1], f"{aligned:.4f} ms", f"{old:.3f}", f"**{med:.3f}**"])
    return table(["call (`Auto`)", "items", "aligned view", "odd ÷ aligned, item loads (before)",
                  "odd ÷ aligned, shifted vectors (now)"], body)


def jit(data):
    with open(os.path.join(data, "jit.txt")) as f:
        text = f.read()
    cold = re.findall(r"first use Compiled ([\d.]+) ms", text)
    disk = re.findall(r"first use Disk ([\d.]+) ms", text)
    mem = re.findall(r"in-process lookup: ([\d.]+) us", text)
    body = [["first use, cold NVRTC (Shuffle, affine monoid)", f"{float(cold[0]):.1f} ms"],
            ["first use in a new `Gpu`, disk cache warm", "–".join(f"{float(d):.2f}" for d in (min(disk), max(disk))) + " ms"],
            ["in-process hit", f"{float(mem[0]):.1f} µs"]]
    return table(["kernel lookup", "time"], body)


def cluster_rows(data):
    return rows("cluster.csv", data)


EXCHANGES = {"peer": "peer access", "nccl": "NCCL"}


def cluster_pairs(data, section):
    """The rows of a section by (exchange, monoid, items per GPU), each a dict of GPU count -> row."""
    out = {}
    for r in cluster_rows(data):
        if r["section"] == section:
            out.setdefault((r["exchange"], r["monoid"], int(r["n_per_gpu"])), {})[int(r["gpus"])] = r
    return out


def ms(x):
    return "–" if x == "NaN" else f"{float(x):.3f} ms"


def cluster_weak(data):
    body = []
    pairs = cluster_pairs(data, "weak")
    for (exchange, monoid, n), by in pairs.items():
        most = max(by)
        cells = [EXCHANGES[exchange], monoid, log2(n)] + [ms(by[g]["sync_ms"]) for g in sorted(by)]
        for g in sorted(by)[1:]:
            cells.append(f"{float(by[g]['e_sync']):.3f} / {float(by[g]['e_pipe']):.3f}")
        cells.append(f"{float(by[most]['slowest_sync_ms']) / float(by[most]['sync_ms']):.3f}")
        cells.append(ms(by[most]["torch_sync_ms"]))
        body.append(cells)
    gpus = sorted(next(iter(pairs.values())))
    header = ["exchange", "monoid", "items per GPU"] + [f"{g} GPU{'s' if g > 1 else ''}, one call" for g in gpus]
    header += [f"efficiency on {g}: sync / queued" for g in gpus[1:]]
    header.append(f"slowest GPU alone / one call on {gpus[-1]}")
    header.append(f"torch `sum` + `all_reduce` on {gpus[-1]}, sync")
    return table(header, body)


def cluster_combine(data):
    pairs = cluster_pairs(data, "latency")
    gpus = sorted(next(iter(pairs.values())))
    body = []
    for (exchange, monoid, n), by in pairs.items():
        cells = [EXCHANGES[exchange], monoid, log2(n)] + [f"{float(by[g]['combine_us']):.1f} µs" for g in gpus]
        torch = by[gpus[-1]]["torch_sync_ms"]
        cells.append("–" if torch == "NaN" else f"{float(torch) * 1000:.1f} µs")
        body.append(cells)
    header = ["exchange", "monoid", "items per GPU"] + [f"combine adds, {g} GPU{'s' if g > 1 else ''}" for g in gpus]
    header.append(f"torch `sum` + `all_reduce` on {gpus[-1]}, whole call")
    return table(header, body)


def cluster_processes(data):
    """bench_cluster --rank/--world: one process per GPU, NCCL."""
    body = []
    for r in rows("cluster-processes.csv", data):
        body.append([r["monoid"], log2(r["n_per_gpu"]), r["processes"],
                     f"{float(r['sync_ms']) * 1000:.1f} µs", f"{float(r['single_sync_ms']) * 1000:.1f} µs",
                     f"{float(r['combine_us']):.1f} µs", r3(r["e_sync"])])
    return table(["monoid", "items per GPU", "processes", "`Cluster::reduce`", "`Gpu::reduce` alone",
                  "combine adds", "efficiency"], body)


# ---- every public call as users call it (bench api: api.csv) ----

def api_plain(data, name="api.csv"):
    """Plain calls by size: host time of each call, the kernels' time, CUB and PyTorch."""
    by = {(r["call"], r["monoid"], r["n"]): r for r in rows(name, data) if r["layout"] == "plain"}
    body = []
    for n in sorted({int(n) for (_, _, n) in by}):
        for monoid, name in [("f32_sum", "f32 sum"), ("affine", "affine (8 B)")]:
            get = lambda call: by.get((call, monoid, str(n)))
            reduce, into, upload = get("reduce"), get("reduce_into"), get("upload+reduce")
            if not reduce:
                continue
            cub = reduce["cub_us"]
            vs_cub = f"{float(reduce['host_us']) / float(cub):.2f}" if cub else "–"
            torch = reduce["torch_us"] or "–"
            body.append([log2(n), name, reduce["kernel_us"], into["host_us"], reduce["host_us"],
                         cub or "–", vs_cub, torch, upload["host_us"]])
    return table(["N", "monoid", "kernels (events) µs", "`reduce_into` + sync µs",
                  "`reduce` to the host µs", "CUB `DeviceReduce` + copy + sync µs", "ours ×CUB",
                  "torch `x.sum().item()` µs", "`upload` + `reduce` µs"], body)


def api_segmented(data, name="api.csv"):
    """Segmented calls per size and distribution: the allocating form against its `_into` form."""
    by = {(r["call"], r["layout"], int(r["n"])): r for r in rows(name, data)}
    sizes = sorted({n for (_, layout, n) in by if layout in DISTRIBUTIONS})
    body = []
    for n in sizes:
        for dist in DISTRIBUTIONS:
            get = lambda call: by.get((call, dist, n))
            into, alloc = get("reduce_segments_into"), get("reduce_segments")
            own_into, own_alloc = get("reduce_by_owner_into"), get("reduce_by_owner")
            if not into:
                continue
            ratio = lambda a, b: f"{float(a['host_us']) / float(b['host_us']):.3f}"
            size = "30·2^20" if n == N_SEG else f"2^{n.bit_length() - 1}"
            body.append([size, dist, into["kernel_us"], into["host_us"], alloc["host_us"], ratio(alloc, into),
                         own_into["kernel_us"], own_into["host_us"], own_alloc["host_us"],
                         ratio(own_alloc, own_into), alloc["torch_us"] or "–"])
    mixed = {r["call"]: r for r in rows(name, data) if r["layout"] == "mixed"}
    for call, r in sorted(mixed.items()):
        body.append(["mixed", call, "–", "–", r["host_us"], "–", "–", "–", "–", "–", "–"])
    return table(["items", "distribution", "CSR kernels µs", "`reduce_segments_into` µs",
                  "`reduce_segments` µs", "alloc ÷ into", "owner kernels µs", "`reduce_by_owner_into` µs",
                  "`reduce_by_owner` µs", "alloc ÷ into", "torch `segment_reduce` µs"], body)


# ---- scans (bench scan: scan.csv on an H200, scan-h100.csv on an H100) ----

SCAN_MONOIDS = [("f32 sum", "f32 sum"), ("affine", "affine u32 (8 B)"), ("mat2", "2×2 u32 (16 B)"),
                ("f32 recurrence", "f32 recurrence (8 B)"), ("heis 12 B", "Heisenberg u32 (12 B)")]


def newer_cub(rs):
    """Whether a run of `bench scan` measured the newer CUB (its `newer_cub_ms` column, written
    where the device command staged CCCL 3.3 or later): its columns appear only then."""
    return any(r.get("newer_cub_ms") not in (None, "", "NaN") for r in rs)


def peer(r, prefix):
    """A CUB column's cell: its time over ours, or `wrong` where it failed the anchor's check."""
    if r.get(f"{prefix}_correct") == "NO":
        return "wrong"
    return rx2(r.get(f"{prefix}_ms"), r["median_ms"])


def scan_plain(data):
    """Plain scans by monoid, size and kind: `Auto` ×copy roof, CUB and torch (their time over
    ours), LookBack's ×copy roof where the run has it (`..., LookBack` rows), on both cards; the
    newer CUB's time over ours where the H200 run has it."""
    runs = [rows(name, data) for name in ("scan.csv", "scan-h100.csv")]
    cards = [{r["case"] + "@" + r["n"]: r for r in rs} for rs in runs]
    newer = newer_cub(runs[0])
    body = []
    for n in (1 << 20, 1 << 24, 1 << 28):
        for key, name in SCAN_MONOIDS:
            for kind in ("inclusive", "exclusive"):
                case = f"{key} {kind}@{n}"
                row = [log2(n), name, kind]
                for i, card in enumerate(cards):
                    r = card.get(case)
                    if not r:
                        row += ["–"] * (4 + newer if i == 0 else 3)
                        continue
                    row += [r3(r["ratio_to_copy_roof"]), peer(r, "cub"), rx2(r["torch_ms"], r["median_ms"])]
                    if i == 0:
                        lb = card.get(f"{key} {kind}, LookBack@{n}")
                        row.append(r3(lb["ratio_to_copy_roof"]) if lb else "–")
                        row += [peer(r, "newer_cub")] if newer else []
                body.append(row)
    return table(["N", "monoid", "kind", "H200 ×copy roof", "×CUB", "×torch", "H200 LookBack ×copy roof"]
                 + (["×newer CUB"] if newer else []) + ["H100 ×copy roof", "×CUB", "×torch"], body)


def scan_segmented(data):
    """Segmented scans of 2^26 items per distribution: ×copy roof on the bytes moved, on both cards
    (on the H200 also LookBack's, the `..., LookBack` rows of the same command); where the H200
    run measured the newer CUB, its `DeviceSegmentedScan` by the same offsets (time over ours)."""
    runs = [rows(name, data) for name in ("scan.csv", "scan-h100.csv")]
    cards = [{r["case"]: r for r in rs} for rs in runs]
    newer = newer_cub(runs[0])
    forms = [("offsets", "offsets, LookBack", "keys", "keys, LookBack"), ("offsets", "keys")]
    body = []
    for dist in DISTRIBUTIONS:
        row = [dist]
        for card, card_forms in zip(cards, forms):
            for monoid in ("f32", "affine"):
                for form in card_forms:
                    r = card.get(f"segmented {monoid} {form} {dist}")
                    row.append(r3(r["ratio_to_copy_roof"]) if r else "–")
        for monoid in ("f32", "affine") if newer else ():
            r = cards[0].get(f"segmented {monoid} offsets {dist}")
            row.append(peer(r, "newer_cub") if r else "–")
        body.append(row)
    head = [f"{card} {m} {f}" for card, card_forms in zip(("H200", "H100"), forms)
            for m in ("f32", "affine") for f in card_forms]
    head += [f"H200 {m} offsets ×newer CUB" for m in ("f32", "affine")] if newer else []
    return table(["distribution"] + head, body)


def portable(data):
    """The portable mode against the default mode and the ordered Shuffle, by case and size, on
    both cards; whether the result's bits are the same on both cards (and the CPU's, up to 2^26)."""
    cards = [{r["case"] + "@" + r["n"]: r for r in rows(name, data)}
             for name in ("portable-h200.csv", "portable-h100.csv")]
    body = []
    for case in ("f32 sum", "f64 sum", "lse f32"):
        for lg in range(20, 31, 2):
            key = f"{case}@{1 << lg}"
            row = [f"2^{lg}", case]
            rs = [card.get(key) for card in cards]
            for r in rs:
                if not r:
                    row += ["–", "–", "–"]
                    continue
                row += [r3(r["portable_cost"]), f"{float(r['portable_ms']) / float(r['shuffle_ms']):.3f}",
                        r3(r["portable_x_roof"])]
            same = all(rs) and rs[0]["bits"] == rs[1]["bits"]
            cpu = "yes" if all(r and r["cpu_bits"] == "yes" for r in rs) else "–"
            row += ["yes" if same else "NO", cpu]
            body.append(row)
    return table(["N", "case", "H200 ÷default", "÷Shuffle", "×roof", "H100 ÷default", "÷Shuffle", "×roof",
                  "same bits H200/H100", "= CPU"], body)


def portable_seg(data, name="portable-seg-h200.csv"):
    """The segmented portable mode against the default mode, by distribution and form, trusted
    and validated (f32 sums at 2^26), with the fraction of plain Shuffle's throughput each reaches
    and whether its bits equal the CPU reference."""
    by = {(r["layout"], r["form"], r["trust"]): r for r in rows(name, data)
          if r.get("case", "f32 sum") == "f32 sum"}
    layouts = list(dict.fromkeys(k[0] for k in by))
    body = []
    for layout in layouts:
        for form in ("offsets", "owner"):
            t, v = by.get((layout, form, "trusted")), by.get((layout, form, "validated"))
            if not t or not v:
                continue
            cpu = "yes" if t["cpu_bits"] == v["cpu_bits"] == "yes" else "NO"
            body.append([layout, form, r3(t["portable_cost"]), r3(t["default_of_plain"]),
                         r3(t["portable_of_plain"]), r3(v["portable_cost"]), cpu])
    return table(["layout", "form", "trusted ÷default", "default ×plain", "portable ×plain",
                  "validated ÷default", "= CPU"], body)


def portable_axes(data):
    """bench portable-axes: portable against the default along axes, f32 sums of 2^26."""
    body = []
    for r in rows("portable-axes-h100.csv", data):
        body.append([r["case"], r["shape"].replace("x", " × "), r["axes"], r3(r["portable_cost"]),
                     r3(r["default_x_roof"]), r3(r["portable_x_roof"]),
                     "yes" if r["cpu_bits"] == r["repeat_bits"] == "yes" else "NO"])
    return table(["case", "shape", "axes", "portable ÷default", "default ×roof",
                  "portable ×roof", "= CPU, repeats"], body)


def rx2(peer_ms, ms):
    """A peer's time over ours, two decimals."""
    return "–" if peer_ms in (None, "", "NaN") else f"{float(peer_ms) / float(ms):.2f}"


TABLES = {
    "plain": (plain, "plain.csv"),
    "plain-sizes": (plain_sizes, "plain.csv"),
    "fig4": (fig4, "fig4.csv"),
    "segmented": (segmented, "segmented.csv"),
    "segmented-2p26": (segmented_2p26, "segmented.csv"),
    "segmented-validated": (segmented_validated, "segmented.csv"),
    "segmented-algorithms": (segmented_algorithms, "segmented.csv"),
    "fig5": (fig5, "fig5.csv"),
    "segsweep": (segsweep, "segsweep.csv"),
    "segargmax": (segargmax, "segargmax.csv"),
    "segwide": (segwide, "segwide.csv"),
    "interop": (interop, "interop.csv"),
    "views": (views, "views.csv"),
    "jit": (jit, "jit.txt"),
    "cluster-weak": (cluster_weak, "cluster.csv"),
    "cluster-combine": (cluster_combine, "cluster.csv"),
    "cluster-processes": (cluster_processes, "cluster-processes.csv"),
    "scan": (scan_plain, "scan.csv"),
    "portable": (portable, "portable-h200.csv"),
    "portable-seg": (portable_seg, "portable-seg-h200.csv"),
    "portable-seg-h100": (lambda data: portable_seg(data, "portable-seg-check-h100.csv"),
                          "portable-seg-check-h100.csv"),
    "portable-axes": (portable_axes, "portable-axes-h100.csv"),
    "scan-segmented": (scan_segmented, "scan.csv"),
    "api-plain": (api_plain, "api.csv"),
    "api-segmented": (api_segmented, "api.csv"),
    "api-plain-h200": (lambda data: api_plain(data, "api-h200.csv"), "api-h200.csv"),
    "api-segmented-h200": (lambda data: api_segmented(data, "api-h200.csv"), "api-h200.csv"),
}

BLOCK = re.compile(r"(<!-- results-tables: ([\w-]+) -->\n)(.*?)(<!-- /results-tables -->)", re.S)


def regenerate(text, data):
    return BLOCK.sub(lambda m: m.group(1) + TABLES[m.group(2)][0](data) + "\n" + m.group(4), text)


def main(argv):
    data = DATA
    if "--data" in argv:
        i = argv.index("--data")
        data = argv[i + 1]
        del argv[i:i + 2]
    if argv == ["--list"]:
        for name, (_, source) in TABLES.items():
            print(f"{name:22} docs/data/{source}")
        return 0
    if len(argv) == 2 and argv[0] in ("--write", "--check"):
        with open(argv[1]) as f:
            text = f.read()
        new = regenerate(text, data)
        if argv[0] == "--check":
            if new != text:
                print(f"{argv[1]}: tables differ from docs/data (run --write)", file=sys.stderr)
                return 1
            return 0
        with open(argv[1], "w") as f:
            f.write(new)
        return 0
    if len(argv) == 1 and argv[0] in TABLES:
        print(TABLES[argv[0]][0](data))
        return 0
    print(__doc__, file=sys.stderr)
    print("tables: " + ", ".join(TABLES), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
