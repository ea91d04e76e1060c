#!/usr/bin/env python3
"""A cache file written by Kernel Tuner's own cache writer, for `kvx import`.

Kernel Tuner 1.5's util.process_cache writes the header (device, kernel,
problem size, tune parameters, objective) and util.store_cache an entry per
configuration, as a tuning does; util.close_cache closes the file at the
end.  With --open the file is left as an interrupted tuning leaves it (no
closing brackets, a trailing comma).  The space is block_size_x in 32, 64,
128 by vec in 1, 2; the figures are made up here (no kernel runs), in the
fields a tuning with a GB/s metric stores:

    32,1    times [1.0, 2.0, 3.0, 6.0] (time 3.0), GB/s 100
    32,2    times [2.5] (time 2.5), GB/s 120
    64,1    CompilationFailedConfig
    64,2    RuntimeFailedConfig
    128,1   InvalidConfig
    128,2   times [] (time 0.5)

    python3 tests/kt/kt_write.py OUT.json [--open]
"""
import os
import sys
from types import SimpleNamespace

from kernel_tuner import util


def entry(x, v, time, times, gbs=None):
    e = {"block_size_x": x, "vec": v, "time": time, "times": times, "compile_time": 812.5,
         "verification_time": 0, "benchmark_time": 21.0}
    if gbs is not None:
        e["GB/s"] = gbs
    e.update({"strategy_time": 0, "framework_time": 3.5, "timestamp": "2026-12-07 12:00:00+00:00"})
    return e


def main():
    path = sys.argv[1]
    if os.path.exists(path):
        os.unlink(path)
    params = {"block_size_x": [32, 64, 128], "vec": [1, 2]}
    kernel = SimpleNamespace(kernel_name="copy", problem_size=(1 << 24,))
    tuning = SimpleNamespace(tune_params=params, objective="time", simulation_mode=False)
    runner = SimpleNamespace(get_device_info=lambda: SimpleNamespace(name="Made-up GPU"), simulation_mode=False)
    cache = util.process_cache(path, kernel, tuning, runner)
    rows = [
        entry(32, 1, 3.0, [1.0, 2.0, 3.0, 6.0], 100.0),
        entry(32, 2, 2.5, [2.5], 120.0),
        entry(64, 1, util.CompilationFailedConfig(), []),
        entry(64, 2, util.RuntimeFailedConfig(), []),
        entry(128, 1, util.InvalidConfig(), []),
        entry(128, 2, 0.5, []),
    ]
    for e in rows:
        key = ",".join(str(e[k]) for k in params)
        util.store_cache(key, e, path, cache)
    if "--open" not in sys.argv:
        util.close_cache(path)


main()
