#!/usr/bin/env bash
# FHIR operation benchmarks (issue 5) on the International-scale synthetic
# edition, mapped and warm: in process through the router, then over HTTP
# against `txmap serve` with 1 and 16 connections. The load generator runs
# on the same machine as the server and shares its cores.
# Runs everything RUNS times (default 3); writes bench/out/ops-<run>-*.json,
# the merged bench/out/ops.json (every run and the medians), copies it to
# bench/results/ops.json and prints the BENCHMARKS.md tables.
#
#   bench/ops.sh
#   RUNS=1 CALLS=2000 DURATION=2 bench/ops.sh     # a quick look
#   TXMAP=/tmp/txmap bench/ops.sh                 # a given build
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
CALLS=${CALLS:-20000}
SECONDS_PER_OP=${DURATION:-10}
SEED=${SEED:-1}
OUT=bench/out
EDITION=$OUT/intl.txmap
mkdir -p "$OUT" bench/results

# TXMAP=path/to/txmap benchmarks that binary instead of building one.
if [ -z "${TXMAP:-}" ]; then
    cargo build --release --locked -q -p txmap
    TXMAP=target/release/txmap
fi

if [ ! -f "$EDITION" ]; then
    # As bench/import.sh makes it.
    RF2="$OUT/synth-535000-1"
    [ -d "$RF2" ] || "$TXMAP" synth --concepts 535000 --seed 1 --out "$RF2" >/dev/null
    "$TXMAP" import --rf2 "$RF2" --out "$EDITION" --quiet
fi

. bench/serve.sh

for run in $(seq 1 "$RUNS"); do
    echo "== run $run/$RUNS: in process" >&2
    "$TXMAP" bench handlers --edition "$EDITION" --calls "$CALLS" --seed "$SEED" \
        --out "$OUT/ops-$run-handlers.json"

    start_server ops
    echo "== run $run/$RUNS: HTTP, 1 connection" >&2
    "$TXMAP" bench http --server "$SERVER" --edition "$EDITION" --seed "$SEED" \
        --connections 1 --seconds "$SECONDS_PER_OP" --op lookup,validate-code,subsumes \
        --out "$OUT/ops-$run-http-1.json"
    echo "== run $run/$RUNS: HTTP, 16 connections" >&2
    "$TXMAP" bench http --server "$SERVER" --edition "$EDITION" --seed "$SEED" \
        --connections 16 --seconds "$SECONDS_PER_OP" --op lookup,validate-code,subsumes \
        --out "$OUT/ops-$run-http-16.json"
    # Interference: $lookup at 4 connections alone, then while 2 more
    # connections keep the server busy with text-filtered expansions of
    # all of SNOMED CT (heavy operations: blocking pool, heavy_concurrency
    # permits).
    echo "== run $run/$RUNS: HTTP, lookups alone and beside slow expansions" >&2
    "$TXMAP" bench http --server "$SERVER" --edition "$EDITION" --seed "$SEED" \
        --connections 4 --seconds "$SECONDS_PER_OP" --op lookup \
        --out "$OUT/ops-$run-quiet.json"
    "$TXMAP" bench http --server "$SERVER" --edition "$EDITION" --seed "$SEED" \
        --connections 2 --seconds $((SECONDS_PER_OP + 2)) --warmup 0 --op expand-filter \
        --out "$OUT/ops-$run-heavy.json" &
    HEAVY_PID=$!
    sleep 1
    "$TXMAP" bench http --server "$SERVER" --edition "$EDITION" --seed "$SEED" \
        --connections 4 --seconds "$SECONDS_PER_OP" --op lookup \
        --out "$OUT/ops-$run-busy.json"
    wait "$HEAVY_PID"
    stop_server
done

python3 bench/summarize_ops.py "$OUT" "$RUNS"
cp "$OUT/ops.json" bench/results/ops.json
if [ -f "$OUT/ops-interference.json" ]; then
    cp "$OUT/ops-interference.json" bench/results/ops-interference.json
fi
