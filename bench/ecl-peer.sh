#!/usr/bin/env bash
# txmap against snomed-ecl-engine 0.2.1 (issue 15): the same International-
# scale synthetic release imported into both and the same ECL corpus
# evaluated in both, warm, in one run; the codes compared for every
# expression. See bench/ecl_peer.py for what is measured and how.
#
#   bench/ecl-peer.sh                      # RUNS=3 imports, EVALS=5 per expression
#   PEER=/path/to/snomed-ecl-engine bench/ecl-peer.sh
#   TXMAP=target/release/txmap CORPUS=bench/ecl-corpus.txt bench/ecl-peer.sh
#   CORPUS=bench/ecl-grammar.txt RESULT=bench/results/ecl-peer-grammar.json \
#     REUSE_IMPORTS=1 bench/ecl-peer.sh   # the generated corpus, imports kept
#
# Writes bench/results/ecl-peer.json (or RESULT) and prints the BENCHMARKS.md tables.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
EVALS=${EVALS:-5}
OUT=bench/out
CORPUS=${CORPUS:-bench/ecl-corpus.txt}
RESULT=${RESULT:-bench/results/ecl-peer.json}
RF2=$OUT/synth-535000-1
ZIP=$OUT/synth-535000-1.zip
EDITION=http://snomed.info/sct/900000000000207008/version/20250131
mkdir -p "$OUT" bench/results

if [ -z "${TXMAP:-}" ]; then
    cargo build --release --locked -q -p txmap
    TXMAP=target/release/txmap
fi
# The peer: from PEER, PATH, or installed under bench/out/peer once.
if [ -z "${PEER:-}" ]; then
    PEER=$(command -v snomed-ecl-engine || true)
fi
if [ -z "$PEER" ]; then
    PEER=$OUT/peer/bin/snomed-ecl-engine
    [ -x "$PEER" ] || cargo install snomed-ecl-engine --version 0.2.1 \
        --no-default-features --features import --locked --root "$OUT/peer"
fi

# The release, as a zip both importers accept: the peer wants one
# self-contained Snapshot zip with a release_package_information.json
# naming the package's effectiveTime (txmap ignores that file).
[ -d "$RF2" ] || "$TXMAP" synth --concepts 535000 --seed 1 --out "$RF2" >/dev/null
if [ ! -f "$ZIP" ]; then
    python3 - "$RF2" "$ZIP" <<'PY'
import json, os, sys, zipfile
root, out = sys.argv[1], sys.argv[2]
package = next(d for d in os.listdir(root) if d.startswith("SnomedCT_"))
with zipfile.ZipFile(out + ".tmp", "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
    for d, _, fs in os.walk(root):
        for f in sorted(fs):
            p = os.path.join(d, f)
            z.write(p, os.path.relpath(p, root))
    z.writestr(f"{package}/release_package_information.json",
               json.dumps({"effectiveTime": package.rsplit("_", 1)[1]}))
os.rename(out + ".tmp", out)
PY
fi

python3 bench/ecl_peer.py "$TXMAP" "$PEER" "$ZIP" "$EDITION" "$CORPUS" \
    "$RESULT" "$OUT/ecl-peer-work" "$RUNS" "$EVALS" | tee "$OUT/ecl-peer.md"
