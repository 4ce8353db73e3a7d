#!/usr/bin/env python3
"""Every answer right or refused, under any load (issue 31): the
adversarial mix and the fairness targets, each against a server this
starts (release build) on the HL7 test edition, the suite's LOINC subset
and the IPS, THO and R5 core packages, with `[memory] limit = "512MiB"`.

    bench/issue31.py BINARY [--only mix,lanes,search,health,expand] [--seconds 60] [--out FILE.json]

Scenarios (targets from the issue):

  mix     8 connections for SECONDS of a 40,000-coding CodeableConcept,
          CodeSystem?_count=1000, a 9,000-code upload and expand, a
          12-deep diamond, a 20,000-validation batch and a 1 MB code; a
          probe client (another address) asks a cheap $lookup every 50 ms.
          Memory sampled every 0.1 s. Target: peak anonymous <= limit +
          10%, no sample above it, >= 99% of probes 200 within 1 s.
  lanes   two clients (127.0.0.2, .3) each keep 2 of the heaviest
          requests running; a third (.4) asks small expansions and
          validations. Target: its p99 <= 100 ms.
  search  7 connections of CodeSystem?_count=1000, from 7 clients
          (search) or one (search1, as the issue's probe); a probe
          $lookup from another. Target: p99 <= 5 ms.
  health  520 half-sent requests renewed every 9.5 s, then 5,000 idle
          connections; /health from a fresh connection every 100 ms.
          Target: <= 100 ms under both.
  expand  a 60-deep diamond down to all of the test edition; 100,000
          uploaded codes expanded. Target: <= 100 ms and <= 0.5 s.

Standard library only. The edition, LOINC file and packages are made from
../shared (bench/out/ holds what is built)."""
import argparse, sys, http.client, json, os, random, resource, socket, statistics, subprocess
import tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve import free_port  # noqa: E402  (bench/serve.py's)

ap = argparse.ArgumentParser()
ap.add_argument("binary")
ap.add_argument("--only", default="mix,lanes,search,search1,health,expand")
ap.add_argument("--seconds", type=float, default=60)
ap.add_argument("--out")
args = ap.parse_args()

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SHARED = os.path.join(ROOT, "..", "shared")
SUITE = os.path.join(SHARED, "tx-ecosystem", "tx-source")
PACKAGES = [os.path.join(SHARED, "fhir-packages", p) for p in
            ("hl7.fhir.uv.ips-2.0.0.tgz", "hl7.terminology.r4-7.0.1.tgz", "hl7.fhir.r5.core-5.0.0.tgz")]
OUT = os.path.join(ROOT, "bench", "out")
SCT = "http://snomed.info/sct"
LIMIT = 512 << 20
os.makedirs(OUT, exist_ok=True)

# More descriptors than 5,000 idle connections need.
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))


def build():
    ed, loinc = os.path.join(OUT, "hl7.txmap"), os.path.join(OUT, "loinc-suite.txmap")
    if not os.path.exists(ed):
        subprocess.run([args.binary, "import", "--rf2", os.path.join(SUITE, "snomed"), "--out", ed, "--quiet"], check=True)
    if not os.path.exists(loinc):
        subprocess.run([args.binary, "import", "--loinc", os.path.join(SUITE, "loinc"), "--loinc-version", "2.82",
                        "--out", loinc, "--quiet"], check=True)
    return ed, loinc


class Server:
    def __init__(self, extra="", limit=True):
        ed, loinc = build()
        self.port = free_port()
        self.work = tempfile.mkdtemp()
        cfg = os.path.join(self.work, "txmap.toml")
        packages = ", ".join(json.dumps(p) for p in PACKAGES)
        open(cfg, "w").write(f'listen = "0.0.0.0:{self.port}"\neditions = ["{ed}", "{loinc}"]\n'
                             f'packages = [{packages}]\n' + ('[memory]\nlimit = "512MiB"\n' if limit else '') + extra)
        self.proc = subprocess.Popen([args.binary, "serve", "--config", cfg], stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(self.work, "log"), "w"))
        for _ in range(600):
            try:
                if call(conn(self.port), "GET", "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        c = conn(self.port)
        c.request("GET", f"/r4/ValueSet/$expand?url={SCT}?fhir_vs&count=200")
        self.codes = [x["code"] for x in json.loads(c.getresponse().read())["expansion"]["contains"]]

    def memory(self):
        d = {}
        for line in open(f"/proc/{self.proc.pid}/status"):
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon"):
                d[k] = int(v.split()[0]) * 1024
        return d

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def conn(port, source="127.0.0.1", timeout=30):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))


