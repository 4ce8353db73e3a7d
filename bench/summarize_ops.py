"""Merges the runs of bench/ops.sh into bench/out/ops.json and prints the
BENCHMARKS.md tables (medians of the runs, with their range).

    python3 bench/summarize_ops.py bench/out 3
"""
import json
import statistics
import sys
from pathlib import Path

out = Path(sys.argv[1])
runs = int(sys.argv[2])
MODES = ["handlers", "http-1", "http-16"]
KEYS = ["calls", "errors", "calls_per_s", "p50_us", "p90_us", "p99_us", "p999_us", "max_us"]

every = []
for run in range(1, runs + 1):
    for mode in MODES:
        f = out / f"ops-{run}-{mode}.json"
        for row in json.loads(f.read_text()):
            every.append({"run": run, **row})

groups = {}
for row in every:
    groups.setdefault((row["op"], row["mode"]), []).append(row)

medians = []
for (op, mode), rows in groups.items():
    m = {"op": op, "mode": mode, "runs": len(rows)}
    for k in KEYS:
        vals = [r[k] for r in rows]
        m[k] = statistics.median(vals)
        m[k + "_range"] = [min(vals), max(vals)]
    m["errors_total"] = sum(r["errors"] for r in rows)
    medians.append(m)

(out / "ops.json").write_text(json.dumps({"runs": runs, "medians": medians, "every_run": every}, indent=1) + "\n")


def rng(m, k, fmt):
    lo, hi = m[k + "_range"]
    return f"**{fmt(m[k])}** ({fmt(lo)}–{fmt(hi)})" if runs > 1 else f"**{fmt(m[k])}**"


us = lambda x: f"{x:,.1f}"
rate = lambda x: f"{x:,.0f}"

print(f"In process (medians of {runs} runs, range in brackets):\n")
print("| operation | calls per run | p50 µs | p99 µs | errors |")
print("|---|---|---|---|---|")
for m in medians:
    if m["mode"] == "in-process":
        print(f"| {m['op']} | {m['calls']:,.0f} | {rng(m, 'p50_us', us)} | {rng(m, 'p99_us', us)} | {m['errors_total']} |")

print(f"\nOver HTTP (medians of {runs} runs, range in brackets):\n")
print("| operation | connections | req/s | p50 µs | p99 µs | errors |")
print("|---|---|---|---|---|---|")
for m in sorted((m for m in medians if m["mode"] != "in-process"), key=lambda m: (m["op"] != "lookup", m["op"], int(m["mode"].split("-")[1]))):
    c = m["mode"].split("-")[1]
    print(f"| {m['op']} | {c} | {rng(m, 'calls_per_s', rate)} | {rng(m, 'p50_us', us)} | {rng(m, 'p99_us', us)} | {m['errors_total']} |")

# Interference: lookups at 4 connections alone, and beside 2 connections of
# text-filtered expansions (files written by ops.sh since the heavy-permit
# change; older runs have none).
pairs = []
for run in range(1, runs + 1):
    files = [out / f"ops-{run}-{k}.json" for k in ("quiet", "busy", "heavy")]
    if all(f.exists() for f in files):
        quiet, busy, heavy = (json.loads(f.read_text())[0] for f in files)
        pairs.append((quiet, busy, heavy))
if pairs:
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    q, b, h = ([p[i] for p in pairs] for i in range(3))
    print(f"\n$lookup at 4 connections, alone and beside 2 connections of text-filtered expansions (medians of {len(pairs)} runs):\n")
    print("| | lookup req/s | lookup p50 µs | lookup p99 µs | expansions/s | expansion p50 µs |")
    print("|---|---|---|---|---|---|")
    print(f"| alone | {med(q, 'calls_per_s'):,.0f} | {med(q, 'p50_us'):,.1f} | {med(q, 'p99_us'):,.1f} | | |")
    print(f"| beside expansions | {med(b, 'calls_per_s'):,.0f} | {med(b, 'p50_us'):,.1f} | {med(b, 'p99_us'):,.1f} | {med(h, 'calls_per_s'):,.1f} | {med(h, 'p50_us'):,.0f} |")
    (out / "ops-interference.json").write_text(json.dumps({"quiet": q, "busy": b, "heavy": h}, indent=1) + "\n")
