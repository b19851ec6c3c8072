"""hwc report's perf options on perf's own recordings of the bundled
workload, with perf report --stdio as the oracle (same file, same options,
shares to two decimals): --sort cpu, srcline and parent (with -p), --time,
--cpu, --tid, --max-stack, --children; and their bad inputs."""
import json
import os
import shutil
import tempfile
import unittest

import hwctest

HWC = hwctest.program("hwc")
HOTSPOTS = hwctest.workload("hotspots")
# perf prints two decimals: a share it rounds, ours within half of that.
DELTA = 0.0051


def perf_rows(path, keys, *opts, children=False):
    """perf report --stdio's rows: {(key values...): (self or children share)}.
    Fields are separated by ';' (-t), symbols lose their [.]/[k] mark.  Its
    call chains are read in callee order, innermost first, as hwc reads them
    (perf's children view defaults to caller order, which changes what
    --max-stack keeps and which frame -p finds)."""
    p = hwctest.run_ok(["perf", "report", "--stdio", "-i", path, "-g", "graph,0.5,callee", "-t", ";", "--sort", keys,
             "--children" if children else "--no-children", *opts])
    rows = {}
    for line in p.stdout.splitlines():
        f = [x.strip() for x in line.split(";")]
        if line.startswith("#") or len(f) < 2 or not f[0].endswith("%"):
            continue  # comments and the call graph below each row
        share = float(f[0].rstrip("%"))
        f = f[2:] if children else f[1:]
        f = [x[4:] if x[:1] == "[" and x[2:4] == "] " else x for x in f]
        rows[tuple(f)] = rows.get(tuple(f), 0) + share
    return rows


def hwc_rows(path, keys, *opts, children=False):
    p = hwctest.run_ok([HWC, "report", "--json", "--sort", keys,
             "--children" if children else "--no-children", *opts, path])
    doc = json.loads(p.stdout)
    rows = {}
    names = {"sym": "symbol"}
    for e in doc["entries"]:
        k = []
        for key in keys.split(","):
            v = e[names.get(key, key)]
            k.append("%03d" % v if key == "cpu" else str(v))
        share = e["children"] if children else e["self"]
        rows[tuple(k)] = rows.get(tuple(k), 0) + share
    return rows, doc


def perf_times(path):
    """The sample times perf script prints, as it prints them."""
    out = hwctest.run_ok(["perf", "script", "-i", path, "-F", "time"]).stdout
    return [t.strip().rstrip(":") for t in out.splitlines() if t.strip()]


