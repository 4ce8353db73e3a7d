#!/usr/bin/env python3
"""Search you can type into (issue 32): every query of
bench/search-queries.tsv as `$expand` with `filter` and count=10 on the
International-scale synthetic edition (mapped, warm), timed in process
through the router (`txmap bench requests`) and over HTTP against
`txmap serve` with 4 keep-alive connections; each query's hit total
beside its p50 and p99. Writes JSON and prints the BENCHMARKS.md table.

    bench/search.py BINARY [--edition FILE --rf2 DIR] [--seconds 3] [--runs 3] [--out FILE.json]

Standard library only. Without --edition the edition is made as
bench/import.sh makes it (bench/out/intl.txmap)."""
import argparse, glob, http.client, json, os, subprocess, sys, tempfile, threading, time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve import free_port  # noqa: E402  (bench/serve.py's)

ap = argparse.ArgumentParser()
ap.add_argument("binary")
ap.add_argument("--edition")
ap.add_argument("--rf2", help="the edition's RF2 folder, for a refset id")
ap.add_argument("--seconds", type=float, default=3)
ap.add_argument("--connections", type=int, default=4)
ap.add_argument("--runs", type=int, default=3, help="each time is the median of the runs' percentiles")
ap.add_argument("--out")
args = ap.parse_args()

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, "bench", "out")
os.makedirs(OUT, exist_ok=True)


def edition():
    if args.edition:
        return args.edition, args.rf2
    ed, rf2 = os.path.join(OUT, "intl.txmap"), os.path.join(OUT, "synth-535000-1")
    if not os.path.isdir(rf2):
        subprocess.run([args.binary, "synth", "--concepts", "535000", "--seed", "1", "--out", rf2], check=True,
                       stdout=subprocess.DEVNULL)
    if not os.path.exists(ed):
        subprocess.run([args.binary, "import", "--rf2", rf2, "--out", ed, "--quiet"], check=True)
    return ed, rf2


def refset_id(rf2):
    f = glob.glob(os.path.join(rf2, "**", "der2_Refset_SimpleSnapshot*"), recursive=True)[0]
    with open(f) as lines:
        next(lines)
        return next(lines).split("\t")[4]


def queries(refset):
    out = []
    for line in open(os.path.join(ROOT, "bench", "search-queries.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        name, params = line.rstrip("\n").split("\t")
        pairs = dict(p.split("=", 1) for p in params.split("&"))
        pairs.setdefault("url", "http://snomed.info/sct?fhir_vs")
        pairs["url"] = pairs["url"].replace("REFSET", refset)
        pairs["count"] = "10"
        out.append((name, pairs, "/r4/ValueSet/$expand?" + urllib.parse.urlencode(pairs, quote_via=urllib.parse.quote)))
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))] if xs else None


def http_run(port, path, seconds, connections):
    """`connections` threads asking `path` over keep-alive for `seconds`."""
    lat, stop = [], time.time() + seconds
    lock = threading.Lock()

    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        while time.time() < stop:
            t = time.perf_counter()
            c.request("GET", path, headers={"Accept": "application/fhir+json"})
            r = c.getresponse()
            r.read()
            mine.append((time.perf_counter() - t) * 1e3)
            if r.status != 200:
                raise SystemExit(f"{path}: {r.status}")
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=client) for _ in range(connections)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return lat


def main():
    ed, rf2 = edition()
    qs = queries(refset_id(rf2))
    # In process, through the router: `txmap bench requests`.
    work = tempfile.mkdtemp()
    inproc = os.path.join(work, "requests.json")
    cmd = [args.binary, "bench", "requests", "--edition", ed, "--calls", "2000",
           "--max-seconds", str(args.seconds), "--out", inproc]
    for _, _, path in qs:
        cmd += ["--request", path]
    in_runs = []
    for _ in range(args.runs):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        in_runs.append({r["request"]: r for r in json.load(open(inproc))["requests"]})
    # Over HTTP: the server mapped and prewarmed, as in production.
    port = free_port()
    cfg = os.path.join(work, "txmap.toml")
    with open(cfg, "w") as f:
        f.write(f'listen = "127.0.0.1:{port}"\neditions = [{json.dumps(os.path.abspath(ed))}]\n'
                f'[snomed]\nload = "mmap"\nprewarm = [{json.dumps(os.path.basename(ed))}]\n')
    server = subprocess.Popen([args.binary, "serve", "--config", cfg], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(1200):
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/status")
                s = json.loads(c.getresponse().read())
                # Prewarmed and verified: a file of more than 64 MiB is
                # verified in the background and answers 503 until then.
                if all((e["prewarm"] is None or e["prewarm"]["done"])
                       and e["verification"]["state"] in ("verified", "trusted") for e in s["editions"]):
                    break
            except OSError:
                pass
            time.sleep(0.2)
        rows = []
        for name, pairs, path in qs:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", path, headers={"Accept": "application/fhir+json"})
            r = c.getresponse()
            body = json.loads(r.read())
            if r.status != 200:
                # Refused (a too-costly filter): reported, not timed.
                rows.append({"name": name, "filter": pairs["filter"], "url": pairs["url"],
                             "activeOnly": pairs.get("activeOnly"), "status": r.status,
                             "refusal": body["issue"][0]["details"]["text"]})
                continue
            total = body["expansion"].get("total")
            runs = [http_run(port, path, args.seconds, args.connections) for _ in range(args.runs)]
            med = lambda xs: sorted(xs)[len(xs) // 2]
            rows.append({
                "name": name,
                "status": 200,
                "filter": pairs["filter"],
                "url": pairs["url"],
                "activeOnly": pairs.get("activeOnly"),
                "total": total,
                "runs": args.runs,
                "inProcess": {"calls": sum(run[path]["calls"] for run in in_runs),
                              # The first call of a fresh process: a scope
                              # set is built there, then kept.
                              "first_ms": med([run[path]["first_us"] for run in in_runs]) / 1e3,
                              "p50_ms": med([run[path]["p50_us"] for run in in_runs]) / 1e3,
                              "p99_ms": med([run[path]["p99_us"] for run in in_runs]) / 1e3},
                "http": {"connections": args.connections, "calls": sum(len(x) for x in runs),
                         "p50_ms": med([pct(x, 50) for x in runs]), "p99_ms": med([pct(x, 99) for x in runs])},
            })
    finally:
        server.terminate()
        server.wait()
    result = {"edition": os.path.basename(ed), "seconds": args.seconds, "queries": rows}
    if args.out:
        json.dump(result, open(args.out, "w"), indent=1)
    print("| query | filter | scope | hits | in process: first call ms | in process p50 / p99 ms | HTTP p50 / p99 ms |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in rows:
        scope = "" if r["url"].endswith("?fhir_vs") else r["url"].split("fhir_vs=", 1)[1]
        if r["activeOnly"]:
            scope = (scope + " active").strip()
        if r["status"] != 200:
            print(f"| {r['name']} | `{r['filter']}` | {('`' + scope + '`') if scope else ''} | "
                  f"refused ({r['status']}) | | | |")
            continue
        print(f"| {r['name']} | `{r['filter']}` | {('`' + scope + '`') if scope else ''} | {r['total']:,} | "
              f"{r['inProcess']['first_ms']:.2f} | "
              f"{r['inProcess']['p50_ms']:.2f} / {r['inProcess']['p99_ms']:.2f} | "
              f"{r['http']['p50_ms']:.2f} / {r['http']['p99_ms']:.2f} |")


main()
