"""Writes docs/conformance.md from the conformance report.

    .ci/conformance.sh && python3 .ci/conformance_doc.py

Pass counts per suite, mode and FHIR version come from
target/conformance/report.json; the reasons for known failures come from
conformance/known-failures.tsv (`suite<TAB>reason`, or
`fhirVersion/suite/test<TAB>reason` for a single test), so they are written
by people and kept with the code; conformance/notes.md is copied in after
them.
"""
import json
import sys
from collections import OrderedDict
from pathlib import Path

root = Path(__file__).resolve().parent.parent
report = json.loads((root / "target/conformance/report.json").read_text())
reasons = {}
known = root / "conformance/known-failures.tsv"
if known.exists():
    for line in known.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, reason = line.split("\t", 1)
            reasons[key] = reason

versions = [r["label"] for r in report["runs"]]
counts = OrderedDict()  # (mode, suite) -> {version: (passed, total)}
failing = OrderedDict()  # suite -> [ids]
for run in report["runs"]:
    for t in run["tests"]:
        key = (t["mode"], t["suite"])
        c = counts.setdefault(key, {}).setdefault(run["label"], [0, 0])
        c[1] += 1
        if t["status"] == "pass":
            c[0] += 1
        else:
            failing.setdefault(t["suite"], []).append(t["id"])

per_run = ", ".join("{}: {}/{}".format(r["label"], r["passed"], r["passed"] + r["failed"]) for r in report["runs"])
out = ["# Conformance", "",
       "The HL7 terminology ecosystem suite (`../shared/tx-ecosystem/tests`) run by our",
       "runner (`txmap conformance`, crates/conformance) against txmap serving the HL7",
       "test edition, as CI runs it. Regenerate:", "",
       "    .ci/conformance.sh && python3 .ci/conformance_doc.py", "",
       "`conformance/passing.txt` is the ratchet: CI fails when a listed test fails;",
       "`UPDATE_RATCHET=1 .ci/conformance.sh` rewrites it with what passes now.", "",
       f"Total: **{report['passed']} passed, {report['failed']} failed** ({per_run}).", "",
       "| mode | suite | " + " | ".join(versions) + " |",
       "|---|---|" + "---|" * len(versions)]
for (mode, suite), c in counts.items():
    cells = [f"{c.get(v, [0, 0])[0]}/{c.get(v, [0, 0])[1]}" for v in versions]
    out.append(f"| {mode} | {suite} | " + " | ".join(cells) + " |")
out += ["", "## Known failures", "",
        "| suite | failing | reason |", "|---|---|---|"]
for suite, ids in failing.items():
    if suite in reasons:
        reason = reasons[suite]
    elif all(i in reasons for i in ids):
        reason = "each test's reason is below"
    else:
        reason = "not yet investigated"
    out.append(f"| {suite} | {len(ids)} | {reason} |")
single = [(k, v) for k, v in reasons.items() if "/" in k]
if single:
    out += ["", "Single tests:", ""]
    out += [f"- `{k}`: {v}" for k, v in single]
notes = root / "conformance/notes.md"
if notes.exists():
    out += ["", notes.read_text().rstrip()]
strict_file = root / "target/conformance/report-strict.json"
lenient = [t["id"] for run in report["runs"] for t in run["tests"]
           if t["status"] == "pass" and t.get("lenientOnly")]
if strict_file.exists():
    strict = json.loads(strict_file.read_text())
    out += ["", "## Strict strings", "",
            "The official runner compares some strings leniently (see",
            "../shared/guides/tx-ecosystem-runner.md); with `--strict-strings` it does not:",
            f"**{strict['passed']} passed, {strict['failed']} failed**. The tests that pass only",
            f"through the lenient rule ({len(lenient)}):", ""]
    out += [f"- `{i}`" for i in lenient]
(root / "docs/conformance.md").write_text("\n".join(out) + "\n")
print(f"wrote docs/conformance.md: {report['passed']} passed, {report['failed']} failed", file=sys.stderr)
