"""hwc script on real cpu-clock recordings of the bundled workload, made by
hwc record and perf record, with and without call chains: as many samples
as `perf script` prints on the same file, the same comm, tid, cpu, time,
period, event, ip and symbol for the first samples (both outputs parsed),
-F lists as perf prints them, --json lines that say what the text says, a
Chrome trace-event file of the structure the Trace Event Format requires,
and clear errors for bad fields and damaged files."""
import json
import os
import re
import shutil
import struct
import tempfile
import unittest

from hwctest import as_perf_names, program, run, workload

HWC = program("hwc")
FIRST = 60  # samples compared field by field

# perf script's default sample line (perf 6.1): comm, tid, [cpu], time,
# period, event, then ip sym+off (dso), or a newline and the chain.
HEAD = re.compile(r"^\s*(?P<comm>\S+)\s+(?P<tid>-?\d+)\s+(?:\[(?P<cpu>\d+)\]\s+)?"
                  r"(?P<time>\d+\.\d{6}):\s+(?P<period>\d+)\s+(?P<event>\S+):\s*"
                  r"(?:(?P<ip>[0-9a-f]+) (?P<sym>.+?)(?:\+0x[0-9a-f]+)? \((?P<dso>.*)\))?$")
FRAME = re.compile(r"^\t\s*(?P<ip>[0-9a-f]+) (?P<sym>.+?)(?:\+0x[0-9a-f]+)? \((?P<dso>.*)\)$")


def parse(text):
    """The samples of perf script's default output: a dict per sample, its
    chain's frames (dicts) under "chain"."""
    samples = []
    for line in text.splitlines():
        if not line:
            continue
        m = FRAME.match(line)
        if m and line.startswith("\t"):
            samples[-1]["chain"].append(m.groupdict())
            continue
        m = HEAD.match(line)
        if not m:
            raise AssertionError("not a perf script line: %r" % line)
        d = m.groupdict()
        d["chain"] = []
        samples.append(d)
    for s in samples:  # a chain's first frame is the sample's own place
        if s["ip"] is None and s["chain"]:
            s["sym"] = s["chain"][0]["sym"]
    return samples


