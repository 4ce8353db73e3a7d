#!/usr/bin/env python3
"""Draws the scan crossover (bench/results/scan.json) as an SVG: GB/s
against file size, one line per arm, a cold panel and a warm panel.
Medians, with each run's range as a vertical bar. No plotting library.

    python3 bench/scan_chart.py bench/results/scan.json docs/scan.svg
"""
import json
import math
import sys

ARMS = ["read", "mmap", "mmap-seq", "mmap-willneed", "mmap-populate"]
COLOURS = {
    "read": "#000000",
    "mmap": "#1f77b4",
    "mmap-seq": "#2ca02c",
    "mmap-willneed": "#d62728",
    "mmap-populate": "#9467bd",
}
DASH = {"read": "", "mmap": "", "mmap-seq": "6 3", "mmap-willneed": "2 3", "mmap-populate": "8 3 2 3"}


def human(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            v = n / div
            return f"{v:.0f} {unit}" if abs(v - round(v)) < 0.05 else f"{v:.1f} {unit}"
    return f"{n} B"


def nice_max(v):
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def main(src, dst):
    data = json.load(open(src))
    cells = data["medians"]
    sizes = sorted({c["size"] for c in cells})
    temps = [t for t in ("cold", "warm") if any(c["temperature"] == t for c in cells)]
    arms = [a for a in ARMS if any(c["arm"] == a for c in cells)]
    pw, ph = 420, 300  # panel plot area
    ml, mr, mt, mb = 60, 20, 50, 60
    gap = 40
    legend_h = 30
    width = ml + len(temps) * pw + (len(temps) - 1) * (gap + ml) + mr
    height = mt + ph + mb + legend_h
    lo, hi = math.log2(sizes[0]), math.log2(sizes[-1])
    span = hi - lo or 1.0

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    m = data.get("machine", {})
    title = (
        f"Newline scan, GB/s by file size ({m.get('cpus', '?')} vCPU, "
        f"{human(m.get('mem_total', 0))} RAM, Linux {m.get('kernel', '?')}; "
        f"median of {data.get('repeats', '?')})"
    )
    out.append(f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>')
    for i, temp in enumerate(temps):
        x0 = ml + i * (pw + gap + ml)
        y0 = mt
        tc = [c for c in cells if c["temperature"] == temp]
        ymax = nice_max(max(c["gbps_max"] for c in tc))

        def px(size):
            return x0 + (math.log2(size) - lo) / span * pw

        def py(g):
            return y0 + ph - g / ymax * ph

        out.append(f'<text x="{x0 + pw / 2}" y="{y0 - 10}" text-anchor="middle" font-weight="bold">{temp}</text>')
        out.append(f'<rect x="{x0}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
        for k in range(6):
            g = ymax * k / 5
            y = py(g)
            out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + pw}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{g:g}</text>')
        for s in sizes:
            x = px(s)
            out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + ph}" stroke="#eee"/>')
            out.append(f'<text x="{x:.1f}" y="{y0 + ph + 16}" text-anchor="middle">{human(s)}</text>')
        out.append(f'<text x="{x0 + pw / 2}" y="{y0 + ph + 36}" text-anchor="middle">file size (log scale)</text>')
        out.append(
            f'<text x="{x0 - 42}" y="{y0 + ph / 2}" text-anchor="middle" '
            f'transform="rotate(-90 {x0 - 42} {y0 + ph / 2})">GB/s</text>'
        )
        for arm in arms:
            pts = sorted((c["size"], c) for c in tc if c["arm"] == arm)
            if not pts:
                continue
            col = COLOURS[arm]
            for s, c in pts:
                x = px(s)
                out.append(
                    f'<line x1="{x:.1f}" y1="{py(c["gbps_min"]):.1f}" x2="{x:.1f}" '
                    f'y2="{py(c["gbps_max"]):.1f}" stroke="{col}" stroke-opacity="0.5"/>'
                )
                out.append(f'<circle cx="{x:.1f}" cy="{py(c["gbps"]):.1f}" r="3" fill="{col}"/>')
            path = " ".join(f"{px(s):.1f},{py(c['gbps']):.1f}" for s, c in pts)
            dash = f' stroke-dasharray="{DASH[arm]}"' if DASH[arm] else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="2"{dash}/>')
    lx = ml
    ly = height - 12
    for arm in arms:
        col = COLOURS[arm]
        dash = f' stroke-dasharray="{DASH[arm]}"' if DASH[arm] else ""
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 28}" y2="{ly - 4}" stroke="{col}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{lx + 34}" y="{ly}">{arm}</text>')
        lx += 34 + 8 * len(arm) + 30
    out.append("</svg>")
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
