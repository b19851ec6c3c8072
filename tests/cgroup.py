#!/usr/bin/env python3
"""Counting and sampling cgroups from the command line: `hwc stat -G` (perf
stat's meaning: the Nth cgroup goes to the Nth event given before it),
with real cgroup v2 groups made for the test under the unified hierarchy
(found in /proc/self/mountinfo), a workload with a known number of page
faults moved into one, an idle one that must count zero, perf stat -G on
the same cgroups as the oracle, and the errors for a missing cgroup and a
bad path.  Needs root and a writable cgroup2 mount (exit 77 otherwise)."""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

from hwctest import program, run, workload

HWC = program("hwc")
PAGETOUCH = workload("pagetouch")
PAGES = 20000
HOTSPOTS = workload("hotspots")


def mountinfo():
    """(cgroup2 mount point or None, whether perf_event is bound to a v1 hierarchy)."""
    v2, v1_perf = None, False
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fields, rest = pre.split(), post.split()
            mnt = fields[4].replace("\\040", " ")
            if rest[0] == "cgroup2" and v2 is None:
                v2 = mnt
            elif rest[0] == "cgroup" and "perf_event" in rest[2].split(","):
                v1_perf = True
    return v2, v1_perf


def own_cgroup():
    """This process's cgroup v2 path ("0::/path")."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return "/"


def skip_reason():
    """Why test cgroups cannot be made and counted here, or None."""
    v2, v1_perf = mountinfo()
    if os.geteuid() != 0:
        return "needs root to make cgroups and count whole CPUs"
    if v2 is None:
        return "no cgroup2 (unified) hierarchy is mounted"
    if v1_perf:
        return "perf_event is bound to a cgroup v1 hierarchy here"
    if not os.access(os.path.join(v2, own_cgroup().lstrip("/")), os.W_OK):
        return f"the cgroup2 hierarchy at {v2} is not writable"
    return None


def setUpModule():
    global ROOT, PARENT
    reason = skip_reason()
    if reason:
        print(f"SKIP: {reason}", file=sys.stderr)
        sys.exit(77)
    ROOT = mountinfo()[0]
    # Our children go under our own cgroup; nothing is enabled in them.
    PARENT = own_cgroup().strip("/")


class Cgroups:
    """Child cgroups made for one test, removed afterwards."""

    def __init__(self, *names):
        self.rel = [os.path.join(PARENT, f"hwc-test-{os.getpid()}-{n}") for n in names]
        self.dirs = [os.path.join(ROOT, r) for r in self.rel]

    def __enter__(self):
        for d in self.dirs:
            os.mkdir(d)
        return self

    def __exit__(self, *exc):
        for d in reversed(self.dirs):  # children first
            # Its last task has been reaped; the kernel may still be letting go.
            for _ in range(100):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)

    def command(self, i, pages=PAGES):
        """A shell that moves itself into cgroup I and becomes pagetouch."""
        procs = os.path.join(self.dirs[i], "cgroup.procs")
        return ["sh", "-c", f'echo $$ > "{procs}" && exec "{PAGETOUCH}" {pages}']


def csv_rows(stderr):
    """(value, event, cgroup) of every CSV row of hwc stat -x, or perf stat -x,."""
    rows = []
    for f in csv.reader(io.StringIO(stderr)):
        if len(f) >= 4 and f[2] in ("page-faults", "minor-faults", "context-switches"):
            value = 0 if f[0] == "<not counted>" else int(float(f[0]))
            rows.append((value, f[2], f[3]))
    return rows


class StatCgroup(unittest.TestCase):
    def test_count_per_cgroup(self):
        """Rows per cgroup: the busy one counts pagetouch's faults, the idle one none."""
        with Cgroups("busy", "idle") as cg:
            r = run([HWC, "stat", "-x,", "-e", "page-faults,page-faults", "-G",
                     f"{cg.rel[0]},{cg.rel[1]}", "--", *cg.command(0)])
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = csv_rows(r.stderr)
            self.assertEqual([(e, g) for _, e, g in rows],
                             [("page-faults", cg.rel[0]), ("page-faults", cg.rel[1])], r.stderr)
            busy, idle = rows[0][0], rows[1][0]
            self.assertLess(abs(busy - PAGES), PAGES * 0.02, r.stderr)
            self.assertEqual(idle, 0, r.stderr)

    def test_perf_as_oracle(self):
        """perf stat -G on the same cgroup and workload counts the same, within 2%."""
        if not shutil.which("perf"):
            self.skipTest("perf is not installed")
        with Cgroups("oracle") as cg:
            r = run([HWC, "stat", "-x,", "-e", "page-faults", "-G", cg.rel[0], "--",
                     *cg.command(0)])
            self.assertEqual(r.returncode, 0, r.stderr)
            p = run(["perf", "stat", "-x,", "-a", "-e", "page-faults", "-G", cg.rel[0], "--",
                     *cg.command(0)])
            self.assertEqual(p.returncode, 0, p.stderr)
            ours, theirs = csv_rows(r.stderr), csv_rows(p.stderr)
            self.assertEqual(len(ours), 1, r.stderr)
            self.assertEqual(len(theirs), 1, p.stderr)
            self.assertEqual(ours[0][2], theirs[0][2])
            self.assertLess(abs(ours[0][0] - theirs[0][0]), theirs[0][0] * 0.02,
                            (r.stderr, p.stderr))

    def test_perf_mapping(self):
        """Which event gets which cgroup, as perf stat decides it: one cgroup
        alone goes to every event before it; later ones go by position; events
        after the last -G count everywhere."""
        if not shutil.which("perf"):
            self.skipTest("perf is not installed")
        with Cgroups("a", "b") as cg:
            a, b = cg.rel
            for args in (["-e", "page-faults,minor-faults", "-G", a],
                         ["-e", "page-faults", "-G", a, "-e", "minor-faults"],
                         ["-e", "page-faults,minor-faults", "-G", f"{a},{b}"],
                         ["-e", "page-faults,minor-faults", "-G", a, "-e", "context-switches",
                          "-G", b],
                         ["-e", "page-faults,minor-faults", "-G", f",{b}"]):
                r = run([HWC, "stat", "-x,", *args, "--", "true"])
                p = run(["perf", "stat", "-x,", "-a", *args, "--", "true"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual([(e, g) for _, e, g in csv_rows(r.stderr)],
                                 [(e, g) for _, e, g in csv_rows(p.stderr)], args)

    def test_errors(self):
        """A missing cgroup, a path out of the hierarchy, a file, a cgroup
        with no event, -G before any event: a clear error, no report."""
        with Cgroups("err") as cg:
            cases = [
                (["-e", "page-faults", "-G", "hwc-no-such-cgroup"], 1, "no cgroup 'hwc-no-such-cgroup'"),
                (["-e", "page-faults", "-G", "../etc"], 1, "cannot contain '..'"),
                (["-e", "page-faults", "-G", os.path.join(cg.dirs[0], "cgroup.procs")], 1,
                 "is not a cgroup"),
                (["-e", "page-faults", "-G", f"{cg.rel[0]},{cg.rel[0]}"], 2, "has no event"),
                (["-G", cg.rel[0], "-e", "page-faults"], 2, "-G needs events before it"),
                (["-e", "page-faults", "-G", cg.rel[0], "-p", "1"], 2, "cannot be combined"),
            ]
            for args, status, text in cases:
                r = run([HWC, "stat", *args, "--", "true"])
                self.assertEqual(r.returncode, status, (args, r.stderr))
                self.assertIn(text, r.stderr, args)
                self.assertNotIn("Performance counter stats", r.stderr, args)

    def test_absolute_path(self):
        """A path below the mount point names the same cgroup as a relative one."""
        with Cgroups("abs") as cg:
            r = run([HWC, "stat", "-x,", "-e", "page-faults", "-G", cg.dirs[0], "--",
                     *cg.command(0, 5000)])
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = csv_rows(r.stderr)
            self.assertEqual(len(rows), 1, r.stderr)
            self.assertLess(abs(rows[0][0] - 5000), 5000 * 0.02, r.stderr)

    def test_unprivileged(self):
        """Counting a cgroup counts whole CPUs: refused to nobody at paranoid > 0."""
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            if int(f.read()) <= 0:
                self.skipTest("perf_event_paranoid <= 0 lets everyone count whole CPUs")
        with Cgroups("nobody") as cg:
            r = run([HWC, "stat", "-e", "page-faults", "-G", cg.rel[0], "--", "true"],
                    nobody=True)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("system-wide counting needs root or CAP_PERFMON", r.stderr)


class Outsider:
    """A busy process outside the test's cgroups (hotspots), while the test runs."""

    def __enter__(self):
        self.p = subprocess.Popen([HOTSPOTS, "100000"], stdout=subprocess.DEVNULL)
        return self

    def __exit__(self, *exc):
        self.p.kill()
        self.p.wait()


class SampleCgroup(unittest.TestCase):
    def test_record(self):
        """hwc record --cgroup: samples of the cgroup's tasks only, each naming
        its cgroup so that perf report --sort cgroup shows it."""
        if not shutil.which("perf"):
            self.skipTest("perf is not installed")
        with Cgroups("rec") as cg, Outsider(), tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "cg.data")
            r = run([HWC, "record", "-e", "cpu-clock", "-F", "1000", "--cgroup", cg.rel[0],
                     "-o", data, "--", *cg.command(0, 200000)])
            self.assertEqual(r.returncode, 0, r.stderr)
            p = run(["perf", "report", "-i", data, "--stdio", "--sort", "cgroup,comm"])
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = [line.split() for line in p.stdout.splitlines()
                    if line.strip() and not line.startswith("#")]
            self.assertTrue(rows, p.stdout)
            # Every sample is in the cgroup, named by its path from the root.
            self.assertEqual({row[1] for row in rows}, {"/" + cg.rel[0]}, p.stdout)
            self.assertIn("pagetouch", {row[2] for row in rows}, p.stdout)
            self.assertNotIn("hotspots", p.stdout)

    def test_top(self):
        """hwc top --cgroup shows the cgroup's tasks, not the busy one outside."""
        with Cgroups("top") as cg, Outsider():
            r = run([HWC, "top", "--batch", "-n", "1", "-d", "1", "-e", "cpu-clock",
                     "--cgroup", cg.rel[0], "--", *cg.command(0, 2000000)])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn(f"cgroup {cg.rel[0]}", r.stdout)
            self.assertIn("pagetouch", r.stdout)
            self.assertNotIn("hotspots", r.stdout)

    def test_top_count_by_cgroup(self):
        """hwc top --count --by cgroup: a row per cgroup of the tree, the busy
        one (and its parent, which holds it) with page faults, the idle none."""
        with Cgroups("tree", "tree/busy", "tree/idle") as cg:
            tree, busy, idle = cg.rel
            procs = os.path.join(cg.dirs[1], "cgroup.procs")
            work = subprocess.Popen(["sh", "-c", f'echo $$ > "{procs}" && exec "{PAGETOUCH}" 4000000'])
            try:
                r = run([HWC, "top", "--count", "--by", "cgroup", "--cgroup", tree, "--batch",
                         "-n", "1", "-d", "0.5", "-e", "page-faults"])
            finally:
                work.kill()
                work.wait()
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = {}
            for line in r.stdout.splitlines():
                f = line.split()
                if len(f) == 2 and f[0].startswith("/"):
                    rows[f[0]] = f[1]
            self.assertEqual(set(rows), {"/" + tree, "/" + busy, "/" + idle}, r.stdout)
            self.assertEqual(rows["/" + idle], "0.0", r.stdout)
            self.assertNotEqual(rows["/" + busy], "0.0", r.stdout)
            self.assertNotEqual(rows["/" + tree], "0.0", r.stdout)

    def test_errors(self):
        """A missing cgroup, and --cgroup with a task: clear errors."""
        for cmd in (["record", "-o", os.devnull], ["top", "--batch"]):
            r = run([HWC, *cmd, "--cgroup", "hwc-no-such-cgroup", "--", "true"])
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("no cgroup 'hwc-no-such-cgroup'", r.stderr)
            r = run([HWC, *cmd, "--cgroup", "x", "-p", "1"])
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("cannot be combined with -p or -t", r.stderr)
        r = run([HWC, "top", "--batch", "--count", "--by", "cgroup", "--cgroup", "hwc-no-such-cgroup"])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("no cgroup 'hwc-no-such-cgroup'", r.stderr)
        r = run([HWC, "top", "--batch", "--by", "cgroup"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("give --count", r.stderr)


if __name__ == "__main__":
    unittest.main()
