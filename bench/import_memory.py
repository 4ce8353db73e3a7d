#!/usr/bin/env python3
"""Memory over time of an International-scale import (issue 8).

bench/import.sh reports the importer's peak (VmHWM) and time per stage; a
peak says nothing of when memory is held or of what kind. This runs
`txmap import` of the International-scale synthetic release
(bench/out/synth-535000-1) into a temporary file beside it (on the same
disk as a real import; /tmp may be elsewhere) and samples the importer
every SAMPLE_INTERVAL seconds: Rss and Anonymous from
/proc/PID/smaps_rollup (file-backed = Rss − Anonymous) and RssAnon,
RssFile and VmHWM from /proc/PID/status. The importer's own stage lines
(one per stage on a non-terminal stderr: rows, seconds, rss at the end)
are timestamped as they arrive, so each stage's start (end − its seconds)
and end can be drawn on the memory curve.

    python3 bench/import_memory.py              # ~15 s, needs bench/import.sh's release
    IMPORT_ARGS="--max-memory 256MiB" python3 bench/import_memory.py
    SMOKE=1 python3 bench/import_memory.py      # 20,000-concept release

Environment: RELEASE (bench/out/synth-535000-1), IMPORT_ARGS (extra
arguments), SAMPLE_INTERVAL (0.25 s), TXMAP, OUT
(bench/results/import-memory.json; bench/out/smoke/import-memory.json
with SMOKE=1).
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import procmem  # noqa: E402
from procmem import ROOT, TXMAP  # noqa: E402

SMOKE = os.environ.get("SMOKE") == "1"
INTERVAL = float(os.environ.get("SAMPLE_INTERVAL", "0.05" if SMOKE else "0.25"))
IMPORT_ARGS = shlex.split(os.environ.get("IMPORT_ARGS", ""))
OUT = Path(os.environ.get("OUT", ROOT / "bench" / "out" / "smoke" / "import-memory.json" if SMOKE
                          else ROOT / "bench" / "results" / "import-memory.json"))
STAGE = re.compile(r"^\s*(?P<name>[\w -]+?):\s+(?P<rows>\d+) rows in (?P<s>[0-9.]+) s(?:, rss (?P<rss>.+))?$")


def main():
    if not TXMAP.exists():
        sys.exit(f"{TXMAP}: missing; cargo build --release --bin txmap")
    workdir = ROOT / "bench" / "out"
    workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="txmap-import-memory-", dir=workdir) as tmp:
        work = Path(tmp)
        if SMOKE:
            release = work / "rf2"
            subprocess.run([str(TXMAP), "synth", "--concepts", "20000", "--seed", "1", "--out", str(release)],
                           check=True, stdout=subprocess.DEVNULL)
        else:
            release = Path(os.environ.get("RELEASE", ROOT / "bench" / "out" / "synth-535000-1"))
            if not release.exists():
                sys.exit(f"{release}: missing (bench/import.sh makes it)")
        out = work / "edition.txmap"
        cmd = [str(TXMAP), "import", "--rf2", str(release), "--out", str(out), *IMPORT_ARGS]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        sampler = procmem.Sampler([p.pid], (), INTERVAL)
        sampler.t0 = t0
        sampler.start()
        lines, stages = [], []

        def drain():
            for line in p.stderr:
                t = round(time.monotonic() - t0, 3)
                lines.append({"t": t, "line": line.rstrip("\n")})
                m = STAGE.match(line.rstrip("\n"))
                if m:
                    s = float(m.group("s"))
                    stages.append({"name": m.group("name").strip(), "rows": int(m.group("rows")),
                                   "seconds": s, "start_t": round(t - s, 3), "end_t": t, "rss": m.group("rss")})
                    sampler.mark(m.group("name").strip())

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        code = p.wait()
        wall = time.monotonic() - t0
        reader.join(5)
        series = sampler.stop()
        if code != 0:
            sys.exit(f"import failed ({code}):\n" + "\n".join(x["line"] for x in lines[-20:]))
        size = out.stat().st_size
    # The last samples are of an exited process (none): drop the empty ones.
    series["samples"] = [s for s in series["samples"] if s["procs"]]
    peak = lambda key: max((s["procs"][0][key] or 0 for s in series["samples"]), default=0)
    result = {
        "release": release.name if not SMOKE else "synth-20000-1 (smoke)",
        "command": " ".join(["txmap", *cmd[1:]]).replace(str(work), "$TMP"),
        "smoke": SMOKE,
        "cpus": os.cpu_count(),
        "load_avg_at_start": os.getloadavg(),
        "wall_s": round(wall, 3),
        "edition_bytes": size,
        "peak_rss": peak("rss"),
        "peak_anonymous": peak("anonymous"),
        "peak_file": peak("file"),
        "vm_hwm": peak("vm_hwm"),
        "stages": stages,
        "log": lines,
        "memory_series": series,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=1) + "\n")
    mib = lambda b: f"{b / 2**20:,.0f}"
    print(f"import {result['release']}: {wall:.1f} s, {len(series['samples'])} samples; peak Rss {mib(result['peak_rss'])} MiB, "
          f"Anonymous {mib(result['peak_anonymous'])} MiB, file-backed {mib(result['peak_file'])} MiB, "
          f"VmHWM {mib(result['vm_hwm'])} MiB")
    print("| stage | start s | end s | rows | rss at end |")
    print("|---|---:|---:|---:|---|")
    for s in stages:
        print(f"| {s['name']} | {s['start_t']:.2f} | {s['end_t']:.2f} | {s['rows']:,} | {s['rss'] or ''} |")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
