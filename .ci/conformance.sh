#!/usr/bin/env bash
# Runs the HL7 terminology ecosystem suite against txmap serving the HL7
# test edition, in R4 and R5, modes general, snomed and tx.fhir.org (the
# tests of tx.fhir.org's own code systems and operations), and checks the
# ratchet: every test listed in conformance/passing.txt must still pass.
# Skipped, with a notice, when ../shared/tx-ecosystem is absent.
#
#   .ci/conformance.sh                 # as CI runs it (after cargo test built target/debug/txmap)
#   UPDATE_RATCHET=1 .ci/conformance.sh   # rewrite the list with what passes now
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=${TX_ECOSYSTEM_DIR:-../shared/tx-ecosystem}
if [ ! -f "$SUITE/tests/test-cases.json" ]; then
    # Under CI the suite must be there: a skip would pass a run that
    # checked nothing.
    if [ "${CI:-}" = "true" ]; then
        echo "conformance: $SUITE/tests/test-cases.json not found (CI=true: the suite is required)" >&2
        exit 1
    fi
    echo "conformance: skipped: $SUITE/tests/test-cases.json not found (set TX_ECOSYSTEM_DIR)"
    exit 0
fi

cargo build --locked -q -p txmap
TXMAP=target/debug/txmap
WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
    if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

"$TXMAP" import --rf2 "$SUITE/tx-source/snomed" --out "$WORK/hl7.txmap" --quiet
# The suite's LOINC subset: its expected answers name version 2.82
# (tx.fhir.org's), and the subset's folder does not carry the version.
"$TXMAP" import --loinc "$SUITE/tx-source/loinc" --loinc-version 2.82 --out "$WORK/loinc.txmap" --quiet
# The suite's NDC subset, dated by its folder.
"$TXMAP" import --ndc "$SUITE/tx-source/ndc/2025-07-11" --out "$WORK/ndc.txmap" --quiet
# The FHIR core code systems the suite uses without sending them
# (conformance/fhir-core-subset/README.md), as a FHIR package.
tar czf "$WORK/fhir-core-subset.tgz" -C conformance/fhir-core-subset package
cat >"$WORK/txmap.toml" <<TOML
listen = "127.0.0.1:0"
editions = ["hl7.txmap", "loinc.txmap", "ndc.txmap"]
packages = ["fhir-core-subset.tgz"]
[snomed]
load = "mmap"
TOML
"$TXMAP" serve --config "$WORK/txmap.toml" 2>"$WORK/server.log" &
SERVER_PID=$!
URL=
for _ in $(seq 1 100); do
    URL=$(grep -o 'listening on http://[0-9.:]*' "$WORK/server.log" | sed 's/listening on //' || true)
    [ -n "$URL" ] && break
    sleep 0.1
done
if [ -z "$URL" ]; then
    echo "conformance: the server did not start:"; cat "$WORK/server.log"; exit 1
fi

mkdir -p target/conformance
ARGS=(--server "$URL" --suite-dir "$SUITE/tests" --fhir r4,r5 --modes general,snomed,tx.fhir.org
      --report target/conformance/report.json --output target/conformance/failures
      --ratchet conformance/passing.txt)
if [ "${UPDATE_RATCHET:-}" = 1 ]; then ARGS+=(--update-ratchet); fi
"$TXMAP" conformance "${ARGS[@]}"
# The same without the official runner's lenient string rule, for
# docs/conformance.md (reported, not judged).
"$TXMAP" conformance --server "$URL" --suite-dir "$SUITE/tests" --fhir r4,r5 --modes general,snomed,tx.fhir.org \
    --strict-strings --report target/conformance/report-strict.json >/dev/null 2>&1 || true
