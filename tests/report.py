"""hwc report on real recordings of the bundled workload made by `perf record`
(frame-pointer and DWARF call chains): shares, call graph, agreement with
`perf report`, exports against their totals (pprof read back by `go tool
pprof`), options, and robustness (truncated, corrupted and foreign files;
deleted, stripped, rebuilt and unreadable binaries; short-lived processes)."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
SRC = os.environ.get("HWC_SRC", os.path.join(os.path.dirname(__file__), ".."))
HWC = os.path.join(BUILD, "bin", "hwc")
HOTSPOTS = os.path.join(BUILD, "workloads", "hotspots")
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def run(args, check=True, **kw):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def perf_record(out, workload, callgraph="-g", extra=()):
    """A perf recording of WORKLOAD; None when perf cannot record here."""
    if not shutil.which("perf"):
        return None
    p = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", *callgraph.split(),
             *extra, "-o", out, *workload], check=False)
    if p.returncode != 0 or not os.path.exists(out):
        sys.stderr.write("perf record failed: %s\n" % p.stderr)
        return None
    return out


def report_json(path, *opts, env=None):
    p = run([HWC, "report", "--json", *opts, path], env=env)
    doc = json.loads(p.stdout)
    assert doc["schema"] == "hwc-report/1"
    return doc


def self_shares(doc):
    return {e["symbol"]: e["self"] for e in doc["entries"]}


def perf_top(path, children=False):
    """perf report --stdio --sort symbol: [(symbol, percent)] in its order."""
    p = run(["perf", "report", "--stdio", "-i", path, "--sort", "symbol",
             "--children" if children else "--no-children", "-g", "none"])
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+(?:[\d.]+%\s+)?\[(.)\]\s+(.+?)(?:\s+-\s+-)?\s*$", line)
        if m:
            rows.append((m.group(3), float(m.group(1))))
    return rows


def pb_fields(buf):
    """The (field number, wire type, value) of a protobuf message: varints as
    ints, length-delimited fields as bytes."""
    i = 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(buf):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            yield field, wire, varint()
        elif wire == 2:
            n = varint()
            yield field, wire, buf[i:i + n]
            i += n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            yield field, wire, buf[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d" % wire)


def pprof_mappings(data):
    """A pprof Profile's mappings in order (their filename string ids) and
    its string table."""
    mappings, strings = [], []
    for field, _, v in pb_fields(data):
        if field == 3:
            mappings.append(next((x for f, _, x in pb_fields(v) if f == 5), 0))
        elif field == 6:
            strings.append(v.decode())
    return mappings, strings


class Recordings(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hwc-report-")
        cls.fp = perf_record(os.path.join(cls.tmp, "fp.data"), [HOTSPOTS, "20"])
        cls.dwarf = perf_record(os.path.join(cls.tmp, "dwarf.data"), [HOTSPOTS, "10"],
                                callgraph="--call-graph dwarf")
        if not cls.fp:
            raise unittest.SkipTest("perf record cannot record cpu-clock here")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---------------------------------------------------------- shares, graph

    def test_bundled_workload_shares(self):
        # Of the workload's own work (f1 + f2): a loaded machine adds kernel
        # samples (preemption) that scale both alike.
        shares = self_shares(report_json(self.fp, "--sort", "symbol"))
        work = shares["f1"] + shares["f2"]
        self.assertGreater(work, 50, shares)
        self.assertAlmostEqual(100 * shares["f1"] / work, 25.0, delta=5, msg=shares)
        self.assertAlmostEqual(100 * shares["f2"] / work, 75.0, delta=5, msg=shares)

    def test_call_graph_g_above_f1_and_f2(self):
        doc = report_json(self.fp, "--view", "caller")
        found = []

        def walk(nodes, parent):
            for n in nodes:
                if n["symbol"] in ("f1", "f2"):
                    found.append((parent, n["symbol"], n["total_samples"]))
                walk(n["children"], n["symbol"])
        walk(doc["tree"]["roots"], None)
        self.assertIn("g", [p for p, s, _ in found if s == "f1"])
        self.assertIn("g", [p for p, s, _ in found if s == "f2"])
        # A sample at f1's or f2's first instruction, before it sets up its
        # frame, skips g in a frame-pointer chain: a few such samples may
        # hang under main; everything else is under g.
        stray = sum(n for p, _, n in found if p != "g")
        self.assertLessEqual(stray, 0.01 * doc["samples"], found)
        text = run([HWC, "report", "--view", "caller", self.fp]).stdout
        g = re.search(r"^.*\bg  \(hotspots\)$", text, re.M)
        f2 = re.search(r"^.*\bf2  \(hotspots\)$", text, re.M)
        self.assertTrue(g and f2 and g.start() < f2.start(), text)
        # The callee tree puts each hot function first, g below it.
        callee = report_json(self.fp, "--view", "callee")["tree"]["roots"]
        top = {n["symbol"]: n for n in callee}
        self.assertIn("g", [c["symbol"] for c in top["f2"]["children"]])

    def test_gprof_view(self):
        out = run([HWC, "report", "--view", "gprof", self.fp]).stdout
        block = [b for b in out.split("-----") if re.search(r"^\[\d+\]\s.*\bg \(hotspots\)", b, re.M)]
        self.assertEqual(len(block), 1, out)
        self.assertRegex(block[0], r"main \[\d+\]")
        self.assertRegex(block[0], r"f1 \[\d+\]")
        self.assertRegex(block[0], r"f2 \[\d+\]")
        edges = report_json(self.fp, "--view", "gprof")["edges"]
        pairs = {(e["caller"]["symbol"], e["callee"]["symbol"]): e for e in edges}
        self.assertIn(("g", "f2"), pairs)
        self.assertGreater(pairs[("g", "f2")]["samples"], pairs[("g", "f1")]["samples"])

    # ---------------------------------------------------------- against perf

    def agree_with_perf(self, path):
        ours = report_json(path, "--sort", "symbol", "--no-children")
        mine = [(e["symbol"], e["self"]) for e in ours["entries"] if e["self"] >= 1.0]
        theirs = [(s, p) for s, p in perf_top(path) if p >= 1.0]
        self.assertEqual([s for s, _ in mine], [s for s, _ in theirs], (mine, theirs))
        for (s, a), (_, b) in zip(mine, theirs):
            self.assertAlmostEqual(a, b, delta=0.1, msg=s)
        # Every row is where samples landed: the callers on the chains, with
        # no self time, are no rows of their own, as in perf.
        self.assertEqual(len(ours["entries"]), len(perf_top(path)), ours["entries"])
        self.assertTrue(all(e["samples"] for e in ours["entries"]), ours["entries"])

    def test_agrees_with_perf_report_fp(self):
        self.agree_with_perf(self.fp)

    def test_agrees_with_perf_report_dwarf(self):
        if not self.dwarf:
            self.skipTest("perf record --call-graph dwarf failed here")
        self.agree_with_perf(self.dwarf)
        # Children (inclusive) shares come from the DWARF-unwound chains: g
        # holds f1 and f2, as perf's --children says.
        ours = {e["symbol"]: e["children"] for e in report_json(self.dwarf, "--sort", "symbol")["entries"]}
        theirs = dict(perf_top(self.dwarf, children=True))
        for name in ("main", "g", "f1", "f2"):
            self.assertAlmostEqual(ours[name], theirs[name], delta=0.5, msg=name)
        self.assertGreater(ours["g"], 95.0)

    def test_same_output_every_time(self):
        """Rows, callers and callees that tie are ordered by what the
        recording says, never by where the hash tables put them (which
        changes from run to run with address randomisation).  The
        command's processes only, not -a: the reports read the binaries
        the samples name, and other programs rebuild or delete theirs
        between two reports (the symbols then become [unknown] offsets).
        Eight ls and a hotspots still tie plenty: with tids as the last
        key the flat view changed every time."""
        out = os.path.join(self.tmp, "busy.data")
        run([HWC, "record", "-g", "-F", "2000", "-o", out, "--", "sh", "-c",
             "for i in 1 2 3 4 5 6 7 8; do ls -lR /usr/lib >/dev/null; done; %s 2" % HOTSPOTS])
        for view in ("flat", "gprof", "caller", "callee"):
            for fmt in ([], ["--json"]):  # JSON's gprof edges too
                argv = [HWC, "report", "--view", view, *fmt, out]
                first = run(argv).stdout
                self.assertGreater(len(first.splitlines()), 20, argv)
                for _ in range(2):
                    self.assertEqual(run(argv).stdout, first, argv)

    # ---------------------------------------------------------- exports

    def test_flat_text_as_json_without_children(self):
        """The flat text view without the children column sums each
        sample's own frame alone (its callers are not shown); JSON, which
        keeps the callers, must list the same rows, shares and samples, in
        the same order."""
        for path in (self.fp, self.dwarf):
            with self.subTest(path=os.path.basename(path)):
                keys = ["--no-children", "--sort", "comm,dso,symbol"]
                text = run([HWC, "report", *keys, path]).stdout
                ours = [(m.group(3), float(m.group(1)), int(m.group(2))) for m in re.finditer(
                    r"(?m)^\s+([\d.]+)%\s+(\d+)\s+\d+\s+.*\s(\S+)$", text)]
                doc = report_json(path, *keys)
                theirs = [(e["symbol"].split()[-1], e["self"], e["samples"])
                          for e in doc["entries"] if e["samples"]]
                self.assertGreater(len(ours), 3, text)
                self.assertEqual([(s, n) for s, _, n in ours], [(s, n) for s, _, n in theirs], text)
                for (s, a, _), (_, b, _) in zip(ours, theirs):
                    self.assertAlmostEqual(a, b, delta=0.0051, msg=s)

    def test_folded_agrees_with_report(self):
        doc = report_json(self.fp)
        out = run([HWC, "report", "--folded", "-", self.fp]).stdout
        counts = {}
        total = 0
        for line in out.splitlines():
            stack, n = line.rsplit(" ", 1)
            total += int(n)
            counts[stack] = counts.get(stack, 0) + int(n)
        self.assertEqual(total, doc["samples"])
        f2 = sum(n for s, n in counts.items() if s.split(";")[-1] == "f2")
        f2_report = sum(e["samples"] for e in doc["entries"] if e["symbol"] == "f2")
        self.assertEqual(f2, f2_report)
        self.assertTrue(any(s.endswith("main;g;f2") for s in counts), counts)
        # To a file: the same lines, and the export replaces the flat view.
        path = os.path.join(self.tmp, "stacks.folded")
        self.assertEqual(run([HWC, "report", "--folded=" + path, self.fp]).stdout, "")
        with open(path) as f:
            self.assertEqual(f.read(), out)

    def test_pprof_read_by_go_tool_pprof(self):
        if not shutil.which("go"):
            self.skipTest("go (Debian golang-go) is not installed: scripts/deps installs it")
        out = os.path.join(self.tmp, "p.pb.gz")
        run([HWC, "report", "--pprof", out, self.fp])
        with gzip.open(out) as f:
            self.assertGreater(len(f.read()), 100)
        doc = report_json(self.fp, "--sort", "symbol")
        env = dict(os.environ, HOME=self.tmp, PPROF_TMPDIR=self.tmp)
        for index, total_key, unit_scale in (("samples", "samples", 1), ("cpu-clock", "period", 1)):
            p = run(["go", "tool", "pprof", "-top", "-unit=ns" if index == "cpu-clock" else "-unit=minimum",
                     "-sample_index=" + index, "-nodefraction=0", out], env=env)
            m = re.search(r"of ([\d.]+)(ns)? total", p.stdout)
            self.assertTrue(m, p.stdout)
            self.assertEqual(int(float(m.group(1))), doc[total_key] * unit_scale, p.stdout)
            rows = {l.split()[-1]: float(l.split()[1].rstrip("%")) for l in p.stdout.splitlines()
                    if re.match(r"^\s*[\d.]+\S*\s+[\d.]+%", l)}
            self.assertAlmostEqual(rows["f2"], self_shares(doc)["f2"], delta=0.01)

    def test_pprof_main_program_first(self):
        # pprof names the profile after its first mapping ("File: ..."):
        # the program, not libc.so.6.
        out = os.path.join(self.tmp, "main.pb.gz")
        run([HWC, "report", "--pprof", out, self.fp])
        with gzip.open(out) as f:
            mappings, strings = pprof_mappings(f.read())
        self.assertGreater(len(mappings), 1)
        first = strings[mappings[0]]
        self.assertEqual(os.path.basename(first), "hotspots", [strings[m] for m in mappings])
        if shutil.which("go"):
            env = dict(os.environ, HOME=self.tmp, PPROF_TMPDIR=self.tmp)
            p = run(["go", "tool", "pprof", "-top", out], env=env)
            self.assertIn("File: hotspots", p.stdout)

    def test_flamegraph_written(self):
        out = os.path.join(self.tmp, "f.svg")
        run([HWC, "report", "--flamegraph", out, self.fp])
        svg = open(out).read()
        self.assertIn("<svg", svg)
        self.assertRegex(svg, r"<title>f2 \(\d+ samples, [\d.]+%\)</title>")
        self.assertIn("<script", svg)

    # ---------------------------------------------------------- options

    def test_srcline_and_inline(self):
        doc = report_json(self.fp, "--srcline", "--sort", "symbol,self")
        top = doc["entries"][0]
        self.assertEqual(top["symbol"], "f2")
        self.assertTrue(top["file"].endswith("hotspots.c"), top)
        self.assertGreater(top["line"], 0)
        # work() is inlined into f1 and f2: --inline makes it a frame.
        doc = report_json(self.fp, "--inline", "--view", "callee", "--sort", "symbol")
        roots = {n["symbol"]: n for n in doc["tree"]["roots"]}
        self.assertIn("work", roots, list(roots))
        callers = {c["symbol"] for c in roots["work"]["children"]}
        self.assertTrue({"f1", "f2"} <= callers, callers)

    def test_selection_options(self):
        all_ = report_json(self.fp)
        only = report_json(self.fp, "--symbol", "f1")
        self.assertEqual({e["symbol"] for e in only["entries"] if e["self"] > 0}, {"f1"})
        self.assertEqual(only["samples"] + only["not_selected"], all_["samples"])
        self.assertAlmostEqual(self_shares(only)["f1"], 100.0, delta=0.01)
        self.assertEqual(report_json(self.fp, "--comm", "nosuchcomm")["samples"], 0)
        self.assertEqual(report_json(self.fp, "--dso", "hotspots")["samples"],
                         sum(e["samples"] for e in all_["entries"] if e["dso"] == "hotspots"))
        pid = max(all_["threads"], key=lambda t: t["samples"])["pid"]
        self.assertEqual(report_json(self.fp, "--pid", str(pid))["samples"],
                         sum(t["samples"] for t in all_["threads"] if t["pid"] == pid))
        limited = report_json(self.fp, "--percent-limit", "10", "--sort", "comm,dso,symbol,self")
        self.assertEqual({e["symbol"] for e in limited["entries"]}, {"f1", "f2"})
        # By children (the default with call chains) their callers stay.
        limited = report_json(self.fp, "--percent-limit", "10")
        self.assertTrue({"f1", "f2", "g", "main"} <= {e["symbol"] for e in limited["entries"]})
        by_pid = report_json(self.fp, "--sort", "pid,symbol")
        self.assertTrue(all("pid" in e and "comm" not in e for e in by_pid["entries"]))
        ordered = report_json(self.fp, "--sort", "children,symbol")["entries"]
        self.assertEqual([e["children"] for e in ordered], sorted((e["children"] for e in ordered), reverse=True))

    def test_bad_options(self):
        for args, msg in ((["--sort", "bogus"], "unknown key 'bogus'"),
                          (["--view", "pie"], "unknown view 'pie'"),
                          (["--percent-limit", "x"], "not a percentage"),
                          (["--event", "nosuch"], "no event 'nosuch'")):
            p = run([HWC, "report", *args, self.fp], check=False)
            self.assertNotEqual(p.returncode, 0, args)
            self.assertIn(msg, p.stderr)

    def test_threads_view_short_lived_processes(self):
        doc = report_json(self.fp, "--view", "threads")
        threads = doc["threads"]
        # hotspots forks 20 children that exit at once: each is listed as exited.
        exited = [t for t in threads if t["exited"]]
        self.assertGreaterEqual(len(exited), 21, threads)
        # Every one is named after what its parent was called when it forked,
        # even where the file has the child's FORK before the parent's exec.
        self.assertEqual({t["comm"] for t in exited}, {"hotspots"}, threads)
        self.assertEqual(sum(t["samples"] for t in threads), doc["samples"])
        text = run([HWC, "report", "--view", "threads", self.fp]).stdout
        self.assertRegex(text, r"hotspots\s+\d+\s+\d+\s+[\d.]+%\s+\d+\s+yes")

    def test_threads_view_switches_and_exit_counts(self):
        # --switch-events: PERF_RECORD_SWITCH; -s (inherit_stat): a
        # PERF_RECORD_READ with each child's own count when it exits.
        rec = perf_record(os.path.join(self.tmp, "sw.data"), [HOTSPOTS, "4"], extra=("-s", "--switch-events"))
        if not rec:
            self.skipTest("perf record -s --switch-events failed here")
        threads = report_json(rec, "--view", "threads")["threads"]
        main = max(threads, key=lambda t: t["samples"])
        self.assertGreaterEqual(main["switches"], 4, main)  # it sleeps once per round
        children = [t for t in threads if t["pid"] != main["pid"]]
        self.assertEqual(len(children), 4, threads)
        self.assertTrue(all(t["exited"] for t in children), children)
        self.assertEqual({t["comm"] for t in threads}, {"hotspots"}, threads)
        # The kernel writes a READ only for a child that ran its event.
        self.assertTrue(any(t["counts"].get("cpu-clock", 0) > 0 for t in children), children)
        text = run([HWC, "report", "--view", "threads", rec]).stdout
        self.assertRegex(text, r"cpu-clock=\d+")

    def test_help(self):
        p = run([HWC, "report", "--help"])
        for opt in ("--view", "--sort", "--comm", "--pid", "--dso", "--symbol", "--percent-limit",
                    "--srcline", "--inline", "--json", "--pprof", "--folded", "--flamegraph"):
            self.assertIn(opt, p.stdout)


class Naming(unittest.TestCase):
    """Names perf gives that no symbol table holds: PLT stubs and the idle
    task, checked against perf report on the same file."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf (the oracle) is not installed")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-naming-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_plt_stubs_named_as_perf(self):
        # libmcalls calls libm through the PLT in a hot loop; sampled at
        # 50 kHz its stubs get a few dozen samples on most machines.  Every
        # stub perf names ("fabs@plt"), hwc names the same, with the same
        # share.  Some VMs take the timer's interrupt in a stub about once
        # in three recordings, whatever their length: up to 8 of them.
        work = [os.path.join(BUILD, "workloads", "libmcalls"), "30"]
        for attempt in range(8):
            path = os.path.join(self.tmp, "plt%d.data" % attempt)
            p = run(["perf", "record", "-q", "-e", "cpu-clock", "-c", "20000", "-o", path, *work],
                    check=False)
            if p.returncode != 0:
                self.skipTest("perf record cannot record cpu-clock here: " + p.stderr)
            # perf 6.1 names some stubs of ld.so and libc "@plt" alone:
            # those hwc names better, and they are not compared.
            theirs = {s: p for s, p in perf_top(path) if s.endswith("@plt") and s != "@plt"}
            if theirs:
                break
        if not theirs:
            self.skipTest("perf put no sample in a PLT stub in 8 recordings: this machine's "
                          "timer interrupts (cpu-clock) are not taken there")
        self.assertTrue(set(theirs) & {"fabs@plt", "sin@plt"}, theirs)
        doc = report_json(path, "--sort", "symbol", "--no-children")
        ours = {e["symbol"]: e["self"] for e in doc["entries"]}
        for name, share in theirs.items():
            self.assertIn(name, ours, (theirs, ours))
            self.assertAlmostEqual(ours[name], share, delta=0.01, msg=name)
        # Nothing of the workload's own file is left unnamed.
        unknown = [e for e in report_json(path, "--sort", "dso,symbol")["entries"]
                   if e["dso"] == "libmcalls" and not e["known"]]
        self.assertEqual(unknown, [])

    def test_plt_stub_breakpoints_named_as_perf(self):
        # The same names without sampling's luck: an execute breakpoint on
        # each stub (perf's mem:ADDR:x) puts every sample in it.  Its
        # address is fixed by running libmcalls without address
        # randomization (setarch -R), where every PIE program loads at one
        # base, read off cat's own maps.
        if not shutil.which("objdump") or not shutil.which("setarch"):
            self.skipTest("needs objdump and setarch")
        prog = os.path.join(BUILD, "workloads", "libmcalls")
        maps = run(["setarch", "-R", "cat", "/proc/self/maps"]).stdout
        base = int(maps.split("-", 1)[0], 16)
        stubs = dict((m.group(2), int(m.group(1), 16)) for m in re.finditer(
            r"^([0-9a-f]+) <(fabs@plt|sin@plt)>:", run(["objdump", "-d", prog]).stdout, re.M))
        self.assertEqual(set(stubs), {"fabs@plt", "sin@plt"}, stubs)
        for name, offset in sorted(stubs.items()):
            path = os.path.join(self.tmp, "bp-%s.data" % name)
            p = run(["perf", "record", "-q", "-e", "mem:0x%x:x" % (base + offset), "-c", "100",
                     "-o", path, "--", "setarch", "-R", prog, "1"], check=False)
            if p.returncode != 0:
                self.skipTest("perf record cannot set an execute breakpoint here: " + p.stderr)
            theirs = perf_top(path)
            self.assertEqual(theirs[:1], [(name, 100.0)], theirs)
            ours = self_shares(report_json(path, "--sort", "symbol", "--no-children"))
            self.assertEqual(ours, {name: 100.0}, ours)

    def test_idle_task_is_swapper(self):
        # A system-wide recording holds the idle task's samples (pid 0),
        # which perf calls swapper; a fully busy machine may have none
        # (tests/perfdata.c checks the name without idle samples).
        for attempt in range(3):
            path = os.path.join(self.tmp, "idle%d.data" % attempt)
            run([HWC, "record", "-a", "-o", path, "--", "sleep", "1"])
            p = run(["perf", "report", "--stdio", "-i", path, "--sort", "comm"])
            theirs = {m.group(2): float(m.group(1)) for m in
                      re.finditer(r"^\s+([\d.]+)%\s+(\S.*?)\s*$", p.stdout, re.M)}
            if "swapper" in theirs:
                break
        else:
            self.skipTest("no idle samples in 3 system-wide recordings (the CPUs were busy)")
        ours = {}
        for e in report_json(path, "--sort", "comm")["entries"]:
            ours[e["comm"]] = ours.get(e["comm"], 0) + e["self"]
        self.assertIn("swapper", ours, ours)
        self.assertAlmostEqual(ours["swapper"], theirs["swapper"], delta=0.01)
        # A task sampled with no COMM record (one that lived between the
        # /proc scan and its first record) is unnamed in both: perf calls
        # it ":PID", hwc "[unknown]"; the idle task is never one of them.
        unnamed = sum(v for k, v in theirs.items() if k.startswith(":"))
        self.assertAlmostEqual(ours.get("[unknown]", 0), unnamed, delta=0.05, msg=(theirs, ours))
        text = run([HWC, "report", "--sort", "comm", path]).stdout
        self.assertRegex(text, r"(?m)^\s+[\d.]+%.*\bswapper\b")


