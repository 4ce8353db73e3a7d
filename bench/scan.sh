#!/usr/bin/env bash
# The scan crossover (issue 8): a newline scan of one large test file by
# read() and four kinds of mmap, cold and warm, each in a fresh process,
# at 256 MiB, 1 GiB and 1/8, 1/4 and 1/2 of RAM (3, 6 and 12 GiB on a
# 24 GiB machine), 3 repeats. The test file is written once under
# bench/out/scan/ and deleted at the end (pass --keep to keep it).
# Writes bench/out/scan.json, copies it to bench/results/scan.json,
# redraws docs/scan.svg and prints the BENCHMARKS.md table.
#
#   bench/scan.sh
#   bench/scan.sh --sizes 256MiB,1GiB --repeats 1       # a quick look
#   bench/scan.sh --sizes 3GiB,32GiB --cold             # beyond RAM
#   TXMAP=/tmp/txmap bench/scan.sh                      # a given build
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=bench/out
mkdir -p "$OUT" bench/results docs

if [ -z "${TXMAP:-}" ]; then
    cargo build --release --locked -q -p txmap
    TXMAP=target/release/txmap
fi

"$TXMAP" bench scan --dir "$OUT/scan" --out "$OUT/scan.json" "$@"
cp "$OUT/scan.json" bench/results/scan.json
python3 bench/scan_chart.py bench/results/scan.json docs/scan.svg
