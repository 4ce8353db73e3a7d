#!/usr/bin/env python3
"""The cold/warm × load mode × processes matrix (issue 8), measured the way
../shared/guides/lessons.md §1 measured a production terminology server, so
our table reads against theirs.

Three editions (bench/out/editions: the International-scale base `intl` and
two extensions `ext-a`, `ext-b`; serve.py builds them). One traffic corpus
over all three (`txmap bench corpus`, fixed seed: the first two editions
are the hot ones and take 97% of calls; unversioned calls go to `intl`).
Four configurations — all read / hot editions read, rest mmap / all mmap /
all mmap with the hot editions prewarmed — each served by N = 1, 2, 4
processes sharing a port (`txmap serve --reuse-port`). For each cell and
repeat:

- the edition files are evicted from the page cache (posix_fadvise
  DONTNEED; dropping the whole cache is not permitted here) and their
  residency checked with fincore;
- startup: spawn → every process logged "listening on" and /health
  answers (with prewarm, also when every prewarm read ended; the cold pass
  waits for it unless PREWARM_WAIT=0);
- a cold pass, then a warm pass over the same corpus: CLIENTS concurrent
  `txmap bench load --once --part K/CLIENTS` processes, one keep-alive
  connection each, every one a strided share of the corpus; their raw
  latencies (`--latencies`) are merged, so percentiles are exact over the
  whole pass, not averages of the clients';
- after each pass: RssAnon and smaps_rollup of every server, the edition
  files' page cache (fincore, counted once), whole-group memory (sum of
  RssAnon + that page cache), and the servers' major/minor faults and CPU
  time over the pass (/proc/PID/stat);
- all along: smaps_rollup of every server and the files' page cache each
  SAMPLE_INTERVAL seconds (a time series per run, for the charts).

Why separate client processes: lessons.md replayed its corpus with 4
clients; four processes of one connection each is that, and `--part`
makes the four shares exactly the corpus. With SO_REUSEPORT the kernel
hashes each connection to a process, so with 4 connections and 4 servers
some servers may get none: per-process CPU time over each pass is recorded
to show how the work was spread.

    python3 bench/matrix.py                     # ~15 min, see BENCHMARKS.md
    REPEATS=1 NS=1,2 CONFIGS=read,prewarm CALLS=10000 python3 bench/matrix.py
    SMOKE=1 python3 bench/matrix.py             # tiny edition, a few seconds

Environment: CALLS (corpus size, default 20000), SEED (1), REPEATS (2),
NS (1,2,4), CONFIGS (read,hot-read,mmap,prewarm; also mmap-random, prewarm-hot), CLIENTS (4),
PREWARM_WAIT (1), SAMPLE_INTERVAL (1.0 s), TXMAP (the binary), OUT (the
JSON; default bench/results/matrix.json, bench/out/smoke/matrix.json with
SMOKE=1).
"""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import procmem  # noqa: E402
from procmem import ROOT, TXMAP  # noqa: E402

SMOKE = os.environ.get("SMOKE") == "1"
CALLS = int(os.environ.get("CALLS", "3000" if SMOKE else "20000"))
SEED = int(os.environ.get("SEED", "1"))
REPEATS = int(os.environ.get("REPEATS", "1" if SMOKE else "2"))
NS = [int(n) for n in os.environ.get("NS", "1" if SMOKE else "1,2,4").split(",")]
CLIENTS = int(os.environ.get("CLIENTS", "4"))
PREWARM_WAIT = os.environ.get("PREWARM_WAIT", "1") == "1"
INTERVAL = float(os.environ.get("SAMPLE_INTERVAL", "0.2" if SMOKE else "1.0"))
OUT_DIR = ROOT / "bench" / "out"
OUT = Path(os.environ.get("OUT", OUT_DIR / "smoke" / "matrix.json" if SMOKE else ROOT / "bench" / "results" / "matrix.json"))

