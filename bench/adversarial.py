#!/usr/bin/env python3
"""An adversarial load (issue 14): big uploads, expensive expansions and
cheap lookups at once, against a server it starts on the HL7 test edition
with `[memory] limit = "512MiB"`. Every SAMPLE seconds it records the
server's RSS and anonymous memory; at the end it reports the peak against
the limit, the cheap lookups' success rate and latency percentiles, and
then, after the load, how soon every kind of request is answered again.

    bench/adversarial.py BINARY [--seconds 60] [--connections 50] [--sample 0.1] [--out FILE.json]

The one-hour soak is the same with `--seconds 3600 --connections 8
--sample 60`. Standard library only; the edition is bench/out/hl7.txmap
(bench/ips.sh makes it)."""
import argparse, http.client, json, os, random, subprocess, tempfile, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("binary")
ap.add_argument("--seconds", type=float, default=60)
ap.add_argument("--connections", type=int, default=50)
ap.add_argument("--sample", type=float, default=0.1)
ap.add_argument("--port", type=int, default=8093)
ap.add_argument("--out")
args = ap.parse_args()

EDITION = os.path.abspath(os.path.join(os.path.dirname(__file__), "out", "hl7.txmap"))
SCT = "http://snomed.info/sct"
LIMIT = 512 << 20
work = tempfile.mkdtemp()
cfg = os.path.join(work, "txmap.toml")
open(cfg, "w").write(f'listen = "127.0.0.1:{args.port}"\neditions = ["{EDITION}"]\n'
                     '[memory]\nlimit = "512MiB"\n[limits]\nrequest_seconds = 5\n')
server = subprocess.Popen([args.binary, "serve", "--config", cfg],
                          stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "log"), "w"))


def memory():
    d = {}
    for line in open(f"/proc/{server.pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon"):
            d[k] = int(v.split()[0]) * 1024
    return d


def call(conn, method, path, body=None):
    headers = {"Content-Type": "application/fhir+json"} if body else {}
    conn.request(method, path, body=body, headers=headers)
    r = conn.getresponse()
    r.read()
    return r.status


for _ in range(200):
    try:
        c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=5)
        if call(c, "GET", "/health") == 200:
            break
    except Exception:
        time.sleep(0.05)

# Concepts of the test edition for the cheap calls.
c = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
c.request("GET", f"/r4/ValueSet/$expand?url={SCT}?fhir_vs&count=200")
codes = [x["code"] for x in json.loads(c.getresponse().read())["expansion"]["contains"]]
cs = {"resourceType": "CodeSystem", "url": "http://example.org/big", "status": "active",
      "content": "complete", "concept": [{"code": f"c{i}"} for i in range(100_000)]}
upload = json.dumps({"resourceType": "Parameters", "parameter": [
    {"name": "url", "valueUri": "http://example.org/bigvs"},
    {"name": "system", "valueUri": "http://example.org/big"}, {"name": "code", "valueCode": "c5"},
    {"name": "tx-resource", "resource": cs},
    {"name": "tx-resource", "resource": {"resourceType": "ValueSet", "url": "http://example.org/bigvs",
     "status": "active", "compose": {"include": [{"system": "http://example.org/big"}]}}}]}).encode()
EXPENSIVE = [f"/r4/ValueSet/$expand?url={SCT}?fhir_vs=ecl/%3C%20138875005%20%3A%20*%20%3D%20*",
             f"/r4/ValueSet/$expand?url={SCT}?fhir_vs&filter=a",
             f"/r4/ValueSet/$expand?url={SCT}?fhir_vs&count=1000"]

lock = threading.Lock()
lookups = []      # (ok, seconds)
others = {}       # kind -> {status: n}
samples = []
stop = time.time() + args.seconds


def worker(seed):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
    while time.time() < stop:
        roll = rng.random()
        kind = "upload" if roll < 0.05 else "expensive" if roll < 0.20 else "lookup"
        t0 = time.time()
        try:
            if kind == "upload":
                status = call(conn, "POST", "/r4/ValueSet/$validate-code", upload)
            elif kind == "expensive":
                status = call(conn, "GET", rng.choice(EXPENSIVE))
            else:
                status = call(conn, "GET", f"/r4/CodeSystem/$lookup?system={SCT}&code={rng.choice(codes)}")
        except Exception as e:
            status = type(e).__name__
            conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
        took = time.time() - t0
        with lock:
            if kind == "lookup":
                lookups.append((status == 200, took))
            else:
                d = others.setdefault(kind, {})
                d[str(status)] = d.get(str(status), 0) + 1


def sampler():
    start = time.time()
    while time.time() < stop:
        try:
            m = memory()
            samples.append({"t": round(time.time() - start, 1), "rss": m["VmRSS"], "anon": m["RssAnon"]})
        except Exception:
            pass
        time.sleep(args.sample)


threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.connections)]
threads.append(threading.Thread(target=sampler))
[t.start() for t in threads]
[t.join() for t in threads]
ended = time.time()

# After the load: how soon does every kind of request answer as it should?
probes = [("GET", f"/r4/CodeSystem/$lookup?system={SCT}&code={codes[0]}", None, 200),
          ("GET", f"/r4/ValueSet/$expand?url={SCT}?fhir_vs&count=5", None, 200),
          ("POST", "/r4/ValueSet/$validate-code", upload, 200),
          ("GET", "/r4/metadata", None, 200)]
recovered = None
while time.time() - ended < 30:
    conn = http.client.HTTPConnection("127.0.0.1", args.port, timeout=30)
    try:
        if all(call(conn, m, p, b) == want for m, p, b, want in probes):
            recovered = round(time.time() - ended, 2)
            break
    except Exception:
        pass
    time.sleep(0.25)
alive = server.poll() is None
after = memory() if alive else {}
server.terminate()
server.wait()

lat = sorted(t for ok, t in lookups if ok)


def pct(p):
    return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1e3, 2) if lat else None


peak = max((s["rss"] for s in samples), default=0)
peak_anon = max((s["anon"] for s in samples), default=0)
report = {
    "seconds": args.seconds, "connections": args.connections, "limit_bytes": LIMIT,
    "peak_rss_bytes": peak, "peak_anon_bytes": peak_anon,
    "peak_rss_over_limit": round(peak / LIMIT, 3), "peak_anon_over_limit": round(peak_anon / LIMIT, 3),
    "lookups": len(lookups), "lookup_success": round(sum(ok for ok, _ in lookups) / max(1, len(lookups)), 4),
    "lookup_p50_ms": pct(0.5), "lookup_p99_ms": pct(0.99), "others": others,
    "recovered_after_s": recovered, "alive": alive, "anon_after_bytes": after.get("RssAnon"),
    "samples": samples if args.sample >= 1 else samples[:: max(1, int(1 / args.sample))],
}
text = json.dumps(report, indent=1)
if args.out:
    open(args.out, "w").write(text + "\n")
print(json.dumps({k: v for k, v in report.items() if k != "samples"}))
