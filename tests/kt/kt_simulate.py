#!/usr/bin/env python3
"""Kernel Tuner's simulation mode over a `kvx export --format kerneltuner` file.

Runs brute force twice: with tune_kernel on the cache's whole product space
and no restrictions (every entry visited: the variants, the failed ones and
the pruned InvalidConfig ones), and with tune_cache (the space restricted to
the cache's valid entries).  Prints one line each:

    kernel_tuner VERSION
    tune_kernel RESULTS VALID SIMULATED_MS BEST_TIME
    tune_cache RESULTS VALID SIMULATED_MS BEST_TIME

    python3 tests/kt/kt_simulate.py CACHE.json
"""
import contextlib
import io
import json
import sys
import warnings

import kernel_tuner as kt


def summary(name, results, env):
    results = [r for r in results if r is not None]
    valid = [r for r in results if isinstance(r.get("time"), (int, float))]
    best = min((r["time"] for r in valid), default=float("nan"))
    print(f"{name} {len(results)} {len(valid)} {env['simulated_time']!r} {best!r}")


def main():
    path = sys.argv[1]
    with open(path) as f:
        c = json.load(f)
    print(f"kernel_tuner {kt.__version__}")
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        r1, e1 = kt.tune_kernel(c["kernel_name"], "", tuple(c["problem_size"]), [], c["tune_params"],
                                cache=path, simulation_mode=True, strategy="brute_force", quiet=True)
        r2, e2 = kt.tune_cache(path, strategy="brute_force", quiet=True)
    summary("tune_kernel", r1, e1)
    summary("tune_cache", r2, e2)


main()
