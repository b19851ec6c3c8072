"""Every tool's command line against what a full disk, a shell command and
a bad number do to it (issue 10):
- standard output on /dev/full fails with "TOOL: write error: No space left
  on device" and a failure status, as GNU's close_stdout does, never exit 0
  with the output lost; a file -o names is refused when it is a device
  (tests/outputs.py) and, when writing it fails (a file size limit stands
  in for a full disk), the tool says so, fails, and leaves no file;
- options end at the first operand, so `cputrack -c EV sh -c 'x; y'`
  runs sh -c without POSIXLY_CORRECT, as on illumos and the BSDs;
- every numeric option refuses NaN, infinities, negative numbers, overflow,
  the empty string and trailing text, with a message that names the option
  and its range, and the tool's usage status: no crash, no hang."""
import os
import resource
import shutil
import signal
import subprocess
import tempfile
import unittest

import hwctest
from hwctest import program, workload

HWC, PCTR = program("hwc"), program("pctr")
CPUTRACK, CPUSTAT = program("cputrack"), program("cpustat")
PMCSTAT, PMCCONTROL = program("pmcstat"), program("pmccontrol")
ENOSPC = "write error: No space left on device"
# A hang guard: the tools answer bad options at once.
LIMIT = 60


def env():
    """The environment without POSIXLY_CORRECT: the tools alone decide."""
    e = dict(os.environ)
    e.pop("POSIXLY_CORRECT", None)
    return e


def run(argv, **kw):
    return hwctest.run(argv, timeout=LIMIT, env=env(), **kw)


