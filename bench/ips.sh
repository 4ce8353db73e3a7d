#!/usr/bin/env bash
# IG value sets by URL and resource search (issue 13), in process: the HL7
# test edition of SNOMED CT with the IPS 2.0.0 and THO 7.0.1 packages from
# ../shared/fhir-packages, each request timed on its own
# (`txmap bench requests`). Runs RUNS times (default 3); writes
# bench/out/ips-<run>.json, the merged bench/results/ips.json (every run
# and the medians) and prints the BENCHMARKS.md table.
#
#   bench/ips.sh
#   RUNS=1 CALLS=2000 bench/ips.sh     # a quick look
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
CALLS=${CALLS:-20000}
OUT=bench/out
SHARED=${SHARED:-../shared}
mkdir -p "$OUT" bench/results

if [ -z "${TXMAP:-}" ]; then
    cargo build --release --locked -q -p txmap
    TXMAP=target/release/txmap
fi
EDITION=$OUT/hl7.txmap
[ -f "$EDITION" ] || "$TXMAP" import --rf2 "$SHARED/tx-ecosystem/tx-source/snomed" --out "$EDITION" --quiet

SCT=http://snomed.info/sct
IPS=http://hl7.org/fhir/uv/ips/ValueSet
REQUESTS=(
    "/r4/ValueSet/\$validate-code?url=$IPS/results-radiology-component-uv-ips&system=$SCT&code=116224001"
    "/r4/ValueSet/\$validate-code?url=$IPS/results-radiology-component-uv-ips&system=$SCT&code=404684003"
    "/r4/ValueSet/\$validate-code?url=$IPS/problems-uv-ips&system=$SCT&code=102626001"
    "/r4/ValueSet/\$expand?url=$IPS/results-coded-values-laboratory-pathology-uv-ips&count=10"
    "/r4/ValueSet?url=$IPS/problems-uv-ips"
    "/r4/ValueSet?url=$IPS/problems-uv-ips&_summary=true"
    "/r4/CodeSystem?url=http://terminology.hl7.org/CodeSystem/v3-RoleCode&_summary=true"
    "/r4/ValueSet?name=problem&_summary=true"
    "/r4/ValueSet?_summary=true&_count=100"
)
ARGS=()
for r in "${REQUESTS[@]}"; do ARGS+=(--request "$r"); done
for run in $(seq 1 "$RUNS"); do
    echo "== run $run/$RUNS" >&2
    "$TXMAP" bench requests --edition "$EDITION" \
        --package "$SHARED/fhir-packages/hl7.fhir.uv.ips-2.0.0.tgz" \
        --package "$SHARED/fhir-packages/hl7.terminology.r4-7.0.1.tgz" \
        --calls "$CALLS" "${ARGS[@]}" --out "$OUT/ips-$run.json" >/dev/null
done
python3 - "$RUNS" <<'PY'
import json, statistics, sys
runs = [json.load(open(f"bench/out/ips-{i}.json")) for i in range(1, int(sys.argv[1]) + 1)]
rows = []
for k, r in enumerate(runs[0]["requests"]):
    each = [run["requests"][k] for run in runs]
    med = lambda key: statistics.median(e[key] for e in each)
    rows.append({"request": r["request"], "status": r["first_status"],
                 "first_us": med("first_us"), "p50_us": med("p50_us"),
                 "p99_us": med("p99_us"), "p50_us_runs": [e["p50_us"] for e in each]})
json.dump({"runs": runs, "medians": rows}, open("bench/results/ips.json", "w"), indent=1)
print("| request | status | first call µs | p50 µs (runs) | p99 µs |")
print("|---|---:|---:|---:|---:|")
for r in rows:
    runs_txt = ", ".join(f"{x:.1f}" for x in r["p50_us_runs"])
    print(f"| `{r['request']}` | {r['status']} | {r['first_us']:.0f} | **{r['p50_us']:.1f}** ({runs_txt}) | {r['p99_us']:.1f} |")
PY