def call(c, method, path, body=None):
    headers = {"Content-Type": "application/fhir+json"} if body else {}
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    return r.status, data


def params(*ps):
    return json.dumps({"resourceType": "Parameters", "parameter": list(ps)}).encode()


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))] * 1e3, 2) if xs else None


def diamond(depth, bottom):
    out = []
    for level in range(depth):
        for side in "ab":
            inc = ([{"valueSet": [f"http://example.org/d{level + 1}a", f"http://example.org/d{level + 1}b"]}]
                   if level + 1 < depth else [bottom])
            out.append({"name": "tx-resource", "resource": {"resourceType": "ValueSet", "status": "active",
                        "url": f"http://example.org/d{level}{side}", "compose": {"include": inc}}})
    return out


def upload(n):
    cs = {"resourceType": "CodeSystem", "url": "http://example.org/big", "status": "active",
          "content": "complete", "concept": [{"code": f"c{i}"} for i in range(n)]}
    vs = {"resourceType": "ValueSet", "url": "http://example.org/bigvs", "status": "active",
          "compose": {"include": [{"system": "http://example.org/big"}]}}
    return params({"name": "url", "valueUri": "http://example.org/bigvs"},
                  {"name": "tx-resource", "resource": cs}, {"name": "tx-resource", "resource": vs})


