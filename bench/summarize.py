#!/usr/bin/env python3
"""Turn a hyperfine JSON export into markdown rows: min / median / max seconds and the
ratio of the fastest peer to fixity (greater than 1: fixity is faster)."""
import json, statistics, sys

path, dataset, algo, cache = sys.argv[1:5]
res = json.load(open(path))["results"]
rows = []
for r in res:
    t = r["times"]
    rows.append((r["command"], min(t), statistics.median(t), max(t)))
fix = [r for r in rows if "fixity" in r[0].split()[0]]
peers = [r for r in rows if "fixity" not in r[0].split()[0]]
best_fix = min((r[2] for r in fix), default=None)
best_peer = min((r[2] for r in peers), default=None)
for cmd, lo, med, hi in rows:
    short = cmd.replace("/tmp/fixity-bench/", "").replace("/work/main/bench/../target/release/", "")
    print(f"| {dataset} | {algo} | {cache} | `{short}` | {lo:.3f} | {med:.3f} | {hi:.3f} |")
if best_peer and best_fix:
    print(f"| {dataset} | {algo} | {cache} | **fastest peer / fixity (median)** | | **{best_peer / best_fix:.2f}x** | |")
