#!/usr/bin/env bash
# Traffic corpus replay (issue 8) on the International-scale synthetic
# edition, mapped and prewarmed: draws a corpus with the realistic mix
# (`txmap bench corpus`), starts `txmap serve`, and replays the corpus at 1
# and 16 keep-alive connections for DURATION seconds each (`txmap bench
# load`). The load generator runs on the same machine as the server and
# shares its cores. Writes bench/out/load-corpus.jsonl and
# bench/results/load.json, and prints the table.
#
#   bench/load.sh
#   CALLS=20000 DURATION=2 bench/load.sh      # a quick look
#   TXMAP=/tmp/txmap bench/load.sh            # a given build
set -euo pipefail
cd "$(dirname "$0")/.."

CALLS=${CALLS:-100000}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-1,16}
SEED=${SEED:-1}
OUT=bench/out
EDITION=$OUT/intl.txmap
CORPUS=$OUT/load-corpus.jsonl
mkdir -p "$OUT" bench/results

if [ -z "${TXMAP:-}" ]; then
    cargo build --release --locked -q -p txmap
    TXMAP=target/release/txmap
fi
[ -f "$EDITION" ] || { echo "$EDITION: missing (bench/import.sh or bench/ops.sh makes it)" >&2; exit 1; }

echo "== corpus: $CALLS requests, seed $SEED" >&2
"$TXMAP" bench corpus --edition "$EDITION" --calls "$CALLS" --seed "$SEED" --out "$CORPUS"

SERVER_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
trap stop_server EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
CONFIG=$OUT/load-serve.toml
cat >"$CONFIG" <<TOML
listen = "127.0.0.1:$PORT"
editions = ["intl.txmap"]
[snomed]
load = "mmap"
prewarm = ["intl"]
TOML
TXMAP_LOG=warn "$TXMAP" serve --config "$CONFIG" &
SERVER_PID=$!
for _ in $(seq 1 200); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
    sleep 0.05
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null
# Wait until the prewarm read has put the whole file in the page cache.
for _ in $(seq 1 600); do
    python3 - "$PORT" <<'PY' && break
import json, sys, urllib.request
s = json.load(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/status"))
e = s["editions"][0]
sys.exit(0 if (e.get("prewarm") or {}).get("done") else 1)
PY
    sleep 0.1
done

echo "== replay: $CONNECTIONS connection(s), ${DURATION}s each" >&2
"$TXMAP" bench load --server "http://127.0.0.1:$PORT" --corpus "$CORPUS" \
    --connections "$CONNECTIONS" --seconds "$DURATION" --out bench/results/load.json
stop_server
