#!/usr/bin/env python3
"""txmap against snomed-ecl-engine, side by side on one synthetic release
(issue 15). Run by bench/ecl-peer.sh, which builds txmap, installs the peer
and makes the release; this script does the measuring:

1. imports the same RF2 zip into both, RUNS times each, timing wall clock
   and peak RSS of the process (GNU time's "Maximum resident set size"),
   and reports the size of each result (txmap's edition file, the peer's
   index directory);
2. evaluates every expression of the corpus in both, warm, in one run:
   txmap in process (`txmap bench ecl --with-parse`, EVALS evaluations
   each of the text's parse and evaluation, median), the peer in its
   `batch` mode (one store open, EVALS evaluations each, the median of its
   own parse_ms + eval_ms); and evaluation alone on both sides (txmap
   without `--with-parse`, the peer's eval_ms). Each side evaluates an
   expression once untimed before its timed runs: the peer's first query
   asks for the codes, txmap's is `--warmup 1`. Both hold their data in
   the heap: the peer reads its index files whole, txmap is `--load read`
   (a mapped file's pages idle for a minute are paged out on a host that
   reclaims proactively, as this one's DAMON does, while the peer's heap
   stays: that would time page faults on one side only);
3. checks that both give the same codes for every expression both answer
   (txmap's through `txmap ecl --json`, the peer's from one batch query
   with codes), and lists every disagreement with both sizes and a sample
   of the difference, for investigation;
4. writes JSON and prints the BENCHMARKS.md tables: per category, the
   median of each side's per-expression medians and the geometric mean of
   the per-expression ratios (peer time / txmap time; above 1 txmap is
   faster), and overall.

    bench/ecl_peer.py TXMAP PEER ZIP EDITION_URI CORPUS OUT.json WORK_DIR [RUNS] [EVALS]

WORK_DIR receives both imports (hundreds of MB; bench/out, not results).
"""

