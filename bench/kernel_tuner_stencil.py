#!/usr/bin/env python3
"""Kernel Tuner 1.5 on kvx's 2,160-variant stencil space, a sample of it.

Kernel Tuner compiles one variant at a time (its cupy backend: NVRTC through
cupy, one module a configuration).  Each sampled variant is one tune_kernel
call over its one configuration with the cupy backend, iterations=7 (Kernel
Tuner's default), its `out` verified against a numpy stencil (answer=), on the
source `kvx gen` wrote for it (DIR/index.tsv maps each point to its source
and axis values), so both tools compile and time the same text.  The input is
drawn with numpy (kvx's distribution, not its bytes).

    python3 bench/kernel_tuner_stencil.py DIR [--sample 60] [--side 8192] [--seed 1]

prints the sample's wall, the time inside tune_kernel, the seconds a variant
and the whole space's wall at that rate.
"""
import argparse
import csv
import os
import random
import time

import numpy as np


def reference(x):
    y = x.copy()
    y[1:-1, 1:-1] = np.float32(0.2) * (x[1:-1, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] + x[:-2, 1:-1] + x[2:, 1:-1])
    return y


def main():
    start = time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="kvx gen --out DIR of bench/specs/stencil.yaml")
    ap.add_argument("--sample", type=int, default=60, help="variants drawn (seeded)")
    ap.add_argument("--side", type=int, default=8192)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import kernel_tuner as kt
    with open(os.path.join(a.dir, "index.tsv")) as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if int(r["side"]) == a.side]
    space = len(rows)
    rows = random.Random(a.seed).sample(rows, min(a.sample, len(rows)))
    rng = np.random.default_rng(a.seed)
    x = rng.uniform(-1, 1, (a.side, a.side)).astype(np.float32)
    expected = reference(x)
    t0 = time.perf_counter()
    inside = 0.0
    failed = 0
    for r in rows:
        bx, by, rpt = int(r["BX"]), int(r["BY"]), int(r["RPT"])
        with open(os.path.join(a.dir, r["source"])) as f:
            src = f.read()
        out = np.zeros_like(x)
        t1 = time.perf_counter()
        try:
            kt.tune_kernel("stencil", src, (a.side, a.side), [x, out, np.int32(a.side)],
                           {"block_size_x": [bx], "block_size_y": [by], "grid_rows": [by * rpt]},
                           grid_div_y=["grid_rows"], lang="cupy", strategy="brute_force",
                           answer=[None, expected, None], atol=1e-6, verbose=False, quiet=True)
        except Exception as e:  # a variant Kernel Tuner refuses is counted, not fatal
            failed += 1
            print(f"{r['source']}: {type(e).__name__}: {e}")
        inside += time.perf_counter() - t1
    wall = time.perf_counter() - t0
    n = len(rows)
    print(f"kernel_tuner {kt.__version__}: {n} of {space} variants (side {a.side}) in {wall:.2f} s "
          f"({inside:.2f} s inside tune_kernel, {failed} failed): {wall / n:.3f} s a variant, "
          f"{wall / n * space:.0f} s for the {space} at that rate")
    print(f"whole script {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
