"""Shared helpers of the issue 8 measurement scripts (matrix.py, txbench.py,
import_memory.py): what the kernel says about a process and a file, and a
group of `txmap serve` processes sharing one port.

Why a module: the three scripts must count memory and faults the same way,
or their numbers cannot be compared. Everything here reads /proc or runs
util-linux `fincore`; nothing needs a package beyond the standard library.

- `rollup(pid)`: Rss, Anonymous and file-backed bytes (Rss − Anonymous;
  smaps_rollup has no Shmem line, and these processes map no shared memory
  worth counting) from /proc/PID/smaps_rollup, plus RssAnon/RssFile from
  /proc/PID/status.
- `faults(pid)`: minflt, majflt, utime and stime (clock ticks) from
  /proc/PID/stat (summed over the process's threads by the kernel).
- `page_cache(files)`: each file's bytes in the page cache, by `fincore`;
  counted once however many processes map it.
- `Sampler`: a thread that records `rollup` of every process and the
  files' page cache each INTERVAL seconds, as a time series.
- `ServerGroup`: N `txmap serve --reuse-port` processes on one config; it
  drains their logs (with timestamps) so a chatty server never blocks on a
  full pipe, and says when every process is listening and /health answers.
"""
import json
import math
import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TXMAP = Path(os.environ.get("TXMAP", ROOT / "target" / "release" / "txmap"))
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kib_fields(text):
    out = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if len(parts) == 2 and parts[1] == "kB":
            out[key] = int(parts[0]) * 1024
    return out


def rollup(pid):
    """Memory of one process in bytes, or None once it has exited."""
    try:
        r = _kib_fields(Path(f"/proc/{pid}/smaps_rollup").read_text())
        s = _kib_fields(Path(f"/proc/{pid}/status").read_text())
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    rss, anon = r.get("Rss", 0), r.get("Anonymous", 0)
    return {
        "rss": rss,
        "anonymous": anon,
        "file": rss - anon,
        "pss_file": r.get("Pss_File"),
        "rss_anon": s.get("RssAnon"),
        "rss_file": s.get("RssFile"),
        "vm_hwm": s.get("VmHWM"),
    }


def faults(pid):
    """Faults and CPU time of one process (all its threads)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    # The command name is in parentheses and may hold spaces: split after it.
    fields = text[text.rindex(")") + 2:].split()
    # fields[0] is field 3 (state) of proc(5).
    return {
        "minflt": int(fields[10 - 3]),
        "majflt": int(fields[12 - 3]),
        "cpu_s": (int(fields[14 - 3]) + int(fields[15 - 3])) / CLK_TCK,
    }


def fault_delta(before, after):
    return {k: round(after[k] - before[k], 3) for k in before}


def page_cache(files):
    """Bytes of each file in the page cache (util-linux fincore)."""
    if not files:
        return {}
    out = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--raw", "--output", "RES,FILE", *map(str, files)],
        check=True, capture_output=True, text=True,
    ).stdout
    result = {}
    for line in out.splitlines():
        res, _, name = line.partition(" ")
        result[name] = int(res)
    return result


def evict(files):
    """Drops each file's clean, unmapped pages from the page cache
    (posix_fadvise DONTNEED): dropping the whole cache is not permitted
    here, and this is all a cold run needs."""
    for f in files:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


class Sampler(threading.Thread):
    """Samples every process of `pids` (a list, read at each tick) and the
    files' page cache each `interval` seconds until `stop()`."""

    def __init__(self, pids, files=(), interval=1.0, status=False):
        super().__init__(daemon=True)
        self.pids, self.files, self.interval, self.status = pids, list(files), interval, status
        self.samples = []
        self.marks = []
        self._halt = threading.Event()
        self.t0 = time.monotonic()

    def mark(self, label):
        """Notes an event (a pass starting, a stage) on the time line."""
        self.marks.append({"t": round(time.monotonic() - self.t0, 3), "label": label})

    def sample(self):
        t = round(time.monotonic() - self.t0, 3)
        procs = []
        for pid in list(self.pids):
            m = rollup(pid)
            if m is not None:
                try:
                    f = faults(pid)
                    m["majflt"], m["minflt"] = f["majflt"], f["minflt"]
                except (FileNotFoundError, ProcessLookupError, PermissionError):
                    pass
                procs.append({"pid": pid, **m})
        entry = {"t": t, "procs": procs}
        if self.files:
            try:
                entry["page_cache"] = sum(page_cache(self.files).values())
            except (subprocess.CalledProcessError, OSError):
                entry["page_cache"] = None
        self.samples.append(entry)

    def run(self):
        next_tick = time.monotonic()
        while not self._halt.is_set():
            self.sample()
            next_tick += self.interval
            self._halt.wait(max(0.0, next_tick - time.monotonic()))

    def stop(self):
        self._halt.set()
        self.join()
        self.sample()
        return {"interval_s": self.interval, "samples": self.samples, "marks": self.marks}