import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, **kw):
    """Runs cmd under GNU time: (wall seconds, peak RSS bytes, stdout)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-v", "-o", t.name] + cmd,
                           capture_output=True, text=True, **kw)
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
        rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t.read()).group(1))
    return wall, rss * 1024, p.stdout


def size_of(path):
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def imports(txmap, peer, zip_path, edition, work, runs):
    digest = sha256(zip_path)
    out = {"txmap": [], "peer": []}
    for i in range(runs):
        target = os.path.join(work, "txmap.txmap")
        wall, rss, _ = timed([txmap, "import", "--rf2", zip_path, "--out", target, "--quiet"])
        out["txmap"].append({"wall_s": wall, "peak_rss": rss, "size": size_of(target)})
        index = os.path.join(work, "peer-index")
        shutil.rmtree(index, ignore_errors=True)
        wall, rss, _ = timed([peer, "import", zip_path, index, edition, digest, "900000000000509007"])
        out["peer"].append({"wall_s": wall, "peak_rss": rss, "size": size_of(index)})
        print(f"import run {i + 1}/{runs}: txmap {out['txmap'][-1]['wall_s']:.1f} s, "
              f"peer {out['peer'][-1]['wall_s']:.1f} s", file=sys.stderr)
    return out, os.path.join(work, "txmap.txmap"), os.path.join(work, "peer-index")


def read_corpus(path):
    category, out = "uncategorised", []
    for n, raw in enumerate(open(path), 1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            m = re.match(r"#\s*category:\s*(\S+)", line)
            if m:
                category = m.group(1)
            continue
        out.append({"line": n, "category": category, "text": line})
    return out


def txmap_times(txmap, edition, corpus, evals, with_parse):
    parse = ["--with-parse"] if with_parse else []
    with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
        subprocess.run([txmap, "bench", "ecl", "--edition", edition, "--corpus", corpus,
                        "--load", "read", "--runs", str(evals), "--warmup", "1", *parse,
                        "--budget-ms", "10000", "--out", f.name],
                       check=True, capture_output=True)
        return json.load(open(f.name))["expressions"]


def txmap_codes(txmap, edition, text):
    p = subprocess.run([txmap, "ecl", edition, text, "--json", "--timeout", "30"],
                       capture_output=True, text=True)
    if p.returncode == 2:
        return None, p.stderr.strip()
    return {json.loads(l)["code"] for l in p.stdout.splitlines()}, None


def peer_run(peer, index, exprs, evals):
    """One batch: per expression, one query with codes, then `evals` timed
    count-only queries."""
    lines = []
    for e in exprs:
        lines.append(json.dumps({"ecl": e["text"]}))
        lines += [json.dumps({"ecl": e["text"], "count_only": True})] * evals
    p = subprocess.run([peer, "batch", index], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, check=True)
    answers = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    assert len(answers) == len(lines), (len(answers), len(lines))
    out = []
    for i in range(len(exprs)):
        first, timed_ = answers[i * (evals + 1)], answers[i * (evals + 1) + 1:(i + 1) * (evals + 1)]
        if "error" in first:
            out.append({"error": f"{first['error']}: {first.get('message', '')}"})
            continue
        ok = [a for a in timed_ if "error" not in a]
        ms = [a["parse_ms"] + a["eval_ms"] for a in ok]
        # Codes, or (dotted and field projections) typed values or rows:
        # their concepts.
        codes = set(first.get("codes", []))
        codes |= {v["value"] for v in first.get("values", []) if v.get("type") == "concept"}
        codes |= {v["value"] for row in first.get("rows", []) for v in row.values()
                  if isinstance(v, dict) and v.get("type") == "concept"}
        out.append({"codes": codes, "total": len(codes),
                    "reported_total": first["total"],
                    "median_us": statistics.median(ms) * 1000,
                    "eval_median_us": statistics.median(a["eval_ms"] for a in ok) * 1000})
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    txmap, peer, zip_path, edition, corpus, out_path, work = sys.argv[1:8]
    runs = int(sys.argv[8]) if len(sys.argv) > 8 else 3
    evals = int(sys.argv[9]) if len(sys.argv) > 9 else 5
    os.makedirs(work, exist_ok=True)
    if os.environ.get("REUSE_IMPORTS"):
        # Evaluation only, over the imports of an earlier run.
        imported = json.load(open(out_path))["import"]
        imported = {side: imported[side]["runs"] for side in ("txmap", "peer")}
        edition_file, index = os.path.join(work, "txmap.txmap"), os.path.join(work, "peer-index")
    else:
        imported, edition_file, index = imports(txmap, peer, zip_path, edition, work, runs)

    exprs = read_corpus(corpus)
    ours = txmap_times(txmap, edition_file, corpus, evals, with_parse=True)
    ours_eval = txmap_times(txmap, edition_file, corpus, evals, with_parse=False)
    assert [e["text"] for e in ours] == [e["text"] for e in exprs]
    assert [e["text"] for e in ours_eval] == [e["text"] for e in exprs]
    theirs = peer_run(peer, index, exprs, evals)
    rows = []
    for e, o, oe, t in zip(exprs, ours, ours_eval, theirs):
        codes, err = txmap_codes(txmap, edition_file, e["text"])
        row = {"line": e["line"], "category": e["category"], "text": e["text"],
               "txmap_outcome": o["outcome"], "txmap_us": o.get("median_us"),
               "txmap_eval_us": oe.get("median_us"),
               "txmap_size": len(codes) if codes is not None else None}
        if "error" in t:
            row["peer_error"] = t["error"]
        else:
            row.update(peer_us=t["median_us"], peer_eval_us=t["eval_median_us"],
                       peer_size=t["total"])
        if codes is not None and "codes" in t:
            row["agree"] = codes == t["codes"]
            if not row["agree"]:
                row["only_txmap"] = sorted(codes - t["codes"])[:5]
                row["only_peer"] = sorted(t["codes"] - codes)[:5]
                row["only_txmap_n"] = len(codes - t["codes"])
                row["only_peer_n"] = len(t["codes"] - codes)
        elif err:
            row["txmap_error"] = err
        rows.append(row)

    def summary(rs):
        both = [r for r in rs if r.get("agree") and r["txmap_outcome"] == "answered"]
        ratios = [r["peer_us"] / max(r["txmap_us"], 0.1) for r in both]
        eval_ratios = [max(r["peer_eval_us"], 0.001) / max(r["txmap_eval_us"], 0.1) for r in both
                       if r.get("txmap_eval_us") is not None]
        return {
            "n": len(rs),
            "compared": len(both),
            "disagree": sum(1 for r in rs if r.get("agree") is False),
            "peer_refused": sum(1 for r in rs if "peer_error" in r),
            "txmap_refused": sum(1 for r in rs if "txmap_error" in r),
            "txmap_median_us": statistics.median([r["txmap_us"] for r in both]) if both else None,
            "peer_median_us": statistics.median([r["peer_us"] for r in both]) if both else None,
            "geomean_ratio": geomean(ratios),
            "slower": sum(1 for x in ratios if x < 1),
            "eval_only_geomean_ratio": geomean(eval_ratios),
            "eval_only_slower": sum(1 for x in eval_ratios if x < 1),
        }

    cats = list(dict.fromkeys(r["category"] for r in rows))
    med = lambda k, side: statistics.median(x[k] for x in imported[side])
    result = {
        "peer": "snomed-ecl-engine 0.2.1",
        "evals": evals,
        "import": {side: {k: med(k, side) for k in ("wall_s", "peak_rss", "size")} | {"runs": imported[side]}
                   for side in ("txmap", "peer")},
        "categories": {c: summary([r for r in rows if r["category"] == c]) for c in cats},
        "overall": summary(rows),
        "expressions": rows,
    }
    json.dump(result, open(out_path, "w"), indent=1, sort_keys=True)

    it, ip = result["import"]["txmap"], result["import"]["peer"]
    print(f"| | txmap | snomed-ecl-engine | ratio |\n|---|---|---|---|")
    print(f"| import wall s, median of {runs} | {it['wall_s']:.1f} | {ip['wall_s']:.1f} | "
          f"{ip['wall_s'] / it['wall_s']:.2f}× |")
    print(f"| import peak RSS | {it['peak_rss'] / 2**20:,.0f} MiB | {ip['peak_rss'] / 2**20:,.0f} MiB | "
          f"{ip['peak_rss'] / it['peak_rss']:.2f}× |")
    print(f"| file / index size | {it['size'] / 1e6:,.0f} MB | {ip['size'] / 1e6:,.0f} MB | "
          f"{ip['size'] / it['size']:.2f}× |\n")
    print("| category | n | compared | disagree | peer refused | txmap refused | txmap median µs | "
          "peer median µs | peer/txmap, geomean | expressions slower |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cats + ["**all**"]:
        s = result["overall"] if c == "**all**" else result["categories"][c]
        f = lambda v: "–" if v is None else f"{v:,.1f}"
        print(f"| {c} | {s['n']} | {s['compared']} | {s['disagree']} | {s['peer_refused']} | "
              f"{s['txmap_refused']} | {f(s['txmap_median_us'])} | {f(s['peer_median_us'])} | "
              f"{s['geomean_ratio']:.2f}× | {s['slower']} |")
    o = result["overall"]
    print(f"\nEvaluation alone (txmap's `evaluate`, the peer's eval_ms; the table above "
          f"times parse and evaluation on both sides): geomean {o['eval_only_geomean_ratio']:.2f}×, "
          f"{o['eval_only_slower']} expressions slower.")
    dis = [r for r in rows if r.get("agree") is False]
    if dis:
        print("\nDisagreements:\n")
        print("| line | expression | txmap | peer | only txmap (sample) | only peer (sample) |")
        print("|---|---|---|---|---|---|")
        for r in dis:
            text = r["text"].replace("|", "\\|")
            print(f"| {r['line']} | `{text}` | {r['txmap_size']:,} | {r['peer_size']:,} | "
                  f"{r['only_txmap_n']}: {' '.join(r['only_txmap'])} | "
                  f"{r['only_peer_n']}: {' '.join(r['only_peer'])} |")


if __name__ == "__main__":
    main()
