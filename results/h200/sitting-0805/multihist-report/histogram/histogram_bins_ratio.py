#!/usr/bin/env python3
# written by kvx report: ratio against bins, one series per strategy; python3 histogram_bins_ratio.py draws histogram_bins_ratio.gp's figure with matplotlib into histogram_bins_ratio.svg and histogram_bins_ratio.png beside it.
import csv, math, os
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

here = os.path.dirname(os.path.abspath(__file__))
stem = os.path.join(here, "histogram_bins_ratio")
title = "histogram: time relative to the baseline"
xlabel = "bins (log2 scale)"
ylabel = "ratio (x)"
logx, logy = True, True

def num(s):
    try:
        return float(s)
    except ValueError:
        return math.nan

with open(stem + ".csv", newline="") as f:
    rows = list(csv.reader(f))
head, body = rows[0], rows[1:]
x = [num(r[0]) for r in body]
fig, ax = plt.subplots(figsize=(9, 5.4), dpi=100)
for i in range(1, len(head)):
    ax.plot(x, [num(r[i]) for r in body], marker="o", label=head[i])
if logx:
    ax.set_xscale("log", base=2)
if logy:
    ax.set_yscale("log")
ax.set_title(title)
ax.set_xlabel(xlabel)
ax.set_ylabel(ylabel)
ax.grid(True)
ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
fig.tight_layout()
fig.savefig(stem + ".svg")
fig.savefig(stem + ".png")