class ChildrenOrder(unittest.TestCase):
    def test_percent_limit_by_children_with_g(self):
        # With call chains the flat view shows Children, and (as perf
        # report) sorts and limits by it: main and g, all children and
        # no self, stay above --percent-limit, first.
        tmp = tempfile.mkdtemp(prefix="hwc-children-")
        self.addCleanup(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "g.data")
        run([HWC, "record", "-g", "-o", path, "--", HOTSPOTS, "10"])
        text = run([HWC, "report", "--percent-limit", "5", path]).stdout
        rows = []
        for line in text.splitlines():
            m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%.*\s(\S+)$", line)
            if m:
                rows.append((m.group(3), float(m.group(1)), float(m.group(2))))
        names = [n for n, _, _ in rows]
        for name in ("main", "g", "f1", "f2"):
            self.assertIn(name, names, text)
        children = [c for _, c, _ in rows]
        self.assertEqual(children, sorted(children, reverse=True), text)
        self.assertTrue(all(c >= 5 for c in children), text)
        self.assertLess(names.index("main"), names.index("f2"), text)
        self.assertLess(names.index("g"), names.index("f1"), text)
        # JSON lists the same rows in the same order.
        doc = report_json(path, "--percent-limit", "5")
        self.assertEqual([e["symbol"] for e in doc["entries"]], names)
        # An explicit order still wins: by self, main (no self) is hidden.
        text = run([HWC, "report", "--sort", "comm,dso,symbol,self", "--percent-limit", "5",
                    path]).stdout
        self.assertNotRegex(text, r"(?m)\smain$")
        self.assertRegex(text, r"(?m)\sf2$")
        # Without the children column, self orders and limits as before.
        text = run([HWC, "report", "--no-children", "--percent-limit", "5", path]).stdout
        self.assertNotRegex(text, r"(?m)\smain$")


