#!/usr/bin/env python3
"""Kernel Tuner's strategies replayed on a space kvx measured: `kvx replay`'s table.

The cache file is `kvx export --db DB --format kerneltuner` of an exhaustive
run: every variant of the spec (each one's objective a geometric mean over its
points; a failed one carries its error), and every pruned combination as an
InvalidConfig entry.  Each strategy runs in Kernel Tuner's simulation mode once
per seed and budget with strategy_options max_fevals = the budget, under the
same rules as `kvx replay` (results/search-spaces.md, the method):

- The space is every stored variant, failed ones included: tune_cache would
  restrict the space to the entries without an error, so that a strategy never
  meets (and never pays for) a variant that fails; here the restriction is the
  spec's where: alone (the pruned combinations), and a failed variant costs an
  evaluation as it does for kvx's strategies.  Kernel Tuner's simulation runner
  counts every first visit of a cached entry, a failed one's too.
- Evaluations are counted: the distinct variants the run visited, in order,
  truncated to the budget; a strategy that stops early shows fewer.
- Time budgets (seconds of simulated tuning time, each variant's compile +
  verification + benchmark time from the cache) read the run at the largest
  count budget: an evaluation counts when it started within the budget.  A
  time budget that run does not reach reads its end (evaluations show it).
- The objective and its direction are the cache's objective and
  objective_higher_is_better fields.

    python3 bench/kernel_tuner_replay.py CACHE.json [--strategies random_sample,...]
        [--seeds 50] [--budgets 2%,5%,10%,20%] [--time-budgets 2%,5%,10%,20%] [--tolerance 0.05]
"""
import argparse
import contextlib
import io
import json
import math
import random
import statistics
import time
import warnings

import numpy as np

DEFAULT = "random_sample,genetic_algorithm,simulated_annealing,greedy_ils,bayes_opt"
ERRORS = ("InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", "ErrorConfig")


def budgets_of(text, n):
    out = []
    for b in filter(None, text.split(",")):
        out.append((b, max(1, min(n, math.ceil(float(b[:-1]) * n / 100) if b.endswith("%") else int(b)))))
    return out


def time_budgets_of(text, total_s):
    out = []
    for b in filter(None, text.split(",")):
        out.append((b, float(b[:-1]) * total_s / 100 if b.endswith("%") else float(b[:-1])))
    return out


class Space:
    """A kvx cache file: its variants (failed ones too), their objective and cost."""

    def __init__(self, path):
        with open(path) as f:
            c = json.load(f)
        self.path = path
        self.keys = c["tune_params_keys"]
        self.objective = c.get("objective", "time")
        self.higher = bool(c.get("objective_higher_is_better", False))
        self.y, self.cost = {}, {}          # key -> objective (None: failed); key -> simulated ms
        for key, e in c["cache"].items():
            v = e.get(self.objective)
            if e.get("time") == "InvalidConfig" and not e.get("compile_time"):
                continue                    # a pruned combination (where:), no variant
            self.y[key] = v if isinstance(v, (int, float)) else None
            self.cost[key] = sum(float(e.get(k) or 0) for k in ("compile_time", "verification_time", "benchmark_time"))
        valid = [v for v in self.y.values() if v is not None]
        self.optimum = max(valid) if self.higher else min(valid)
        self.n, self.ninvalid = len(self.y), len(self.y) - len(valid)
        self.total_s = sum(self.cost.values()) / 1000
        self.variants = {tuple(str(e[k]) for k in self.keys) for key, e in c["cache"].items() if key in self.y}

    def frac(self, v):
        if v is None:
            return 0.0
        return v / self.optimum if self.higher else self.optimum / v

    def restriction(self):
        variants = self.variants

        def stored(*values):
            return tuple(str(x) for x in values) in variants
        return stored


def visited(kt, space, strategy, seed, fevals):
    """The distinct variants one run visited, in order (failed ones too)."""
    from kernel_tuner import util
    cache = util.read_cache(space.path, open_cache=False)
    args = util.infer_args_from_cache(cache)
    from constraint import FunctionConstraint
    random.seed(seed)
    np.random.seed(seed)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        results, _ = kt.tune_kernel(**args, cache=space.path, simulation_mode=True,
                                    restrictions=[FunctionConstraint(space.restriction())],
                                    objective=space.objective, objective_higher_is_better=space.higher,
                                    strategy=strategy, strategy_options={"max_fevals": fevals},
                                    seed=seed, quiet=True, verbose=False)
    order, seen = [], set()
    for r in results:
        if r is None:
            continue
        key = ",".join(str(r[k]) for k in space.keys)
        if key in space.y and key not in seen:
            seen.add(key)
            order.append(key)
    return order


