"""Server startup and memory by load mode (issue 3).

Three synthetic editions — an International-scale base and two extension
editions layered on it (`--rf2 base --rf2 ext`) — are served in three
configurations (all read / all mmap / all mmap with one prewarmed) by 1 and
2 processes sharing a port (`--reuse-port`). For each process: time from
spawn to its "listening" log line, the server's own "ready in" figure and
each edition's open time (from its log); RssAnon, RssFile and per-edition
mapped RSS read from /proc/<pid>; and each edition's bytes in the page cache
(the server's mincore figure in /status) — once /health answers, and again
10 s later (when a prewarm has had time to run). Edition files are evicted
from the page cache (posix_fadvise DONTNEED) before every run.

    python3 bench/serve.py              # needs bench/import.sh's base release
    REPEATS=3 python3 bench/serve.py

Writes bench/out/serve.json and prints the BENCHMARKS.md table.
"""
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
TXMAP = ROOT / "target" / "release" / "txmap"
BASE_CONCEPTS = int(os.environ.get("CONCEPTS", "535000"))
REPEATS = int(os.environ.get("REPEATS", "3"))


def run(*args):
    subprocess.run([str(TXMAP), *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def editions():
    """Builds (once) the base and two extension editions."""
    base_rf2 = OUT / f"synth-{BASE_CONCEPTS}-1"
    if not base_rf2.exists():
        run("synth", "--concepts", BASE_CONCEPTS, "--seed", 1, "--out", base_rf2)
    eds = OUT / "editions"
    eds.mkdir(exist_ok=True)
    base = eds / "intl.txmap"
    if not base.exists():
        run("import", "--rf2", base_rf2, "--out", base, "--quiet")
    files = [base]
    for name, seed, ns in [("ext-a", 21, 1000124), ("ext-b", 22, 1000146)]:
        ext_rf2 = OUT / f"synth-{name}"
        if not ext_rf2.exists():
            run("synth", "--concepts", 5000, "--seed", seed, "--out", ext_rf2, "--effective-time", 20250301,
                "--extension-of-seed", 1, "--base-concepts", BASE_CONCEPTS, "--namespace", ns)
        f = eds / f"{name}.txmap"
        if not f.exists():
            run("import", "--rf2", base_rf2, "--rf2", ext_rf2, "--out", f, "--quiet")
        files.append(f)
    return files


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kib(pid, key):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return None


def resident_by_file(pid, files):
    """Rss of each file's mappings, from /proc/<pid>/smaps."""
    out = {str(f): 0 for f in files}
    current = None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            parts = line.split(None, 5)
            current = parts[5] if len(parts) == 6 else None
        elif line.startswith("Rss:") and current in out:
            out[current] += int(line.split()[1]) * 1024
    return out


def measure(pids, files):
    return [
        {
            "pid": pid,
            "rss_anon": status_kib(pid, "RssAnon"),
            "rss_file": status_kib(pid, "RssFile"),
            "vm_rss": status_kib(pid, "VmRSS"),
            "resident": resident_by_file(pid, files),
        }
        for pid in pids
    ]


def page_cache(port):
    """Each edition's bytes in the page cache (the server's mincore figure);
    the same whichever process answers."""
    status = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=10).read())
    return {e["file"]: e["residentBytes"] for e in status["editions"]}


def evict(files):
    """Drops the edition files' clean pages from the page cache
    (posix_fadvise DONTNEED on each file), so every run starts cold."""
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def one_run(files, mode, processes):
    evict(files)
    port = free_port()
    config = OUT / f"serve-{mode}.toml"
    lines = [f'listen = "127.0.0.1:{port}"', "editions = [" + ", ".join(f'"{f}"' for f in files) + "]"]
    if mode == "mmap":
        lines += ["[snomed]", 'load = "mmap"']
    elif mode == "mmap+prewarm":
        lines += ["[snomed]", 'load = "mmap"', f'prewarm = ["{files[0].stem}"]']
    config.write_text("\n".join(lines) + "\n")
    procs = []
    env = dict(os.environ, TXMAP_LOG="info", NO_COLOR="1")
    started = []
    for _ in range(processes):
        t0 = time.monotonic()
        p = subprocess.Popen([str(TXMAP), "serve", "--config", str(config), "--reuse-port"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        procs.append(p)
        started.append(t0)
    result = {"mode": mode, "processes": processes, "per_process": []}
    try:
        for p, t0 in zip(procs, started):
            log = []
            while True:
                line = p.stderr.readline()
                if not line:
                    raise RuntimeError("server exited:\n" + "".join(log))
                log.append(line)
                if "listening on" in line:
                    break
            t_listen = time.monotonic() - t0
            text = "".join(log)
            ready = float(re.search(r"ready in ([0-9.]+) ms", text).group(1))
            opens = [float(x) for x in re.findall(r"opened in ([0-9.]+) ms", text)]
            result["per_process"].append({"spawn_to_listening_ms": t_listen * 1e3, "ready_ms": ready, "open_ms": opens})
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10).read()
        result["at_start"] = measure([p.pid for p in procs], files)
        result["page_cache_at_start"] = page_cache(port)
        time.sleep(10)
        result["after_10s"] = measure([p.pid for p in procs], files)
        result["page_cache_after_10s"] = page_cache(port)
    finally:
        for p in procs:
            p.terminate()
            p.wait()
    return result


def main():
    files = editions()
    sizes = {str(f): f.stat().st_size for f in files}
    runs = []
    for mode in ["read", "mmap", "mmap+prewarm"]:
        for processes in [1, 2]:
            for r in range(REPEATS):
                print(f"{mode} x{processes} run {r + 1}/{REPEATS}", file=sys.stderr)
                runs.append(one_run(files, mode, processes))
    OUT.mkdir(exist_ok=True)
    (OUT / "serve.json").write_text(json.dumps({"files": sizes, "runs": runs}, indent=2))

    mib = lambda b: f"{b / 2**20:.1f}"
    print("| mode | processes | ready ms (server) | spawn→listening ms | max edition open ms | RssAnon MiB / process | RssFile MiB / process | page cache MiB per edition at start (intl, ext-a, ext-b) | … 10 s later |")
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in ["read", "mmap", "mmap+prewarm"]:
        for processes in [1, 2]:
            rs = [r for r in runs if r["mode"] == mode and r["processes"] == processes]
            pp = [p for r in rs for p in r["per_process"]]
            med = lambda xs: statistics.median(xs)
            anon = med([m["rss_anon"] for r in rs for m in r["at_start"]])
            rfile = med([m["rss_file"] for r in rs for m in r["at_start"]])
            res = lambda key: ", ".join(mib(med([r[key][str(f)] for r in rs])) for f in files)
            print(f"| {mode} | {processes} | {med([p['ready_ms'] for p in pp]):.1f} | {med([p['spawn_to_listening_ms'] for p in pp]):.0f} "
                  f"| {med([max(p['open_ms']) for p in pp]):.2f} | {mib(anon)} | {mib(rfile)} | {res('page_cache_at_start')} | {res('page_cache_after_10s')} |")
    print()
    print("edition files:", ", ".join(f"{Path(f).name} {mib(s)} MiB" for f, s in sizes.items()))


if __name__ == "__main__":
    main()
