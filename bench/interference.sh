#!/usr/bin/env bash
# $lookup at 4 connections alone, then while 2 more connections keep the
# server busy with text-filtered expansions of all of SNOMED CT; RUNS times
# (default 3). The same measurement as the last step of bench/ops.sh, on
# its own. Prints one table row per run and pass.
#
#   bench/interference.sh
#   TXMAP=/tmp/txmap RUNS=1 bench/interference.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
SECONDS_PER_PASS=${DURATION:-8}
OUT=bench/out
EDITION=$OUT/intl.txmap
if [ -z "${TXMAP:-}" ]; then
    cargo build --release --locked -q -p txmap
    TXMAP=target/release/txmap
fi
[ -f "$EDITION" ] || { echo "$EDITION missing: run bench/import.sh first" >&2; exit 1; }
. bench/serve.sh
for run in $(seq 1 "$RUNS"); do
    start_server interference
    S=$SERVER
    echo "run $run: alone" >&2
    "$TXMAP" bench http --server "$S" --edition "$EDITION" --connections 4 \
        --seconds "$SECONDS_PER_PASS" --op lookup --out "$OUT/interference-$run-quiet.json" | grep '^| lookup'
    "$TXMAP" bench http --server "$S" --edition "$EDITION" --connections 2 \
        --seconds $((SECONDS_PER_PASS + 2)) --warmup 0 --op expand-filter \
        --out "$OUT/interference-$run-heavy.json" >/dev/null &
    HEAVY=$!
    sleep 1
    echo "run $run: beside expansions" >&2
    "$TXMAP" bench http --server "$S" --edition "$EDITION" --connections 4 \
        --seconds "$SECONDS_PER_PASS" --op lookup --out "$OUT/interference-$run-busy.json" | grep '^| lookup'
    wait "$HEAVY"
    python3 - "$OUT/interference-$run-heavy.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))[0]
print(f"| expand-filter | http-2 | {d['calls_per_s']:.1f}/s | p50 {d['p50_us']:.0f} µs |")
PY
    stop_server
done
