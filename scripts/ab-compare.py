#!/usr/bin/env python3
"""Compares the kernel times of two builds of `bench`, measured in interleaved rounds (A B A B
...) by `gpu-run.sh ab`. Input: the out folders `ab/<build>-<round>/` holding any of plain.csv,
segmented.csv, segsweep.csv, segargmax.csv, lse.csv, axes.csv, scan.csv, portable.csv,
portable-plain.csv and portable-seg.csv.
For every measured row (the columns of KEYS; the time is its median_ms, or each column TIME
names) it takes each build's best round, and sets the difference between the builds against the
spread between the rounds of the first build (A against itself): a row is flagged SLOWER when
B's best is slower than A's best by more than A's own spread (and more than 2%). A file with
rows from one build only (a bench without the mode) fails the comparison too.

    python3 scripts/ab-compare.py OUT_DIR A_NAME B_NAME [--markdown]
"""
import csv
import sys
from collections import defaultdict
from pathlib import Path

KEYS = {
    "plain.csv": ("monoid", "n", "algorithm"),
    "segmented.csv": ("n", "layout", "monoid", "form", "algorithm"),
    "segsweep.csv": ("series", "mean_length"),
    "segargmax.csv": ("layout", "variant"),
    "lse.csv": ("n", "variant"),
    "axes.csv": ("case", "shape", "axes"),
    "scan.csv": ("case", "n"),
    "portable-seg.csv": ("layout", "form", "trust"),
    "portable.csv": ("case", "n"),
    "portable-plain.csv": ("case", "n"),
}
# The time columns where it is not median_ms (several: each a row of its own, named by it).
TIME = {
    "portable-seg.csv": ("portable_ms",),
    "portable.csv": ("default_ms", "shuffle_ms", "portable_ms"),
    "portable-plain.csv": ("default_ms", "shuffle_ms", "portable_ms"),
}


def rounds(out, build):
    """{csv name: {row key: [time per round]}} of one build."""
    found = defaultdict(lambda: defaultdict(list))
    for folder in sorted(Path(out, "ab").glob(f"{build}-*")):
        for name, key in KEYS.items():
            path = folder / name
            if not path.exists():
                continue
            times = TIME.get(name, ("median_ms",))
            with open(path) as f:
                for row in csv.DictReader(f):
                    for time in times:
                        label = (time,) if len(times) > 1 else ()
                        found[name][tuple(row[k] for k in key) + label].append(float(row[time]))
    return found


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    markdown = "--markdown" in sys.argv
    if len(args) != 3:
        sys.exit(__doc__)
    out, a_name, b_name = args
    a, b = rounds(out, a_name), rounds(out, b_name)
    slower = 0
    for name in KEYS:
        keys = sorted(set(a[name]) & set(b[name]))
        if not keys:
            if a[name] or b[name]:
                # one build wrote rows the other did not (an older bench without the mode)
                print(f"{name}: rows from only one build ({a_name}: {len(a[name])}, "
                      f"{b_name}: {len(b[name])}): nothing compared")
                slower += 1
            continue
        ratios, spreads = [], []
        rows = []
        for key in keys:
            ta, tb = a[name][key], b[name][key]
            best_a, best_b = min(ta), min(tb)
            spread = (max(ta) - min(ta)) / best_a if len(ta) > 1 else 0.0
            ratio = best_b / best_a
            ratios.append(ratio)
            spreads.append(spread)
            flag = ratio - 1 > max(spread, 0.02)
            slower += flag
            rows.append((key, best_a, best_b, ratio, spread, flag))
        ratios.sort()
        spreads.sort()
        median = ratios[len(ratios) // 2]
        print(f"{name}: {len(keys)} rows; B/A best time: median {median:.3f}, "
              f"min {ratios[0]:.3f}, max {ratios[-1]:.3f}; A's round-to-round spread: median "
              f"{spreads[len(spreads) // 2]:.3f}, max {spreads[-1]:.3f}; "
              f"{sum(r[5] for r in rows)} rows slower beyond A's spread and 2%")
        for key, best_a, best_b, ratio, spread, flag in rows:
            if flag or not markdown:
                mark = "SLOWER" if flag else ""
                print(f"  {' '.join(key)}: A {best_a:.5f} ms, B {best_b:.5f} ms, "
                      f"B/A {ratio:.3f}, A spread {spread:.3f} {mark}")
    sys.exit(1 if slower else 0)


if __name__ == "__main__":
    main()