class Script(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hwc-script-")
        cls.files = {}
        # --sample-cpu: the fields compared include the CPU, which a
        # per-task recording's samples carry only when asked (as perf's).
        for name, opts in (("hwc", ["--sample-cpu"]), ("hwc-g", ["--sample-cpu", "-g"])):
            path = os.path.join(cls.dir, name + ".data")
            r = run([HWC, "record", "-e", "cpu-clock", *opts, "-o", path, "--", workload("hotspots"), "3"])
            if r.returncode != 0:
                raise unittest.SkipTest("hwc record cannot sample cpu-clock here: " + r.stderr)
            cls.files[name] = path
        cls.perf = shutil.which("perf")
        if cls.perf:
            for name, opts in (("perf", []), ("perf-g", ["-g"])):
                path = os.path.join(cls.dir, name + ".data")
                r = run(["perf", "record", "-q", "-e", "cpu-clock", *opts, "-o", path, "--",
                         workload("hotspots"), "3"])
                if r.returncode == 0:
                    cls.files[name] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def hwc(self, *args, rc=0):
        r = run([HWC, "script", *args])
        self.assertEqual(r.returncode, rc, r.stderr)
        return r

    def perf_script(self, *args):
        if not self.perf:
            self.skipTest("perf is not installed")
        r = run(["perf", "script", *args])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    # ---------------------------------------------------------- against perf

    def test_default_output_agrees_with_perf(self):
        for name in ("hwc", "hwc-g", "perf", "perf-g"):
            if name not in self.files:
                continue
            with self.subTest(file=name):
                path = self.files[name]
                ours, theirs = parse(self.hwc("-i", path).stdout), parse(self.perf_script("-i", path))
                self.assertEqual(len(ours), len(theirs))
                self.assertGreater(len(ours), 100)
                keys = ("comm", "tid", "cpu", "time", "period", "event", "ip", "sym")
                for a, b in zip(ours[:FIRST], theirs[:FIRST]):
                    a = dict(a, sym=as_perf_names(a["sym"], b["sym"]))
                    self.assertEqual({k: a[k] for k in keys}, {k: b[k] for k in keys})
                    self.assertEqual(len(a["chain"]), len(b["chain"]))
                    self.assertEqual([f["ip"] for f in a["chain"]], [f["ip"] for f in b["chain"]])
                # The workload's own functions are there, under their file.
                syms = {s["sym"] for s in ours}
                self.assertTrue({"f1", "f2"} <= syms, syms)
                if name.endswith("-g"):
                    self.assertTrue(any(f["sym"] == "main" for s in ours for f in s["chain"]))

    def test_long_recording_in_perf_order(self):
        # Forty rounds of the workload (its children run on the other CPU):
        # many FINISHED_ROUNDs, samples held over from one to the next.
        path = os.path.join(self.dir, "long.data")
        r = run([HWC, "record", "-g", "-e", "cpu-clock", "-o", path, "--", workload("hotspots"), "40"])
        self.assertEqual(r.returncode, 0, r.stderr)
        ours, theirs = parse(self.hwc("-i", path).stdout), parse(self.perf_script("-i", path))
        self.assertEqual(len(ours), len(theirs))
        self.assertEqual([(s["tid"], s["time"], s["cpu"]) for s in ours],
                         [(s["tid"], s["time"], s["cpu"]) for s in theirs])
        self.assertEqual([[f["ip"] for f in s["chain"]] for s in ours],
                         [[f["ip"] for f in s["chain"]] for s in theirs])

    def test_system_wide_threads_as_perf(self):
        # Every CPU: other processes too, some never named in the recording
        # (perf says ":TID").  Symbols and files are left out: what other
        # programs run may change while the test runs, and perf names their
        # anonymous executable maps (JIT code) /tmp/perf-PID.map.
        path = os.path.join(self.dir, "all.data")
        r = run([HWC, "record", "-a", "-e", "cpu-clock", "-o", path, "--", workload("hotspots"), "2"])
        if r.returncode != 0:
            self.skipTest("hwc record -a cannot sample here: " + r.stderr)
        ours, theirs = parse(self.hwc("-i", path).stdout), parse(self.perf_script("-i", path))
        self.assertEqual(len(ours), len(theirs))
        keys = ("comm", "tid", "cpu", "time", "period", "event", "ip")
        self.assertEqual([[s[k] for k in keys] for s in ours], [[s[k] for k in keys] for s in theirs])

    def test_same_text_as_perf_without_chains(self):
        # Same layout to the byte, lines whose symbols are named alike.
        path = self.files["hwc"]
        ours, theirs = self.hwc("-i", path).stdout.splitlines(), self.perf_script("-i", path).splitlines()
        self.assertEqual(len(ours), len(theirs))
        same = sum(a == b for a, b in zip(ours, theirs))
        self.assertGreater(same, 0.95 * len(ours), "\n".join(
            "%s\n%s" % (a, b) for a, b in zip(ours, theirs) if a != b))

    def test_fields_as_perf(self):
        path = self.files["hwc"]
        for spec in ("comm,tid,time,ip,sym", "pid,tid,cpu,period,event", "+pid", "time,period",
                     "ip,dso"):
            with self.subTest(fields=spec):
                ours = self.hwc("-i", path, "-F", spec).stdout.splitlines()
                theirs = self.perf_script("-i", path, "-F", spec).splitlines()
                self.assertEqual(len(ours), len(theirs))
                self.assertEqual(ours[:FIRST], theirs[:FIRST])
        # -LIST takes fields away from the default.
        out = self.hwc("-i", path, "-F", "-dso,-period").stdout.splitlines()
        self.assertNotIn("(", out[0])
        self.assertNotIn("250000", out[0])

    # ---------------------------------------------------------- json

    def test_json_lines_say_what_the_text_says(self):
        for name in ("hwc", "hwc-g"):
            with self.subTest(file=name):
                path = self.files[name]
                text = parse(self.hwc("-i", path).stdout)
                lines = self.hwc("-i", path, "--json").stdout.splitlines()
                self.assertEqual(len(lines), len(text))
                for line, t in zip(lines, text):
                    o = json.loads(line)
                    self.assertEqual(set(o) - {"callchain"},
                                     {"comm", "tid", "cpu", "time", "period", "event", "ip", "sym",
                                      "symoff", "dso"})
                    self.assertEqual(o["comm"], t["comm"])
                    self.assertEqual(o["tid"], int(t["tid"]))
                    self.assertEqual(o["cpu"], int(t["cpu"]))
                    self.assertEqual("%d.%06d" % (o["time"] // 10**9, o["time"] % 10**9 // 1000), t["time"])
                    self.assertEqual(o["sym"] or "[unknown]", t["sym"])
                    if t["chain"]:
                        self.assertEqual(len(o["callchain"]), len(t["chain"]))
                        self.assertEqual([f["sym"] or "[unknown]" for f in o["callchain"]],
                                         [f["sym"] for f in t["chain"]])
                    else:
                        self.assertEqual(int(o["ip"], 16), int(t["ip"], 16))
        o = json.loads(self.hwc("-i", self.files["hwc"], "--json", "-F", "tid,sym").stdout.splitlines()[0])
        self.assertEqual(set(o), {"tid", "sym"})

    # ---------------------------------------------------------- chrome

    def test_chrome_trace_events(self):
        out = os.path.join(self.dir, "trace.json")
        r = self.hwc("-i", self.files["hwc-g"], "--chrome", out)
        self.assertEqual(r.stdout, "")
        with open(out) as f:
            doc = json.load(f)
        events = doc["traceEvents"]
        self.assertIsInstance(events, list)
        spans = {}
        names = set()
        for e in events:
            # The Trace Event Format's required keys, with their types.
            self.assertIsInstance(e["name"], str)
            self.assertIn(e["ph"], ("X", "M"))
            self.assertIsInstance(e["pid"], int)
            self.assertIsInstance(e["tid"], int)
            if e["ph"] == "M":
                self.assertIn(e["name"], ("thread_name", "process_name"))
                self.assertIsInstance(e["args"]["name"], str)
                continue
            self.assertIsInstance(e["ts"], (int, float))
            self.assertIsInstance(e["dur"], (int, float))
            self.assertGreaterEqual(e["dur"], 0)
            names.add(e["name"])
            spans.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
        self.assertTrue({"main", "g", "f1", "f2"} <= names, names)
        self.assertTrue(any(e["ph"] == "M" and e["args"]["name"] == "hotspots" for e in events))
        # Complete events of one thread nest: two overlap only when one holds
        # the other (to a nanosecond: the microseconds are doubles).
        for tid, s in spans.items():
            s.sort(key=lambda x: (x[0], -x[1]))
            stack = []
            for a, b in s:
                while stack and stack[-1] <= a + 1e-3:
                    stack.pop()
                if stack:
                    self.assertLessEqual(b, stack[-1] + 1e-3, "tid %d: %s crosses its parent" % (tid, (a, b)))
                stack.append(b)

    def test_default_input(self):
        # No file named: hwc.data, else perf.data, as hwc report reads.
        d = tempfile.mkdtemp(dir=self.dir)
        r = run([HWC, "script"], cwd=d)
        self.assertEqual(r.returncode, 1)
        self.assertIn("no hwc.data or perf.data here", r.stderr)
        shutil.copy(self.files["hwc"], os.path.join(d, "perf.data"))
        r = run([HWC, "script", "-F", "tid"], cwd=d)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, self.hwc("-i", self.files["hwc"], "-F", "tid").stdout)

    # ---------------------------------------------------------- errors

    def test_bad_inputs(self):
        path = self.files["hwc"]
        r = self.hwc("-i", path, "-F", "comm,bogus", rc=2)
        self.assertIn("unknown field 'bogus'", r.stderr)
        self.assertEqual(r.stdout, "")
        if "perf" in self.files:
            # perf record of a command stores no CPU: asked for, it is an error.
            r = self.hwc("-i", self.files["perf"], "-F", "tid,cpu", rc=1)
            self.assertIn("have no CPU", r.stderr)
        with open(path, "rb") as f:
            data = f.read()
        cut = os.path.join(self.dir, "cut.data")
        with open(cut, "wb") as f:
            f.write(data[:len(data) // 2])
        r = self.hwc("-i", cut, rc=1)
        self.assertIn("truncated", r.stderr)
        # A record in the middle whose size runs past the data section.
        bad = bytearray(data)
        offset, _ = struct.unpack_from("<QQ", bad, 40)  # the header's data section
        for _ in range(50):
            offset += struct.unpack_from("<IHH", bad, offset)[2]
        struct.pack_into("<H", bad, offset + 6, 0xfff8)
        with open(cut, "wb") as f:
            f.write(bad)
        r = self.hwc("-i", cut, rc=1)
        self.assertIn("offset %d" % offset, r.stderr)
        r = self.hwc("-i", os.path.join(self.dir, "absent.data"), rc=1)
        self.assertIn("absent.data", r.stderr)
        r = self.hwc("-i", path, "--json", "--chrome", os.path.join(self.dir, "x.json"), rc=2)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "x.json")))
        # The export goes through hwc_output: a symbolic link is not followed.
        link = os.path.join(self.dir, "link.json")
        os.symlink(os.path.join(self.dir, "target.json"), link)
        r = self.hwc("-i", path, "--chrome", link, rc=1)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "target.json")))


if __name__ == "__main__":
    unittest.main()
