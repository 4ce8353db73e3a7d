#!/usr/bin/env bash
# Import benchmark: an International-scale synthetic release is generated
# once, then imported RUNS times (default 3). Writes bench/out/import.json
# (every run, and the medians) and prints the BENCHMARKS.md row.
#
#   bench/import.sh                 # 535,000 concepts, 3 runs
#   CONCEPTS=50000 RUNS=1 bench/import.sh
set -euo pipefail
cd "$(dirname "$0")/.."

CONCEPTS=${CONCEPTS:-535000}
SEED=${SEED:-1}
RUNS=${RUNS:-3}
OUT=bench/out
mkdir -p "$OUT"

cargo build --release --locked -q -p txmap
TXMAP=target/release/txmap

RF2="$OUT/synth-$CONCEPTS-$SEED"
if [ ! -d "$RF2" ]; then
    echo "generating $RF2" >&2
    /usr/bin/time -f '%e s wall, %M KiB peak' "$TXMAP" synth --concepts "$CONCEPTS" --seed "$SEED" --out "$RF2" >/dev/null
fi

for i in $(seq 1 "$RUNS"); do
    echo "import run $i/$RUNS" >&2
    # GNU time gives user+system CPU seconds; the report gives wall time,
    # per-stage times and VmHWM.
    /usr/bin/time -f '{"cpu_seconds": %U + %S}' -o "$OUT/time-$i.txt" \
        "$TXMAP" import --rf2 "$RF2" --out "$OUT/intl.txmap" --json >"$OUT/import-$i.json"
done

"$TXMAP" inspect "$OUT/intl.txmap" --json >"$OUT/inspect.json"
python3 bench/summarize_import.py "$OUT" "$RUNS" "$CONCEPTS"