def write_config(path, port, files, load="read", prewarm=(), read=(), prewarm_hot=(), advice=None):
    lines = [f'listen = "127.0.0.1:{port}"', "editions = [" + ", ".join(f'"{f}"' for f in files) + "]",
             "[snomed]", f'load = "{load}"']
    if advice:
        lines.append(f'advice = "{advice}"')
    if prewarm:
        lines.append("prewarm = [" + ", ".join(f'"{p}"' for p in prewarm) + "]")
    if prewarm_hot:
        lines.append("prewarm_hot = [" + ", ".join(f'"{p}"' for p in prewarm_hot) + "]")
    if read:
        lines.append("read = [" + ", ".join(f'"{p}"' for p in read) + "]")
    Path(path).write_text("\n".join(lines) + "\n")


def get_json(url, timeout=10):
    return json.loads(urllib.request.urlopen(url, timeout=timeout).read())


class ServerGroup:
    """N `txmap serve --reuse-port` processes on one config file."""

    def __init__(self, config, port, processes, log_level="info"):
        self.port, self.url = port, f"http://127.0.0.1:{port}"
        env = dict(os.environ, TXMAP_LOG=log_level, NO_COLOR="1")
        self.t0 = time.monotonic()
        self.procs = [
            subprocess.Popen([str(TXMAP), "serve", "--config", str(config), "--reuse-port"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
            for _ in range(processes)
        ]
        self.logs = [[] for _ in self.procs]
        self.listening = [threading.Event() for _ in self.procs]
        self.listening_s = [None for _ in self.procs]
        self._drains = [threading.Thread(target=self._drain, args=(i,), daemon=True) for i in range(processes)]
        for d in self._drains:
            d.start()

    @property
    def pids(self):
        return [p.pid for p in self.procs]

    def _drain(self, i):
        for line in self.procs[i].stderr:
            t = time.monotonic() - self.t0
            self.logs[i].append((round(t, 3), line.rstrip("\n")))
            if "listening on" in line and not self.listening[i].is_set():
                self.listening_s[i] = t
                self.listening[i].set()

    def wait_ready(self, timeout=300):
        """Seconds from spawn until every process logged "listening on" and
        /health answers 200."""
        deadline = time.monotonic() + timeout
        for i, p in enumerate(self.procs):
            while not self.listening[i].wait(0.02):
                if p.poll() is not None or time.monotonic() > deadline:
                    self._drains[i].join(1)
                    log = "\n".join(line for _, line in self.logs[i][-30:])
                    raise RuntimeError(f"server {p.pid} did not start (exit {p.returncode}):\n{log}")
        while True:
            try:
                urllib.request.urlopen(self.url + "/health", timeout=5).read()
                return time.monotonic() - self.t0
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)

    def wait_prewarm(self, timeout=300):
        """Waits until every process has logged the end of each prewarm it
        started (editions with a `prewarm` entry in /status); seconds since
        spawn, or None when nothing is prewarmed."""
        wanted = sum(1 for e in get_json(self.url + "/status")["editions"] if e.get("prewarm"))
        if not wanted:
            return None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            done = [[t for t, line in log if "prewarm of" in line and " done" in line] for log in self.logs]
            if all(len(d) >= wanted for d in done):
                return max(max(d) for d in done)
            time.sleep(0.05)
        raise RuntimeError("prewarm did not finish in time")

    def wait_verified(self, timeout=300):
        """Waits until no edition of any process is still being verified
        (its checksums read through; it answers 503 until then); seconds
        since spawn."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            states = [e.get("verification", {}).get("state")
                      for _ in self.procs for e in get_json(self.url + "/status")["editions"]]
            if "verifying" not in states:
                return time.monotonic() - self.t0
            time.sleep(0.02)
        raise RuntimeError("verification did not finish in time")

    def alive(self):
        return all(p.poll() is None for p in self.procs)

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for d in self._drains:
            d.join(2)


def percentile(sorted_values, p):
    """Nearest rank, as txmap bench reports compute it."""
    if not sorted_values:
        return 0
    k = min(max(math.ceil(p * len(sorted_values)), 1), len(sorted_values)) - 1
    return sorted_values[k]


# Quantiles kept for the latency-distribution charts.
LADDER = [0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99,
          0.995, 0.999, 0.9995, 0.9999, 1.0]
