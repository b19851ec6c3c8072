"""hwc serve on loopback: /metrics against a known workload (page faults of
pagetouch, system-wide, so at least its count), promtool's check of the
page, OpenMetrics on request, Prometheus itself scraping it, a CPU profile
read by `go tool pprof` while hotspots runs (f2's share of f1+f2 near 3/4),
one profile at a time (429), HTTP errors, TLS and basic auth from a web
config (right and wrong password, plain HTTP to the TLS port), SIGHUP
reloading it, and SIGTERM ending it; --cgroups on real cgroup v2 groups
made for the test (pagetouch's page faults in one, none in an idle one, a
removed one's series and descriptors gone, --max-cgroups, Prometheus's
increase() of a cgroup's series, 1,000 cgroups made and removed while
scraping, a profile of one cgroup's tasks).  Nothing asserts a time:
waits poll for what the agent shows, under a hang guard."""
import base64
import collections
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import warnings

import hwctest
from cgroup import mountinfo, own_cgroup, skip_reason
from hwctest import LIMIT, program, workload

HWC = program("hwc")
PAGETOUCH = workload("pagetouch")
HOTSPOTS = workload("hotspots")


def crypt_bcrypt(password):
    """A bcrypt hash of PASSWORD from libxcrypt (python3's crypt module)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import crypt
        return crypt.crypt(password, crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 5))


class Agent:
    """A running hwc serve on 127.0.0.1, a free port (port 0)."""

    def __init__(self, tmp, *args, listen="127.0.0.1:0", nofile=None):
        self.log = os.path.join(tmp, "serve-%d.log" % time.monotonic_ns())
        self.err = open(self.log, "w+")

        def limit():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        self.p = subprocess.Popen([HWC, "serve", "--listen", listen, *args], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=self.err, preexec_fn=limit)
        deadline = time.monotonic() + LIMIT
        while True:
            text = self.stderr()
            m = re.search(r"listening on (\S+):(\d+)", text)
            if m:
                self.host, self.port = m.group(1), int(m.group(2))
                break
            if self.p.poll() is not None:
                raise AssertionError("hwc serve ended: " + text)
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError("hwc serve never listened: " + text)
            time.sleep(0.05)

    def stderr(self):
        with open(self.log) as f:
            return f.read()

    def url(self, path, scheme="http"):
        return "%s://%s:%d%s" % (scheme, self.host, self.port, path)

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(LIMIT)
        self.err.close()


def get(url, headers=None, context=None):
    """(status, headers, body) of GET URL; HTTP errors are answers too."""
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=LIMIT, context=context) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def page_faults(text):
    """The sum over CPUs of the page-fault counter of a /metrics page."""
    vals = re.findall(r'^hwc_events_total\{event="page-faults",cpu="\d+"\} (\d+)$', text, re.M)
    assert vals, text[:2000]
    return sum(int(v) for v in vals)


def cgroup_series(text, event="page-faults"):
    """{cgroup: value} of EVENT's per-cgroup series on a /metrics page."""
    return {g: int(v) for g, v in re.findall(
        r'^hwc_events_total\{event="%s",cgroup="([^"]*)"\} (\d+)$' % re.escape(event), text, re.M)}


def gauge(text, name):
    m = re.search(r"^%s (\d+)$" % name, text, re.M)
    assert m, text[-2000:]
    return int(m.group(1))


class Cgroups:
    """Cgroup v2 groups made for one test under our own cgroup, removed
    afterwards (or by remove()); SkipTest where that cannot be done."""

    def __init__(self, *names):
        reason = skip_reason()
        if reason:
            raise unittest.SkipTest(reason)
        v2 = mountinfo()[0]
        parent = own_cgroup().strip("/")
        # The glob that matches these cgroups and no other.
        self.glob = os.path.join(parent, "hwc-serve-%d-*" % os.getpid())
        self.rel = [self.glob.replace("*", n) for n in names]
        self.dirs = [os.path.join(v2, r) for r in self.rel]
        self.labels = ["/" + r for r in self.rel]

    def __enter__(self):
        for d in self.dirs:
            os.mkdir(d)
        return self

    def remove(self, i):
        # Its last task has been reaped; the kernel may still be letting go.
        for _ in range(100):
            try:
                os.rmdir(self.dirs[i])
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)

    def __exit__(self, *exc):
        for i in range(len(self.dirs)):
            self.remove(i)

    def run(self, i, pages):
        """pagetouch PAGES in cgroup I (a shell moves itself there, then execs it)."""
        procs = os.path.join(self.dirs[i], "cgroup.procs")
        r = hwctest.run(["sh", "-c", 'echo $$ > "%s" && exec "%s" %d' % (procs, PAGETOUCH, pages)])
        assert r.returncode == 0, r.stderr


