#!/usr/bin/env python3
"""Kernel Tuner's strategies replayed on a space kvx measured: `kvx replay`'s table.

The cache file is `kvx export --db DB --format kerneltuner` of an exhaustive
run (every variant of the spec, each one's "time" the objective's geometric
mean over its points; invalid variants are "RuntimeFailedConfig").  Each
strategy runs in Kernel Tuner's simulation mode (tune_cache: the space and
its restrictions are the cache's entries) once per seed and budget with
strategy_options max_fevals = the budget; a run's best valid time gives the
fraction of the optimum reached (optimum / best).  Prints, per strategy and
budget, the median and 10th percentile of that fraction and the share of
seeds within the tolerance, as `kvx replay` does.

    python3 bench/kernel_tuner_replay.py CACHE.json [--strategies random_sample,...]
        [--seeds 50] [--budgets 2%,5%,10%] [--tolerance 0.05]
"""
import argparse
import contextlib
import io
import json
import math
import random
import time
import warnings

import numpy as np

DEFAULT = "random_sample,genetic_algorithm,simulated_annealing,greedy_ils,bayes_opt"


def budgets_of(text, n):
    out = []
    for b in text.split(","):
        out.append((b, max(1, min(n, math.ceil(float(b[:-1]) * n / 100) if b.endswith("%") else int(b)))))
    return out


def fraction(results, optimum):
    best = min((r["time"] for r in results if isinstance(r.get("time"), (int, float))), default=None)
    return optimum / best if best else 0.0


def replay(kt, cache, strategy, seed, fevals):
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        results, _ = kt.tune_cache(cache, strategy=strategy, strategy_options={"max_fevals": fevals},
                                   seed=seed, quiet=True, verbose=False)
    return [r for r in results if r is not None]


def nearest_rank(sorted_v, p):
    return sorted_v[max(0, math.ceil(p * len(sorted_v)) - 1)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache", help="kvx export --format kerneltuner of an exhaustive run")
    ap.add_argument("--strategies", default=DEFAULT)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--budgets", default="2%,5%,10%")
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args()
    import kernel_tuner as kt
    with open(a.cache) as f:
        c = json.load(f)
    times = [e["time"] for e in c["cache"].values() if isinstance(e["time"], (int, float))]
    n, optimum = len(c["cache"]), min(times)
    print(f"kernel_tuner {kt.__version__} simulation mode on {a.cache}: {n} variants "
          f"({n - len(times)} invalid), optimum {optimum:.6g}; seeds 0..{a.seeds - 1}, "
          f"within = at most {100 * a.tolerance:g}% from the optimum\n")
    print(f"| strategy | budget | variants | median | p10 | within {100 * a.tolerance:g}% |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for strategy in a.strategies.split(","):
        t0 = time.perf_counter()
        for btext, fevals in budgets_of(a.budgets, n):
            try:
                fr = sorted(fraction(replay(kt, a.cache, strategy, s, fevals), optimum) for s in range(a.seeds))
            except Exception as e:  # a strategy that does not run here: say why, go on
                print(f"| {strategy} | {btext} | {fevals} | failed: {type(e).__name__}: {str(e)[:80]} | | |")
                continue
            within = sum(f >= 1 / (1 + a.tolerance) - 1e-12 for f in fr) / len(fr)
            median = (fr[len(fr) // 2] if len(fr) % 2 else (fr[len(fr) // 2 - 1] + fr[len(fr) // 2]) / 2)
            print(f"| {strategy} | {btext} | {fevals} | {median:.3f} | {nearest_rank(fr, 0.1):.3f} | "
                  f"{100 * within:.0f}% |", flush=True)
        print(f"<!-- {strategy}: {time.perf_counter() - t0:.1f} s -->", flush=True)


if __name__ == "__main__":
    main()
