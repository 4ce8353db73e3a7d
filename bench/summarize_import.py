"""Collects bench/import.sh's runs into import.json and a BENCHMARKS.md row."""
import json
import platform
import statistics
import sys
from pathlib import Path

out, runs, concepts = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
reports = []
for i in range(1, runs + 1):
    r = json.loads((out / f"import-{i}.json").read_text())
    t = (out / f"time-{i}.txt").read_text().strip()
    # "{"cpu_seconds": 12.3 + 4.5}" -> evaluate the sum.
    user, sys_ = t.split(":")[1].strip(" }").split("+")
    r["cpu_seconds"] = float(user) + float(sys_)
    reports.append(r)

med = lambda k: statistics.median(r[k] for r in reports)
last = reports[-1]
inspect = json.loads((out / "inspect.json").read_text())
sections = {s["name"]: s["len"] for s in inspect["sections"]}
summary = {
    "machine": {"cpus": 2, "kernel": platform.release()},
    "concepts": concepts,
    "runs": runs,
    "wall_seconds": [r["wall_seconds"] for r in reports],
    "cpu_seconds": [r["cpu_seconds"] for r in reports],
    "peak_rss": [r["peak_rss"] for r in reports],
    "median_wall_seconds": med("wall_seconds"),
    "median_cpu_seconds": med("cpu_seconds"),
    "median_peak_rss": med("peak_rss"),
    "file_size": last["file_size"],
    "counts": last["counts"],
    "stages": last["stages"],
    "spilled_runs": last["spilled_runs"],
    "sections": sections,
}
(out / "import.json").write_text(json.dumps(summary, indent=2))
mib = lambda b: f"{b / 2**20:.0f} MiB"
print("| concepts | descriptions | relationships | import wall s (median, range) | CPU s | peak RSS | file size |")
print("|---|---|---|---|---|---|---|")
w = summary["wall_seconds"]
print(
    f"| {concepts:,} | {last['counts']['descriptions']:,} | {last['counts']['relationships']:,} "
    f"| {summary['median_wall_seconds']:.1f} ({min(w):.1f}–{max(w):.1f}) | {summary['median_cpu_seconds']:.1f} "
    f"| {mib(summary['median_peak_rss'])} | {mib(summary['file_size'])} |"
)
print()
print("| stage | seconds | rows |")
print("|---|---|---|")
for s in last["stages"]:
    print(f"| {s['name']} | {s['seconds']:.2f} | {s['rows']:,} |")
print()
print("| section | bytes |")
print("|---|---|")
for name, size in sorted(sections.items(), key=lambda kv: -kv[1]):
    print(f"| {name} | {size:,} |")
