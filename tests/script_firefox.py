"""hwc script --firefox on real cpu-clock recordings of the bundled workload
(hwc record and perf record, with call chains): the file is checked against
the Firefox Profiler's processed profile format, version 70, as its source
defines it (src/types/profile.ts and profile-logic/data-structures.ts of
github.com/firefox-devtools/profiler: the columns of every table, their
lengths, every index in range, stacks after their prefixes, samples in time
order), and what it says is checked against hwc report and perf report on
the same file: each function's samples as the innermost frame (self) and
anywhere in the stack (children).  No viewer is at hand (the profiler is an
npm web application; Debian does not package it), so the format's own
invariants stand in for loading it."""
import collections
import json
import os
import re
import shutil
import tempfile
import unittest

from hwctest import program, run, workload

HWC = program("hwc")
VERSION = 70

# Each table's columns (profile.ts, version 70).
COLUMNS = {
    "stackTable": {"frame", "prefixOffset"},
    "frameTable": {"address", "lib", "inlineDepth", "category", "subcategory", "func",
                   "nativeSymbol", "innerWindowID", "line", "column", "originalLocation"},
    "funcTable": {"name", "isJS", "relevantForJS", "resource", "source", "lineNumber",
                  "columnNumber", "originalLocation"},
    "resourceTable": {"name", "host", "type"},
    "nativeSymbols": {"libIndex", "address", "name", "functionSize"},
    "sources": {"id", "filename", "startLine", "startColumn", "sourceMapURL", "content"},
    "sourceLocationTable": {"source", "line", "column"},
}
SAMPLES = {"stack", "time", "weight", "weightType"}
MARKERS = {"data", "name", "startTime", "endTime", "phase", "category"}
THREAD = {"processType", "processStartupTime", "processShutdownTime", "registerTime",
          "unregisterTime", "pausedRanges", "name", "isMainThread", "pid", "tid", "samples",
          "markers"}
META = {"interval", "startTime", "processType", "product", "stackwalk", "version",
        "preprocessedProfileVersion", "categories", "markerSchema"}
