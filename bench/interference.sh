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
SERVER_PID=
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true' EXIT
for run in $(seq 1 "$RUNS"); do
    PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat >"$OUT/interference.toml" <<TOML
listen = "127.0.0.1:$PORT"
editions = ["intl.txmap"]
[snomed]
load = "mmap"
prewarm = ["intl"]
TOML
    TXMAP_LOG=warn "$TXMAP" serve --config "$OUT/interference.toml" &
    SERVER_PID=$!
    for _ in $(seq 1 600); do
        python3 - "$PORT" <<'PY' 2>/dev/null && break
import json, sys, urllib.request
s = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/status"))
sys.exit(0 if (s["editions"][0].get("prewarm") or {}).get("done") else 1)
PY
        sleep 0.1
    done
    S=http://127.0.0.1:$PORT
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
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=
done