# key → (label as in lessons.md, config builder given the hot editions' names)
CONFIGS = {
    "read": ("all read", lambda hot: {"load": "read"}),
    "hot-read": ("hot editions read, rest mmap", lambda hot: {"load": "mmap", "read": hot}),
    "mmap": ("all mmap", lambda hot: {"load": "mmap"}),
    "prewarm": ("all mmap, hot prewarmed", lambda hot: {"load": "mmap", "prewarm": hot}),
    # Issue 16: every mapping random, as before per-section advice; and the
    # hot editions' hot sections prewarmed only.
    "mmap-random": ("all mmap, advice random", lambda hot: {"load": "mmap", "advice": "random"}),
    "prewarm-hot": ("all mmap, hot editions' hot sections prewarmed",
                    lambda hot: {"load": "mmap", "prewarm_hot": hot}),
}
CONFIG_KEYS = os.environ.get("CONFIGS", "prewarm" if SMOKE else "read,hot-read,mmap,prewarm").split(",")


def txmap(*args, **kw):
    return subprocess.run([str(TXMAP), *map(str, args)], check=True, **kw)


def editions(work):
    """The edition files, the hot ones first (the first is the default)."""
    if SMOKE:
        rf2, f = work / "rf2", work / "tiny.txmap"
        txmap("synth", "--concepts", 2000, "--seed", 1, "--out", rf2, stdout=subprocess.DEVNULL)
        txmap("import", "--rf2", rf2, "--out", f, "--quiet", stdout=subprocess.DEVNULL)
        return [f], [f.stem]
    eds = OUT_DIR / "editions"
    files = [eds / "intl.txmap", eds / "ext-a.txmap", eds / "ext-b.txmap"]
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        sys.exit(f"missing edition files {missing}: run python3 bench/serve.py first (it builds them)")
    return files, ["intl", "ext-a"]


def corpus(files, work):
    path = (work if SMOKE else OUT_DIR) / f"matrix-corpus-{CALLS}-{SEED}.jsonl"
    if not path.exists():
        eds = [a for f in files for a in ("--edition", f)]
        txmap("bench", "corpus", *eds, "--calls", CALLS, "--seed", SEED, "--out", path, stderr=subprocess.DEVNULL)
    return path


def machine():
    mem = procmem._kib_fields(Path("/proc/meminfo").read_text()).get("MemTotal")
    return {"cpus": os.cpu_count(), "mem_total": mem, "kernel": platform.release(),
            "load_avg_at_start": os.getloadavg()}


