#!/usr/bin/env python3
"""Two importer builds on one release folder, cold and warm: e.g. the
importer as it is (read() into the row buffer) against a build with
bench/rf2-mmap.patch applied (rows split in place from a mapping).
Each build imports RUNS times per temperature, interleaved. Cold drops the
release's files from the page cache with posix_fadvise(DONTNEED) first;
warm reads them through first. Writes every run and the medians as JSON
and prints a Markdown table.

    python3 bench/scan_import.py RF2_DIR OUT.json RUNS read=target/release/txmap mmap=/tmp/txmap-mmap
"""
import json
import os
import statistics
import subprocess
import sys


def files(root):
    for d, _, names in os.walk(root):
        for n in names:
            yield os.path.join(d, n)


def evict(root):
    for p in files(root):
        fd = os.open(p, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def warm(root):
    for p in files(root):
        with open(p, "rb") as f:
            while f.read(8 << 20):
                pass


def main(rf2, out, runs, builds):
    results = []
    names = list(builds)
    edition = os.path.join(os.path.dirname(out) or ".", "scan-import.txmap")
    for run in range(runs):
        for temp in ("cold", "warm"):
            for path in (names if run % 2 == 0 else names[::-1]):
                (evict if temp == "cold" else warm)(rf2)
                r = subprocess.run(
                    [builds[path], "import", "--rf2", rf2, "--out", edition, "--json"],
                    capture_output=True, check=True,
                )
                report = json.loads(r.stdout)
                row = {
                    "path": path, "temperature": temp, "run": run + 1,
                    "wall_seconds": report["wall_seconds"],
                    "peak_rss": report["peak_rss"],
                }
                results.append(row)
                print(json.dumps(row), file=sys.stderr)
    os.remove(edition)
    medians = []
    for temp in ("cold", "warm"):
        for path in names:
            rows = [r for r in results if r["path"] == path and r["temperature"] == temp]
            walls = [r["wall_seconds"] for r in rows]
            medians.append({
                "path": path, "temperature": temp,
                "wall_seconds": statistics.median(walls),
                "wall_min": min(walls), "wall_max": max(walls),
                "peak_rss": statistics.median(r["peak_rss"] for r in rows),
            })
    json.dump({"rf2": rf2, "runs": results, "medians": medians}, open(out, "w"), indent=2)
    for m in medians:
        print(f"| {m['temperature']} | {m['path']} | {m['wall_seconds']:.2f} ({m['wall_min']:.2f}–{m['wall_max']:.2f}) | {m['peak_rss'] / 2**20:.0f} MiB |")


if __name__ == "__main__":
    builds = dict(a.split("=", 1) for a in sys.argv[4:])
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), builds)