def at_count(space, order, budget):
    keys = order[:budget]
    return space.frac(best(space, keys)), len(keys), sum(space.cost[k] for k in keys) / 1000


def at_time(space, order, budget_s):
    clock, keys = 0.0, []
    for k in order:
        if clock >= budget_s * 1000:
            break
        keys.append(k)
        clock += space.cost[k]
    return space.frac(best(space, keys)), len(keys), clock / 1000


def best(space, keys):
    vals = [space.y[k] for k in keys if space.y[k] is not None]
    if not vals:
        return None
    return max(vals) if space.higher else min(vals)


def summary(fracs, tol):
    fr = sorted(fracs)
    n = len(fr)
    mean = sum(fr) / n
    se = statistics.stdev(fr) / math.sqrt(n) if n > 1 else 0.0
    return {"median": statistics.median(fr), "p10": fr[max(0, math.ceil(0.1 * n) - 1)], "mean": mean, "se": se,
            "within": sum(f >= 1 / (1 + tol) - 1e-12 for f in fr) / n}


def replay(kt, space, strategy, seeds, budgets, time_budgets, tol):
    """One row per budget: {strategy, budget, time, evaluations, simulated_s, median, p10, mean, se, within}."""
    rows, orders = [], {}
    for btext, fevals in budgets:
        cells = []
        for s in range(seeds):
            orders[(fevals, s)] = visited(kt, space, strategy, s, fevals)
            cells.append(at_count(space, orders[(fevals, s)], fevals))
        rows.append(row(strategy, btext, False, 0, cells, tol))
    top = max(f for _, f in budgets)
    for btext, secs in time_budgets:
        cells = [at_time(space, orders[(top, s)], secs) for s in range(seeds)]
        rows.append(row(strategy, btext, True, secs, cells, tol))
    return rows


def row(strategy, btext, is_time, secs, cells, tol):
    r = {"strategy": strategy, "budget": btext, "time": is_time, "budget_s": secs,
         "evaluations": sum(c[1] for c in cells) / len(cells),
         "simulated_s": statistics.median(c[2] for c in cells)}
    r.update(summary([c[0] for c in cells], tol))
    return r


def print_row(r):
    budget = f"{r['budget']} ({r['budget_s']:.1f} s)" if r["time"] else r["budget"]
    print(f"| {r['strategy']} | {budget} | {r['evaluations']:.1f} | {r['simulated_s']:.1f} | {r['median']:.3f} | "
          f"{r['p10']:.3f} | {r['mean']:.3f} | {100 * r['within']:.0f}% |", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache", help="kvx export --format kerneltuner of an exhaustive run")
    ap.add_argument("--strategies", default=DEFAULT)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--budgets", default="2%,5%,10%,20%")
    ap.add_argument("--time-budgets", default="2%,5%,10%,20%")
    ap.add_argument("--tolerance", type=float, default=0.05)
    a = ap.parse_args()
    import kernel_tuner as kt
    space = Space(a.cache)
    print(f"kernel_tuner {kt.__version__} simulation mode on {a.cache}: {space.n} variants ({space.ninvalid} "
          f"invalid, each costing an evaluation), optimum {space.optimum:.6g} ({space.objective}); "
          f"{space.total_s:.1f} s simulated for the whole space; seeds 0..{a.seeds - 1}, "
          f"within = at most {100 * a.tolerance:g}% from the optimum\n")
    print(f"| strategy | budget | evaluations | simulated s | median | p10 | mean | within {100 * a.tolerance:g}% |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for strategy in a.strategies.split(","):
        t0 = time.process_time()
        try:
            for r in replay(kt, space, strategy, a.seeds, budgets_of(a.budgets, space.n),
                            time_budgets_of(a.time_budgets, space.total_s), a.tolerance):
                print_row(r)
        except Exception as e:  # a strategy that does not run here: say why, go on
            print(f"| {strategy} | failed: {type(e).__name__}: {str(e)[:80]} | | | | | | |")
        print(f"<!-- {strategy}: {time.process_time() - t0:.1f} s of CPU -->", flush=True)


if __name__ == "__main__":
    main()
