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

. bench/serve.sh
start_server load

echo "== replay: $CONNECTIONS connection(s), ${DURATION}s each" >&2
"$TXMAP" bench load --server "$SERVER" --corpus "$CORPUS" \
    --connections "$CONNECTIONS" --seconds "$DURATION" --out bench/results/load.json
stop_server
