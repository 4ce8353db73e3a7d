#!/usr/bin/env bash
# The hostile-request suite (issue 14): starts `txmap serve` on loopback
# with the HL7 test edition (or, without ../shared, the demo edition) and a
# 512 MiB memory limit, sends generated hostile requests over every
# endpoint (`txmap bench hostile`, which judges every answer), then checks
# that the process lives, answers, and stops within its grace period on
# SIGTERM.
#
#   .ci/hostile.sh                          # CI's short form (1,500 requests)
#   HOSTILE_REQUESTS=10000 TXMAP=target/release/txmap .ci/hostile.sh   # by hand
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS=${HOSTILE_REQUESTS:-1500}
TXMAP=${TXMAP:-target/debug/txmap}
SUITE=${TX_ECOSYSTEM_DIR:-../shared/tx-ecosystem}
[ -x "$TXMAP" ] || cargo build --locked -q -p txmap
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EDITIONS=""
CODE=138875005
if [ -d "$SUITE/tx-source/snomed" ]; then
    "$TXMAP" import --rf2 "$SUITE/tx-source/snomed" --out "$WORK/hl7.txmap" --quiet
    EDITIONS='editions = ["hl7.txmap"]'
else
    echo "hostile: $SUITE not found; using the demo edition"
fi
cat > "$WORK/txmap.toml" <<TOML
listen = "127.0.0.1:$PORT"
$EDITIONS
[memory]
limit = "512MiB"
[limits]
request_seconds = 2
header_seconds = 2
body_seconds = 5
shutdown_grace_seconds = 3
TOML
"$TXMAP" serve --config "$WORK/txmap.toml" --data-dir "$WORK/data" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$PORT/health" > /dev/null 2>&1 && break
    sleep 0.1
done
if [ -z "$EDITIONS" ]; then
    # The demo edition's root is the first concept it lists.
    CODE=$(curl -s "http://127.0.0.1:$PORT/r4/ValueSet/\$expand?url=http://snomed.info/sct?fhir_vs&count=1" \
        | python3 -c 'import json,sys; print(json.load(sys.stdin)["expansion"]["contains"][0]["code"])')
fi

status=0
"$TXMAP" bench hostile --server "http://127.0.0.1:$PORT" --requests "$REQUESTS" \
    --budget-seconds 2 --code "$CODE" --connections 4 --out "$WORK/hostile.json" || status=$?
mkdir -p target/hostile
cp "$WORK/hostile.json" target/hostile/report.json 2>/dev/null || true
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "hostile: the server died"; tail -20 "$WORK/server.log"; exit 1
fi
if grep -q "panicked" "$WORK/server.log"; then
    echo "hostile: the server panicked"; grep -m3 -A3 "panicked" "$WORK/server.log"; exit 1
fi
started=$(date +%s%N)
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
SERVER_PID=
took=$(( ($(date +%s%N) - started) / 1000000 ))
echo "hostile: the server stopped ${took} ms after SIGTERM (grace 3 s)"
if [ "$took" -gt 5000 ]; then
    echo "hostile: shutdown took longer than its grace period"; exit 1
fi
exit $status
