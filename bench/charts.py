#!/usr/bin/env python3
"""Regenerates every benchmark chart (issue 8) as SVG from the JSON the
bench scripts write, with one command:

    python3 bench/charts.py                     # bench/results/*.json → docs/*.svg
    RESULTS=bench/out/smoke DOCS=/tmp/charts python3 bench/charts.py

- docs/matrix-latency.svg   latency percentiles per configuration, cold and
                            warm, by process count (matrix.json)
- docs/cold-pass.svg        major faults and page cache over the cold pass,
                            per configuration, issue 16 (matrix-16.json:
                            format 1.5)
- docs/cold-pass-2.svg      the same for format 2.0 (matrix-16-v2.json)
- docs/cold-pass-3.svg      the same with translate's index and the
                            descendants index hot (matrix-16-v2-members.json)
- docs/matrix-memory.svg    server memory over time per configuration:
                            private (sum of Anonymous) and whole group
                            (that plus the editions' page cache) (matrix.json)
- docs/import-memory.svg    importer Rss / Anonymous / file-backed over time
                            with its stages (import-memory.json)
- docs/soak.svg             memory each minute of the one-hour soak
                           (issue14-soak.json, by bench/adversarial.py)
- docs/txbench.svg          req/s per tx-benchmark test at 1/10/50 clients
                            (txbench.json)
- docs/scan.svg             the scan crossover (scan.json, by scan_chart.py)

A chart whose JSON is absent is skipped with a notice. The SVG is written
by hand, as scan_chart.py does: no plotting library is installed here and
none is needed for lines, bars and axes.
"""
import json
import math
import os
import sys
from pathlib import Path
from xml.sax.saxutils import escape

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(os.environ.get("RESULTS", ROOT / "bench" / "results"))
DOCS = Path(os.environ.get("DOCS", ROOT / "docs"))
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
MIB = 2**20


