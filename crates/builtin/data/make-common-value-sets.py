"""Extracts a value set from an unpacked FHIR package as the compact JSON
txmap-builtin compiles in: the resource's identity, status and compose,
without its narrative or its meta. Usage:

    python3 make-common-value-sets.py package/ValueSet-ucum-common.json > ucum-common.json
"""
import json
import sys

KEPT = ["resourceType", "url", "version", "name", "title", "status",
        "experimental", "publisher", "copyright", "compose"]

source = json.load(open(sys.argv[1], encoding="utf-8"))
out = {k: source[k] for k in KEPT if k in source}
json.dump(out, sys.stdout, ensure_ascii=False, indent=0)
sys.stdout.write("\n")
