#!/bin/bash
# Do two binaries, each on its own edition file of the same release, give
# the same answers? For format changes: the old binary reads the old file,
# the new the new. Each question's answer is compared on its own: the same
# bytes, or the same lines in another order (format 7 numbers concepts
# depth-first, and lists come in ordinal order), or different. Prints the
# three counts and exits 1 if any answer differs, with its diff.
#
#   bench/same-answers.sh OLD_BIN OLD_FILE NEW_BIN NEW_FILE [RF2_DIR]
#
# RF2_DIR (default bench/out/synth-535000-1) gives the concepts and
# descriptions to ask about: 150 concepts' lookup (JSON) and history, 50
# more concepts' ancestors, seven searches with inactive descriptions
# (every hit, so that ties cut by a limit do not count as differences),
# and eight ECL counts (term, description id, member, reverse refinement,
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
    local bin=$1 file=$2 out=$3 n=0
    mkdir -p "$out"
    ask() { n=$((n + 1)); "$@" > "$out/$n" 2>&1; }
    while read -r id; do
        ask "$bin" lookup --json "$file" "$id"
        ask "$bin" history "$file" "$id"
    done < <(head -150 "$work/ids")
    while read -r id; do
        ask "$bin" hierarchy "$file" ancestors "$id"
    done < <(sed -n 151,200p "$work/ids")
    for q in "struct" "left vent" "disorder of" "fracture" "acute pain" "xyzzy" "o"; do
        ask "$bin" search --inactive --limit 1000000 "$file" "$q"
    done
    for e in '<< 64572001 {{ term = "fract" }}' '* {{ C active = 0 }}' \
        '< 404684003 : 363698007 = << 123037004' "< 138875005 {{ D id = $description }}" \
        '^ 900000000000497000' '* : R 116676008 = *' '< 404684003 : 116676008 = *' \
        '<< 138875005 {{ C definitionStatus = defined }}'; do
        ask "$bin" ecl --count "$file" "$e"
    done
}
run "$OB" "$OF" "$work/old"
run "$NB" "$NF" "$work/new"
same=0 reordered=0 different=0 lines=0
for old in "$work"/old/*; do
    new="$work/new/$(basename "$old")"
    lines=$((lines + $(wc -l < "$new")))
    if cmp -s "$old" "$new"; then
        same=$((same + 1))
    # JSON arrays put a comma after every element but the last.
    elif cmp -s <(sed 's/,$//' "$old" | sort) <(sed 's/,$//' "$new" | sort); then
        reordered=$((reordered + 1))
    else
        different=$((different + 1))
        [ "$different" -le 3 ] && diff "$old" "$new" | head -${DIFF_LINES:-20}
    fi
done
echo "$lines lines: $same answers the same, $reordered the same lines in another order, $different different"
[ "$different" -eq 0 ]
