#!/usr/bin/env python3
"""The pages in a real browser: Debian's headless Chromium, driven over the
DevTools protocol on a pipe (--remote-debugging-pipe: no WebSocket, no
package beyond the standard library), against `txmap serve` on the demo
edition. Checks the DOM as a person would meet it and saves screenshots
under --out.

  python3 .ci/browser.py --txmap target/debug/txmap --out target/browser

What it does: the status page (and its residency rising, live, while a
second server prewarms the same file: the page cache the two share);
typing two letters into the search box, choosing a suggestion with the
keyboard and landing on the concept's page; a misspelled word offered
what it probably meant; a value set's page and the
next page of its expansion; the ECL workbench's count and a parse error
marked; hostile text shown escaped. Exits non-zero on the first failure.
Without Chromium it fails under CI=true and skips with a notice elsewhere.
"""

import argparse
import base64
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
import urllib.request

SNOMED_FINDING = "404684003"


def fail(msg):
    print(f"browser: FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    """A `txmap serve` child, stopped on exit."""

    def __init__(self, txmap, args, log):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [txmap, "serve", "--listen", f"127.0.0.1:{self.port}", *args],
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 300
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail(f"txmap serve exited: see {log}")
            try:
                urllib.request.urlopen(self.base + "/health", timeout=1).read()
                return
            except OSError:
                time.sleep(0.2)
        fail(f"txmap serve did not answer /health: see {log}")

    def json(self, path):
        req = urllib.request.Request(self.base + path, headers={"Accept": "application/fhir+json"})
        return json.load(urllib.request.urlopen(req, timeout=30))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Browser:
    """Chromium over the DevTools protocol on fds 3 (commands) and 4
    (answers and events), NUL-separated JSON."""

    def __init__(self, chromium, profile):
        cmd_r, self.cmd_w = os.pipe()
        self.out_r, out_w = os.pipe()

        def child():
            os.dup2(cmd_r, 3)
            os.dup2(out_w, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--disable-extensions",
             "--hide-scrollbars", f"--user-data-dir={profile}",
             "--remote-debugging-pipe", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child, close_fds=False)
        os.close(cmd_r)
        os.close(out_w)
        self.next_id = 0
        self.buffer = b""
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1100, "height": 760, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read(self, timeout=30):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            if time.time() > deadline:
                fail("Chromium did not answer")
            chunk = os.read(self.out_r, 1 << 20)
            if not chunk:
                fail("Chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=False, timeout=30):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self.cmd_w, json.dumps(message).encode() + b"\0")
        while True:
            m = self._read(timeout)
            if m.get("id") == self.next_id:
                if "error" in m:
                    fail(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, timeout=30):
        deadline = time.time() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e.get("method") == name:
                    del self.events[i]
                    return e
            if time.time() > deadline:
                fail(f"no {name} event")
            self.events.append(self._read(timeout))

    def go(self, url):
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired")

    def eval(self, expression):
        r = self.call("Runtime.evaluate",
                      {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      session=True)
        if "exceptionDetails" in r:
            fail(f"script error in {expression!r}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def until(self, expression, what, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.eval(expression)
            if v:
                return v
            time.sleep(0.1)
        fail(f"timed out waiting for {what}")

    def key(self, key, code=None, keycode=0):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent",
                      {"type": kind, "key": key, "code": code or key,
                       "windowsVirtualKeyCode": keycode}, session=True)

    def type(self, text):
        for ch in text:
            self.call("Input.insertText", {"text": ch}, session=True)
            time.sleep(0.05)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        print(f"browser: screenshot {path}")

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except SystemExit:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def drop_from_page_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def package_value_set(tgz):
    """A value set of the package that includes one whole code system of
    101 to 400 codes (unversioned, so the package's own version answers),
    and that code system's codes: read from the package file itself."""
    t = tarfile.open(tgz)
    value_sets, systems = [], {}
    for m in t.getmembers():
        if m.name.endswith(".json"):
            try:
                r = json.load(t.extractfile(m))
            except (ValueError, UnicodeDecodeError):
                continue
            if not isinstance(r, dict):
                continue
            if r.get("resourceType") == "ValueSet":
                value_sets.append(r)
            elif r.get("resourceType") == "CodeSystem":
                systems[r.get("url")] = r

    def codes_of(concepts, out):
        for c in concepts:
            out.append(c["code"])
            codes_of(c.get("concept", []), out)
        return out

    for vs in sorted(value_sets, key=lambda r: r.get("id", "")):
        include = vs.get("compose", {}).get("include", [])
        if vs.get("compose", {}).get("exclude") or len(include) != 1:
            continue
        rule = include[0]
        if set(rule) != {"system"} or rule["system"] not in systems:
            continue
        cs = systems[rule["system"]]
        codes = codes_of(cs.get("concept", []), [])
        if 100 < len(codes) <= 400 and cs.get("content") == "complete":
            return vs["url"], codes
    fail(f"{tgz} has no value set of one whole code system of 101 to 400 codes")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--txmap", default="target/debug/txmap")
    ap.add_argument("--out", default="target/browser")
    ap.add_argument("--packages", default="../shared/fhir-packages")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    a = ap.parse_args()
    ci = os.environ.get("CI") == "true"
    if not os.path.exists(a.chromium):
        if ci:
            fail(f"no Chromium at {a.chromium} (install Debian's chromium)")
        print(f"browser: skipped: no Chromium at {a.chromium}")
        return
    terminology = os.path.join(a.packages, "hl7.terminology.r4-7.0.1.tgz")
    if not os.path.exists(terminology):
        if ci:
            fail(f"{terminology} is absent")
        print(f"browser: notice: {terminology} absent; the value set page is not tried")
        terminology = None
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="txmap-browser-")
    servers = []
    browser = None
    try:
        # The demo edition, generated as a first run does.
        first = Server(a.txmap, ["--data-dir", os.path.join(work, "data")], os.path.join(work, "first.log"))
        first.stop()
        edition = glob.glob(os.path.join(work, "data", "*.txmap"))[0]
        config = os.path.join(work, "mapped.toml")
        with open(config, "w") as f:
            f.write(f"editions = [{json.dumps(edition)}]\n")
            if terminology:
                f.write(f"packages = [{json.dumps(os.path.abspath(terminology))}]\n")
            f.write('[snomed]\nload = "mmap"\n')
        drop_from_page_cache(edition)
        mapped = Server(a.txmap, ["--config", config], os.path.join(work, "mapped.log"))
        servers.append(mapped)
        browser = Browser(a.chromium, os.path.join(work, "profile"))
        base = mapped.base

        # The status page, and its residency rising while another process
        # prewarms the same file.
        browser.go(base + "/")
        if browser.eval("document.querySelector('h1').textContent") != "Server status":
            fail("the status page has no heading")
        before = browser.eval("Number(document.querySelector('.resident-bytes').dataset.bytes)")
        size = os.path.getsize(edition)
        print(f"browser: status page: {before} of {size} bytes resident before the prewarm")
        if before >= size:
            fail("the edition was resident before any prewarm: the check would prove nothing")
        prewarm = os.path.join(work, "prewarm.toml")
        with open(prewarm, "w") as f:
            f.write(f"editions = [{json.dumps(edition)}]\n[snomed]\nload = \"mmap\"\nprewarm = [{json.dumps(os.path.basename(edition))}]\n")
        servers.append(Server(a.txmap, ["--config", prewarm], os.path.join(work, "prewarm.log")))
        after = browser.until(
            f"(() => {{ const b = Number(document.querySelector('.resident-bytes').dataset.bytes); return b > {before} && b >= {size} * 0.9 ? b : 0; }})()",
            "the status page to show the prewarmed edition resident (it refreshes itself)", timeout=20)
        print(f"browser: status page: {after} bytes resident after the prewarm, without a reload")
        browser.screenshot(os.path.join(a.out, "status.png"))

        # Search as you type: two letters, a suggestion chosen with the
        # keyboard, the concept's page.
        browser.go(base + "/browse")
        browser.eval("document.getElementById('q').focus()")
        browser.type("fr")
        n = browser.until("document.querySelectorAll('#q-suggestions [role=option]').length",
                          "suggestions after typing two letters")
        expected = mapped.json("/r4/ValueSet/$expand?" + urllib.parse.urlencode(
            {"url": "http://snomed.info/sct?fhir_vs", "filter": "fr", "count": 10, "activeOnly": "true"}))
        want = [c["code"] for c in expected["expansion"].get("contains", [])]
        got = browser.eval("[...document.querySelectorAll('#q-suggestions [role=option] .code')].map(e => e.textContent)")
        if got != want:
            fail(f"suggestions {got} are not $expand's filter answer {want}")
        announced = browser.eval("document.getElementById('announce').textContent")
        if str(expected["expansion"]["total"]) not in announced:
            fail(f"the live region says {announced!r}, not the total {expected['expansion']['total']}")
        print(f"browser: 'fr' suggests {n}, as $expand ranks them; announced {announced!r}")
        browser.screenshot(os.path.join(a.out, "suggest.png"))
        browser.key("ArrowDown", keycode=40)
        browser.key("ArrowDown", keycode=40)
        chosen = browser.eval("document.querySelector('#q-suggestions [aria-selected=true] .code').textContent")
        if chosen != want[1]:
            fail(f"two ArrowDowns chose {chosen}, not the second suggestion {want[1]}")
        browser.events.clear()
        browser.key("Enter", keycode=13)
        browser.wait_event("Page.loadEventFired")
        path = browser.eval("location.pathname")
        if path != f"/concept/{chosen}":
            fail(f"Enter went to {path}, not /concept/{chosen}")
        heading = browser.eval("document.querySelector('h1 .code').textContent")
        if heading != chosen:
            fail(f"the concept page is headed {heading}")
        print(f"browser: ArrowDown ArrowDown Enter opened {path}")

        # A slip of the keys: nothing matches, and the one suggestion is
        # what was probably meant, as a search of its own.
        browser.go(base + "/browse")
        browser.eval("document.getElementById('q').focus()")
        browser.type("fracutre")
        offer = browser.until(
            "(document.querySelector('#q-suggestions [role=option]') || {}).textContent",
            "a did-you-mean suggestion for a misspelled word")
        if offer != "Did you mean: fracture?":
            fail(f"'fracutre' offered {offer!r}")
        browser.key("ArrowDown", keycode=40)
        browser.events.clear()
        browser.key("Enter", keycode=13)
        browser.wait_event("Page.loadEventFired")
        landed = browser.eval("location.search + ' ' + document.getElementById('result-count').textContent")
        if not landed.startswith("?q=fracture ") or landed.endswith(" 0 concepts"):
            fail(f"the suggestion led to {landed!r}")
        print(f"browser: 'fracutre' offered {offer!r}, which finds {landed.split(' ', 1)[1]!r}")

        # Facets: the first semantic tag narrows the search to it, and
        # every hit of the narrowed page carries that tag in its FSN.
        facet = browser.eval("(document.querySelector('.facets a') || {}).textContent")
        if not facet:
            fail("the search page shows no facets")
        browser.screenshot(os.path.join(a.out, "search.png"))
        browser.events.clear()
        browser.eval("document.querySelector('.facets a').click()")
        browser.wait_event("Page.loadEventFired")
        codes = browser.eval("JSON.stringify([...document.querySelectorAll('ol.hits > li > a .code')].map(e => e.textContent))")
        codes = json.loads(codes)
        if not codes:
            fail(f"the facet {facet!r} found nothing")
        for code in codes:
            found = mapped.json(f"/r4/CodeSystem/$lookup?system=http://snomed.info/sct&code={code}&property=designation")
            fsns = [p for p in found["parameter"] if p["name"] == "designation"
                    and any(x.get("valueCoding", {}).get("code") == "900000000000003001" for x in p["part"])]
            terms = [x["valueString"] for p in fsns for x in p["part"] if x["name"] == "value"]
            if not any(t.endswith(f"({facet})") for t in terms):
                fail(f"facet {facet!r} narrowed to {code}, whose FSN is {terms}")
        print(f"browser: the facet {facet!r} narrowed the search to {len(codes)} concepts with that tag")

        # A concept page with its parts: the finding hierarchy's top.
        browser.go(base + f"/concept/{SNOMED_FINDING}")
        lookup = mapped.json(f"/r4/CodeSystem/$lookup?system=http://snomed.info/sct&code={SNOMED_FINDING}")
        display = next(p["valueString"] for p in lookup["parameter"] if p["name"] == "display")
        if display not in browser.eval("document.querySelector('h1').textContent"):
            fail(f"the concept page does not show {display!r}")
        children = browser.eval("Number(document.querySelector('#h-children .count').textContent)")
        if children <= 0:
            fail("the clinical finding concept page lists no children")
        browser.screenshot(os.path.join(a.out, "concept.png"))

        # The ECL workbench: a count, then a parse error marked.
        browser.go(base + "/ecl")
        browser.eval(f"document.getElementById('expression').value = '<< {SNOMED_FINDING}'")
        browser.events.clear()
        browser.eval("document.querySelector('form.ecl button').click()")
        browser.wait_event("Page.loadEventFired")
        count = browser.eval("document.getElementById('result-count').textContent")
        total = mapped.json("/r4/ValueSet/$expand?" + urllib.parse.urlencode(
            {"url": f"http://snomed.info/sct?fhir_vs=ecl/<< {SNOMED_FINDING}", "count": 0}))["expansion"]["total"]
        if not count.startswith(f"{total} concepts"):
            fail(f"the workbench says {count!r}; $expand's total is {total}")
        print(f"browser: ECL << {SNOMED_FINDING}: {count}")
        browser.screenshot(os.path.join(a.out, "ecl.png"))
        browser.go(base + "/ecl?" + urllib.parse.urlencode({"expression": f"<< {SNOMED_FINDING} : "}))
        marked = browser.eval("document.querySelector('#ecl-error mark') && document.querySelector('#ecl-error').textContent")
        if not marked or "column" not in marked:
            fail("a broken expression's error is not shown with its place")

        # A value set's page, then the next page of its expansion.
        if terminology:
            url, codes = package_value_set(terminology)
            browser.go(base + "/r4/ValueSet?" + urllib.parse.urlencode({"url": url}))
            link = browser.eval("document.querySelector('tbody a').getAttribute('href')")
            browser.go(base + link)
            total = browser.eval("document.getElementById('result-count').textContent")
            if not total.startswith(f"{len(codes)} codes"):
                fail(f"the value set page says {total!r}; the package's code system has {len(codes)} codes")
            first_page = browser.eval("[...document.querySelectorAll('#expansion tbody a.code')].map(a => a.textContent)")
            browser.screenshot(os.path.join(a.out, "valueset.png"))
            browser.events.clear()
            browser.eval("document.querySelector('#expansion a[rel=next]').click()")
            browser.wait_event("Page.loadEventFired")
            second_page = browser.eval("[...document.querySelectorAll('#expansion tbody a.code')].map(a => a.textContent)")
            if sorted(first_page + second_page) != sorted(codes):
                fail("the expansion's two pages are not the code system's codes, each once")
            print(f"browser: {url}: {len(first_page)} + {len(second_page)} codes over two pages")

        # Hostile text is shown, escaped, never run.
        evil = "<script>document.title='owned'</script>\"'><img src=x onerror=alert(1)>"
        for page in ("/browse?" + urllib.parse.urlencode({"q": evil}),
                     "/ecl?" + urllib.parse.urlencode({"expression": evil})):
            browser.go(base + page)
            if browser.eval("document.title") == "owned" or browser.eval("document.querySelectorAll('img').length"):
                fail(f"{page} ran or rendered the input")
            if evil not in browser.eval("document.body.innerText + document.querySelector('input, textarea').value"):
                fail(f"{page} does not show the input as text")
        print("browser: hostile search and ECL text shown as text")
        print("browser: all checks passed")
    finally:
        if browser:
            browser.close()
        for s in servers:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
