#!/usr/bin/env python3
"""Kernel Tuner 1.5 on kvx's contention sources, for a side-by-side timing.

The same 192 cases as

    kvx run specs/contention.yaml --where 'address == "const" && counters == 1'

(8 strategies x 2 counter widths x 2 sizes x 6 hit rates): the sources come
from `kvx gen` (DIR/index.tsv maps each point to its source and axis values),
and each case is one tune_kernel call with the cupy backend, brute force over
the single configuration, iterations=7 and answer-array verification of `out`,
as Kernel Tuner is used for one fixed kernel.  Inputs are drawn with numpy
(the same distributions as kvx's, not the same bytes).

    python3 bench/kernel_tuner_contention.py DIR [--repeat 2] [--csv out.csv]

prints the wall time of each pass (the first one compiles into cupy's cache:
"cold"; the next ones are "warm") and, with --csv, each case's median.
Install (the wheels in .whl/; --no-deps: pymoo and scikit-learn, which only other
strategies import, are left out): python3 -m pip install --no-index --no-deps .whl/*.whl
"""
import argparse
import csv
import os
import sys
import time

import numpy as np


def read_index(d):
    with open(os.path.join(d, "index.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return rows


def run_pass(d, rows, sm_count, max_threads_sm, inputs, kt):
    out = []
    t0 = time.perf_counter()
    for r in rows:
        n = int(r["n"])
        thresh = int(round(float(r["hit_rate"]) * 1000))
        strategy = r["strategy"]
        persistent = strategy.startswith("thread_reg")
        block = 256
        grid = sm_count * (max_threads_sm // block) if persistent else -(-n // block)
        count_t = np.uint32 if r["counter"] == "u32" else np.uint64
        x, addr = inputs[n]
        res = np.zeros(1, dtype=count_t)
        expected = np.array([np.count_nonzero(x < thresh)], dtype=count_t)
        with open(os.path.join(d, r["source"])) as f:
            src = f.read()
        args = [x, addr, np.int32(n), np.int32(thresh), res]
        answer = [None, None, None, None, expected]
        results, _env = kt.tune_kernel(
            "filter_count", src, grid * block, args, {"block_size_x": [block]},
            lang="cupy", strategy="brute_force", iterations=7, answer=answer,
            compiler_options=["-I/usr/local/cuda/include", "-I/usr/local/cuda/include/cccl",
                              "--std=c++17"],
            verbose=False, quiet=True)
        if not results:
            print("no result for point", r["point"], file=sys.stderr)
            out.append((r, float("nan"), float("nan")))
            continue
        times = results[0].get("times") or [results[0]["time"]]
        out.append((r, float(np.median(times)), float(results[0]["time"])))
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="kvx gen --out DIR of the 192-case selection")
    ap.add_argument("--repeat", type=int, default=2, help="passes (the first is cold)")
    ap.add_argument("--csv", help="write point, axes, median_ms, mean_ms of the last pass")
    a = ap.parse_args()
    import cupy as cp
    import kernel_tuner as kt
    rows = read_index(a.dir)
    dev = cp.cuda.Device()
    sm_count = dev.attributes["MultiProcessorCount"]
    max_threads_sm = dev.attributes["MaxThreadsPerMultiProcessor"]
    rng = np.random.default_rng(1)
    inputs = {}
    t0 = time.perf_counter()
    for n in sorted({int(r["n"]) for r in rows}):
        inputs[n] = (rng.integers(0, 1000, n, dtype=np.int32), np.zeros(n, dtype=np.uint16))
    print(f"inputs {time.perf_counter() - t0:.2f} s; {len(rows)} cases; kernel_tuner {kt.__version__}")
    last = None
    for p in range(a.repeat):
        wall, last = run_pass(a.dir, rows, sm_count, max_threads_sm, inputs, kt)
        print(f"pass {p + 1} ({'cold' if p == 0 else 'warm'}): {len(rows)} cases in {wall:.2f} s,"
              f" {len(rows) / wall:.1f} cases/s")
    if a.csv and last:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["point", "strategy", "counter", "n", "hit_rate", "median_ms", "mean_ms"])
            for r, med, mean in last:
                w.writerow([r["point"], r["strategy"], r["counter"], r["n"], r["hit_rate"], med, mean])
        print("medians in", a.csv)


if __name__ == "__main__":
    main()