class Options(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf (the oracle) is not installed")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-reportopts-")
        cls.path = os.path.join(cls.tmp, "cpu.data")
        # --sample-cpu: a per-task recording whose samples carry their CPU.
        p = hwctest.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-g", "--sample-cpu",
                         "-o", cls.path, HOTSPOTS, "10"], timeout=600)
        if p.returncode != 0:
            raise unittest.SkipTest("perf record cannot record cpu-clock here: " + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def agree(self, keys, *opts, children=False, perf_opts=(), floor=1.0):
        """hwc's rows are perf's, with its shares; rows under FLOOR percent (as report.py)
        are left out: a few samples in libc may be named by another alias
        of their symbol (perf's __GI___wait4, __libc_fork)."""
        # perf calls --dso --dsos.
        popts = ["--dsos" if o == "--dso" else o for o in opts]
        theirs = perf_rows(self.path, keys, *popts, *perf_opts, children=children)
        ours, doc = hwc_rows(self.path, keys, *opts, children=children)
        # Rows perf shows are ours; ours it does not show have no share.
        self.assertTrue(theirs, "perf showed no rows")
        for k, v in theirs.items():
            if v >= floor:
                self.assertIn(k, ours, (k, sorted(ours)))
                self.assertAlmostEqual(ours[k], v, delta=DELTA, msg=k)
        for k, v in ours.items():
            if k not in theirs:
                self.assertLess(v, max(floor, 0.005), k)
        return doc

    def test_sort_cpu_srcline_parent(self):
        self.agree("cpu,sym")
        # Source lines of the workload (perf finds some of ld.so's that
        # libdw does not: another question than the key's).
        for keys in ("cpu,srcline,parent", "srcline,sym", "cpu,comm,srcline"):
            with self.subTest(keys=keys):
                self.agree(keys, "--dso", "hotspots", perf_opts=("--percentage", "relative"))
        # The workload's own lines: f2's loop is work() inlined at hotspots.c.
        ours, _ = hwc_rows(self.path, "srcline")
        self.assertTrue(any(k[0].startswith("hotspots.c:") and v > 20 for k, v in ours.items()), ours)

    def test_parent_pattern(self):
        # -p adds the parent key; g calls f1 and f2, which hold the samples.
        doc = self.agree("parent", "-p", "^g$")
        self.assertIn("parent", doc["sort"])
        self.assertGreater(dict((e["parent"], e["self"]) for e in doc["entries"]).get("g", 0), 90)
        self.agree("parent,sym", "-p", "^(g|main)$", children=True, floor=1.0)
        # Default pattern (^sys_|^do_page_fault): nothing of the workload matches.
        self.agree("parent")

    def test_max_stack(self):
        for n in ("1", "2", "3"):
            with self.subTest(max_stack=n):
                # With one frame no caller is seen: every parent is [other].
                doc = self.agree("parent", "-p", "^g$", "--max-stack", n)
                if n == "1":
                    self.assertEqual([e["parent"] for e in doc["entries"]], ["[other]"])
                # The innermost N frames, as perf in callee order.
                self.agree("sym", "--max-stack", n, children=True, floor=1.0)
        full, _ = hwc_rows(self.path, "sym", children=True)
        two, _ = hwc_rows(self.path, "sym", "--max-stack", "2", children=True)
        self.assertGreater(full[("main",)], 90)
        # Two frames reach main only from the few samples in g itself.
        self.assertLess(two.get(("main",), 0), 5)

    def test_children(self):
        self.agree("sym", children=True, floor=1.0)
        ours, doc = hwc_rows(self.path, "sym", children=True)
        self.assertGreater(ours[("g",)], 90)
        text = hwctest.run_ok([HWC, "report", "--children", "--no-children", self.path]).stdout
        self.assertNotIn("Children", text)
        text = hwctest.run_ok([HWC, "report", "--no-children", "--children", self.path]).stdout
        self.assertIn("Children", text)

    def test_time(self):
        times = perf_times(self.path)
        self.assertGreater(len(times), 100)
        a, b = times[len(times) // 4], times[len(times) // 2]
        for span in ("%s,%s" % (a, b), "%s," % a, ",%s" % b):
            with self.subTest(time=span):
                doc = self.agree("sym", "--time", span)
                self.assertGreater(doc["not_selected"], 0)
        # perf's percent forms: shares of the span from the first sample to
        # the last, which the header keeps (SAMPLE_TIME).
        for span in ("10%/2", "0%-50%", "25%-100%", "50%/2"):
            with self.subTest(time=span):
                self.agree("sym", "--time", span)
        # The selected and the others are all the samples; perf script's
        # times are to the microsecond, so only those between are sure.
        _, all_ = hwc_rows(self.path, "sym")
        _, doc = hwc_rows(self.path, "sym", "--time", "%s,%s" % (a, b))
        self.assertEqual(doc["samples"] + doc["not_selected"], all_["samples"])
        inside = sum(1 for t in times if float(a) < float(t) < float(b))
        self.assertGreaterEqual(doc["samples"], inside)
        self.assertLessEqual(doc["samples"], inside + times.count(a) + times.count(b))

    def test_sort_cpu_ties(self):
        # Rows of equal share and function are in CPU order, not in the
        # order the hash table happened to hold them.  A fixed period on
        # every CPU makes such ties common (functions with one sample each).
        if len(hwctest.online_cpus()) < 2:
            self.skipTest("one CPU: no rows that differ only by CPU")
        path = os.path.join(self.tmp, "ties.data")
        # the same work on CPUs 0 and 1 at once: the same functions, a few
        # samples each, on both
        cpus = hwctest.online_cpus()[:2]
        work = " & ".join("taskset -c %d ls -lR /usr/lib >/dev/null 2>&1" % c for c in cpus)
        hwctest.run_ok(["perf", "record", "-q", "-a", "-e", "cpu-clock", "-c", "250000", "--sample-cpu",
                        "-o", path, "--", "sh", "-c", work + "; wait"])
        _, doc = hwc_rows(path, "sym,cpu")
        ties = [(a, b) for a, b in zip(doc["entries"], doc["entries"][1:])
                if a["known"] and a["self"] == b["self"] and
                (a["symbol"], a["dso_path"]) == (b["symbol"], b["dso_path"])]
        self.assertTrue(ties, "no tied rows to check")
        for a, b in ties:  # (equal CPUs: two functions of one name, as in the kernel)
            self.assertLessEqual(a["cpu"], b["cpu"], (a, b))

    def test_stdio_is_the_text(self):
        # perf's --stdio, accepted so that perf's command lines work.
        text = hwctest.run_ok([HWC, "report", self.path]).stdout
        self.assertIn("%", text)
        self.assertEqual(hwctest.run_ok([HWC, "report", "--stdio", self.path]).stdout, text)

    def test_cpu(self):
        ours, doc = hwc_rows(self.path, "cpu")
        cpus = [int(k[0]) for k in ours]
        for cpu in cpus:
            with self.subTest(cpu=cpu):
                self.agree("cpu,sym", "--cpu", str(cpu))
        # Every CPU the samples name: all samples; a CPU none names: none.
        everything = "0-%d" % max(cpus)
        self.assertEqual(hwc_rows(self.path, "sym", "--cpu", everything)[1]["samples"], doc["samples"])
        self.assertEqual(hwc_rows(self.path, "sym", "--cpu", "100000")[1]["samples"], 0)

    def test_tid(self):
        _, doc = hwc_rows(self.path, "sym")
        tid = max(doc["threads"], key=lambda t: t["samples"])["tid"]
        # perf shares a --tid selection of all samples unless asked for
        # relative shares; hwc's selections share the selected samples.
        self.agree("sym", "--tid", str(tid), perf_opts=("--percentage", "relative"))
        _, sel = hwc_rows(self.path, "sym", "--tid", str(tid))
        self.assertEqual(sel["samples"], [t["samples"] for t in doc["threads"] if t["tid"] == tid][0])

    def test_bad_options(self):
        nocpu = os.path.join(self.tmp, "nocpu.data")
        hwctest.run_ok(["perf", "record", "-q", "-e", "cpu-clock", "-F", "500", "-o", nocpu, HOTSPOTS, "1"])
        for args, path, msg in (
                (["--time", "x"], self.path, "--time: 'x' is not START,END"),
                (["--time", "5,3"], self.path, "--time: '5,3' is not"),
                (["--time", "1.0000000001,"], self.path, "is not START,END"),
                (["--time", ","], self.path, "--time: ',' is not"),
                (["--time", "10%"], self.path, "--time: '10%' is not"),
                (["--time", "50%-10%"], self.path, "--time: '50%-10%' is not"),
                (["--time", "0%/1"], self.path, "--time: '0%/1' is not"),
                (["--time", "60%/2"], self.path, "--time: '60%/2' is not"),
                (["--time", "10%/2,10%/4"], self.path, "is not START,END"),
                (["--cpu", "a"], self.path, "--cpu: 'a' is not a list of CPUs"),
                (["--cpu", "3-1"], self.path, "--cpu: '3-1' is not"),
                (["--cpu", "1,"], self.path, "--cpu: '1,' is not"),
                (["--tid", "x"], self.path, "--tid: 'x' is not a list of thread ids"),
                (["--max-stack", "0"], self.path, "--max-stack: '0' is not a number"),
                (["-p", "("], self.path, "--parent: '(' is not a regular expression"),
                (["--sort", "cpu"], nocpu, "do not carry their CPU"),
                (["--cpu", "0"], nocpu, "do not carry their CPU"),
                (["--sort", "parent"], nocpu, "--sort parent needs call chains"),
                (["--stdio", "--json"], self.path, "--stdio and --json: choose one")):
            with self.subTest(args=args):
                p = hwctest.run([HWC, "report", *args, path], timeout=600)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(msg, p.stderr)
                self.assertEqual(p.stdout, "")


if __name__ == "__main__":
    unittest.main(verbosity=2)