def nice_ticks(lo, hi, count=5):
    """Round tick values covering lo..hi on a linear axis (the last one at
    or above hi)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    # The last tick is the first at or above hi, so the axis covers it.
    ticks, v = [round(start, 10)], start
    while v < hi - step * 1e-9:
        v += step
        ticks.append(round(v, 10))
    return ticks


def log_ticks(lo, hi):
    """Powers of ten (and 2×, 5× when the range is short) within lo..hi."""
    lo_e, hi_e = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    mults = (1, 2, 5) if hi_e - lo_e <= 3 else (1,)
    return [m * 10**e for e in range(lo_e, hi_e + 1) for m in mults if lo <= m * 10**e <= hi]


def fmt(v):
    if v >= 1000:
        return f"{v / 1000:g}k"
    return f"{v:g}"


class Panel:
    """One plot area: maps data to pixels, draws axes, lines, bars."""

    def __init__(self, svg, x, y, w, h, xr, yr, xlog=False, ylog=False, title="", xlabel="", ylabel=""):
        self.svg, self.x, self.y, self.w, self.h = svg, x, y, w, h
        self.xr, self.yr, self.xlog, self.ylog = xr, yr, xlog, ylog
        svg.append(f'<text x="{x + w / 2}" y="{y - 8}" text-anchor="middle" font-weight="bold">{escape(title)}</text>')
        svg.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="none" stroke="#888"/>')
        svg.append(f'<text x="{x + w / 2}" y="{y + h + 34}" text-anchor="middle">{escape(xlabel)}</text>')
        svg.append(f'<text x="{x - 44}" y="{y + h / 2}" text-anchor="middle" '
                   f'transform="rotate(-90 {x - 44} {y + h / 2})">{escape(ylabel)}</text>')

    def _t(self, v, r, log):
        lo, hi = r
        if log:
            v, lo, hi = math.log10(max(v, 1e-12)), math.log10(lo), math.log10(hi)
        return (v - lo) / ((hi - lo) or 1)

    def px(self, v):
        return self.x + self._t(v, self.xr, self.xlog) * self.w

    def py(self, v):
        return self.y + self.h - self._t(v, self.yr, self.ylog) * self.h

    def xticks(self, ticks, label=fmt):
        for t in ticks:
            x = self.px(t)
            self.svg.append(f'<line x1="{x:.1f}" y1="{self.y}" x2="{x:.1f}" y2="{self.y + self.h}" stroke="#eee"/>')
            self.svg.append(f'<text x="{x:.1f}" y="{self.y + self.h + 16}" text-anchor="middle">{escape(label(t))}</text>')

    def yticks(self, ticks, label=fmt):
        for t in ticks:
            y = self.py(t)
            self.svg.append(f'<line x1="{self.x}" y1="{y:.1f}" x2="{self.x + self.w}" y2="{y:.1f}" stroke="#eee"/>')
            self.svg.append(f'<text x="{self.x - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(label(t))}</text>')

    def line(self, pts, colour, dash="", width=2, opacity=1.0):
        pts = [(x, y) for x, y in pts if x is not None and y is not None]
        if len(pts) < 1:
            return
        path = " ".join(f"{self.px(x):.1f},{self.py(y):.1f}" for x, y in pts)
        d = f' stroke-dasharray="{dash}"' if dash else ""
        self.svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="{width}" '
                        f'stroke-opacity="{opacity}"{d}/>')

    def bar(self, x0, x1, v, colour):
        base = self.yr[0]
        y, yb = self.py(v), self.py(base)
        self.svg.append(f'<rect x="{self.px(x0):.1f}" y="{y:.1f}" width="{self.px(x1) - self.px(x0):.1f}" '
                        f'height="{max(0, yb - y):.1f}" fill="{colour}"/>')


def svg_doc(width, height, title):
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
            f'<rect width="{width}" height="{height}" fill="white"/>',
            f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>']


def legend(svg, x, y, items):
    """items: (label, colour, dash) in a row from (x, y)."""
    for label, colour, dash in items:
        d = f' stroke-dasharray="{dash}"' if dash else ""
        svg.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 26}" y2="{y - 4}" stroke="{colour}" stroke-width="2"{d}/>')
        svg.append(f'<text x="{x + 32}" y="{y}">{escape(label)}</text>')
        x += 32 + 7 * len(label) + 24


def write(svg, name):
    svg.append("</svg>")
    DOCS.mkdir(parents=True, exist_ok=True)
    (DOCS / name).write_text("\n".join(svg) + "\n")
    print(f"wrote {DOCS / name}")


def grid(n, cols=2):
    return [(i % cols, i // cols) for i in range(n)], min(n, cols), math.ceil(n / cols)


def tail_x(q):
    """Percentile position on a tail-stretching axis: 0 → 0, 90 → 1,
    99 → 2, 99.9 → 3 (as HdrHistogram plots do)."""
    return -math.log10(1 - q)


def matrix_latency(data):
    configs = list(data["configs"])
    runs = [r for r in data["runs"] if "warm" in r]
    ns = sorted({r["processes"] for r in runs})
    colours = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(ns)}
    qs = [q for q in runs[0]["cold"]["ladder"] if q[0] < 1.0]
    xmax = max(tail_x(q[0]) for q in qs)
    lat = [v for r in runs for t in ("cold", "warm") for q, v in r[t]["ladder"] if q < 1.0]
    ylo, yhi = max(min(lat) / 1e3, 1e-3), max(lat) / 1e3
    ylo, yhi = 10 ** math.floor(math.log10(ylo)), 10 ** math.ceil(math.log10(yhi))
    pos, cols, rows = grid(len(configs))
    pw, ph, ml, mt, gap = 400, 260, 70, 60, 70
    width, height = ml + cols * (pw + gap), mt + rows * (ph + gap) + 30
    s = data["settings"]
    svg = svg_doc(width, height, f"Latency percentiles per configuration: {s['calls']:,} calls by {s['clients']} clients, "
                  f"cold (dashed) and warm (solid), every repeat")
    for (cx, cy), key in zip(pos, configs):
        p = Panel(svg, ml + cx * (pw + gap), mt + cy * (ph + gap), pw, ph, (0, xmax), (ylo, yhi), ylog=True,
                  title=data["configs"][key], xlabel="percentile", ylabel="latency ms (log)")
        p.xticks([t for t in (0, 1, 2, 3, 4) if t <= xmax + 1e-9],
                 lambda t: {0: "0", 1: "90", 2: "99", 3: "99.9", 4: "99.99"}[t])
        p.yticks(log_ticks(ylo, yhi), lambda v: f"{v:g}")
        for r in runs:
            if r["config"] != key:
                continue
            for temp, dash in (("cold", "5 3"), ("warm", "")):
                pts = [(tail_x(q), v / 1e3) for q, v in r[temp]["ladder"] if q < 1.0]
                p.line(pts, colours[r["processes"]], dash, width=1.6, opacity=0.85)
    legend(svg, ml, height - 12, [(f"{n} process{'es' if n > 1 else ''}", colours[n], "") for n in ns]
           + [("cold", "#444", "5 3"), ("warm", "#444", "")])
    write(svg, "matrix-latency.svg")


def matrix_memory(data):
    configs = list(data["configs"])
    runs = [r for r in data["runs"] if r.get("memory_series") and r.get("repeat", 1) == 1]
    ns = sorted({r["processes"] for r in runs})
    colours = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(ns)}

    def series(r):
        pts = []
        for smp in r["memory_series"]["samples"]:
            anon = sum(p["anonymous"] for p in smp["procs"]) / MIB
            cache = (smp.get("page_cache") or 0) / MIB
            pts.append((smp["t"], anon, anon + cache))
        return pts

    allpts = [pt for r in runs for pt in series(r)]
    if not allpts:
        print("matrix.json has no memory samples: matrix-memory.svg skipped")
        return
    xmax = max(t for t, _, _ in allpts) or 1
    ymax = max(g for _, _, g in allpts) or 1
    xt, yt = nice_ticks(0, xmax), nice_ticks(0, ymax)
    pos, cols, rows = grid(len(configs))
    pw, ph, ml, mt, gap = 400, 240, 70, 60, 70
    width, height = ml + cols * (pw + gap), mt + rows * (ph + gap) + 30
    svg = svg_doc(width, height, "Server memory over time (first repeat): whole group = private + editions' page cache "
                  "(solid), private = Σ Anonymous (dashed)")
    for (cx, cy), key in zip(pos, configs):
        p = Panel(svg, ml + cx * (pw + gap), mt + cy * (ph + gap), pw, ph, (0, xt[-1]), (0, yt[-1]),
                  title=data["configs"][key], xlabel="seconds since spawn (startup, cold pass, warm pass)",
                  ylabel="MiB")
        p.xticks(xt)
        p.yticks(yt)
        for r in runs:
            if r["config"] != key:
                continue
            pts = series(r)
            c = colours[r["processes"]]
            p.line([(t, g) for t, _, g in pts], c)
            p.line([(t, a) for t, a, _ in pts], c, "5 3")
            for m in r["memory_series"]["marks"]:
                if m["label"] == "warm start":
                    x = p.px(m["t"])
                    svg.append(f'<line x1="{x:.1f}" y1="{p.y + p.h - 8}" x2="{x:.1f}" y2="{p.y + p.h}" stroke="{c}"/>')
    legend(svg, ml, height - 12, [(f"{n} process{'es' if n > 1 else ''}", colours[n], "") for n in ns]
           + [("group", "#444", ""), ("private", "#444", "5 3"), ("| warm pass starts", "#fff", "")])
    write(svg, "matrix-memory.svg")


def import_memory(data):
    samples = data["memory_series"]["samples"]
    pts = [(s["t"], s["procs"][0]) for s in samples if s["procs"]]
    if not pts:
        print("import-memory.json has no samples: import-memory.svg skipped")
        return
    xmax = max(data["wall_s"], pts[-1][0])
    ymax = max(p["rss"] for _, p in pts) / MIB
    xt, yt = nice_ticks(0, xmax), nice_ticks(0, ymax * 1.1)
    width, height = 820, 420
    svg = svg_doc(width, height, f"Import of {data['release']}: memory over time "
                  f"({data['wall_s']:.1f} s, peak Rss {data['peak_rss'] / MIB:,.0f} MiB)")
    p = Panel(svg, 70, 60, 720, 280, (0, xt[-1]), (0, yt[-1]), title="", xlabel="seconds", ylabel="MiB")
    for i, st in enumerate(data.get("stages", [])):
        x0, x1 = p.px(max(st["start_t"], 0)), p.px(st["end_t"])
        if i % 2 == 0:
            svg.append(f'<rect x="{x0:.1f}" y="{p.y}" width="{max(x1 - x0, 0.5):.1f}" height="{p.h}" fill="#f3f3f3"/>')
        svg.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{p.y + 12 + (i % 3) * 12}" text-anchor="middle" '
                   f'font-size="10" fill="#555">{escape(st["name"])}</text>')
    p.xticks(xt)
    p.yticks(yt)
    for key, colour, label in (("rss", "#000000", "Rss"), ("anonymous", PALETTE[0], "Anonymous"),
                               ("file", PALETTE[1], "file-backed (Rss − Anonymous)")):
        p.line([(t, m[key] / MIB) for t, m in pts], colour)
    legend(svg, 70, height - 14, [("Rss", "#000000", ""), ("Anonymous", PALETTE[0], ""),
                                  ("file-backed (Rss − Anonymous)", PALETTE[1], "")])
    write(svg, "import-memory.svg")


def txbench(data):
    tests = data["tests"]
    conns = data["settings"]["connections"]
    vals = [r["calls_per_s"] for t in tests for r in t["runs"] if r["calls_per_s"] > 0]
    if not vals:
        print("txbench.json has no runs: txbench.svg skipped")
        return
    ylo, yhi = 10 ** math.floor(math.log10(min(vals))), 10 ** math.ceil(math.log10(max(vals)))
    width, height = 60 + 80 * len(tests) + 40, 420
    svg = svg_doc(width, height, f"tx-benchmark shapes against txmap: req/s at {', '.join(map(str, conns))} "
                  f"clients, {data['settings']['seconds_each']:g} s each")
    p = Panel(svg, 70, 50, 80 * len(tests), 300, (0, len(tests)), (ylo, yhi), ylog=True, ylabel="req/s (log)")
    p.yticks(log_ticks(ylo, yhi))
    bw = 0.8 / len(conns)
    for i, t in enumerate(tests):
        by = {r["connections"]: r for r in t["runs"]}
        for j, c in enumerate(conns):
            if c in by and by[c]["calls_per_s"] > 0:
                x0 = i + 0.1 + j * bw
                p.bar(x0, x0 + bw * 0.9, by[c]["calls_per_s"], PALETTE[j % len(PALETTE)])
        svg.append(f'<text x="{p.px(i + 0.5):.1f}" y="{p.y + p.h + 16}" text-anchor="middle">{t["test"]}</text>')
    x = 70
    for j, c in enumerate(conns):
        svg.append(f'<rect x="{x}" y="{height - 24}" width="12" height="12" fill="{PALETTE[j % len(PALETTE)]}"/>')
        svg.append(f'<text x="{x + 18}" y="{height - 14}">{c} client{"s" if c > 1 else ""}</text>')
        x += 100
    write(svg, "txbench.svg")


def soak(data):
    """RSS and anonymous memory, sampled each minute of the one-hour soak
    (bench/adversarial.py --seconds 3600), against the memory limit."""
    pts = data["samples"]
    width, height = 760, 360
    svg = svg_doc(width, height, f"Soak: {data['seconds'] / 60:.0f} min of mixed traffic by "
                  f"{data['connections']} clients, memory each minute (limit {data['limit_bytes'] >> 20} MiB)")
    tmax = max(1, max(q["t"] for q in pts) / 60)
    ymax = data["limit_bytes"] / 2**20 * 1.1
    p = Panel(svg, 70, 50, width - 110, height - 110, (0, tmax), (0, ymax),
              xlabel="minutes", ylabel="MiB")
    p.xticks(nice_ticks(0, tmax))
    p.yticks(nice_ticks(0, ymax))
    p.line([(0, data["limit_bytes"] / 2**20), (tmax, data["limit_bytes"] / 2**20)], "#999", dash="6,4", width=1)
    p.line([(q["t"] / 60, q["rss"] / 2**20) for q in pts], PALETTE[0])
    p.line([(q["t"] / 60, q["anon"] / 2**20) for q in pts], PALETTE[1])
    legend(svg, 70, height - 12, [("RSS", PALETTE[0], ""), ("anonymous", PALETTE[1], ""), ("limit", "#999", "6,4")])
    write(svg, "soak.svg")


def scan(path):
    import scan_chart

    DOCS.mkdir(parents=True, exist_ok=True)
    scan_chart.main(str(path), str(DOCS / "scan.svg"))
    print(f"wrote {DOCS / 'scan.svg'}")


def cold_pass(data, name="cold-pass.svg", source="matrix-16.json"):
    """Major faults and the editions' page cache over the cold pass, one
    line per configuration (first repeat, one process): issue 16's before
    (advice random) and after."""
    runs = [r for r in data["runs"] if r.get("memory_series") and r.get("repeat", 1) == 1
            and r["processes"] == 1]
    configs = [k for k in data["configs"] if any(r["config"] == k for r in runs)]
    colours = {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(configs)}

    def series(r):
        marks = {m["label"]: m["t"] for m in r["memory_series"]["marks"]}
        t0, t1 = marks.get("cold start"), marks.get("cold end")
        if t0 is None or t1 is None:
            return []
        smp = [x for x in r["memory_series"]["samples"] if t0 - 1 <= x["t"] <= t1 + 1]
        if not smp or any("majflt" not in p for x in smp for p in x["procs"]):
            return []
        f0 = sum(p["majflt"] for p in smp[0]["procs"])
        return [(max(0.0, x["t"] - t0), sum(p["majflt"] for p in x["procs"]) - f0,
                 (x.get("page_cache") or 0) / MIB) for x in smp]

    lines = {r["config"]: series(r) for r in runs}
    lines = {k: v for k, v in lines.items() if v}
    if not lines:
        print(f"{source} has no fault samples: {name} skipped")
        return
    xmax = max(t for v in lines.values() for t, _, _ in v) or 1
    fmax = max(f for v in lines.values() for _, f, _ in v) or 1
    cmax = max(c for v in lines.values() for _, _, c in v) or 1
    xt = nice_ticks(0, xmax)
    pw, ph, ml, mt, gap = 420, 260, 80, 60, 90
    width, height = ml + 2 * (pw + gap), mt + ph + 100
    svg = svg_doc(width, height, "The cold pass after a restart, one server, three editions mapped "
                  "(first repeat): major faults and the editions' page cache")
    for i, (title, idx, ymax, ylabel) in enumerate([
            ("major faults since the pass began", 1, fmax, "faults"),
            ("editions' page cache", 2, cmax, "MiB")]):
        yt = nice_ticks(0, ymax)
        p = Panel(svg, ml + i * (pw + gap), mt, pw, ph, (0, xt[-1]), (0, yt[-1]), title=title,
                  xlabel="seconds since the cold pass began", ylabel=ylabel)
        p.xticks(xt)
        p.yticks(yt)
        for k, pts in lines.items():
            p.line([(t, v[idx - 1]) for t, *v in pts], colours[k])
    legend(svg, ml, height - 12, [(data["configs"][k], colours[k], "") for k in lines])
    write(svg, name)


def cold_pass_2(data):
    """[`cold_pass`] of the format 2.0 files."""
    cold_pass(data, "cold-pass-2.svg", "matrix-16-v2.json")


def cold_pass_3(data):
    """[`cold_pass`] of the 2.0 files laid out with `ComponentMembers` and
    `DescendantsIndex` among the hot sections."""
    cold_pass(data, "cold-pass-3.svg", "matrix-16-v2-members.json")


def main():
    jobs = [
        ("matrix.json", [matrix_latency, matrix_memory]),
        ("matrix-16.json", [cold_pass]),
        ("matrix-16-v2.json", [cold_pass_2]),
        ("matrix-16-v2-members.json", [cold_pass_3]),
        ("import-memory.json", [import_memory]),
        ("txbench.json", [txbench]),
        ("issue14-soak.json", [soak]),
    ]
    for name, charts in jobs:
        path = RESULTS / name
        if not path.exists():
            print(f"{path}: absent, skipping {', '.join(c.__name__.replace('_', '-') + '.svg' for c in charts)}")
            continue
        data = json.loads(path.read_text())
        for chart in charts:
            chart(data)
    if (RESULTS / "scan.json").exists():
        scan(RESULTS / "scan.json")
    else:
        print(f"{RESULTS / 'scan.json'}: absent, skipping scan.svg")


if __name__ == "__main__":
    main()
