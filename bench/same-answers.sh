#!/bin/bash
# Do two binaries, each on its own edition file of the same release, give
# the same answers? For format changes: the old binary reads the old file,
# the new the new. Prints "same: N lines", or the first differences and
# exits 1.
#
#   bench/same-answers.sh OLD_BIN OLD_FILE NEW_BIN NEW_FILE [RF2_DIR]
#
# RF2_DIR (default bench/out/synth-535000-1) gives the concepts and
# descriptions to ask about: 150 concepts' lookup (JSON) and history, 50
# more concepts' ancestors, seven searches with inactive descriptions, and
# eight ECL counts (term, description id, member, reverse refinement,
# concept filter). The sample is fixed (shuf with a constant source).
set -u
OB=$1 OF=$2 NB=$3 NF=$4 RF2=${5:-bench/out/synth-535000-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
concepts=$(find "$RF2" -name 'sct2_Concept_Snapshot*' | head -1)
descriptions=$(find "$RF2" -name 'sct2_Description_Snapshot*' | head -1)
tail -n +2 "$concepts" | cut -f1 | shuf -n 300 --random-source=<(yes) > "$work/ids"
description=$(tail -n +2 "$descriptions" | cut -f1 | shuf -n 1 --random-source=<(yes))
run() {
    local bin=$1 file=$2
    while read -r id; do
        "$bin" lookup --json "$file" "$id" 2>&1
        "$bin" history "$file" "$id" 2>&1
    done < <(head -150 "$work/ids")
    while read -r id; do
        "$bin" hierarchy "$file" ancestors "$id" 2>&1
    done < <(sed -n 151,200p "$work/ids")
    for q in "struct" "left vent" "disorder of" "fracture" "acute pain" "xyzzy" "o"; do
        "$bin" search --inactive --limit 50 "$file" "$q" 2>&1
    done
    for e in '<< 64572001 {{ term = "fract" }}' '* {{ C active = 0 }}' \
        '< 404684003 : 363698007 = << 123037004' "< 138875005 {{ D id = $description }}" \
        '^ 900000000000497000' '* : R 116676008 = *' '< 404684003 : 116676008 = *' \
        '<< 138875005 {{ C definitionStatus = defined }}'; do
        "$bin" ecl --count "$file" "$e" 2>&1
    done
}
run "$OB" "$OF" > "$work/old"
run "$NB" "$NF" > "$work/new"
if cmp -s "$work/old" "$work/new"; then
    echo "same: $(wc -l < "$work/new") lines"
else
    echo "DIFFERENT"
    diff "$work/old" "$work/new" | head -20
    exit 1
fi
