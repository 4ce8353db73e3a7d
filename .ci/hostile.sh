#!/usr/bin/env bash
# The hostile-request suite (issues 14 and 31): starts `txmap serve` on
# loopback with the HL7 test edition (or, without ../shared, the demo
# edition), a 512 MiB memory limit, and beside it files out of service —
# a second SNOMED CT edition, a LOINC, an RxNorm and (with ../shared) an
# NDC file, each with a byte flipped in a section read on demand — then
# sends generated hostile requests over every endpoint (`txmap bench
# hostile`, which judges every answer, and checks the answers it knows:
# padded codes, the edition's concepts read from its RF2, paging, files
# out of service, idle connections), then checks that the process lives,
# answers, stored nothing from writes without a token, and stops within
# its grace period on SIGTERM. Before that,
# config mistakes must stop a start with one line naming the key.
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

# Flips one byte in the middle of the largest section of FILE that the
# file still opens with (`txmap inspect`), so that it loads and then fails
# its verification (`txmap verify`).
damage() {
    local file=$1
    python3 - "$TXMAP" "$file" <<'PY'
import json, subprocess, sys
txmap, path = sys.argv[1], sys.argv[2]
good = open(path, "rb").read()
sections = json.loads(subprocess.run([txmap, "inspect", "--json", path], check=True,
                                     capture_output=True).stdout)["sections"]
for s in sorted(sections, key=lambda s: -s["len"]):
    if s["len"] == 0:
        continue
    bad = bytearray(good)
    bad[s["offset"] + s["len"] // 2] ^= 0x10
    open(path, "wb").write(bad)
    opens = subprocess.run([txmap, "inspect", path], capture_output=True).returncode == 0
    verifies = subprocess.run([txmap, "verify", path], capture_output=True).returncode == 0
    if opens and not verifies:
        sys.exit(0)
open(path, "wb").write(good)
sys.exit(f"{path}: no section to damage")
PY
}

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EDITIONS=""
CODE=138875005
RF2_ARGS=()
OOS_ARGS=()
if [ -d "$SUITE/tx-source/snomed" ]; then
    "$TXMAP" import --rf2 "$SUITE/tx-source/snomed" --out "$WORK/hl7.txmap" --quiet
    EDITIONS='"hl7.txmap", '
    RF2_ARGS=(--rf2 "$SUITE/tx-source/snomed")
    "$TXMAP" import --ndc "$SUITE/tx-source/ndc/2025-07-11" --out "$WORK/ndc.txmap" --quiet
    damage "$WORK/ndc.txmap"
    EDITIONS+='"ndc.txmap", '
    OOS_ARGS+=(--out-of-service "http://hl7.org/fhir/sid/ndc|$(awk -F'\t' 'NR==2 {print $2}' "$SUITE/tx-source/ndc/2025-07-11/product.txt")")
else
    echo "hostile: $SUITE not found; using a synthetic edition"
    "$TXMAP" synth --concepts 2000 --seed 1 --out "$WORK/good-rf2" > /dev/null
    "$TXMAP" import --rf2 "$WORK/good-rf2" --out "$WORK/good.txmap" --quiet
    EDITIONS='"good.txmap", '
    RF2_ARGS=(--rf2 "$WORK/good-rf2")
    CODE=$(find "$WORK/good-rf2" -name 'sct2_Concept_*Snapshot*' | head -1 | xargs awk -F'\t' 'NR>1 && $3 == "1" {print $1; exit}')
fi
# Files out of service beside the edition: a second SNOMED CT edition (its
# own version), LOINC and RxNorm, each damaged.
"$TXMAP" synth --concepts 2000 --seed 3 --effective-time 20240101 --out "$WORK/sct2-rf2" > /dev/null
"$TXMAP" import --rf2 "$WORK/sct2-rf2" --out "$WORK/sct2.txmap" --quiet
damage "$WORK/sct2.txmap"
SCT2_VERSION=$("$TXMAP" inspect --json "$WORK/sct2.txmap" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version_uri"])')
SCT2_CODE=$(find "$WORK/sct2-rf2" -name 'sct2_Concept_*Snapshot*' | head -1 | xargs awk -F'\t' 'NR==2 {print $1}')
OOS_ARGS+=(--out-of-service "http://snomed.info/sct|$SCT2_VERSION|$SCT2_CODE")
"$TXMAP" synth --loinc --concepts 200 --out "$WORK/Loinc_9.99" > /dev/null
"$TXMAP" import --loinc "$WORK/Loinc_9.99" --out "$WORK/loinc.txmap" --quiet
damage "$WORK/loinc.txmap"
OOS_ARGS+=(--out-of-service "http://loinc.org|$(python3 -c 'import csv,sys; r=csv.reader(open(sys.argv[1])); next(r); print(next(r)[0])' "$WORK/Loinc_9.99/LoincTable/Loinc.csv")")
"$TXMAP" synth --rxnorm --concepts 20 --out "$WORK/rxnorm" > /dev/null
"$TXMAP" import --rxnorm "$WORK/rxnorm" --out "$WORK/rxnorm.txmap" --quiet
damage "$WORK/rxnorm.txmap"
OOS_ARGS+=(--out-of-service "http://www.nlm.nih.gov/research/umls/rxnorm|$(awk -F'|' '$12 == "RXNORM" {print $1; exit}' "$WORK/rxnorm/rrf/RXNCONSO.RRF")")
EDITIONS+='"sct2.txmap", "loinc.txmap", "rxnorm.txmap"'

# Config mistakes stop the start with one line naming the file or key.
for mistake in 'editions = ["sct2.txmap", "sct2.txmap.copy"]' \
               'editions = ["empty"]' \
               $'editions = ["sct2.txmap"]\n[memory]\nlimit = "1MiB"' \
               $'editions = ["sct2.txmap"]\n[limits]\nmax_expansion = 0' \
               $'editions = ["sct2.txmap"]\n[http]\npublic_base_url = "tx.example.org"'; do
    cp "$WORK/sct2.txmap" "$WORK/sct2.txmap.copy"
    mkdir -p "$WORK/empty"
    printf '%s\n' "$mistake" > "$WORK/bad.toml"
    status=0
    out=$(timeout 60 "$TXMAP" serve --config "$WORK/bad.toml" --data-dir "$WORK/data" 2>&1 >/dev/null) || status=$?
    if [ "$status" -ne 2 ] || ! grep -q "error" <<<"$out"; then
        echo "hostile: config mistake not refused (exit $status): $mistake"; echo "$out" | tail -3; exit 1
    fi
done
echo "hostile: 5 config mistakes refused, each with exit 2"

cat > "$WORK/txmap.toml" <<TOML
listen = "127.0.0.1:$PORT"
editions = [$EDITIONS]
[memory]
limit = "512MiB"
[limits]
request_seconds = 2
header_seconds = 2
body_seconds = 5
shutdown_grace_seconds = 3
[store]
path = "data/resources.sqlite"
[auth]
tokens = [{ name = "nobody-sends-it", sha256 = "$("$TXMAP" token --name x | sed -n 's/^sha256 = "\(.*\)"/\1/p')", scopes = ["write"] }]
TOML
"$TXMAP" serve --config "$WORK/txmap.toml" --data-dir "$WORK/data" > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 600); do
    curl -sf "http://127.0.0.1:$PORT/health" > /dev/null 2>&1 && break
    sleep 0.1
done

status=0
"$TXMAP" bench hostile --server "http://127.0.0.1:$PORT" --requests "$REQUESTS" \
    --budget-seconds 2 --code "$CODE" --connections 4 --out "$WORK/hostile.json" \
    "${RF2_ARGS[@]}" "${OOS_ARGS[@]}" || status=$?
mkdir -p target/hostile
cp "$WORK/hostile.json" target/hostile/report.json 2>/dev/null || true
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    echo "hostile: the server died"; tail -20 "$WORK/server.log"; exit 1
fi
if grep -q "panicked" "$WORK/server.log"; then
    echo "hostile: the server panicked"; grep -m3 -A3 "panicked" "$WORK/server.log"; exit 1
fi
# Writes without a token stored nothing.
stored=$(curl -s "http://127.0.0.1:$PORT/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["served"]["storedResources"])')
if [ "$stored" != "0" ]; then
    echo "hostile: unauthenticated writes stored $stored resources"; exit 1
fi
echo "hostile: unauthenticated writes stored nothing"
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
