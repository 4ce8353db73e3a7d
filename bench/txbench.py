#!/usr/bin/env python3
"""HealthSamurai tx-benchmark's test shapes, run against txmap (issue 8).

tx-benchmark compares terminology servers with ten tests, each run at 1, 10
and 50 concurrent clients for a fixed time with inputs drawn from pools,
and reports peak requests/s and the median latency at one client. The same
shapes are drawn here from our own edition (`txmap bench corpus
--workload X`, pools sampled from bench/out/intl.txmap with a fixed seed),
so the table can be put beside theirs — knowing the edition is synthetic
and the load generator shares the server's two cores.

One server (the edition mapped and prewarmed, as bench/serve.sh serves
it; the first test waits for the prewarm to end), then for each test
`txmap bench load --connections 1,10,50 --seconds SECONDS_EACH` (after a
WARMUP of uncounted calls per replay). The server's smaps_rollup and the
edition's page cache are sampled each second throughout, with the start of
every test marked on the time line.

    python3 bench/txbench.py                    # ~3.5 min at SECONDS_EACH=5
    SECONDS_EACH=10 TESTS=LK01,EX03 python3 bench/txbench.py
    SMOKE=1 python3 bench/txbench.py            # tiny edition, 0.3 s each

Environment: SECONDS_EACH (5), WARMUP (1), CONNECTIONS (1,10,50), POOL
(requests per test corpus, 5000), SEED (1), TESTS (all ten), EDITION
(bench/out/intl.txmap), TXMAP, OUT (bench/results/txbench.json;
bench/out/smoke/txbench.json with SMOKE=1).
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import procmem  # noqa: E402
from procmem import ROOT, TXMAP  # noqa: E402

SMOKE = os.environ.get("SMOKE") == "1"
TESTS = {
    "LK01": "$lookup of a concept",
    "LK05": "$lookup of an unknown code (404 expected)",
    "VC01": "$validate-code, implicit value set (all of SNOMED CT)",
    "VC03": "$validate-code, is-a value set membership",
    "SS01": "$subsumes",
    "EX01": "$expand is-a, paged",
    "EX03": "$expand text filter, count 20–100",
    "EX05": "$expand intensional (ECL) filter",
    "EX08": "$expand is-a + property + text (POST)",
    "CM01": "$translate by REPLACED BY",
}
SELECTED = os.environ.get("TESTS", ",".join(TESTS)).split(",")
SECONDS_EACH = float(os.environ.get("SECONDS_EACH", "0.3" if SMOKE else "5"))
WARMUP = float(os.environ.get("WARMUP", "0.1" if SMOKE else "1"))
CONNECTIONS = [int(c) for c in os.environ.get("CONNECTIONS", "1,10,50").split(",")]
POOL = int(os.environ.get("POOL", "200" if SMOKE else "5000"))
SEED = int(os.environ.get("SEED", "1"))
OUT = Path(os.environ.get("OUT", ROOT / "bench" / "out" / "smoke" / "txbench.json" if SMOKE
                          else ROOT / "bench" / "results" / "txbench.json"))


def txmap(*args, **kw):
    return subprocess.run([str(TXMAP), *map(str, args)], check=True, **kw)


def main():
    if not TXMAP.exists():
        sys.exit(f"{TXMAP}: missing; cargo build --release --bin txmap")
    unknown = [t for t in SELECTED if t not in TESTS]
    if unknown:
        sys.exit(f"TESTS: unknown {unknown}; choose from {list(TESTS)}")
    with tempfile.TemporaryDirectory(prefix="txmap-txbench-") as tmp:
        work = Path(tmp)
        if SMOKE:
            edition = work / "tiny.txmap"
            txmap("synth", "--concepts", 2000, "--seed", 1, "--out", work / "rf2", stdout=subprocess.DEVNULL)
            txmap("import", "--rf2", work / "rf2", "--out", edition, "--quiet", stdout=subprocess.DEVNULL)
        else:
            edition = Path(os.environ.get("EDITION", ROOT / "bench" / "out" / "intl.txmap"))
            if not edition.exists():
                sys.exit(f"{edition}: missing (bench/import.sh or bench/ops.sh makes it)")
        corpora = {}
        for test in SELECTED:
            corpora[test] = work / f"{test}.jsonl"
            txmap("bench", "corpus", "--edition", edition, "--workload", test, "--calls", POOL,
                  "--seed", SEED, "--out", corpora[test], stderr=subprocess.DEVNULL)

        port = procmem.free_port()
        config = work / "txbench-serve.toml"
        procmem.write_config(config, port, [edition], load="mmap", prewarm=[edition.stem])
        group = procmem.ServerGroup(config, port, 1)
        sampler = procmem.Sampler(group.pids, [edition], 1.0)
        sampler.start()
        result = {
            "settings": {"seconds_each": SECONDS_EACH, "warmup_s": WARMUP, "connections": CONNECTIONS,
                         "pool": POOL, "seed": SEED, "smoke": SMOKE, "edition": edition.name,
                         "edition_bytes": edition.stat().st_size, "cpus": os.cpu_count(),
                         "load_avg_at_start": os.getloadavg()},
            "tests": [],
        }
        try:
            result["startup_s"] = round(group.wait_ready(), 4)
            pw = group.wait_prewarm()
            result["prewarm_done_s"] = None if pw is None else round(pw, 3)
            for test in SELECTED:
                print(f"{test}: {TESTS[test]}", file=sys.stderr, flush=True)
                sampler.mark(test)
                f0 = procmem.faults(group.pids[0])
                out = work / f"{test}.json"
                txmap("bench", "load", "--server", group.url, "--corpus", corpora[test],
                      "--connections", ",".join(map(str, CONNECTIONS)), "--seconds", SECONDS_EACH,
                      "--warmup", WARMUP, "--out", out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                f1 = procmem.faults(group.pids[0])
                reports = json.loads(out.read_text())
                runs = [{"connections": r["connections"], **r["overall"]} for r in reports]
                result["tests"].append({"test": test, "description": TESTS[test], "runs": runs,
                                        "faults": procmem.fault_delta(f0, f1)})
                if not group.alive():
                    raise RuntimeError("the server exited")
        finally:
            result["memory_series"] = sampler.stop()
            group.stop()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(table(result))
    print(f"wrote {OUT}", file=sys.stderr)


def table(result):
    conns = result["settings"]["connections"]
    head = "| test | shape | " + " | ".join(f"req/s @{c}" for c in conns) + \
        " | peak req/s | p50 ms @1 | p99 ms @1 | non-200 |"
    lines = [head, "|---|---|" + "---:|" * (len(conns) + 3) + "---|"]
    for t in result["tests"]:
        by = {r["connections"]: r for r in t["runs"]}
        one = by.get(1) or t["runs"][0]
        bad = {}
        for r in t["runs"]:
            for k, v in r["errors_by_status"].items():
                bad[k] = bad.get(k, 0) + v
        lines.append(
            f"| {t['test']} | {t['description']} | "
            + " | ".join(f"{by[c]['calls_per_s']:,.0f}" if c in by else "" for c in conns)
            + f" | {max(r['calls_per_s'] for r in t['runs']):,.0f} | {one['p50_us'] / 1e3:.2f} "
            f"| {one['p99_us'] / 1e3:.2f} | {' '.join(f'{v}×{k}' for k, v in bad.items()) or '0'} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
