#!/usr/bin/env bash
# The code systems of issue 17: a LOINC-scale synthetic release (`txmap
# synth --loinc`, TERMS terms, default 105000), imported RUNS times (time,
# peak RSS, file size), then `txmap bench requests` RUNS times over five
# LOINC $lookup and five LOINC $validate-code calls of the mapped,
# prewarmed file, five UCUM, five BCP-47 and five HGVS
# CodeSystem/$validate-code calls, and the expansions of UCUM's and
# BCP-47's common codes (ucum-common, THO Languages). Writes bench/results/codesystems.json (every run, and the
# medians) and prints the BENCHMARKS.md tables.
#
#   bench/codesystems.sh
#   RUNS=1 CALLS=2000 TERMS=20000 bench/codesystems.sh    # a quick look
#   TXMAP=/tmp/txmap bench/codesystems.sh                 # a given build
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
CALLS=${CALLS:-20000}
TERMS=${TERMS:-105000}
OUT=bench/out/loinc
RELEASE=$OUT/Loinc_9.99-$TERMS
FILE=$OUT/loinc-$TERMS.txmap
mkdir -p "$OUT" bench/results

if [ -z "${TXMAP:-}" ]; then
    cargo build --release -q -p txmap
    TXMAP=target/release/txmap
fi

[ -d "$RELEASE" ] || "$TXMAP" synth --loinc --concepts "$TERMS" --out "$RELEASE" >/dev/null

for run in $(seq 1 "$RUNS"); do
    "$TXMAP" import --loinc "$RELEASE" --out "$FILE" --json >"$OUT/import-$run.json"
done

# Five terms spread over the release, and their long common names.
mapfile -t REQUESTS < <(python3 - "$RELEASE" <<'PY'
import csv, sys, urllib.parse
rows = list(csv.DictReader(open(sys.argv[1] + "/LoincTable/Loinc.csv", encoding="utf-8")))
picks = [rows[int(i * (len(rows) - 1) / 4)] for i in range(5)]
for r in picks:
    print(f"/r4/CodeSystem/$lookup?system=http://loinc.org&code={r['LOINC_NUM']}")
for r in picks:
    print("/r4/CodeSystem/$validate-code?url=http://loinc.org&code=" + r["LOINC_NUM"]
          + "&display=" + urllib.parse.quote(r["LONG_COMMON_NAME"]))
# Units and language tags of the kinds IGs carry.
for unit in ["mg/dL", "mmol/L", "kg/m2", "10*3/uL", "mL/min/{1.73_m2}"]:
    print("/r4/CodeSystem/$validate-code?url=http://unitsofmeasure.org&code="
          + urllib.parse.quote(unit, safe=""))
for tag in ["en", "en-US", "fr-CA", "zh-Hans-CN", "sr-Latn-RS"]:
    print("/r4/CodeSystem/$validate-code?url=urn:ietf:bcp:47&code=" + tag)
# Variants of the kinds genomics reports carry.
for variant in ["NM_004006.2:c.4375C>T", "NC_000023.11:g.33344590_33344592del",
                "NP_003997.1:p.(Trp24Cys)", "NM_004006.2:c.[2376G>C;3103del]",
                "NG_012232.1(NM_004006.2):c.93+1G>T"]:
    print("/r4/CodeSystem/$validate-code?url=http://varnomen.hgvs.org&code="
          + urllib.parse.quote(variant, safe=""))
# The common units and languages, whole (840 and 485 codes).
print("/r4/ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/ucum-common")
print("/r4/ValueSet/$expand?url=http://terminology.hl7.org/ValueSet/Languages")
PY
)
ARGS=()
for r in "${REQUESTS[@]}"; do ARGS+=(--request "$r"); done
for run in $(seq 1 "$RUNS"); do
    "$TXMAP" bench requests --edition "$FILE" "${ARGS[@]}" --calls "$CALLS" \
        --out "$OUT/requests-$run.json" >/dev/null
done

python3 - "$OUT" "$RUNS" "$TERMS" <<'PY'
import json, statistics, sys
out, runs, terms = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
imports = [json.load(open(f"{out}/import-{r}.json")) for r in range(1, runs + 1)]
requests = [json.load(open(f"{out}/requests-{r}.json")) for r in range(1, runs + 1)]
med = statistics.median
result = {
    "terms": terms,
    "import": {
        "runs": imports,
        "wall_seconds_median": med(i["wall_seconds"] for i in imports),
        "peak_rss_median": med(i["peak_rss"] for i in imports),
        "file_size": imports[0]["file_size"],
        "counts": imports[0]["counts"],
    },
    "requests": {"runs": requests},
}
kinds = {"LOINC `$lookup`": "$lookup?system=http://loinc.org",
         "LOINC `$validate-code`": "url=http://loinc.org",
         "UCUM `$validate-code`": "url=http://unitsofmeasure.org",
         "BCP-47 `$validate-code`": "url=urn:ietf:bcp:47",
         "HGVS `$validate-code`": "url=http://varnomen.hgvs.org",
         "`$expand` of `ucum-common` (840 units)": "ValueSet/ucum-common",
         "`$expand` of THO `Languages` (485 codes)": "ValueSet/Languages"}
def per_op(kind, key):
    return [med([q[key] for q in run["requests"] if kinds[kind] in q["request"]]) for run in requests]
for kind in kinds:
    result["requests"][kind] = {
        "p50_us_per_run": per_op(kind, "p50_us"),
        "p50_us_median": med(per_op(kind, "p50_us")),
        "p99_us_median": med(per_op(kind, "p99_us")),
    }
json.dump(result, open("bench/results/codesystems.json", "w"), indent=1)
i = result["import"]
print(f"| terms | concepts | import (median of {runs}) | peak RSS | file |")
print("|---:|---:|---:|---:|---:|")
print(f"| {terms:,} | {i['counts']['concepts']:,} | {i['wall_seconds_median']:.2f} s "
      f"| {i['peak_rss_median'] / 2**20:.0f} MiB | {i['file_size'] / 2**20:.1f} MiB |")
print()
print("| operation | p50 µs (median of runs) | p50 per run | p99 µs |")
print("|---|---:|---|---:|")
for kind in kinds:
    r = result["requests"][kind]
    print(f"| {kind} | {r['p50_us_median']:.1f} | {', '.join(f'{x:.1f}' for x in r['p50_us_per_run'])} "
          f"| {r['p99_us_median']:.0f} |")
PY
