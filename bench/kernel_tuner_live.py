#!/usr/bin/env python3
"""Kernel Tuner 1.5 tuning a benchmark space live on the GPU, beside `kvx run --search`.

The space is one of bench/specs' search benchmarks (conv, dedisp, nbody): its
variants' sources come from `kvx gen SPEC --out DIR` (DIR/index.tsv maps each
variant's code-axis values to its source), and Kernel Tuner's tunable
parameters are those axes with their values, restricted to the variants `kvx
gen` wrote (the spec's where:).  kernel_source is a function of the parameters
that returns the variant's source, so Kernel Tuner's strategies see the axes
as kvx's do.  Each variant is verified against the baseline variant's output
(kt.run_kernel, as a user checks a kernel with Kernel Tuner), with the cupy
backend, from an empty cache, within max_fevals = the budget's share of the
space.  Prints the wall of the whole tuning, the evaluations made and the
best time found.

Kernel Tuner 1.5.0's cupy backend reads the device's UUID with
uuid.UUID(bytes=props["uuid"]), which cupy 14 no longer hands it as 16 bytes:
the call is patched at run time (uuid_patch) to take what cupy gives.

    python3 bench/kernel_tuner_live.py SPACE DIR [--budget 5%] [--strategy bayes_opt] [--seed 0]
"""
import argparse
import csv
import math
import os
import builtins
import time
import uuid as _uuid

import numpy as np

# What each space's kernel takes: problem size, grid divisors, block names, arguments.
SPACES = {
    "conv": dict(kernel="conv", problem=(4096, 4096), div_x=["BX", "TX"], div_y=["BY", "TY"],
                 block=["BX", "BY"], out=2,
                 args=lambda rng: [rng.uniform(-1, 1, 4110 * 4110).astype(np.float32),
                                   rng.uniform(0, 1, 225).astype(np.float32),
                                   np.zeros(4096 * 4096, np.float32)],
                 baseline={"BX": "32", "BY": "8", "TX": "1", "TY": "1", "SMEM": "none"}),
    "dedisp": dict(kernel="dedisp", problem=(8192, 256), div_x=["BX", "TX"], div_y=["BY", "TY"],
                   block=["BX", "BY"], out=1,
                   args=lambda rng: [rng.uniform(-1, 1, 1024 * 12269).astype(np.float32),
                                     np.zeros(256 * 8192, np.float32), np.int32(12269)],
                   baseline={"BX": "128", "BY": "1", "TX": "1", "TY": "1", "UNROLL": "1", "LDG": "plain"}),
    "nbody": dict(kernel="nbody", problem=32768, div_x=["BLOCK", "BPT"], div_y=None, block=["BLOCK"], out=1,
                  args=lambda rng: [rng.uniform(0, 1, 4 * 32768).astype(np.float32),
                                    np.zeros(4 * 32768, np.float32), np.int32(32768)],
                  baseline={"BLOCK": "256", "BPT": "1", "SMEM": "none", "UNROLL": "1", "RSQRT": "div_sqrt"}),
}


def uuid_patch():
    """Kernel Tuner 1.5.0's cupy backend, made to take cupy 14's device UUID."""
    import kernel_tuner.backends.cupy as ktc

    class Shim:
        @staticmethod
        def UUID(bytes=None, **kw):
            b = bytes.encode() if isinstance(bytes, str) else builtins.bytes(bytes) if bytes is not None else b""
            return _uuid.UUID(bytes=(b + b"\0" * 16)[:16])
    ktc.uuid = Shim


def value(text):
    try:
        return int(text)
    except ValueError:
        return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("space", choices=sorted(SPACES))
    ap.add_argument("dir", help="kvx gen --out DIR of the space's spec")
    ap.add_argument("--budget", default="5%", help="P% of the space, or N evaluations")
    ap.add_argument("--strategy", default="bayes_opt")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    start = time.perf_counter()
    import kernel_tuner as kt
    uuid_patch()
    sp = SPACES[a.space]
    with open(os.path.join(a.dir, "index.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    axes = [k for k in rows[0] if k not in ("point", "source", "sha256")]
    source = {tuple(r[k] for k in axes): r["source"] for r in rows}
    tune = {k: list(dict.fromkeys(value(r[k]) for r in rows)) for k in axes}
    n = len(source)
    fevals = math.ceil(float(a.budget[:-1]) * n / 100) if a.budget.endswith("%") else int(a.budget)

    def kernel_source(params):
        with open(os.path.join(a.dir, source[tuple(str(params[k]) for k in axes)])) as f:
            return f.read()

    def restrict(p):
        return tuple(str(p[k]) for k in axes) in source

    rng = np.random.default_rng(1)
    args = sp["args"](rng)
    common = dict(grid_div_x=sp["div_x"], block_size_names=sp["block"], lang="cupy")
    if sp["div_y"]:
        common["grid_div_y"] = sp["div_y"]
    base = {k: value(sp["baseline"][k]) for k in axes}
    ref = kt.run_kernel(sp["kernel"], kernel_source(base), sp["problem"], args, base, **common)
    answer = [None] * len(args)
    answer[sp["out"]] = ref[sp["out"]]
    t0 = time.perf_counter()
    results, env = kt.tune_kernel(sp["kernel"], kernel_source, sp["problem"], args, tune, restrictions=restrict,
                                  answer=answer, atol=1e-3, strategy=a.strategy,
                                  strategy_options={"max_fevals": fevals}, iterations=7, verbose=False,
                                  quiet=True, **common)
    tuned = time.perf_counter() - t0
    ok = [r for r in results if isinstance(r.get("time"), (int, float))]
    best = min(ok, key=lambda r: r["time"]) if ok else None
    print(f"kernel_tuner {kt.__version__} {a.strategy} on {a.space}: {n} variants, budget {a.budget} = {fevals} "
          f"evaluations; {len(results)} evaluated ({len(results) - len(ok)} failed), tune_kernel {tuned:.2f} s, "
          f"whole {time.perf_counter() - start:.2f} s")
    if best:
        print("best " + " ".join(f"{k}={best[k]}" for k in axes) + f": {best['time']:.6g} ms")


if __name__ == "__main__":
    main()
