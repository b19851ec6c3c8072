"""cpustat(8): illumos's per-CPU lines at each interval and the totals,
sets cycled, -t/-T/-n/-h, the refusal without privilege (as nobody), usage
errors, and a termination signal that still prints the totals."""
import os
import signal
import subprocess
import time
import unittest

import hwctest
from hwctest import LIMIT, program

CPUSTAT = program("cpustat")


def run(*args, nobody=False):
    return hwctest.run([CPUSTAT, *args], nobody=nobody)


def usable_cpus():
    """The CPUs this process may use, as cpustat counts them."""
    return sorted(os.sched_getaffinity(0))


def rows(out):
    """[(time, cpu, event, [counts], setname)] of the lines after the title."""
    result = []
    for line in out.splitlines()[1:]:
        main, _, name = line.partition(" # ")
        f = main.split()
        result.append((float(f[0]), int(f[1]), f[2], [int(x) for x in f[3:]], name.strip()))
    return result


@unittest.skipUnless(os.geteuid() == 0, "cpustat counts the whole system: needs root")
class AsRoot(unittest.TestCase):
    def test_per_cpu_lines_and_total(self):
        r = run("-c", "cpu-clock,context-switches,sys", "0.1", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines()[0], "   time cpu event      pic0      pic1 ")
        lines = rows(r.stdout)
        cpus = usable_cpus()
        ticks = [x for x in lines if x[2] == "tick"]
        # One line per CPU at each of the 3 intervals.
        for cpu in cpus:
            self.assertEqual(len([t for t in ticks if t[1] == cpu]), 3, r.stdout)
        self.assertEqual(len(ticks), 3 * len(cpus))
        total = lines[-1]
        self.assertEqual(total[2], "total")
        self.assertEqual(total[1], len(cpus))  # how many CPUs were counted
        # The total is the sum of the intervals of every CPU.
        for i in range(2):
            self.assertEqual(total[3][i], sum(t[3][i] for t in ticks))
        # cpu-clock ticks on every CPU whatever runs there.
        for t in ticks:
            self.assertGreater(t[3][0], 0)

    def test_sets_cycled(self):
        r = run("-c", "cpu-clock", "-c", "page-faults,sys", "0.05", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = rows(r.stdout)
        for cpu in usable_cpus():
            names = [x[4] for x in lines if x[1] == cpu and x[2] == "tick"]
            self.assertEqual(names, ["cpu-clock", "page-faults,sys"] * 2, r.stdout)
        totals = [x for x in lines if x[2] == "total"]
        self.assertEqual([t[4] for t in totals], ["cpu-clock", "page-faults,sys"])

    def test_columns(self):
        r = run("-t", "-n", "-T", "u", "-c", "cpu-clock", "0.05", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        # No title; each sample line follows its time_t line.
        now = time.time()
        stamps = [int(l) for l in lines if l.strip().isdigit()]
        self.assertEqual(len(stamps), len(usable_cpus()))  # not before the total
        for s in stamps:
            self.assertLess(abs(s - now), LIMIT)
        samples = [l.split() for l in lines if not l.strip().isdigit()]
        for f in samples:
            self.assertEqual(len(f), 5)  # time cpu event tsc pic0
        r = run("-T", "d", "-c", "cpu-clock", "0.05", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"\n\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \S+ \d{4}\n")

    def test_soaker(self):
        r = run("-s", "-c", "cpu-clock,nouser,sys", "0.05", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len([x for x in rows(r.stdout) if x[2] == "tick"]), 2 * len(usable_cpus()))

    def test_signal_keeps_totals(self):
        p = subprocess.Popen([CPUSTAT, "-c", "cpu-clock", "10"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        title = p.stdout.readline()
        self.assertIn("pic0", title)
        time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=LIMIT)
        self.assertEqual(p.returncode, -signal.SIGINT, err)
        lines = rows(title + out)
        # Each CPU's counts since the start, then the total.
        self.assertEqual(len([x for x in lines if x[2] == "tick"]), len(usable_cpus()), out)
        self.assertEqual(lines[-1][2], "total")
        self.assertGreater(lines[-1][3][0], 0)


class Refusals(unittest.TestCase):
    @unittest.skipUnless(os.geteuid() == 0, "needs root to become nobody")
    def test_unprivileged(self):
        r = run("-c", "cpu-clock", "1", "1", nobody=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertIn("cannot count on cpu", r.stderr)
        self.assertIn("Permission denied", r.stderr)
        self.assertIn("run it as root", r.stderr)

    def usage_error(self, *args, message=None):
        r = run(*args)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        self.assertIn("Usage:", r.stderr)
        if message:
            self.assertIn(message, r.stderr)

    def test_usage(self):
        self.usage_error("1", message="-c events is required")
        self.usage_error("-c", "cpu-clock", "soon", message='invalid argument "soon"')
        self.usage_error("-c", "cpu-clock", "0", message="above 0")
        self.usage_error("-c", "cpu-clock", "1", "0", message='invalid argument "0"')
        self.usage_error("-c", "cpu-clock", "1", "2", "3", message="too many arguments")
        self.usage_error("-T", "x", "-c", "cpu-clock", message='invalid -T argument "x"')
        self.usage_error("-p", "never", "-c", "cpu-clock", message='invalid parameter "never"')
        self.usage_error("-c", "no-such-event", message="unknown event 'no-such-event'")
        self.usage_error("-q", "-c", "cpu-clock")

    def test_help(self):
        r = run("-h")
        self.assertEqual(r.returncode, 0)
        self.assertIn("Usage:", r.stdout)
        self.assertIn("CPU performance counter interface:", r.stdout)
        self.assertIn("Use cputrack(1) to monitor per-process statistics.", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
