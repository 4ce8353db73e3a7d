#!/usr/bin/env bash
# ECL evaluation benchmark (issue 6) on the International-scale synthetic
# edition, mapped and read through once: every expression of
# bench/ecl-corpus.txt evaluated RUNS_PER_EXPR times (median kept) under the
# server's budget (1 s deadline, 50,000,000 work units). The whole corpus is
# run RUNS times (default 3); writes bench/out/ecl-<run>.json, copies the
# last to bench/results/ecl.json and prints the BENCHMARKS.md tables
# (medians over the runs).
#
#   bench/ecl.sh
#   RUNS=1 RUNS_PER_EXPR=1 bench/ecl.sh     # a quick look
#   TXMAP=/tmp/txmap bench/ecl.sh           # a given build
#   SUMMARY_ONLY=1 bench/ecl.sh             # the tables of the last runs again
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
RUNS_PER_EXPR=${RUNS_PER_EXPR:-5}
BUDGET_MS=${BUDGET_MS:-1000}
OUT=bench/out
EDITION=$OUT/intl.txmap
CORPUS=bench/ecl-corpus.txt
mkdir -p "$OUT" bench/results

# SUMMARY_ONLY=1 prints the tables of the last runs without running.
if [ -n "${SUMMARY_ONLY:-}" ]; then
    :
# TXMAP=path/to/txmap benchmarks that binary instead of building one.
elif [ -z "${TXMAP:-}" ]; then
    # Others may be mid-edit: retry a failed build a few times.
    for attempt in 1 2 3 4 5; do
        cargo build --release --locked -q -p txmap && break
        [ "$attempt" = 5 ] && exit 1
        echo "build failed; retrying in 60 s" >&2
        sleep 60
    done
    TXMAP=target/release/txmap
fi

if [ -z "${SUMMARY_ONLY:-}" ] && [ ! -f "$EDITION" ]; then
    # As bench/import.sh makes it.
    RF2="$OUT/synth-535000-1"
    [ -d "$RF2" ] || "$TXMAP" synth --concepts 535000 --seed 1 --out "$RF2" >/dev/null
    "$TXMAP" import --rf2 "$RF2" --out "$EDITION" --quiet
fi

for run in $(seq 1 "$RUNS"); do
    [ -n "${SUMMARY_ONLY:-}" ] && break
    echo "== run $run/$RUNS" >&2
    "$TXMAP" bench ecl --edition "$EDITION" --corpus "$CORPUS" \
        --runs "$RUNS_PER_EXPR" --budget-ms "$BUDGET_MS" \
        --out "$OUT/ecl-$run.json" >"$OUT/ecl-$run.md"
done
[ -n "${SUMMARY_ONLY:-}" ] || cp "$OUT/ecl-$RUNS.json" bench/results/ecl.json

python3 - "$OUT" "$RUNS" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
rs = [json.load(open(f"{out}/ecl-{i}.json")) for i in range(1, runs + 1)]

def med(xs):
    return statistics.median(xs)

def rng(xs):
    return f"{med(xs):,.1f} ({min(xs):,.1f}–{max(xs):,.1f})" if len(xs) > 1 else f"{xs[0]:,.1f}"

o = [r["overall"] for r in rs]
last = o[-1]
print(f"{last['n']} expressions; {last['answered']} answered, {last['too_costly']} too costly, "
      f"{last['not_supported']} not supported, {last['errors']} errors (last run); "
      f"parse of the whole corpus {med([r['parse_total_us'] for r in rs]):,.0f} µs "
      f"(median of {runs} runs)\n")
print("| | median µs | p95 µs | max µs |")
print("|---|---|---|---|")
print(f"| per-expression medians, answered, median (range) of {runs} runs | "
      f"{rng([x['median_us'] for x in o])} | {rng([x['p95_us'] for x in o])} | {rng([x['max_us'] for x in o])} |")
print()
print("| category | n | answered | too costly | not supported | median µs | p95 µs | max µs | median result size |")
print("|---|---|---|---|---|---|---|---|---|")
# Categories in corpus order (JSON objects come back sorted).
cats = list(dict.fromkeys(e["category"] for e in rs[-1]["expressions"]))
for c in cats:
    s = rs[-1]["categories"][c]
    cs = [r["categories"][c] for r in rs]
    print(f"| {c} | {s['n']} | {s['answered']} | {s['too_costly']} | {s['not_supported'] + s['errors']} | "
          f"{med([x['median_us'] for x in cs]):,.1f} | {med([x['p95_us'] for x in cs]):,.1f} | "
          f"{med([x['max_us'] for x in cs]):,.1f} | {s['median_result_size']:,} |")
print(f"| **all** | {last['n']} | {last['answered']} | {last['too_costly']} | "
      f"{last['not_supported'] + last['errors']} | {med([x['median_us'] for x in o]):,.1f} | "
      f"{med([x['p95_us'] for x in o]):,.1f} | {med([x['max_us'] for x in o]):,.1f} | "
      f"{last['median_result_size']:,} |")
print()
# Slowest: per expression, the median over runs of its median.
exprs = rs[-1]["expressions"]
times = [med([r["expressions"][i]["median_us"] for r in rs]) for i in range(len(exprs))]
order = sorted(range(len(exprs)), key=lambda i: -times[i])[:10]
print("| ms | outcome | result size | category | expression |")
print("|---|---|---|---|---|")
for i in order:
    e = exprs[i]
    size = f"{e['size']:,}" if "size" in e else ""
    text = e["text"].replace("|", "\\|")
    print(f"| {times[i] / 1e3:,.1f} | {e['outcome']} | {size} | {e['category']} | `{text}` |")
budget_ms = rs[-1]["budget_ms"]
slow = [i for i in range(len(exprs)) if exprs[i]["outcome"] == "answered" and times[i] > budget_ms * 1e3]
print(f"\nanswered over the {budget_ms:.0f} ms budget: {len(slow)}; "
      f"target median ≤ 1 ms: {'met' if med([x['median_us'] for x in o]) <= 1000 else 'not met'}")
PY
