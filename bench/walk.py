#!/usr/bin/env python3
"""bench/walk.py KVX SRC TRACE...: the walk of bench/walk.sh from the traces
of bench/walk.c (records of (address, +1 enter / -1 exit), int64 each).

The trace read is the one that holds run_loop.c's handout_one (the parent's;
the workers' hold none).  The walk: from the entry of the last handout_one
call within which case_write is entered, to the last exit of store_put_case.
Every distinct function entered in between is a stay; each is named by
addr2line with its file, and the stays are listed by file and folder.  Over
the whole trace it also counts the entries of resolve_case (a point
resolved) and resolve_bind (a resolved case bound to its compiled kernel).

bench/walk.py --count KVX SRC TRACE...: only those counts."""
import collections
import os
import struct
import subprocess
import sys


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    n = len(data) // 16
    return struct.unpack("<%dq" % (2 * n), data[: 16 * n])


def names(kvx, src, addrs):
    """address -> (function, file relative to src)"""
    out = {}
    addrs = sorted(addrs)
    text = subprocess.run(["addr2line", "-f", "-e", kvx] + ["%#x" % a for a in addrs],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    for i, a in enumerate(addrs):
        fn, where = text[2 * i], text[2 * i + 1]
        path = where.rsplit(":", 1)[0]
        path = os.path.relpath(path, src) if path.startswith(src) else path
        out[a] = (fn, path)
    return out


def count_only(kvx, src, traces):
    for t in traces:
        rec = records(t)
        sym = names(kvx, src, set(rec[0::2]))
        byname = {v[0]: a for a, v in sym.items()}
        if "handout_one" not in byname:
            continue
        counts = collections.Counter(rec[i] for i in range(0, len(rec), 2) if rec[i + 1] > 0)
        for fn in ("resolve_case", "resolve_bind"):
            if fn in byname:
                print("run: %s entered %d times" % (fn, counts[byname[fn]]))


def main():
    if sys.argv[1] == "--count":
        return count_only(sys.argv[2], os.path.realpath(sys.argv[3]), sys.argv[4:])
    kvx, src, traces = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3:]
    for t in traces:
        rec = records(t)
        addrs = set(rec[0::2])
        sym = names(kvx, src, addrs)
        byname = {v[0]: a for a, v in sym.items()}
        if "handout_one" in byname:
            break
    else:
        sys.exit("walk.py: no trace holds handout_one")
    hand, write, put = byname["handout_one"], byname.get("case_write"), byname.get("store_put_case")
    start = end = None
    depth, open_at = 0, None
    for i in range(0, len(rec), 2):
        a, d = rec[i], rec[i + 1]
        if a == hand:
            if d > 0:
                depth, open_at, wrote = depth + 1, i, False
            else:
                depth -= 1
                if depth == 0 and wrote:
                    start = open_at
        elif a == write and d > 0 and depth > 0:
            wrote = True
        elif a == put and d < 0:
            end = i
    if start is None or end is None or end < start:
        sys.exit("walk.py: no hand-out that writes a case before a stored row")
    stays = collections.OrderedDict()
    calls = 0
    for i in range(start, end + 1, 2):
        if rec[i + 1] > 0:
            calls += 1
            stays.setdefault(rec[i], 0)
            stays[rec[i]] += 1
    files = collections.OrderedDict()
    for a in stays:
        fn, path = sym[a]
        files.setdefault(path, []).append(fn)
    # Over the whole run (the main thread): how often each point was resolved.
    counts = collections.Counter(rec[i] for i in range(0, len(rec), 2) if rec[i + 1] > 0)
    for fn in ("resolve_case", "resolve_bind"):
        if fn in byname:
            print("run: %s entered %d times" % (fn, counts[byname[fn]]))
    folders = sorted({p.split("/")[0] for p in files})
    print("walk: %d function stays in %d files of %d folders (%s); %d calls" %
          (len(stays), len(files), len(folders), " ".join(folders), calls))
    for path, fns in sorted(files.items()):
        print("  %-28s %3d  %s" % (path, len(fns), " ".join(fns)))


if __name__ == "__main__":
    main()
