#!/usr/bin/env bash
# Smoke test of the Python bench drivers (issue 8): each runs on a tiny
# synthetic edition for about a second (SMOKE=1) against the debug build and
# must write valid JSON; then every chart is drawn from those results.
# Timings are not judged here — BENCHMARKS.md has the real runs.
#
#   bash .ci/bench-smoke.sh      # after `cargo build -p txmap`
set -euo pipefail
cd "$(dirname "$0")/.."

export TXMAP=${TXMAP:-target/debug/txmap}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

for script in matrix import_memory txbench; do
    name=${script/_/-}
    SMOKE=1 OUT="$WORK/$name.json" SECONDS_EACH=0.2 python3 "bench/$script.py" >"$WORK/$name.log" 2>&1 || {
        cat "$WORK/$name.log"
        echo "bench/$script.py failed" >&2
        exit 1
    }
    python3 -m json.tool "$WORK/$name.json" >/dev/null
    echo "bench/$script.py: valid JSON"
done
RESULTS="$WORK" DOCS="$WORK/charts" python3 bench/charts.py