LIB = {"arch", "name", "path", "debugName", "debugPath", "breakpadId", "codeId"}
COLORS = {"transparent", "purple", "green", "orange", "yellow", "lightblue", "blue", "brown",
          "magenta", "red", "lightred", "darkgrey", "grey"}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Checker:
    """The processed format's invariants, each failure an AssertionError."""

    def __init__(self, test, profile):
        self.t, self.p = test, profile

    def table(self, name, table, columns):
        t = self.t
        t.assertTrue(columns <= set(table), "%s lacks %s" % (name, columns - set(table)))
        t.assertTrue(is_int(table["length"]) and table["length"] >= 0, name)
        for c in columns:
            if isinstance(table[c], list):
                t.assertEqual(len(table[c]), table["length"], "%s.%s" % (name, c))
            else:  # weight: null
                t.assertIsNone(table[c], "%s.%s" % (name, c))
        return table["length"]

    def index(self, name, values, n, allowed=()):
        for i, v in enumerate(values):
            if v in allowed:
                continue
            self.t.assertTrue(is_int(v) and 0 <= v < n, "%s[%d] = %r not in [0, %d)" % (name, i, v, n))

    def check(self):
        t, p = self.t, self.p
        meta, shared = p["meta"], p["shared"]
        t.assertTrue(META <= set(meta), META - set(meta))
        t.assertEqual(meta["preprocessedProfileVersion"], VERSION)
        t.assertGreater(meta["interval"], 0)
        t.assertIsInstance(meta["markerSchema"], list)
        cats = meta["categories"]
        t.assertGreater(len(cats), 0)
        for c in cats:
            t.assertIn(c["color"], COLORS)
            t.assertGreater(len(c["subcategories"]), 0)
        for lib in p["libs"]:
            t.assertTrue(LIB <= set(lib), lib)
            t.assertRegex(lib["breakpadId"], r"^([0-9A-F]{33})?$")
        strings = shared["stringArray"]
        t.assertTrue(all(isinstance(s, str) for s in strings))
        n = {k: self.table(k, shared[k], cols) for k, cols in COLUMNS.items()}
        st, fr, fu = shared["stackTable"], shared["frameTable"], shared["funcTable"]
        rs, ns = shared["resourceTable"], shared["nativeSymbols"]
        # Stacks: parents first (prefixOffset 0 for a root, else how far back).
        self.index("stackTable.frame", st["frame"], n["frameTable"])
        for i, off in enumerate(st["prefixOffset"]):
            t.assertTrue(is_int(off) and 0 <= off <= i, "stack %d prefixOffset %r" % (i, off))
        pairs = [(f, i - o if o else None) for i, (f, o) in enumerate(zip(st["frame"], st["prefixOffset"]))]
        t.assertEqual(len(pairs), len(set(pairs)), "a stack is there twice")
        # Frames.
        self.index("frameTable.func", fr["func"], n["funcTable"])
        self.index("frameTable.lib", fr["lib"], len(p["libs"]), allowed=(-1,))
        self.index("frameTable.nativeSymbol", fr["nativeSymbol"], n["nativeSymbols"], allowed=(None,))
        self.index("frameTable.category", fr["category"], len(cats))
        for i, (c, s) in enumerate(zip(fr["category"], fr["subcategory"])):
            self.index("frameTable.subcategory", [s], len(cats[c]["subcategories"]))
        for a in fr["address"]:
            t.assertTrue(is_int(a) and -1 <= a < 2 ** 31, a)
        self.index("frameTable.inlineDepth", fr["inlineDepth"], 256)
        for i, (sym, lib) in enumerate(zip(fr["nativeSymbol"], fr["lib"])):
            if sym is not None:
                t.assertEqual(ns["libIndex"][sym], lib, "frame %d: its symbol is of another lib" % i)
        # Functions, resources, symbols.
        self.index("funcTable.name", fu["name"], len(strings))
        self.index("funcTable.resource", fu["resource"], n["resourceTable"], allowed=(-1,))
        t.assertTrue(all(isinstance(b, bool) for b in fu["isJS"] + fu["relevantForJS"]))
        self.index("resourceTable.name", rs["name"], len(strings))
        self.index("resourceTable.type", rs["type"], 6)
        self.index("nativeSymbols.libIndex", ns["libIndex"], len(p["libs"]))
        self.index("nativeSymbols.name", ns["name"], len(strings))
        # Threads.
        for th in p["threads"]:
            t.assertTrue(THREAD <= set(th), THREAD - set(th))
            t.assertIsInstance(th["pid"], str)
            t.assertTrue(is_int(th["tid"]))
            self.table("samples", th["samples"], SAMPLES - {"weightType"})
            t.assertEqual(th["samples"]["weightType"], "samples")
            self.table("markers", th["markers"], MARKERS)
            self.index("samples.stack", th["samples"]["stack"], n["stackTable"], allowed=(None,))
            times = th["samples"]["time"]
            t.assertEqual(times, sorted(times), "samples out of time order")
        return self

    # ------------------------------------------------------------ reading

    def stacks(self):
        """Every sample's stack as function names, innermost first."""
        sh = self.p["shared"]
        st, fr, fu, strings = sh["stackTable"], sh["frameTable"], sh["funcTable"], sh["stringArray"]
        libs = self.p["libs"]
        for th in self.p["threads"]:
            for s in th["samples"]["stack"]:
                names = []
                while s is not None:
                    f = st["frame"][s]
                    lib = fr["lib"][f]
                    names.append((libs[lib]["name"] if lib >= 0 else "[unknown]",
                                  strings[fu["name"][fr["func"][f]]]))
                    off = st["prefixOffset"][s]
                    s = s - off if off else None
                yield names

    def counts(self):
        """(dso, function) -> samples as innermost frame, and anywhere in the stack."""
        self_, children = collections.Counter(), collections.Counter()
        for names in self.stacks():
            if names:
                self_[names[0]] += 1
            for key in set(names):
                children[key] += 1
        return self_, children