def mix():
    s = Server("[limits]\nrequest_seconds = 10\n")
    codes = s.codes
    cc = params({"name": "url", "valueUri": f"{SCT}?fhir_vs"},
                {"name": "codeableConcept", "valueCodeableConcept": {"coding": [
                    {"system": SCT, "code": str(1_000_000_000_017 + i * 1000)} for i in range(40_000)]}})
    batch = params({"name": "url", "valueUri": f"{SCT}?fhir_vs"},
                   *[{"name": "validation", "resource": {"resourceType": "Parameters", "parameter": [
                       {"name": "coding", "valueCoding": {"system": SCT, "code": codes[i % len(codes)]}}]}}
                     for i in range(20_000)])
    dia = params({"name": "url", "valueUri": "http://example.org/d0a"},
                 *diamond(12, {"system": SCT, "filter": [{"property": "concept", "op": "is-a", "value": "138875005"}]}))
    big_code = params({"name": "url", "valueUri": SCT}, {"name": "code", "valueCode": "1" * (1 << 20)})
    work = [("cc40k", "POST", "/r4/ValueSet/$validate-code", cc),
            ("search1000", "GET", "/r4/CodeSystem?_count=1000", None),
            ("upload9k", "POST", "/r4/ValueSet/$expand", upload(9_000)),
            ("diamond12", "POST", "/r4/ValueSet/$expand", dia),
            ("batch20k", "POST", "/r4/ValueSet/$batch-validate-code", batch),
            ("code1mb", "POST", "/r4/CodeSystem/$validate-code", big_code)]
    stop = time.time() + args.seconds
    lock = threading.Lock()
    statuses, probes, samples = {}, [], []

    def worker(i):
        rng = random.Random(i)
        c = conn(s.port)
        while time.time() < stop:
            name, m, p, b = rng.choice(work)
            try:
                st, _ = call(c, m, p, b)
            except Exception as e:
                st = type(e).__name__
                c = conn(s.port)
            with lock:
                statuses.setdefault(name, {}).setdefault(str(st), 0)
                statuses[name][str(st)] += 1

    def prober():
        c = conn(s.port, "127.0.0.9", timeout=5)
        while time.time() < stop:
            t0 = time.time()
            try:
                st, _ = call(c, "GET", f"/r4/CodeSystem/$lookup?system={SCT}&code={random.choice(codes)}")
            except Exception:
                st = None
                c = conn(s.port, "127.0.0.9", timeout=5)
            probes.append((st, time.time() - t0))
            time.sleep(0.05)

    def sampler():
        while time.time() < stop:
            try:
                samples.append(s.memory())
            except Exception:
                pass
            time.sleep(0.1)

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    ts += [threading.Thread(target=prober), threading.Thread(target=sampler)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    alive = s.proc.poll() is None
    s.stop()
    anon = [x["RssAnon"] for x in samples]
    ok = [t for st, t in probes if st == 200 and t <= 1.0]
    return {"seconds": args.seconds, "connections": 8, "limit_bytes": LIMIT,
            "peak_anon_bytes": max(anon), "peak_anon_over_limit": round(max(anon) / LIMIT, 3),
            "samples": len(anon), "samples_above_limit": sum(a > LIMIT for a in anon),
            "peak_rss_bytes": max(x["VmRSS"] for x in samples),
            "probes": len(probes), "probes_200_within_1s": round(len(ok) / max(1, len(probes)), 4),
            "probe_p50_ms": pct([t for st, t in probes if st == 200], 0.5),
            "probe_p99_ms": pct([t for st, t in probes if st == 200], 0.99),
            "statuses": statuses, "alive": alive}


def lanes():
    # No memory limit here: the heavy requests (a 2.7 MB upload each) must
    # run, not be refused for memory, for the lanes to be what is measured.
    s = Server("[limits]\nrequest_seconds = 10\nmax_expansion = 200000\n", limit=False)
    heavy = upload(100_000)
    # How long one heavy request takes alone.
    t0 = time.time()
    st, _ = call(conn(s.port), "POST", "/r4/ValueSet/$expand", heavy)
    alone = time.time() - t0
    stop = time.time() + args.seconds / 2
    small, heavy_times = [], []

    def hog(source):
        c = conn(s.port, source)
        while time.time() < stop:
            t = time.time()
            try:
                call(c, "POST", "/r4/ValueSet/$expand", heavy)
            except Exception:
                c = conn(s.port, source)
            heavy_times.append(time.time() - t)

    inline = {"resourceType": "ValueSet", "url": "http://example.org/small", "status": "active",
              "compose": {"include": [{"system": SCT, "filter": [{"property": "concept", "op": "is-a", "value": "138875005"}]}]}}

    def victim():
        c = conn(s.port, "127.0.0.4")
        rng = random.Random(4)
        while time.time() < stop:
            code = rng.choice(s.codes)
            req = rng.choice([
                ("GET", f"/r4/ValueSet/$expand?url={SCT}?fhir_vs=isa/138875005&count=10", None),
                ("POST", "/r4/ValueSet/$validate-code",
                 params({"name": "valueSet", "resource": inline}, {"name": "system", "valueUri": SCT},
                        {"name": "code", "valueCode": code}))])
            t = time.time()
            try:
                st, _ = call(c, *req)
            except Exception:
                st = None
                c = conn(s.port, "127.0.0.4")
            small.append((st, time.time() - t))
            time.sleep(0.02)

    ts = [threading.Thread(target=hog, args=(src,)) for src in ("127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3")]
    [t.start() for t in ts]
    time.sleep(0.5)
    v = threading.Thread(target=victim)
    v.start()
    [t.join() for t in ts + [v]]
    s.stop()
    times = [t for st, t in small if st == 200]
    return {"heavy": "expand of an uploaded 100,000-code CodeSystem", "heavy_alone_s": round(alone, 3),
            "heavy_under_load_p50_s": round(statistics.median(heavy_times), 3) if heavy_times else None,
            "small": len(small), "small_200": len(times), "small_p50_ms": pct(times, 0.5),
            "small_p99_ms": pct(times, 0.99), "small_max_ms": pct(times, 1.0)}


def search(one_client=False):
    s = Server()
    stop = time.time() + args.seconds / 2
    lookups = []

    def searcher(i):
        source = "127.0.1.1" if one_client else f"127.0.1.{i + 1}"
        c = conn(s.port, source)
        while time.time() < stop:
            try:
                call(c, "GET", "/r4/CodeSystem?_count=1000")
            except Exception:
                c = conn(s.port, source)

    def prober():
        c = conn(s.port, "127.0.0.9")
        while time.time() < stop:
            t = time.time()
            st, _ = call(c, "GET", f"/r4/CodeSystem/$lookup?system={SCT}&code={random.choice(s.codes)}")
            lookups.append((st, time.time() - t))
            time.sleep(0.01)

    ts = [threading.Thread(target=searcher, args=(i,)) for i in range(7)] + [threading.Thread(target=prober)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    s.stop()
    times = [t for st, t in lookups if st == 200]
    statuses = {}
    for st, _ in lookups:
        statuses[str(st)] = statuses.get(str(st), 0) + 1
    return {"lookups": len(lookups), "lookup_statuses": statuses, "lookup_p50_ms": pct(times, 0.5),
            "lookup_p99_ms": pct(times, 0.99)}


def health():
    s = Server()
    out = {}

    def probe(seconds):
        times, failed = [], 0
        end = time.time() + seconds
        while time.time() < end:
            t = time.time()
            try:
                c = conn(s.port, "127.0.0.9", timeout=10)
                st, _ = call(c, "GET", "/health")
                c.close()
                if st == 200:
                    times.append(time.time() - t)
                else:
                    failed += 1
            except Exception:
                failed += 1
            time.sleep(0.1)
        return {"probes": len(times) + failed, "failed": failed, "p50_ms": pct(times, 0.5),
                "p99_ms": pct(times, 0.99), "max_ms": pct(times, 1.0)}

    # 520 half-sent requests, each renewed every 9.5 s.
    stop = threading.Event()

    def slowloris(i):
        while not stop.is_set():
            try:
                sk = socket.create_connection(("127.0.0.1", s.port), timeout=5)
                sk.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            except OSError:
                time.sleep(0.1)
                continue
            stop.wait(9.5)
            sk.close()

    ts = [threading.Thread(target=slowloris, args=(i,)) for i in range(520)]
    [t.start() for t in ts]
    time.sleep(2)
    out["half_sent_520"] = probe(min(20, args.seconds / 3))
    stop.set()
    [t.join() for t in ts]
    # 5,000 idle connections.
    idle = []
    for _ in range(5000):
        try:
            idle.append(socket.create_connection(("127.0.0.1", s.port), timeout=5))
        except OSError:
            break
    out["idle_opened"] = len(idle)
    time.sleep(1)
    out["idle_5000"] = probe(min(20, args.seconds / 3))
    for sk in idle:
        sk.close()
    s.stop()
    return out


def expand():
    # No memory limit here: this measures the engine's speed (the 2.7 MB
    # upload's reservation does not fit beside three packages in 512 MiB).
    s = Server("[limits]\nmax_expansion = 200000\n", limit=False)
    c = conn(s.port)
    dia = params({"name": "url", "valueUri": "http://example.org/d0a"}, *diamond(60, {"system": SCT}))
    up = upload(100_000)
    out = {}
    for name, body in (("diamond60_all_of_the_edition", dia), ("upload_100000", up)):
        times, total = [], None
        for _ in range(6):
            t = time.time()
            st, data = call(c, "POST", "/r4/ValueSet/$expand", body)
            times.append(time.time() - t)
            total = json.loads(data).get("expansion", {}).get("total") if st == 200 else st
        out[name] = {"median_ms": round(statistics.median(times[1:]) * 1e3, 1), "codes": total,
                     "runs_ms": [round(t * 1e3, 1) for t in times[1:]]}
    s.stop()
    return out


report = {}
for name in args.only.split(","):
    print(f"== {name}", flush=True)
    report[name] = {"mix": mix, "lanes": lanes, "search": search, "search1": lambda: search(True),
                    "health": health, "expand": expand}[name]()
    print(json.dumps(report[name]), flush=True)
if args.out:
    open(args.out, "w").write(json.dumps(report, indent=1) + "\n")
