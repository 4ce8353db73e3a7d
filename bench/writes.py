#!/usr/bin/env python3
"""Stored resources: how long a write takes, and what it costs the reads
after it (issue 33).

Starts `txmap serve` with the FHIR packages given (each write publishes a
next served set: the stored resources' index is rebuilt, the packages'
are shared), a store in a temporary folder and a write token, then:

- PUTs `--writes` ValueSets one after another (each over a new
  connection, as a client of a terminology authoring tool would), timing
  each answer — the SQLite commit (WAL, synchronous FULL), the stored
  index rebuilt and the set swapped;
- after each of a few more writes, times one `$expand` of a stored value
  set whose code system is a package's (a write that re-indexed the
  packages would make it parse that code system again), and the same
  `$expand` again with no write between.

Medians of `--runs` runs; JSON to `--out`.

    python3 bench/writes.py target/release/txmap \\
        --package ../shared/fhir-packages/hl7.terminology.r4-7.0.1.tgz \\
        --package ../shared/fhir-packages/hl7.fhir.r5.core-5.0.0.tgz \\
        --package ../shared/fhir-packages/hl7.fhir.uv.ips-2.0.0.tgz \\
        --out bench/results/issue33-writes.json
"""

import argparse
import hashlib
import http.client
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(port, token, method, path, body=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": "Bearer " + token}
    if body is not None:
        headers["Content-Type"] = "application/fhir+json"
    c.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def value_set(i, system):
    return {
        "resourceType": "ValueSet", "id": f"w{i}", "url": f"http://example.org/vs/w{i}",
        "version": "1", "status": "active",
        "compose": {"include": [{"system": system}]},
    }


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def one_run(txmap, packages, writes, system):
    with tempfile.TemporaryDirectory() as d:
        token = secrets.token_hex(32)
        port = free_port()
        with open(os.path.join(d, "txmap.toml"), "w") as f:
            f.write(f'listen = "127.0.0.1:{port}"\n')
            f.write("packages = [" + ", ".join(json.dumps(os.path.abspath(p)) for p in packages) + "]\n")
            f.write('[store]\npath = "resources.sqlite"\n')
            f.write(f'[auth]\ntokens = [{{ name = "bench", sha256 = "{hashlib.sha256(token.encode()).hexdigest()}", scopes = ["write"] }}]\n')
        server = subprocess.Popen([txmap, "serve", "--config", os.path.join(d, "txmap.toml")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    if call(port, token, "GET", "/readyz")[0] == 200:
                        break
                except OSError:
                    pass
                time.sleep(0.05)
            put = []
            for i in range(writes):
                t = time.perf_counter()
                status, _ = call(port, token, "PUT", f"/r4/ValueSet/w{i}", value_set(i, system))
                put.append((time.perf_counter() - t) * 1e3)
                assert status in (200, 201), status
            after, again = [], []
            for _ in range(9):
                call(port, token, "PUT", "/r4/ValueSet/w0", value_set(0, system))
                for out in (after, again):
                    t = time.perf_counter()
                    status, _ = call(port, token, "GET", "/r4/ValueSet/$expand?url=http://example.org/vs/w0&count=10")
                    out.append((time.perf_counter() - t) * 1e3)
                    assert status == 200, status
            return {
                "put_p50_ms": statistics.median(put), "put_p90_ms": pct(put, 0.9), "put_max_ms": max(put),
                "expand_after_write_p50_ms": statistics.median(after),
                "expand_again_p50_ms": statistics.median(again),
            }
        finally:
            server.terminate()
            server.wait()


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("txmap")
    a.add_argument("--package", action="append", default=[])
    a.add_argument("--writes", type=int, default=200)
    a.add_argument("--runs", type=int, default=3)
    a.add_argument("--system", default="http://terminology.hl7.org/CodeSystem/v3-ActCode",
                   help="the package code system the written value sets include")
    a.add_argument("--out")
    args = a.parse_args()
    runs = [one_run(args.txmap, args.package, args.writes, args.system) for _ in range(args.runs)]
    result = {
        "packages": [os.path.basename(p) for p in args.package],
        "writes_per_run": args.writes,
        "runs": runs,
        "median": {k: statistics.median(r[k] for r in runs) for k in runs[0]},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())
