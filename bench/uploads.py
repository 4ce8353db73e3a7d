#!/usr/bin/env python3
"""Large uploads under a memory limit (issue 14): a server is started on the
HL7 test edition with `[memory] limit = "512MiB"`; ROUNDS times, CONC
clients at once POST a `ValueSet/$validate-code` whose `tx-resource` is a
CodeSystem of N concepts (1.79 MB of JSON for 100,000). Reports the
answers, the peak RSS (sampled every 10 ms), anonymous memory right after
and at 2, 5, 12 and 20 s, and whether a `$lookup` answers afterwards.

    bench/uploads.py BINARY [N=100000] [CONC=4] [ROUNDS=2] > result.json

Standard library only. The edition is bench/out/hl7.txmap (bench/ips.sh
makes it)."""
import json, os, subprocess, sys, tempfile, threading, time, urllib.error, urllib.request

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
CONC = int(sys.argv[3]) if len(sys.argv) > 3 else 4
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 2
PORT = 8092
EDITION = os.path.abspath(os.path.join(os.path.dirname(__file__), "out", "hl7.txmap"))

work = tempfile.mkdtemp()
cfg = os.path.join(work, "txmap.toml")
open(cfg, "w").write(f'listen = "127.0.0.1:{PORT}"\neditions = ["{EDITION}"]\n[memory]\nlimit = "512MiB"\n')
cs = {"resourceType": "CodeSystem", "url": "http://example.org/big", "status": "active",
      "content": "complete", "concept": [{"code": f"c{i}"} for i in range(N)]}
vs = {"resourceType": "ValueSet", "url": "http://example.org/bigvs", "status": "active",
      "compose": {"include": [{"system": "http://example.org/big"}]}}
body = json.dumps({"resourceType": "Parameters", "parameter": [
    {"name": "url", "valueUri": "http://example.org/bigvs"},
    {"name": "system", "valueUri": "http://example.org/big"},
    {"name": "code", "valueCode": "c5"},
    {"name": "tx-resource", "resource": cs},
    {"name": "tx-resource", "resource": vs}]}, separators=(",", ":")).encode()

p = subprocess.Popen([BIN, "serve", "--config", cfg], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
base = f"http://127.0.0.1:{PORT}"


def status():
    d = {}
    for line in open(f"/proc/{p.pid}/status"):
        k, _, v = line.partition(":")
        if k in ("VmRSS", "RssAnon"):
            d[k] = int(v.split()[0]) // 1024
    return d


for _ in range(200):
    try:
        urllib.request.urlopen(base + "/health")
        break
    except Exception:
        time.sleep(0.05)
codes = []


def one():
    req = urllib.request.Request(base + "/r4/ValueSet/$validate-code", data=body,
                                 headers={"Content-Type": "application/fhir+json"})
    try:
        with urllib.request.urlopen(req) as r:
            codes.append(r.status)
    except urllib.error.HTTPError as e:
        codes.append(e.code)
    except Exception as e:
        codes.append(type(e).__name__ + ": " + str(e)[:40])


start = status()
peak = [0]
stop = False


def sample():
    while not stop:
        try:
            peak[0] = max(peak[0], status()["VmRSS"])
        except Exception:
            pass
        time.sleep(0.01)


sampler = threading.Thread(target=sample)
sampler.start()
t0 = time.time()
for _ in range(ROUNDS):
    ts = [threading.Thread(target=one) for _ in range(CONC)]
    [t.start() for t in ts]
    [t.join() for t in ts]
elapsed = time.time() - t0
stop = True
sampler.join()
done = time.time()
anon = {}
for s in [0, 2, 5, 12, 20]:
    while time.time() - done < s:
        time.sleep(0.05)
    anon[f"{s}s"] = status()["RssAnon"]
try:
    urllib.request.urlopen(base + "/r4/CodeSystem/$lookup?system=http://snomed.info/sct&code=138875005")
    lookup = 200
except urllib.error.HTTPError as e:
    lookup = e.code
p.terminate()
p.wait()
print(json.dumps({"binary": BIN, "body_bytes": len(body), "codes": codes, "seconds": round(elapsed, 2),
                  "start_rss_mib": start["VmRSS"], "peak_rss_mib": peak[0], "anon_mib_after": anon,
                  "lookup_after": lookup}))