def one_pass(url, corpus_path, work, name):
    """CLIENTS concurrent one-pass replays, each its share; merged."""
    procs, t0 = [], time.monotonic()
    for k in range(CLIENTS):
        procs.append(subprocess.Popen(
            [str(TXMAP), "bench", "load", "--server", url, "--corpus", str(corpus_path), "--once",
             "--part", f"{k}/{CLIENTS}", "--connections", "1", "--out", str(work / f"{name}-{k}.json"),
             "--latencies", str(work / f"{name}-{k}.tsv")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"bench load failed ({p.returncode}):\n{err}")
    wall = time.monotonic() - t0
    ns, by_op, errors = [], {}, {}
    client_s = []
    for k in range(CLIENTS):
        client_s.append(json.loads((work / f"{name}-{k}.json").read_text())[0]["seconds"])
        with open(work / f"{name}-{k}.tsv") as f:
            next(f)
            for line in f:
                _, op, status, v = line.rstrip("\n").split("\t")
                v = int(v)
                ns.append(v)
                by_op.setdefault(op, []).append(v)
                if status != "200":
                    key = f"{op} {'io' if status == '0' else status}"
                    errors[key] = errors.get(key, 0) + 1
        (work / f"{name}-{k}.tsv").unlink()
        (work / f"{name}-{k}.json").unlink()
    ns.sort()
    total = max(client_s)
    us = lambda v: round(v / 1e3, 1)
    ops = {}
    for op, v in sorted(by_op.items()):
        v.sort()
        ops[op] = {"calls": len(v), "p50_us": us(procmem.percentile(v, 0.5)), "p99_us": us(procmem.percentile(v, 0.99))}
    # Expected refusals (LK05 asks for unknown codes: 404) are not errors.
    real_errors = {k: v for k, v in errors.items() if not k.startswith("LK05 404")}
    return {
        "calls": len(ns),
        "total_s": round(total, 3),
        "wall_s": round(wall, 3),
        "client_s": client_s,
        "calls_per_s": round(len(ns) / total, 1) if total else 0,
        "mean_us": us(sum(ns) / len(ns)) if ns else 0,
        "p50_us": us(procmem.percentile(ns, 0.5)),
        "p90_us": us(procmem.percentile(ns, 0.9)),
        "p99_us": us(procmem.percentile(ns, 0.99)),
        "p999_us": us(procmem.percentile(ns, 0.999)),
        "max_us": us(ns[-1]) if ns else 0,
        "ladder": [[q, us(procmem.percentile(ns, q))] for q in procmem.LADDER],
        "statuses_not_200": errors,
        "errors": sum(real_errors.values()),
        "ops": ops,
    }


def memory(pids, files):
    per = [{"pid": pid, **(procmem.rollup(pid) or {})} for pid in pids]
    cache = procmem.page_cache(files)
    anon = sum(p.get("rss_anon") or 0 for p in per)
    return {"per_process": per, "private_bytes": anon, "page_cache": cache,
            "page_cache_bytes": sum(cache.values()), "group_bytes": anon + sum(cache.values())}


def one_run(key, n, files, hot, corpus_path, work):
    label, build = CONFIGS[key]
    procmem.evict(files)
    before = procmem.page_cache(files)
    sizes = sum(f.stat().st_size for f in files)
    if sum(before.values()) > 0.01 * sizes:
        print(f"  warning: {sum(before.values()) / 2**20:.1f} MiB of the editions still cached after eviction "
              "(another process maps them?)", file=sys.stderr)
    port = procmem.free_port()
    config = work / f"matrix-{key}.toml"
    procmem.write_config(config, port, files, **build(hot))
    group = procmem.ServerGroup(config, port, n)
    sampler = procmem.Sampler(group.pids, files, INTERVAL)
    sampler.start()
    run = {"config": key, "label": label, "processes": n, "page_cache_before": before}
    try:
        run["startup_s"] = round(group.wait_ready(), 4)
        run["listening_s"] = [round(t, 4) for t in group.listening_s]
        sampler.mark("ready")
        prewarms = "prewarm" in build(hot) or "prewarm_hot" in build(hot)
        prewarm = group.wait_prewarm() if PREWARM_WAIT and prewarms else None
        run["prewarm_done_s"] = None if prewarm is None else round(prewarm, 3)
        # Editions answer 503 until their checksums are read through; the
        # cold pass starts when they answer. Verification leaves the page
        # cache as it found it, so the pass is still cold.
        run["verified_s"] = round(group.wait_verified(), 3)
        run["after_startup"] = memory(group.pids, files)
        for temp in ("cold", "warm"):
            f0 = {pid: procmem.faults(pid) for pid in group.pids}
            sampler.mark(f"{temp} start")
            p = one_pass(group.url, corpus_path, work, f"{key}-{n}-{temp}")
            sampler.mark(f"{temp} end")
            f1 = {pid: procmem.faults(pid) for pid in group.pids}
            deltas = [procmem.fault_delta(f0[pid], f1[pid]) for pid in group.pids]
            p["faults_per_process"] = deltas
            p["majflt"] = sum(d["majflt"] for d in deltas)
            p["minflt"] = sum(d["minflt"] for d in deltas)
            p["server_cpu_s"] = [d["cpu_s"] for d in deltas]
            p["memory_after"] = memory(group.pids, files)
            if not group.alive():
                raise RuntimeError("a server exited during the pass")
            run[temp] = p
    finally:
        run["memory_series"] = sampler.stop()
        group.stop()
    run["log_tail"] = [line for log in group.logs for _, line in log if "WARN" in line or "ERROR" in line][:20]
    return run


def rng(values, fmt):
    lo, hi = min(values), max(values)
    a, b = fmt(lo), fmt(hi)
    return a if a == b else f"{a}–{b}"


def table(runs):
    mib = lambda b: f"{b / 2**20:,.0f}"
    one = lambda v: f"{v:,.1f}" if v >= 10 else f"{v:.2f}"
    lines = [
        "| processes | configuration | startup s | private MiB | shared page cache MiB | cold total s / p99 ms | warm total s / p99 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    extra = [
        "| processes | configuration | cold p50 ms | warm p50 ms | cold calls/s | warm calls/s | cold major / minor faults | warm major / minor faults | group MiB (private + cache) | errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    cells = []
    for n in NS:
        for key in CONFIG_KEYS:
            rs = [r for r in runs if r["config"] == key and r["processes"] == n and "warm" in r]
            if rs:
                cells.append((n, key, rs))
    for n, key, rs in cells:
        label = CONFIGS[key][0]
        ms = lambda v: f"{v / 1e3:,.2f}"
        t = lambda temp: (rng([r[temp]["total_s"] for r in rs], one) + " / "
                          + rng([r[temp]["p99_us"] for r in rs], lambda v: f"{v / 1e3:,.0f}"))
        lines.append(
            f"| {n} | {label} | {rng([r['startup_s'] for r in rs], lambda v: f'{v:.2f}')} "
            f"| {rng([r['warm']['memory_after']['private_bytes'] for r in rs], mib)} "
            f"| {rng([r['warm']['memory_after']['page_cache_bytes'] for r in rs], mib)} "
            f"| {t('cold')} | {t('warm')} |")
        f = lambda temp: (rng([r[temp]["majflt"] for r in rs], lambda v: f"{v:,}") + " / "
                          + rng([r[temp]["minflt"] for r in rs], lambda v: f"{v:,}"))
        extra.append(
            f"| {n} | {label} | {rng([r['cold']['p50_us'] for r in rs], ms)} | {rng([r['warm']['p50_us'] for r in rs], ms)} "
            f"| {rng([r['cold']['calls_per_s'] for r in rs], lambda v: f'{v:,.0f}')} "
            f"| {rng([r['warm']['calls_per_s'] for r in rs], lambda v: f'{v:,.0f}')} "
            f"| {f('cold')} | {f('warm')} "
            f"| {rng([r['warm']['memory_after']['group_bytes'] for r in rs], mib)} "
            f"| {rng([r['cold']['errors'] + r['warm']['errors'] for r in rs], str)} |")
    return "\n".join(lines) + "\n\n" + "\n".join(extra) + "\n"


def main():
    if not TXMAP.exists():
        sys.exit(f"{TXMAP}: missing; cargo build --release --bin txmap")
    unknown = [k for k in CONFIG_KEYS if k not in CONFIGS]
    if unknown:
        sys.exit(f"CONFIGS: unknown {unknown}; choose from {list(CONFIGS)}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="txmap-matrix-") as tmp:
        work = Path(tmp)
        files, hot = editions(work)
        corpus_path = corpus(files, work)
        result = {
            "machine": machine(),
            "settings": {"calls": CALLS, "seed": SEED, "repeats": REPEATS, "ns": NS, "clients": CLIENTS,
                         "configs": CONFIG_KEYS, "prewarm_wait": PREWARM_WAIT, "sample_interval_s": INTERVAL,
                         "smoke": SMOKE, "corpus": str(corpus_path.relative_to(ROOT)) if not SMOKE else corpus_path.name},
            "editions": {f.name: f.stat().st_size for f in files},
            "hot": hot,
            "configs": {k: CONFIGS[k][0] for k in CONFIG_KEYS},
            "runs": [],
        }
        total = len(CONFIG_KEYS) * len(NS) * REPEATS
        i = 0
        for rep in range(REPEATS):
            for key in CONFIG_KEYS:
                for n in NS:
                    i += 1
                    t = time.monotonic()
                    print(f"[{i}/{total}] {CONFIGS[key][0]} ×{n} repeat {rep + 1}", file=sys.stderr, flush=True)
                    run = one_run(key, n, files, hot, corpus_path, work)
                    run["repeat"] = rep + 1
                    result["runs"].append(run)
                    print(f"  startup {run['startup_s']:.2f} s; cold {run['cold']['total_s']:.1f} s "
                          f"p99 {run['cold']['p99_us'] / 1e3:.0f} ms; warm {run['warm']['total_s']:.1f} s "
                          f"p99 {run['warm']['p99_us'] / 1e3:.0f} ms ({time.monotonic() - t:.0f} s)",
                          file=sys.stderr, flush=True)
        result["elapsed_s"] = round(time.monotonic() - started, 1)
        result["table_md"] = table(result["runs"])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    print(result["table_md"])
    print(f"{OUT.relative_to(ROOT) if OUT.is_relative_to(ROOT) else OUT}: {len(result['runs'])} runs "
          f"in {result['elapsed_s']:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
