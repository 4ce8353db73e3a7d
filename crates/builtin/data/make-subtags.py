#!/usr/bin/env python3
"""Regenerates language-subtags.tsv from the npm package
language-subtag-registry (CC0-1.0), which carries the IANA Language Subtag
Registry as JSON:

    npm pack language-subtag-registry@0.4.2 && tar xzf language-subtag-registry-0.4.2.tgz
    python3 make-subtags.py package/data/json > language-subtags.tsv

One line per record: type, subtag (or tag, for grandfathered and
redundant records), first description, and `deprecated` when the record
has a Deprecated date; the first line is the registry's File-Date.
"""
import json
import sys

src = sys.argv[1]
meta = json.load(open(f"{src}/meta.json", encoding="utf-8"))
records = json.load(open(f"{src}/registry.json", encoding="utf-8"))
print(f"#File-Date\t{meta['File-Date']}")
for r in records:
    code = r.get("Subtag") or r.get("Tag")
    desc = r["Description"][0].replace("\t", " ")
    flag = "deprecated" if "Deprecated" in r else ""
    print(f"{r['Type']}\t{code}\t{desc}\t{flag}")
