#!/usr/bin/env python3
"""The search benchmark: kvx's strategies and Kernel Tuner's replayed on every recorded space of a list.

One command for results/search-spaces.md (its method section says what each
figure is):

    python3 bench/search_bench.py bench/search_spaces.tsv [--kvx build/kvx] [--seeds 50]
        [--kt STRATEGIES|none] [--kt-seeds 20] [--loo] [--md OUT.md] [--json OUT.json]

Each line of the list is a space: NAME, DB, SPEC, OBJECTIVE (tab-separated;
'#' starts a comment; a space whose DB is missing is skipped and said so).
kvx's side is `kvx replay DB --spec SPEC --objective OBJECTIVE --format json`
(every ask an evaluation, invalid variants too; count budgets of 2, 5, 10 and
20% of the space and the same shares of its simulated tuning time).  Kernel
Tuner's side (kernel_tuner 1.5.0 importable, else --kt none) is
bench/kernel_tuner_replay.py over `kvx export --format kerneltuner` of the
same space, under the same rules.

The score of a strategy at a budget of a space is (F - F_random) / (1 -
F_random), F the mean fraction of the optimum over the seeds and F_random kvx's
random search's at that budget (after Willemsen et al., FGCS 2024: 0 is random
search, 1 the optimum every time, below 0 worse than random); a cell where
random already reaches the optimum every time is left out.  The aggregate is
the mean over every space and budget.  --loo chooses the default's constants
leaving each space out in turn: for each space, the grid point with the best
aggregate over the others, and that choice's score on the space left out.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

KVX_STRATEGIES = "random,local,model,portfolio"
KT_DEFAULT = "random_sample,genetic_algorithm,simulated_annealing,greedy_ils,bayes_opt"
# The candidates --loo chooses among: each strategy with each combination of its constants.
LOO_GRID = {"model": {"kappa": [0.5, 2, 4], "init": [1, 2, 3]},
            "portfolio": {"kappa": [2, 4], "init": [1, 2, 3], "floor": [0.1, 0.2]},
            "local": {"init": [1]}}


def loo_names():
    names = []
    for strategy, consts in LOO_GRID.items():
        keys = list(consts)
        for v in itertools.product(*(consts[k] for k in keys)):
            names.append(strategy + ":" + ":".join(f"{k}={x:g}" for k, x in zip(keys, v)))
    return names


def spaces_of(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].rstrip("\n")
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) != 4:
                sys.exit(f"{path}:{n}:1: expected NAME, DB, SPEC, OBJECTIVE separated by tabs, found {len(cols)} fields")
            out.append(dict(zip(("name", "db", "spec", "objective"), (c.strip() for c in cols))))
    return out


def kvx_replay(a, sp, strategies, seeds):
    cmd = [a.kvx, "replay", sp["db"], "--spec", sp["spec"], "--objective", sp["objective"], "--format", "json",
           "--strategy", strategies, "--seeds", str(seeds), "--budgets", a.budgets, "--time-budgets", a.time_budgets]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"search_bench: {' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()}")
    return json.loads(p.stdout)


def kt_rows(a, sp, kt):
    import kernel_tuner_replay as ktr
    with tempfile.TemporaryDirectory() as d:
        cache = os.path.join(d, "kt.json")
        subprocess.run([a.kvx, "export", "--db", sp["db"], "--spec", sp["spec"], "--format", "kerneltuner",
                        "--objective", sp["objective"], "--out", cache], check=True, capture_output=True)
        space = ktr.Space(cache)
        rows = []
        for strategy in a.kt.split(","):
            t0 = time.process_time()
            try:
                for r in ktr.replay(kt, space, strategy, a.kt_seeds, ktr.budgets_of(a.budgets, space.n),
                                    ktr.time_budgets_of(a.time_budgets, space.total_s), a.tolerance):
                    r["strategy"] = "KT " + strategy
                    rows.append(r)
            except Exception as e:  # a strategy that does not run here: say so, go on
                print(f"search_bench: {sp['name']}: Kernel Tuner {strategy} failed: {type(e).__name__}: {e}",
                      file=sys.stderr)
            print(f"search_bench: {sp['name']}: Kernel Tuner {strategy} {time.process_time() - t0:.1f} s of CPU",
                  file=sys.stderr)
    return rows


def score_cells(rows, random_rows):
    """(budget, score) of each row whose random cell has room above it."""
    base = {(r["budget"], r["time"]): r["mean"] for r in random_rows}
    out = []
    for r in rows:
        f0 = base.get((r["budget"], r["time"]))
        if f0 is not None and f0 < 1 - 1e-9:
            out.append(((r["budget"], r["time"]), (r["mean"] - f0) / (1 - f0)))
    return out


def vs_random(rows, random_rows):
    base = {(r["budget"], r["time"]): r for r in random_rows}
    for r in rows:
        x = base.get((r["budget"], r["time"]))
        if x is None:
            r["vs_random"] = ""
            continue
        d, se = r["mean"] - x["mean"], (r["se"] ** 2 + x["se"] ** 2) ** 0.5
        r["vs_random"] = "=" if abs(d) <= 2 * se + 1e-9 else ("worse" if d < 0 else "better")


def table(sp, res, tol):
    head = res["kvx"]
    lines = [f"### {sp['name']}", "",
             f"`{sp['db']}`, spec `{head['spec']}`, objective `{sp['objective']}` "
             f"({'lower' if head['lower_is_better'] else 'higher'} is better): {head['variants']} variants, "
             f"{head['invalid']} invalid, optimum {head['optimum']:.6g}, {head['total_s']:.1f} s of simulated "
             f"tuning for the whole space; kvx {head['seeds']} seeds, batches of {head['batch']}.", "",
             f"| strategy | budget | evaluations | simulated s | median | p10 | mean | within {100 * tol:g}% | vs random |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in head["rows"] + res["kt"]:
        budget = f"{r['budget']} ({r['budget_s']:.1f} s)" if r["time"] else r["budget"]
        lines.append(f"| {r['strategy']} | {budget} | {r['evaluations']:.1f} | {r['simulated_s']:.1f} | "
                     f"{r['median']:.3f} | {r['p10']:.3f} | {r['mean']:.3f} | {100 * r['within']:.0f}% | "
                     f"{r.get('vs_random', '')} |")
    return "\n".join(lines) + "\n"


def aggregate(results):
    """strategy -> {count, time, all: mean score; worse: cells worse than random; cells}."""
    agg = {}
    for res in results.values():
        rnd = [r for r in res["kvx"]["rows"] if r["strategy"] == "random"]
        rows = res["kvx"]["rows"] + res["kt"]
        for strategy in dict.fromkeys(r["strategy"] for r in rows):
            mine = [r for r in rows if r["strategy"] == strategy]
            a = agg.setdefault(strategy, {"count": [], "time": [], "worse": 0, "spaces": 0})
            a["spaces"] += 1
            a["worse"] += sum(r.get("vs_random") == "worse" for r in mine)
            for (budget, is_time), s in score_cells(mine, rnd):
                a["time" if is_time else "count"].append(s)
    for a in agg.values():
        cells = a["count"] + a["time"]
        a["all"] = sum(cells) / len(cells) if cells else float("nan")
        a["count"] = sum(a["count"]) / len(a["count"]) if a["count"] else float("nan")
        a["time"] = sum(a["time"]) / len(a["time"]) if a["time"] else float("nan")
    return agg


def agg_table(agg):
    lines = ["| strategy | score, count budgets | score, time budgets | score | cells worse than random | spaces |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for s, a in sorted(agg.items(), key=lambda kv: -kv[1]["all"]):
        lines.append(f"| {s} | {a['count']:.3f} | {a['time']:.3f} | {a['all']:.3f} | {a['worse']} | {a['spaces']} |")
    return "\n".join(lines) + "\n"


def loo(a, spaces):
    """Leave-one-out over LOO_GRID: one row per space left out, then the choice on all of them."""
    names = loo_names()
    score = {}          # (space, strategy) -> [cell scores]
    for sp in spaces:
        res = kvx_replay(a, sp, "random," + ",".join(names), a.seeds)
        rnd = [r for r in res["rows"] if r["strategy"] == "random"]
        for n in names:
            score[(sp["name"], n)] = [s for _, s in score_cells([r for r in res["rows"] if r["strategy"] == n], rnd)]
    lines = ["| left out | constants chosen on the others | their score on the others | score on the left out |",
             "| --- | --- | ---: | ---: |"]
    for held in spaces:
        def on_others(n):
            cells = [s for sp in spaces if sp["name"] != held["name"] for s in score[(sp["name"], n)]]
            return sum(cells) / len(cells) if cells else 0.0
        best = max(names, key=on_others)
        cells = score[(held["name"], best)]
        lines.append(f"| {held['name']} | `{best}` | {on_others(best):.3f} | "
                     f"{(sum(cells) / len(cells)) if cells else float('nan'):.3f} |")

    def on_all(n):
        cells = [s for sp in spaces for s in score[(sp["name"], n)]]
        return sum(cells) / len(cells) if cells else 0.0
    ranked = sorted(names, key=on_all, reverse=True)
    lines.append(f"| (none) | `{ranked[0]}` | {on_all(ranked[0]):.3f} | |")
    lines.append("")
    lines.append("The grid on every space, best first: " +
                 ", ".join(f"`{n}` {on_all(n):.3f}" for n in ranked) + ".")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spaces", help="the list of spaces: NAME, DB, SPEC, OBJECTIVE, tab-separated")
    ap.add_argument("--kvx", default="build/kvx")
    ap.add_argument("--strategies", default=KVX_STRATEGIES, help="kvx's, as kvx replay --strategy takes them")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--kt", default=KT_DEFAULT, help="Kernel Tuner's strategies, or none")
    ap.add_argument("--kt-seeds", type=int, default=20)
    ap.add_argument("--budgets", default="2%,5%,10%,20%")
    ap.add_argument("--time-budgets", default="2%,5%,10%,20%")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--loo", action="store_true", help="also the leave-one-out table of the default's constants")
    ap.add_argument("--md", help="write the Markdown here (default: stdout)")
    ap.add_argument("--json", help="write every row here")
    ap.add_argument("--reuse-kt", help="take Kernel Tuner's rows of each space from this earlier --json (its "
                    "replays do not change with kvx's strategies)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    kt = None
    if a.kt != "none":
        try:
            import kernel_tuner as kt
        except ImportError:
            sys.exit("search_bench: kernel_tuner is not importable (pip install kernel_tuner==1.5.0), or pass --kt none")
    spaces = []
    for sp in spaces_of(a.spaces):
        if os.path.exists(sp["db"]):
            spaces.append(sp)
        else:
            print(f"search_bench: {sp['name']}: {sp['db']} does not exist: skipped", file=sys.stderr)
    results, out = {}, []
    earlier = json.load(open(a.reuse_kt))["results"] if a.reuse_kt else {}
    for sp in spaces:
        rows = earlier[sp["name"]]["kt"] if sp["name"] in earlier else kt_rows(a, sp, kt) if kt else []
        res = {"kvx": kvx_replay(a, sp, a.strategies, a.seeds), "kt": rows}
        vs_random(res["kt"], [r for r in res["kvx"]["rows"] if r["strategy"] == "random"])
        results[sp["name"]] = res
        out.append(table(sp, res, a.tolerance))
    agg = aggregate(results)
    text = "## The aggregate\n\n" + agg_table(agg) + "\n## Each space\n\n" + "\n".join(out)
    if a.loo:
        text += "\n## The default's constants, each space left out in turn\n\n" + loo(a, spaces)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
    else:
        print(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"spaces": spaces, "results": results, "aggregate": agg}, f, indent=1)


if __name__ == "__main__":
    main()