class Robustness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hwc-report-rob-")
        cls.fp = perf_record(os.path.join(cls.tmp, "fp.data"), [HOTSPOTS, "4"])
        if not cls.fp:
            raise unittest.SkipTest("perf record cannot record cpu-clock here")
        cls.data = open(cls.fp, "rb").read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def bad_file(self, content, *expect):
        path = os.path.join(self.tmp, "bad.data")
        with open(path, "wb") as f:
            f.write(content)
        p = run([HWC, "report", path], check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("Sanitizer", p.stderr)
        for e in expect:
            self.assertIn(e, p.stderr)
        return p.stderr

    def test_missing_file(self):
        p = run([HWC, "report", os.path.join(self.tmp, "nope.data")], check=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("No such file", p.stderr)

    def test_foreign_files(self):
        self.bad_file(b"", "offset 0", "16 bytes")
        self.bad_file(b"#!/bin/sh\necho not a recording\n", "offset 0", "PERFILE2")
        self.bad_file(open(HWC, "rb").read(), "offset 0", "not a perf.data file")
        swapped = self.data[:8][::-1] + self.data[8:]
        self.bad_file(swapped, "byte order")
        pipe = self.data[:8] + (16).to_bytes(8, "little")
        self.bad_file(pipe, "pipe-mode")

    def test_truncated_files(self):
        data_off = int.from_bytes(self.data[40:48], "little")
        data_size = int.from_bytes(self.data[48:56], "little")
        # Every cut: a clear error, never a crash.  Cuts inside the header,
        # the attrs, the data and the features.
        for cut in sorted({8, 20, 60, 103, 110, data_off - 1, data_off + 5,
                           data_off + data_size // 2, data_off + data_size + 8, len(self.data) - 1}):
            err = self.bad_file(self.data[:cut], "offset")
            self.assertRegex(err, r"truncated|expected|past the end|bytes", (cut, err))

    def test_corrupted_records(self):
        data_off = int.from_bytes(self.data[40:48], "little")
        # A record header claiming size 0 at the start of the data section.
        bad = bytearray(self.data)
        bad[data_off + 6:data_off + 8] = (0).to_bytes(2, "little")
        self.bad_file(bytes(bad), "offset %d" % data_off, "smaller than its own 8-byte header")
        # A record claiming to run past the data section.
        bad = bytearray(self.data)
        size_pos = data_off + 6
        bad[size_pos:size_pos + 2] = (0xfff8).to_bytes(2, "little")
        self.bad_file(bytes(bad), "offset %d" % data_off, "data section ends")
        # attr_size that cannot be.
        bad = bytearray(self.data)
        bad[16:24] = (3).to_bytes(8, "little")
        self.bad_file(bytes(bad), "offset 16", "attr_size")
        # A sample whose callchain length is absurd: the sample decoder names the field.
        samples = self.find_sample()
        bad = bytearray(self.data)
        # sample_type IP|TID|TIME|CALLCHAIN|PERIOD: nr is after ip, pid/tid, time, period.
        bad[samples + 8 + 32:samples + 8 + 40] = (1 << 40).to_bytes(8, "little")
        self.bad_file(bytes(bad), "offset %d" % samples, "callchain")

    def find_sample(self):
        off = int.from_bytes(self.data[40:48], "little")
        end = off + int.from_bytes(self.data[48:56], "little")
        while off < end:
            typ = int.from_bytes(self.data[off:off + 4], "little")
            size = int.from_bytes(self.data[off + 6:off + 8], "little")
            if typ == 9:
                return off
            off += size
        self.fail("no sample in the recording")

    def copy_workload(self, name):
        path = os.path.join(self.tmp, name)
        shutil.copy(HOTSPOTS, path)
        return path

    def test_deleted_stripped_rebuilt_unreadable_binaries(self):
        env = dict(os.environ, HOME=os.path.join(self.tmp, "home"))
        os.makedirs(env["HOME"], exist_ok=True)
        exe = self.copy_workload("victim")
        rec = perf_record(os.path.join(self.tmp, "victim.data"), [exe, "4"])
        self.assertTrue(rec)
        good = report_json(rec, "--sort", "symbol", env=env)
        self.assertIn("f2", self_shares(good))
        # Unreadable by the reporting user: everything still reported, as [unknown].
        os.chmod(self.tmp, 0o755)
        os.chmod(rec, 0o644)
        os.chmod(exe, 0o700)
        p = run(NOBODY + [HWC, "report", "--json", "--sort", "dso,symbol", rec], check=False)
        if p.returncode == 0 or "setpriv" not in p.stderr:
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("permission denied", p.stderr)
            doc = json.loads(p.stdout)
            self.assert_unknown_but_complete(doc, good, "victim")
        os.chmod(exe, 0o755)
        # Stripped: f1/f2 are static functions of .symtab only: [unknown] + offsets.
        subprocess.run(["strip", exe], check=True)
        self.assertEqual(self.build_id(exe), self.build_id(HOTSPOTS))
        self.assert_unknown_but_complete(report_json(rec, "--sort", "dso,symbol", env=env), good, "victim")
        text = run([HWC, "report", rec], env=env).stdout
        self.assertIn("[unknown] victim+0x", text)
        # Rebuilt: another program at the same path has another build-id.
        shutil.copy(os.path.join(BUILD, "workloads", "sleeper"), exe)
        p = run([HWC, "report", "--json", "--sort", "dso,symbol", rec], env=env)
        self.assertIn("build-id differs", p.stderr)
        self.assert_unknown_but_complete(json.loads(p.stdout), good, "victim")
        # Deleted: the build-id cache in ~/.debug still has the original.
        shutil.copy(HOTSPOTS, exe)
        bid = self.build_id(exe)
        os.unlink(exe)
        p = run([HWC, "report", "--json", "--sort", "dso,symbol", rec], env=env)
        self.assertIn("no longer exists", p.stderr)
        self.assert_unknown_but_complete(json.loads(p.stdout), good, "victim")
        cache = os.path.join(env["HOME"], ".debug", ".build-id", bid[:2], bid[2:])
        os.makedirs(cache)
        shutil.copy(HOTSPOTS, os.path.join(cache, "elf"))
        self.assertEqual(self_shares(report_json(rec, "--sort", "symbol", env=env)), self_shares(good))

    def build_id(self, path):
        out = run(["readelf", "-n", path]).stdout
        return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)

    def assert_unknown_but_complete(self, doc, good, dso):
        self.assertEqual(doc["samples"], good["samples"])
        self.assertAlmostEqual(sum(e["self"] for e in doc["entries"]), 100.0, delta=0.01)
        unknown = [e for e in doc["entries"] if e["dso"] == dso]
        self.assertTrue(unknown)
        for e in unknown:
            if not e["known"]:
                self.assertEqual(e["symbol"], "[unknown]")
                self.assertIn("offset", e)
        self.assertTrue(any(not e["known"] for e in unknown), unknown)


if __name__ == "__main__":
    unittest.main(verbosity=2)
