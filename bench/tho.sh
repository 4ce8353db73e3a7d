#!/usr/bin/env bash
# One large value set of hl7.terminology.r4 ("THO") in process (issue 7):
# `txmap bench tho` RUNS times (default 3) on the package alone (EDITION=
# path/to/edition.txmap serves a SNOMED CT edition as well); writes
# bench/out/tho-<run>.json, the merged bench/results/tho.json (every run and
# the medians with ranges) and prints the BENCHMARKS.md table.
#
#   bench/tho.sh
#   RUNS=1 CALLS=1000 DURATION=2 COLD_RUNS=1 bench/tho.sh   # a quick look
#   TXMAP=/tmp/txmap bench/tho.sh                 # a given build
#   VALUE_SET=http://terminology.hl7.org/ValueSet/v3-Race bench/tho.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
CALLS=${CALLS:-10000}
SECONDS_PER_OP=${DURATION:-10}
SEED=${SEED:-1}
COLD_RUNS=${COLD_RUNS:-5}
VALUE_SET=${VALUE_SET:-http://terminology.hl7.org/ValueSet/v3-ActCode}
OUT=bench/out
PACKAGES=$OUT/packages
PACKAGE=$PACKAGES/hl7.terminology.r4-7.0.1.tgz
mkdir -p "$OUT" "$PACKAGES" bench/results

# TXMAP=path/to/txmap benchmarks that binary instead of building one. The
# tree may be mid-edit by others: retry the build a few times.
if [ -z "${TXMAP:-}" ]; then
    for attempt in 1 2 3 4 5; do
        if cargo build --release -q -p txmap; then
            break
        fi
        [ "$attempt" = 5 ] && { echo "release build failed" >&2; exit 1; }
        echo "build failed (attempt $attempt); retrying in 30 s" >&2
        sleep 30
    done
    TXMAP=target/release/txmap
fi

if [ ! -f "$PACKAGE" ]; then
    (cd "$PACKAGES" && npm pack hl7.terminology.r4@7.0.1 >npm.log 2>&1)
fi

EXTRA=()
if [ -n "${EDITION:-}" ]; then
    EXTRA=(--edition "$EDITION")
fi

for run in $(seq 1 "$RUNS"); do
    echo "== run $run/$RUNS" >&2
    "$TXMAP" bench tho --package "$PACKAGE" "${EXTRA[@]}" --value-set "$VALUE_SET" \
        --calls "$CALLS" --max-seconds "$SECONDS_PER_OP" --seed "$SEED" --cold-runs "$COLD_RUNS" \
        --out "$OUT/tho-$run.json" >/dev/null
done

python3 - "$RUNS" <<'PY'
import json, statistics, sys

runs = [json.load(open(f"bench/out/tho-{i}.json")) for i in range(1, int(sys.argv[1]) + 1)]
first = runs[0]
names = [o["op"] for o in first["ops"]]
medians = {}
for name in names:
    rows = [next(o for o in r["ops"] if o["op"] == name) for r in runs]
    m = {"example": rows[0]["example"], "pool": rows[0]["pool"],
         "calls": [o["calls"] for o in rows],
         "errors": sum(o["errors"] for o in rows),
         "unexpected": sum(o["unexpected"] for o in rows),
         "cold_statuses": sorted({o["cold_status"] for o in rows})}
    for key in ["cold_us", "p50_us", "p90_us", "p99_us", "max_us", "calls_per_s"]:
        xs = [o[key] for o in rows]
        m[key] = {"median": statistics.median(xs), "min": min(xs), "max": max(xs)}
    medians[name] = m
startup = [r["startup_ms"] for r in runs]
merged = {
    "value_set": first["value_set"], "system": first["system"], "total": first["total"],
    "abstract_codes": first["abstract_codes"], "packages": first["packages"],
    "edition": first["edition"], "seed": first["seed"],
    "expand_system_param": [r["expand_system_param"] for r in runs],
    "expand_plain_status": [r["expand_plain_status"] for r in runs],
    "startup_ms": {"median": statistics.median(startup), "min": min(startup), "max": max(startup)},
    "medians": medians, "runs": runs,
}
with open("bench/results/tho.json", "w") as f:
    json.dump(merged, f, indent=2)
    f.write("\n")

def fmt(x):
    return f"{x:,.0f}" if x >= 1000 else f"{x:.1f}"
def cell(d, bold=False):
    m = fmt(d["median"])
    return f"{'**' + m + '**' if bold else m} ({fmt(d['min'])}–{fmt(d['max'])})"

print(f"{first['value_set']}: {first['total']} codes ({first['abstract_codes']} abstract), "
      f"{len(runs)} runs; state prepared in {cell(merged['startup_ms'])} ms")
if any(merged["expand_system_param"]):
    print(f"$expand?url= alone answered {merged['expand_plain_status']}: $expand carried system={first['system']}")
print()
print("| operation | pool | calls/run | errors | first call µs | p50 µs | p99 µs |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name in names:
    m = medians[name]
    errs = m["errors"] + m["unexpected"]
    print(f"| `{name}` | {m['pool']} | {min(m['calls']):,}–{max(m['calls']):,} | {errs} | "
          f"{cell(m['cold_us'])} | {cell(m['p50_us'], True)} | {cell(m['p99_us'])} |")
PY
