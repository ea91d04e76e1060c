#!/usr/bin/env python3
"""Kernel Tuner 1.5 on kvx's user-shaped transpose, verified against numpy.

The same 36 cases as `kvx run bench/specs/transpose.yaml` (3 strategies x 2
tiles x 3 row counts x 2 sides): the sources come from `kvx gen` (DIR/index.tsv
maps each point to its source and axis values), and each case is one
tune_kernel call with the cupy backend over its one configuration,
iterations=7, with `out` verified against numpy's transpose (answer=), as a
user checks a kernel with Kernel Tuner.  The input is drawn with numpy (the
same distribution as kvx's, not the same bytes).

    python3 bench/kernel_tuner_transpose.py DIR [--repeat 2] [--no-verify]

prints the wall of each pass, the whole script's wall and, per pass, the time
inside tune_kernel.
"""
import argparse
import csv
import os
import time

import numpy as np


def run_pass(d, rows, inputs, kt, verify):
    t0 = time.perf_counter()
    inside = 0.0
    for r in rows:
        side, tile, nrows = int(r["side"]), int(r["TILE"]), int(r["ROWS"])
        x, expected = inputs[side]
        out = np.zeros_like(x)
        with open(os.path.join(d, r["source"])) as f:
            src = f.read()
        args = [x, out, np.int32(side), np.int32(side)]
        t1 = time.perf_counter()
        # Kernel Tuner #defines every tunable name in the source: "grid_tile",
        # not "tile", which the tiled kernels name their shared array.
        kt.tune_kernel(
            "transpose", src, (side, side), args,
            {"block_size_x": [tile], "block_size_y": [nrows], "grid_tile": [tile]},
            grid_div_x=["grid_tile"], grid_div_y=["grid_tile"], lang="cupy", strategy="brute_force",
            iterations=7, answer=[None, expected, None, None] if verify else None,
            verbose=False, quiet=True)
        inside += time.perf_counter() - t1
    return time.perf_counter() - t0, inside


def main():
    start = time.perf_counter()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="kvx gen --out DIR of bench/specs/transpose.yaml")
    ap.add_argument("--repeat", type=int, default=2, help="passes (the first is cold)")
    ap.add_argument("--no-verify", action="store_true", help="no answer= check")
    a = ap.parse_args()
    import kernel_tuner as kt
    with open(os.path.join(a.dir, "index.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    rng = np.random.default_rng(1)
    inputs = {}
    t0 = time.perf_counter()
    for side in sorted({int(r["side"]) for r in rows}):
        x = rng.uniform(-1, 1, (side, side)).astype(np.float32)
        inputs[side] = (x, np.ascontiguousarray(x.T))
    print(f"inputs {time.perf_counter() - t0:.2f} s; {len(rows)} cases; kernel_tuner {kt.__version__}")
    for p in range(a.repeat):
        wall, inside = run_pass(a.dir, rows, inputs, kt, not a.no_verify)
        print(f"pass {p + 1} ({'cold' if p == 0 else 'warm'}): {len(rows)} cases in {wall:.2f} s"
              f" ({inside:.2f} s inside tune_kernel)")
    print(f"whole script {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