class ScriptFirefox(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hwc-firefox-")
        cls.files = {}
        path = os.path.join(cls.dir, "hwc.data")
        r = run([HWC, "record", "-g", "-e", "cpu-clock", "-o", path, "--", workload("hotspots"), "3"])
        if r.returncode != 0:
            raise unittest.SkipTest("hwc record cannot sample cpu-clock here: " + r.stderr)
        cls.files["hwc"] = path
        cls.perf = shutil.which("perf")
        if cls.perf:
            path = os.path.join(cls.dir, "perf.data")
            r = run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", path, "--",
                     workload("hotspots"), "3"])
            if r.returncode == 0:
                cls.files["perf"] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def export(self, name):
        out = os.path.join(self.dir, name + ".json")
        r = run([HWC, "script", "-i", self.files[name], "--firefox", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"\d+ samples written to ")
        with open(out) as f:
            return Checker(self, json.load(f)).check()

    def report(self, path):
        r = run([HWC, "report", "-i", path, "--json", "--children", "--sort", "dso,symbol"])
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def test_format_and_counts_agree_with_hwc_report(self):
        for name in sorted(self.files):
            with self.subTest(file=name):
                ff = self.export(name)
                rep = self.report(self.files[name])
                self_, children = ff.counts()
                self.assertEqual(sum(self_.values()), rep["samples"])
                self.assertEqual(sum(len(t["samples"]["stack"]) for t in ff.p["threads"]), rep["samples"])
                per_sample = rep["period"] // rep["samples"]  # cpu-clock: one fixed period
                known = {}
                for e in rep["entries"]:
                    if e["known"]:
                        known[(e["dso"], e["symbol"])] = (e["samples"], e["children_period"] // per_sample)
                ours = {k: (self_[k], children[k]) for k in known}
                self.assertEqual(ours, known)
                self.assertGreater(self_[("hotspots", "f2")], 50)
                self.assertIn(("hotspots", "main"), children)

    def test_self_samples_agree_with_perf_report(self):
        if "perf" not in self.files:
            self.skipTest("perf is not installed or cannot record here")
        r = run(["perf", "report", "-i", self.files["perf"], "-n", "--no-children", "-g", "none",
                 "--sort", "dso,sym", "--stdio"])
        self.assertEqual(r.returncode, 0, r.stderr)
        theirs = {}
        for line in r.stdout.splitlines():
            m = re.match(r"^\s+[\d.]+%\s+(\d+)\s+(\S+)\s+\[[.k]\] (.+?)\s*$", line)
            if m and not m.group(3).startswith("0x"):
                theirs[(m.group(2), m.group(3))] = int(m.group(1))
        self.maxDiff = None
        self_, _ = self.export("perf").counts()
        # Rows from 1% up, as tests/report.py compares: a stray sample in
        # libc may be named by another alias of its address by perf
        # (__GI_strtoll), see hwc-script(1) BUGS.
        total = sum(self_.values())
        theirs = {k: v for k, v in theirs.items() if v * 100 >= total}
        self.assertGreaterEqual(len(theirs), 2, r.stdout)
        self.assertEqual({k: self_[k] for k in theirs}, theirs)

    def test_libs_and_threads(self):
        ff = self.export("hwc")
        p = ff.p
        names = {lib["name"] for lib in p["libs"]}
        self.assertIn("hotspots", names)
        for lib in p["libs"]:
            if lib["codeId"]:  # the GNU build-id, and breakpad's GUID of its first 16 bytes
                self.assertRegex(lib["codeId"], r"^[0-9a-f]{2,40}$")
                b = bytes.fromhex(lib["codeId"])[:16].ljust(16, b"\0")
                guid = b[3::-1] + b[5:3:-1] + b[7:5:-1] + b[8:]
                self.assertEqual(lib["breakpadId"], guid.hex().upper() + "0")
        self.assertTrue(any(lib["codeId"] for lib in p["libs"]))
        self.assertEqual({t["name"] for t in p["threads"]}, {"hotspots"})
        self.assertTrue(all(t["isMainThread"] == (str(t["tid"]) == t["pid"]) for t in p["threads"]))
        self.assertEqual(p["meta"]["interval"], 0.25)  # hwc record's default 4000 Hz cpu-clock
        self.assertEqual(p["meta"]["stackwalk"], 1)

    def test_errors(self):
        out = os.path.join(self.dir, "x.json")
        r = run([HWC, "script", "-i", self.files["hwc"], "--firefox", out, "--json"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("give one of them", r.stderr)
        r = run([HWC, "script", "-i", self.files["hwc"], "--firefox", out, "--chrome", out])
        self.assertEqual(r.returncode, 2)
        link = os.path.join(self.dir, "link.json")
        os.symlink("/etc/passwd-not-here", link)
        r = run([HWC, "script", "-i", self.files["hwc"], "--firefox", link])
        self.assertEqual(r.returncode, 1)
        self.assertFalse(os.path.exists("/etc/passwd-not-here"))
        r = run([HWC, "script", "-i", os.path.join(self.dir, "missing.data"), "--firefox", out])
        self.assertEqual(r.returncode, 1)
        self.assertIn("missing.data", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