class Prometheus:
    """Debian's Prometheus on a free loopback port, scraping agent A every
    second, and queries of its HTTP API."""

    def __init__(self, tmp, a):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.a = a
        conf = os.path.join(tmp, "prometheus.yml")
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: hwc\n"
                    "    static_configs:\n      - targets: ['127.0.0.1:%d']\n" % a.port)
        self.log = open(os.path.join(tmp, "prometheus.log"), "w")
        self.p = subprocess.Popen(["prometheus", "--config.file", conf, "--storage.tsdb.path",
                                   os.path.join(tmp, "tsdb"), "--web.listen-address",
                                   "127.0.0.1:%d" % port], stdout=self.log, stderr=self.log)
        self.api = "http://127.0.0.1:%d/api/v1/" % port
        self.deadline = time.monotonic() + LIMIT

    def stop(self):
        self.p.terminate()
        self.p.wait(LIMIT)
        self.log.close()

    def result(self, q, at=None):
        url = self.api + "query?query=" + urllib.request.quote(q) + ("&time=%.3f" % at if at else "")
        try:
            status, _, body = get(url)
        except urllib.error.URLError:
            return None  # still starting
        return json.loads(body)["data"]["result"] if status == 200 else None

    def query(self, q, at=None):
        res = self.result(q, at)
        return float(res[0]["value"][1]) if res else None

    def stored_after(self, selector, count, t):
        """Wait for a scrape stored after T that has COUNT series of SELECTOR."""
        while (self.query("min(timestamp(%s))" % selector) or 0) <= t or \
                self.query("count(%s)" % selector) != count:
            assert time.monotonic() < self.deadline, "Prometheus stored no scrape of hwc serve"
            time.sleep(0.2)

    def increase(self, selector):
        """(sum of increase() of SELECTOR's series, the scrapes it spans).
        The range is the stored scrapes every series has: a series that
        starts a scrape later would be extrapolated to the whole range
        (seen once: twice the calls).  Queried at the last scrape over a
        range from the first one, there is nothing to extrapolate: the
        increase is that of the stored samples."""
        series = self.result("%s[1h]" % selector)
        per = [sorted(float(t) for t, _ in s["values"]) for s in series]
        first, last = max(p[0] for p in per), min(p[-1] for p in per)
        stamps = {t for p in per for t in p if first <= t <= last}
        window = "[%dms]" % round((last - first) * 1000)
        return self.query("sum(increase(%s%s))" % (selector, window), last), len(stamps)

    def check_target(self):
        """Prometheus 2.42 asks for OpenMetrics first: its parser took the page."""
        targets = json.loads(get(self.api + "targets")[2])
        [target] = targets["data"]["activeTargets"]
        assert (target["health"], target["lastError"]) == ("up", ""), target


class ServeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0 and hwctest.paranoid() > 0:
            raise unittest.SkipTest("counting whole CPUs needs root or kernel.perf_event_paranoid <= 0 "
                                    "(it is %d)" % hwctest.paranoid())

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hwc-serve-")
        self.agents = []

    def tearDown(self):
        for a in self.agents:
            a.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def agent(self, *args, **kw):
        a = Agent(self.tmp, *args, **kw)
        self.agents.append(a)
        return a

    def metrics(self, a, **kw):
        status, headers, body = get(a.url("/metrics"), **kw)
        self.assertEqual(status, 200, body)
        return headers, body.decode()

    def test_page_faults_of_a_workload(self):
        a = self.agent("-e", "page-faults")
        before = page_faults(self.metrics(a)[1])
        n = 20000
        self.assertEqual(hwctest.run([PAGETOUCH, str(n)]).returncode, 0)
        after = page_faults(self.metrics(a)[1])
        # System-wide: the workload's faults and whatever else ran.
        self.assertGreaterEqual(after - before, n)

    def test_page_is_clean_for_promtool(self):
        if not shutil.which("promtool"):
            self.skipTest("promtool (Debian prometheus) is not installed: scripts/deps installs it")
        a = self.agent()
        headers, text = self.metrics(a)
        self.assertEqual(headers["Content-Type"], "text/plain; version=0.0.4; charset=utf-8")
        for family in ("hwc_events_total", "hwc_event_enabled_seconds_total",
                       "hwc_event_running_seconds_total", "hwc_scrape_duration_seconds",
                       "hwc_scrape_errors_total", "process_open_fds"):
            self.assertIn("\n# TYPE %s " % family, "\n" + text)
        r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True,
                           timeout=LIMIT)
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        # Every CPU, the seconds of each series.
        cpus = set(re.findall(r'^hwc_events_total\{event="task-clock",cpu="(\d+)"\}', text, re.M))
        self.assertEqual(cpus, {str(c) for c in hwctest.online_cpus()})

    def test_openmetrics_on_request(self):
        a = self.agent()
        headers, text = self.metrics(a, headers={
            "Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"})
        self.assertEqual(headers["Content-Type"], "application/openmetrics-text; version=1.0.0; charset=utf-8")
        self.assertTrue(text.endswith("\n# EOF\n"), text[-200:])
        self.assertIn("# TYPE hwc_events counter\n", text)
        self.assertRegex(text, r'\nhwc_events_total\{event="page-faults",cpu="\d+"\} \d+\n')

    def test_http_errors(self):
        a = self.agent()
        for path, code, says in (("/nothing", 404, "not found"),
                                 ("/metrics?x=1", 400, "no parameter 'x'"),
                                 ("/debug/pprof/profile?seconds=0", 400, "from 1 to 300"),
                                 ("/debug/pprof/profile?seconds=301", 400, "from 1 to 300"),
                                 ("/debug/pprof/profile?seconds=3x", 400, "from 1 to 300"),
                                 ("/debug/pprof/profile?seconds=1&cpu=2", 400, "no parameter 'cpu'")):
            status, _, body = get(a.url(path))
            self.assertEqual(status, code, path)
            self.assertIn(says, body.decode(), path)
        req = urllib.request.Request(a.url("/metrics"), data=b"x", method="POST")
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=LIMIT)
        self.assertEqual(e.exception.code, 405)
        # A huge query string is refused, and the agent serves on.
        status, _, _ = get(a.url("/metrics?" + "a" * 100000))
        self.assertGreaterEqual(status, 400)
        self.assertEqual(get(a.url("/healthz"))[:3:2], (200, b"ok\n"))
        self.assertIn(b"profile", get(a.url("/debug/pprof/"))[2])

    def test_scrapes_keep_the_connection(self):
        """Scrapes over one kept-alive HTTP/1.1 connection, as Prometheus
        makes them: no Connection: close, the same socket serves the next."""
        a = self.agent("-e", "page-faults")
        conn = http.client.HTTPConnection(a.host, a.port, timeout=LIMIT)
        sock = None
        try:
            for _ in range(3):
                conn.request("GET", "/metrics")
                r = conn.getresponse()
                self.assertEqual(r.status, 200)
                r.read()
                self.assertNotEqual(r.getheader("Connection"), "close")
                sock = sock or conn.sock
                self.assertIsNotNone(sock)
                self.assertIs(conn.sock, sock)
        finally:
            conn.close()

    def test_slow_client_stalls_no_scrape(self):
        a = self.agent()
        # Half a request line, never finished.
        slow = socket.create_connection((a.host, a.port), timeout=LIMIT)
        slow.sendall(b"GET /metr")
        try:
            self.assertEqual(get(a.url("/healthz"))[0], 200)
            self.metrics(a)
        finally:
            slow.close()

    def test_profile_of_hotspots(self):
        if not shutil.which("go"):
            self.skipTest("go (Debian golang-go) is not installed: scripts/deps installs it")
        a = self.agent()
        w = subprocess.Popen([HOTSPOTS, "100000"], stdout=subprocess.DEVNULL)
        try:
            env = dict(os.environ, HOME=self.tmp, PPROF_TMPDIR=self.tmp)
            p = hwctest.run(["go", "tool", "pprof", "-top", "-nodefraction=0",
                             a.url("/debug/pprof/profile?seconds=3")], env=env)
        finally:
            w.kill()
            w.wait()
        self.assertEqual(p.returncode, 0, p.stderr)
        flat = {l.split()[-1]: float(l.split()[0].rstrip("ms")) for l in p.stdout.splitlines()
                if re.match(r"^\s*[\d.]+m?s\s+[\d.]+%", l)}
        self.assertIn("f2", flat, p.stdout)
        share = flat["f2"] / (flat["f1"] + flat["f2"])
        print("f2's share of f1+f2: %.3f" % share, file=sys.stderr)
        self.assertAlmostEqual(share, 0.75, delta=0.05, msg=p.stdout)

    def pprof(self, url, *flags):
        """go tool pprof FLAGS URL's output, after checking it worked."""
        env = dict(os.environ, HOME=self.tmp, PPROF_TMPDIR=self.tmp)
        p = hwctest.run(["go", "tool", "pprof", *flags, url], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def test_profile_of_one_cgroup(self):
        """cgroup=: hotspots in a test cgroup, clockloop busy outside it:
        the cgroup's profile has f1 and f2 and nothing of clockloop (its
        binary, its vDSO calls), which the profile of every task has."""
        if not shutil.which("go"):
            self.skipTest("go (Debian golang-go) is not installed: scripts/deps installs it")
        with Cgroups("prof") as cg:
            a = self.agent()
            procs = os.path.join(cg.dirs[0], "cgroup.procs")
            inside = subprocess.Popen(["sh", "-c", 'echo $$ > "%s" && exec "%s" 100000' % (procs, HOTSPOTS)],
                                      stdout=subprocess.DEVNULL)
            outside = subprocess.Popen([workload("clockloop"), "100000000000"], stdout=subprocess.DEVNULL)
            try:
                url = a.url("/debug/pprof/profile?seconds=2&cgroup=" + urllib.request.quote(cg.labels[0]))
                top, raw = self.pprof(url, "-top", "-nodefraction=0"), self.pprof(url, "-raw")
                every = self.pprof(a.url("/debug/pprof/profile?seconds=2"), "-raw")
            finally:
                for w in (inside, outside):
                    w.kill()
                    w.wait()
        mappings = raw.partition("\nMappings\n")[2]
        self.assertRegex(top, r"\sf1\n")
        self.assertRegex(top, r"\sf2\n")
        self.assertIn("/hotspots", mappings)
        self.assertNotIn("clockloop", mappings, raw)
        self.assertNotIn("clock_gettime", top)
        self.assertIn("clockloop", every.partition("\nMappings\n")[2])

    def test_profile_cgroup_errors(self):
        """cgroup= that climbs out, names no cgroup or a file: 400 or 404
        with the reason, before any sampling."""
        a = self.agent()
        for arg, code, says in (("..", 400, "cannot contain '..'"),
                                ("a/../../etc", 400, "cannot contain '..'"),
                                ("no-such-cgroup-%d" % os.getpid(), 404, "no cgroup"),
                                # Absolute paths are from the cgroup root, not the file system's.
                                ("/sys/fs/cgroup", 404, "no cgroup 'sys/fs/cgroup'"),
                                ("cgroup.procs", 404, "not a cgroup")):
            status, _, body = get(a.url("/debug/pprof/profile?seconds=1&cgroup=" + urllib.request.quote(arg)))
            self.assertEqual((status, arg), (code, arg), body)
            self.assertIn(says, body.decode(), arg)

    def test_one_profile_at_a_time(self):
        a = self.agent()
        codes, retry = [], []

        def take():
            status, headers, _ = get(a.url("/debug/pprof/profile?seconds=2"))
            codes.append(status)
            if status == 429:
                retry.append(headers["Retry-After"])
        ts = [threading.Thread(target=take) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(LIMIT)
        self.assertEqual(sorted(codes), [200, 429])
        self.assertRegex(retry[0], r"^\d+$")

    def tls_setup(self, password):
        cert, key = os.path.join(self.tmp, "cert.pem"), os.path.join(self.tmp, "key.pem")
        r = hwctest.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                         "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                         "-addext", "subjectAltName=IP:127.0.0.1"])
        self.assertEqual(r.returncode, 0, r.stderr)
        conf = os.path.join(self.tmp, "web.yml")
        self.write_conf(conf, cert, key, password)
        ctx = ssl.create_default_context(cafile=cert)
        return conf, ctx, cert, key

    def write_conf(self, conf, cert, key, password):
        with open(conf, "w") as f:
            f.write("tls_server_config:\n  cert_file: %s\n  key_file: %s\n"
                    "basic_auth_users:\n  prom: %s\n" % (cert, key, crypt_bcrypt(password)))

    @staticmethod
    def auth(user, password):
        return {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()}

    def test_tls_and_basic_auth(self):
        if not shutil.which("openssl"):
            self.skipTest("openssl is not installed: scripts/deps installs it")
        conf, ctx, _, _ = self.tls_setup("s3cret")
        a = self.agent("--web.config.file", conf)
        url = a.url("/metrics", "https")
        status, _, body = get(url, self.auth("prom", "s3cret"), ctx)
        self.assertEqual(status, 200)
        self.assertIn(b"hwc_events_total", body)
        self.assertEqual(get(url, self.auth("prom", "wrong"), ctx)[0], 401)
        self.assertEqual(get(url, self.auth("nobody", "s3cret"), ctx)[0], 401)
        status, headers, _ = get(url, None, ctx)
        self.assertEqual(status, 401)
        self.assertIn("Basic", headers["WWW-Authenticate"])
        # Plain HTTP to the TLS port: the connection fails, no answer in clear.
        with self.assertRaises((urllib.error.URLError, ConnectionError, OSError)):
            urllib.request.urlopen(a.url("/metrics"), timeout=LIMIT)
        self.assertEqual(get(url, self.auth("prom", "s3cret"), ctx)[0], 200)

    def test_sighup_reloads_the_web_config(self):
        if not shutil.which("openssl"):
            self.skipTest("openssl is not installed: scripts/deps installs it")
        conf, ctx, cert, key = self.tls_setup("old")
        a = self.agent("--web.config.file", conf)
        url = a.url("/healthz", "https")
        self.assertEqual(get(url, self.auth("prom", "old"), ctx)[0], 200)
        self.write_conf(conf, cert, key, "new")
        a.p.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + LIMIT
        while "configuration read again" not in a.stderr():
            self.assertLess(time.monotonic(), deadline, a.stderr())
            time.sleep(0.05)
        self.assertEqual(get(url, self.auth("prom", "new"), ctx)[0], 200)
        self.assertEqual(get(url, self.auth("prom", "old"), ctx)[0], 401)
        # A broken file keeps the configuration in use.
        with open(conf, "w") as f:
            f.write("basic_auth_users: [\n")
        a.p.send_signal(signal.SIGHUP)
        while "keeping the configuration in use" not in a.stderr():
            self.assertLess(time.monotonic(), deadline, a.stderr())
            time.sleep(0.05)
        self.assertEqual(get(url, self.auth("prom", "new"), ctx)[0], 200)

    def test_bad_web_configs(self):
        conf = os.path.join(self.tmp, "bad.yml")
        for text, says in (("tls_server_config:\n  cert_file: /nonexistent\n  key_file: /nonexistent\n",
                            "cannot read /nonexistent"),
                           ("basic_auth_users:\n  u: plaintext\n", "not a bcrypt hash"),
                           ("http_server_config: {}\n", "'http_server_config' is not supported"),
                           ("tls_server_config: {cert_file: x}\n", "needs both cert_file and key_file"),
                           ("a: [\n", "bad.yml:")):
            with open(conf, "w") as f:
                f.write(text)
            r = hwctest.run([HWC, "serve", "--listen", "127.0.0.1:0", "--web.config.file", conf])
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(says, r.stderr)

    def test_bad_usage(self):
        for args, says in ((["--listen", "nowhere"], "give ADDR:PORT"),
                           (["--cgroups", ","], "give globs of cgroup paths"),
                           (["--max-cgroups", "-1"], "give a number from 0"),
                           (["--listen", "127.0.0.1:70000"], "from 0 to 65535"),
                           (["--bogus"], "unknown option"),
                           (["-e", "no-such-event"], "no-such-event")):
            r = hwctest.run([HWC, "serve", *args])
            self.assertIn(r.returncode, (1, 2), r.stderr)
            self.assertIn(says, r.stderr)

    def test_hwc_itself_loads_no_http_library(self):
        # hwc serve runs the program hwc-serve: every other hwc command
        # starts without libmicrohttpd and GnuTLS (and their RSS).
        libs = hwctest.run(["ldd", HWC]).stdout
        self.assertNotIn("libmicrohttpd", libs)
        self.assertIn("libmicrohttpd", hwctest.run(["ldd", program("hwc-serve")]).stdout)

    def test_ipv6_loopback(self):
        try:
            with socket.socket(socket.AF_INET6) as s:
                s.bind(("::1", 0))
        except OSError as e:
            self.skipTest("no IPv6 loopback here: %s" % e)
        a = self.agent(listen="[::1]:0")
        self.assertEqual(a.host, "[::1]")
        self.metrics(a)

    def test_sigterm_ends_it(self):
        a = self.agent()
        self.metrics(a)
        t0 = time.monotonic()
        a.p.send_signal(signal.SIGTERM)
        self.assertEqual(a.p.wait(LIMIT), 0, a.stderr())
        print("SIGTERM to exit: %.3f s" % (time.monotonic() - t0), file=sys.stderr)
        self.assertIn("ended", a.stderr())

    def test_sigterm_during_a_profile(self):
        a = self.agent()

        def hold():
            try:
                get(a.url("/debug/pprof/profile?seconds=60"))
            except OSError:
                pass  # the agent ended first
        t = None
        deadline = time.monotonic() + LIMIT
        while True:
            if not t or not t.is_alive():
                t = threading.Thread(target=hold)
                t.start()
            # 429 once the long profile runs; 200 when this one got there first.
            if get(a.url("/debug/pprof/profile?seconds=1"))[0] == 429:
                break
            self.assertLess(time.monotonic(), deadline)
        t0 = time.monotonic()
        a.p.send_signal(signal.SIGTERM)
        self.assertEqual(a.p.wait(LIMIT), 0, a.stderr())
        print("SIGTERM to exit during a profile: %.3f s" % (time.monotonic() - t0), file=sys.stderr)
        t.join(LIMIT)

    def prometheus(self, a):
        """Debian's Prometheus scraping agent A every second (stopped at the end of the test)."""
        if not shutil.which("prometheus"):
            self.skipTest("prometheus is not installed: scripts/deps installs it")
        p = Prometheus(self.tmp, a)
        self.addCleanup(p.stop)
        return p

    def test_prometheus_scrapes_it(self):
        """Prometheus scrapes page-faults and the calls of getppid(2), which
        hardly any program makes: increase() of those, between two stored
        scrapes around the test's own known number of calls, is that number
        within 2% (the page faults of a workload have the whole machine's
        around them: only at least their count)."""
        calls = "syscalls:sys_enter_getppid"
        if calls not in hwctest.run([HWC, "list"]).stdout:
            self.skipTest("no tracepoint %s here (tracefs)" % calls)
        a = self.agent("-e", "page-faults", "-e", calls)
        prom = self.prometheus(a)
        every_cpu = len(hwctest.online_cpus())
        prom.stored_after('hwc_events_total{event="%s"}' % calls, every_cpu, time.time())
        before = page_faults(self.metrics(a)[1])
        n = 100000
        for _ in range(n):
            os.getppid()
        self.assertEqual(hwctest.run([PAGETOUCH, str(n)]).returncode, 0)
        after = page_faults(self.metrics(a)[1])
        prom.stored_after('hwc_events_total{event="%s"}' % calls, every_cpu, time.time())
        inc_calls, scrapes = prom.increase('hwc_events_total{event="%s"}' % calls)
        inc_faults, _ = prom.increase('hwc_events_total{event="page-faults"}')
        prom.check_target()
        print("%d getppid calls: increase() %.0f over %d scrapes; %d page faults: increase() %.0f, "
              "direct scrapes %d" % (n, inc_calls, scrapes, n, inc_faults, after - before),
              file=sys.stderr)
        self.assertAlmostEqual(inc_calls, n, delta=0.02 * n)
        self.assertGreaterEqual(inc_faults, n)

    def test_prometheus_per_cgroup(self):
        """Prometheus scrapes --cgroups' series: pagetouch's known page
        faults in a test cgroup are increase() of that cgroup's series
        within 2%; an idle cgroup's increase is 0."""
        pages = 50000
        with Cgroups("busy", "idle") as cg:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob)
            prom = self.prometheus(a)
            series = 'hwc_events_total{event="page-faults",cgroup="%s"}'
            prom.stored_after(series % cg.labels[0], 1, time.time())
            cg.run(0, pages)
            prom.stored_after(series % cg.labels[0], 1, time.time())
            busy, scrapes = prom.increase(series % cg.labels[0])
            idle, _ = prom.increase(series % cg.labels[1])
            prom.check_target()
        print("pagetouch %d pages in a cgroup: increase() %.0f over %d scrapes, idle cgroup %.0f"
              % (pages, busy, scrapes, idle), file=sys.stderr)
        self.assertAlmostEqual(busy, pages, delta=0.02 * pages)
        self.assertEqual(idle, 0)

    def poll(self, a, done, what):
        """The first /metrics page DONE(page) accepts (the agent looks at
        the cgroups again at most once a second)."""
        deadline = time.monotonic() + LIMIT
        while True:
            text = self.metrics(a)[1]
            if done(text):
                return text
            self.assertLess(time.monotonic(), deadline, "%s: %s" % (what, text[-3000:]))
            time.sleep(0.2)

    def test_cgroup_page_faults(self):
        """Per cgroup, summed over CPUs: pagetouch's faults in the busy
        cgroup within 2%, none in the idle one; promtool finds it clean."""
        pages = 20000
        with Cgroups("busy", "idle") as cg:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob)
            text = self.metrics(a)[1]
            self.assertEqual(cgroup_series(text), {cg.labels[0]: 0, cg.labels[1]: 0})
            cg.run(0, pages)
            text = self.metrics(a)[1]
            got = cgroup_series(text)
            print("pagetouch %d pages in a cgroup: %s" % (pages, got), file=sys.stderr)
            self.assertAlmostEqual(got[cg.labels[0]], pages, delta=0.02 * pages)
            self.assertEqual(got[cg.labels[1]], 0)
            self.assertRegex(text, r'\nhwc_event_running_seconds_total\{event="page-faults",cgroup="%s"\} '
                             r'0\.0*[1-9]' % re.escape(cg.labels[0]))
            self.assertEqual(gauge(text, "hwc_cgroups"), 2)
            if shutil.which("promtool"):
                r = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                                   text=True, timeout=LIMIT)
                self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))

    def test_cgroups_come_and_go(self):
        """A cgroup made while the agent runs is counted; once removed, its
        series go and the agent's descriptors are back to what they were."""
        with Cgroups("old") as cg:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob)
            fds = gauge(self.metrics(a)[1], "process_open_fds")
            new = Cgroups("new")
            with new:
                text = self.poll(a, lambda t: new.labels[0] in cgroup_series(t), "the new cgroup")
                self.assertGreater(gauge(text, "process_open_fds"), fds)
                new.remove(0)
                text = self.poll(a, lambda t: new.labels[0] not in cgroup_series(t),
                                 "the removed cgroup's series")
            self.assertEqual(set(cgroup_series(text)), {cg.labels[0]})
            self.assertEqual(gauge(text, "process_open_fds"), fds)

    def test_cgroup_churn(self):
        """1,000 cgroups made and removed over about a minute (20 alive at
        a time, each ~1 s) while two clients scrape /metrics without a
        pause: every scrape answers 200, hundreds of the cgroups were
        counted, the series of removed ones go, the agent's descriptors
        (/proc/PID/fd) are back to what they were, and SIGTERM ends it
        with 0."""
        n, alive = 1000, 20
        cg = Cgroups(*("churn%d" % i for i in range(n)))
        try:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob)
            fd_dir = "/proc/%d/fd" % a.p.pid

            def descriptors():
                """The agent's descriptors once its connections are closed
                (their threads close them as they end): one socket left."""
                deadline = time.monotonic() + LIMIT
                while True:
                    links = []
                    for f in os.listdir(fd_dir):
                        try:
                            links.append(os.readlink(os.path.join(fd_dir, f)))
                        except FileNotFoundError:
                            pass  # closed between the listing and here
                    if sum(l.startswith("socket:") for l in links) == 1 or time.monotonic() > deadline:
                        return sorted(re.sub(r"\d+", "N", l) for l in links)
                    time.sleep(0.1)
            self.metrics(a)
            before = descriptors()
            t0 = time.monotonic()
            stop = threading.Event()
            seen, bad = set(), []

            def scrape():
                while not stop.is_set():
                    status, _, body = get(a.url("/metrics"))
                    if status != 200:
                        bad.append((status, body[:200]))
                    seen.update(cgroup_series(body.decode()))
            scrapers = [threading.Thread(target=scrape) for _ in range(2)]
            for t in scrapers:
                t.start()
            try:
                for i in range(n):
                    os.mkdir(cg.dirs[i])
                    if i >= alive:
                        cg.remove(i - alive)
                    time.sleep(0.05)
                for i in range(n - alive, n):
                    cg.remove(i)
            finally:
                stop.set()
                for t in scrapers:
                    t.join(LIMIT)
            self.assertEqual(bad, [])
            self.assertIsNone(a.p.poll(), a.stderr())
            text = self.poll(a, lambda t: not cgroup_series(t), "the removed cgroups' series")
            self.assertEqual(gauge(text, "hwc_cgroups"), 0)
            after = descriptors()
            print("%d cgroups made and removed in %.0f s: %d counted while they lived; descriptors "
                  "%d before, %d after" % (n, time.monotonic() - t0, len(seen), len(before), len(after)),
                  file=sys.stderr)
            extra = collections.Counter(after) - collections.Counter(before)
            self.assertEqual(len(after), len(before),
                             "new descriptors: %s" % extra.most_common(5))
            self.assertGreater(len(seen), n // 2)
            t0 = time.monotonic()
            a.p.send_signal(signal.SIGTERM)
            self.assertEqual(a.p.wait(LIMIT), 0, a.stderr())
            print("SIGTERM to exit after the churn: %.3f s" % (time.monotonic() - t0), file=sys.stderr)
            self.assertNotIn("reading the counters", a.stderr())
        finally:
            cg.__exit__()

    def test_scrape_while_a_cgroup_goes(self):
        """A cgroup removed after the agent opened its counters, with a
        task that counted in it gone: the scrape still answers 200 (the
        kernel keeps a removed cgroup's events readable) until the next
        look at the tree drops its series."""
        with Cgroups("gone") as cg:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob)
            cg.run(0, 1000)
            self.assertGreaterEqual(cgroup_series(self.metrics(a)[1])[cg.labels[0]], 1000)
            cg.remove(0)
            self.assertFalse(os.path.exists(cg.dirs[0]))
            # The first scrape may still show it (a look at most once a second); none fails.
            self.poll(a, lambda t: cg.labels[0] not in cgroup_series(t), "the removed cgroup's series")
            self.assertEqual(gauge(self.metrics(a)[1], "hwc_scrape_errors_total"), 0)

    def test_max_cgroups(self):
        """--max-cgroups 1 with 3 matching cgroups: one counted, 2 skipped, said once in the log."""
        with Cgroups("a", "b", "c") as cg:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob, "--max-cgroups", "1")
            for _ in range(2):
                text = self.metrics(a)[1]
                self.assertEqual(len(cgroup_series(text)), 1, text[-3000:])
                self.assertEqual(gauge(text, "hwc_cgroups"), 1)
                self.assertEqual(gauge(text, "hwc_cgroups_skipped"), 2)
                time.sleep(1.1)  # a scrape that looks at the cgroups again
            self.assertEqual(a.stderr().count("not counting cgroup"), 1, a.stderr())
            self.assertIn("--max-cgroups is reached", a.stderr())

    def test_descriptor_limit(self):
        """A descriptor limit too low for every matching cgroup: some are
        left out (the metric and the log say so), and the agent still has
        descriptors to serve scrapes with."""
        n = 60
        with Cgroups(*("f%d" % i for i in range(n))) as cg:
            a = self.agent("-e", "page-faults", "--cgroups", cg.glob, nofile=256)
            for _ in range(3):  # more connections than one
                text = self.metrics(a)[1]
            counted, skipped = gauge(text, "hwc_cgroups"), gauge(text, "hwc_cgroups_skipped")
            print("RLIMIT_NOFILE 256, %d cgroups: %d counted, %d skipped" % (n, counted, skipped),
                  file=sys.stderr)
            self.assertEqual(counted + skipped, n)
            self.assertGreater(skipped, 0)
            self.assertEqual(len(cgroup_series(text)), counted)
            self.assertIn("the descriptor limit (RLIMIT_NOFILE) is near", a.stderr())

    def test_more_descriptors_than_select_takes(self):
        """Cgroups enough for over 1024 descriptors (select()'s FD_SETSIZE):
        the agent still starts and answers, every cgroup counted."""
        events = "page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock"
        per_cgroup = len(events.split(",")) * len(hwctest.online_cpus())
        n = 1100 // per_cgroup + 1
        with Cgroups(*("m%d" % i for i in range(n))) as cg:
            a = self.agent("-e", events, "--cgroups", cg.glob)
            text = self.metrics(a)[1]
            self.assertEqual(gauge(text, "hwc_cgroups"), n)
            self.assertGreater(gauge(text, "process_open_fds"), 1100)
            self.assertEqual(len(cgroup_series(text)), n)


if __name__ == "__main__":
    unittest.main(verbosity=2)