def no_room():
    """In the child: every write past 0 bytes fails with EFBIG, as a full
    disk fails with ENOSPC (SIGXFSZ ignored, so the write returns)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def write_fails(test, argv, out, status, tool):
    """ARGV writes the file OUT with no room: TOOL says it cannot write OUT,
    exits with STATUS, and OUT is not left behind (nor a temporary file)."""
    r = run(argv, preexec_fn=no_room)
    test.assertEqual(r.returncode, status, (argv, r.stderr))
    test.assertIn(f"{tool}: ", r.stderr, argv)
    test.assertIn(out, r.stderr, argv)
    test.assertIn("File too large", r.stderr, argv)
    test.assertFalse(os.path.exists(out), argv)
    test.assertEqual(os.listdir(os.path.dirname(out)), [], argv)


class Recording:
    """A small recording (cpu-clock samples of a workload), made once."""
    dir = path = None

    @classmethod
    def get(cls):
        if cls.path is None:
            cls.dir = tempfile.mkdtemp(prefix="cli_errors.")
            cls.path = os.path.join(cls.dir, "r.data")
            r = run([HWC, "record", "-e", "cpu-clock", "-o", cls.path, "--",
                     workload("hotspots")], cwd=cls.dir)
            if r.returncode != 0:
                raise unittest.SkipTest(f"hwc record cannot sample here: {r.stderr}")
        return cls.path


def tearDownModule():
    if Recording.dir:
        shutil.rmtree(Recording.dir, ignore_errors=True)


@unittest.skipUnless(os.path.exists("/dev/full"), "no /dev/full")
class WriteErrors(unittest.TestCase):
    def full(self, argv, status, who, name=None):
        """ARGV with stdout on /dev/full fails with STATUS and says so."""
        with open("/dev/full", "w") as full:
            r = subprocess.run(argv, timeout=LIMIT, env=env(), stdout=full, stderr=subprocess.PIPE,
                               text=True)
        where = f"{name}: " if name else ""
        self.assertEqual(r.returncode, status, (argv, r.stderr))
        self.assertIn(f"{who}: {where}{ENOSPC}\n", r.stderr, argv)
        # Said once, not again by the check at exit.
        self.assertEqual(r.stderr.count("write error"), 1, (argv, r.stderr))

    def test_hwc(self):
        for argv in (["--help"], ["--version"]):
            self.full([HWC, *argv], 1, "hwc")
        for argv in (["list"], ["list", "--json"], ["info"], ["info", "--json"],
                     ["stat", "--help"], ["record", "--help"], ["top", "--help"],
                     ["report", "--help"]):
            self.full([HWC, *argv], 1, f"hwc {argv[0]}")

    def test_hwc_report(self):
        data = Recording.get()
        for argv in ([], ["--json"], ["--view", "records"], ["--folded", "-"]):
            self.full([HWC, "report", *argv, data], 1, "hwc report")

    @unittest.skipUnless(os.geteuid() == 0, "hwc top watches every CPU: needs root")
    def test_hwc_files(self):
        data = Recording.get()
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            write_fails(self, [HWC, "stat", "-o", out, "--", "true"], out, 1, "hwc stat")
            for export in ("--folded", "--pprof", "--flamegraph"):
                write_fails(self, [HWC, "report", f"{export}={out}", data], out, 1, "hwc report")
            write_fails(self, [HWC, "record", "-o", out, "--", "true"], out, 1, "hwc record")

    def test_hwc_top(self):
        self.full([HWC, "top", "--batch", "-n", "2", "-d", "0.1", "-e", "cpu-clock"], 1, "hwc top")
        self.full([HWC, "top", "--batch", "-n", "1", "-d", "0.1", "--count", "-e", "task-clock"], 1,
                  "hwc top")

    def test_pctr(self):
        self.full([PCTR], 1, "pctr")

    def test_pctr_list(self):
        if run([PCTR, "-l"]).returncode != 0:
            self.skipTest("pctr -l: no libpfm4 model of this CPU")
        self.full([PCTR, "-l"], 1, "pctr")

    def test_cputrack(self):
        self.full([CPUTRACK, "-c", "cpu-clock", "true"], 1, "cputrack")
        self.full([CPUTRACK, "-h"], 1, "cputrack")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "log")
            write_fails(self, [CPUTRACK, "-o", out, "-c", "cpu-clock", "true"], out, 1,
                        "cputrack")

    def test_cpustat(self):
        self.full([CPUSTAT, "-h"], 1, "cpustat")
        if os.geteuid() == 0:
            self.full([CPUSTAT, "-c", "cpu-clock", "0.1", "1"], 1, "cpustat")

    def test_pmcstat(self):
        data = Recording.get()
        self.full([PMCSTAT, "-R", data], 74, "pmcstat")
        self.full([PMCSTAT, "-R", data, "-G", "-"], 74, "pmcstat")
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            for argv in (["-R", data, "-o", out], ["-R", data, "-G", out],
                         ["-o", out, "-p", "task-clock", "true"]):
                write_fails(self, [PMCSTAT, *argv], out, 74, "pmcstat")

    def test_pmccontrol(self):
        for opt in ("-L", "-l", "-s"):
            self.full([PMCCONTROL, opt], 74, "pmccontrol")


class OperandsEndOptions(unittest.TestCase):
    """sh -c 'echo "$0"' -x prints -x: the tool left -c and -x to sh."""

    def test_cputrack(self):
        r = run([CPUTRACK, "-c", "cpu-clock", "sh", "-c", 'echo "$0"; exit 0', "-x"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("-x", r.stdout.splitlines(), r.stdout)

    def test_pmcstat(self):
        r = run([PMCSTAT, "-p", "cpu-clock", "sh", "-c", 'echo "$0"; exit 0', "-x"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "-x\n")

    def test_hwc_stat_and_record(self):
        r = run([HWC, "stat", "-e", "task-clock", "sh", "-c", 'echo "$0"', "-x"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "-x\n")
        with tempfile.TemporaryDirectory() as d:
            r = run([HWC, "record", "-e", "cpu-clock", "-o", os.path.join(d, "x.data"),
                     "sh", "-c", 'echo "$0"', "-x"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "-x\n")

    def test_cpustat(self):
        # Operands are the interval and the count: an option after them is
        # a third operand, as illumos's getopt(3C) sees it.
        r = run([CPUSTAT, "-c", "cpu-clock", "0.1", "1", "-h"])
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("too many arguments", r.stderr)
        self.assertEqual(r.stdout, "")


# What no numeric option may take.
BAD = ["nan", "inf", "-1", "1e999", "99999999999999999999", "", "12abc", " 1", "+1", "0x1p3"]
# The same for -p and -t (pids, in most tools): should " 1" be taken, it
# would name init; these name no process (above the kernel's highest pid_max).
PID_BAD = [v.replace("1", "4194305") if v in (" 1", "+1") else v for v in BAD]


class BadNumbers(unittest.TestCase):
    def table(self, rows, values=BAD, undo=None):
        """ROWS: (argv with "{}" for the value, status, what stderr says).
        UNDO(args) puts back what a bad value taken would have changed."""
        for argv, status, text in rows:
            vals = PID_BAD if values is BAD and any(a in ("-p", "-t") and argv[i + 1] == "{}"
                                                    for i, a in enumerate(argv[:-1])) else values
            for v in vals:
                args = [a.replace("{}", v) for a in argv]
                with self.subTest(args=args):
                    r = run(args)
                    if r.returncode == 0 and undo:
                        undo(args)
                    self.assertEqual(r.returncode, status, (args, r.stderr))
                    self.assertIn(text, r.stderr)
                    self.assertNotIn("Sanitizer", r.stderr)

    def test_hwc_stat(self):
        s = [HWC, "stat", "-e", "task-clock"]
        self.table([
            ([*s, "-I", "{}", "true"], 2, "for -I: give milliseconds, from 10 to 86400000"),
            ([*s, "-r", "{}", "true"], 2, "for -r (expected 1 to 1000000)"),
            ([*s, "-p", "{}"], 2, "for -p (expected 1 to 2147483647)"),
            ([*s, "-t", "{}"], 2, "for -t (expected 1 to 2147483647)"),
            ([*s, "-C", "{}"], 2, "for -C (expected CPUs from 0 to 65535"),
        ])

    def test_hwc_record(self):
        with tempfile.TemporaryDirectory() as d:
            s = [HWC, "record", "-o", os.path.join(d, "x.data")]
            self.table([
                ([*s, "-c", "{}", "true"], 2, "for -c (expected events, from 1 to 9223372036854775807)"),
                ([*s, "-F", "{}", "true"], 2, "for -F (expected samples a second, from 1 to 4294967295)"),
                ([*s, "-m", "{}", "true"], 2, "for -m (expected a power of 2 of pages from 1 to 1048576"),
                ([*s, "--call-graph", "dwarf,{}", "true"], 2,
                 "for --call-graph: give bytes, a multiple of 8 from 8 to 65528"),
                ([*s, "-p", "{}"], 2, "for -p (expected 1 to 2147483647)"),
                ([*s, "-C", "{}", "true"], 2, "for -C (expected CPUs from 0 to 65535"),
            ])
            self.assertEqual(os.listdir(d), [])

    def test_hwc_top(self):
        s = [HWC, "top", "--batch", "-n", "1"]
        self.table([
            ([*s, "-F", "{}"], 2, "for -F (expected samples a second, from 1 to 2147483647)"),
            ([HWC, "top", "--batch", "-d", "{}"], 2, "for -d (expected seconds, from 0.1 to 86400)"),
            ([HWC, "top", "--batch", "-n", "{}"], 2, "for -n (expected 1 to 9223372036854775807)"),
            ([*s, "--rows", "{}"], 2, "for --rows (expected 0 for all, up to 2147483647)"),
            ([*s, "-p", "{}"], 2, "for -p (expected 1 to 2147483647)"),
        ])

    def test_hwc_report(self):
        data = Recording.get()
        for v in BAD + ["-0.5", "100.5", "1e3"]:
            with self.subTest(v=v):
                r = run([HWC, "report", f"--percent-limit={v}", data])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"--percent-limit: '{v}' is not a percentage (a number from 0 to 100)",
                              r.stderr)
        for v in BAD + ["1,,2", "1,", "007", "4294967296"]:
            with self.subTest(v=v):
                r = run([HWC, "report", f"--pid={v}", data])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(f"--pid: '{v}' is not a list of pids", r.stderr)
        # What they take still works.
        for argv in (["--percent-limit=0.5"], ["--percent-limit", "100"], ["--pid=0,1"]):
            r = run([HWC, "report", *argv, data])
            self.assertEqual(r.returncode, 0, (argv, r.stderr))

    def test_pctr(self):
        self.table([
            ([PCTR, "-s", "0", "-f", "{}"], 1, "(-f takes a hexadecimal number from 0 to ff)"),
            ([PCTR, "-s", "0", "-m", "{}"], 1, "(-m takes a hexadecimal number from 0 to ff)"),
            ([PCTR, "-s", "{}"], 1, "(-s takes 0 to 3)"),
            ([PCTR, "-s", "0", "-t", "{}"], 1, "(-t takes 0 to 255)"),
        ])

    def test_cputrack(self):
        self.table([
            ([CPUTRACK, "-T", "{}", "-c", "cpu-clock", "true"], 2,
             "for -T: seconds from 0 to 1000000"),
            ([CPUTRACK, "-N", "{}", "-c", "cpu-clock", "true"], 2, "for -N: "),
            ([CPUTRACK, "-c", "cpu-clock", "-p", "{}"], 2, "for -p: "),
            ([CPUTRACK, "-c", "cpu-clock,cmask={}", "true"], 2,
             "(a number from 0 to 18446744073709551615)"),
        ])
        r = run([CPUTRACK, "-N", "99999999999", "-c", "cpu-clock", "true"])
        self.assertIn("for -N: too large (0 to 4294967295)", r.stderr)

    def test_cpustat(self):
        self.table([
            ([CPUSTAT, "-c", "cpu-clock", "-p", "{}", "1", "1"], 2,
             "for -p: seconds from 0 to 1000000"),
            ([CPUSTAT, "-c", "cpu-clock", "--", "{}", "1"], 2,
             "the interval is a number of seconds above 0, up to 1000000"),
            ([CPUSTAT, "-c", "cpu-clock", "--", "0.1", "{}"], 2,
             "the count is a number from 1 to 4294967295"),
        ])

    def test_pmcstat(self):
        self.table([
            ([PMCSTAT, "-l", "{}", "-p", "task-clock", "true"], 64,
             "(-l takes seconds, above 0 and up to 31536000)"),
            ([PMCSTAT, "-w", "{}", "-p", "task-clock", "true"], 64,
             "(-w takes seconds, above 0 and up to 31536000)"),
            ([PMCSTAT, "-n", "{}", "-P", "cpu-clock", "true"], 64,
             "(-n takes 1 to 9223372036854775807)"),
            ([PMCSTAT, "-z", "{}", "-p", "task-clock", "true"], 64, "(-z takes 1 to 512)"),
            ([PMCSTAT, "-c", "{}", "-s", "page-faults"], 64, "-c takes CPUs from 0 to "),
        ])
        # -t takes a regular expression too: only numbers are numbers.
        self.table([([PMCSTAT, "-t", "{}", "-p", "task-clock"], 64,
                     "(-t takes a pid from 1 to 2147483647, or a regular expression)")],
                   values=["-1", "0", "99999999999999999999", ""])

    def test_pmccontrol(self):
        def enable(args):
            """pmccontrol -d disables a row for every user: enable it again."""
            if args[1] == "-d":
                run([PMCCONTROL, "-e", args[2].strip()])
        self.table([
            ([PMCCONTROL, "-c", "{}", "-e", "0"], 65, "(-c takes 0 to 1048576, or *)"),
            ([PMCCONTROL, "-e", "{}"], 65, "(-e takes 0 to 1048576, or *)"),
            ([PMCCONTROL, "-d", "{}"], 65, "(-d takes 0 to 1048576, or *)"),
        ], undo=enable)


if __name__ == "__main__":
    unittest.main()
