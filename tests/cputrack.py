"""cputrack(1): illumos's output for a process family (fork, exec, LWPs,
exit), ticks and sets cycled per interval, -p, -o, -t, -n, -v, -h, the
usage errors, and a termination signal that keeps the counts and lets the
program run to its end."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import hwctest
from hwctest import LIMIT, program, workload

CPUTRACK = program("cputrack")


def run(*args, **kw):
    return hwctest.run([CPUTRACK, *args], **kw)


# "  0.004   6425   1       exec    172144       108 " -> fields
LINE = re.compile(r"^\s*(\d+\.\d{3})\s+(?:(\d+)\s+)?(\d+)\s+(\S+)\s*(.*)$")


def parse(out, with_pid):
    rows = []
    for line in out.splitlines()[1:]:
        f = line.split()
        row = {"time": float(f[0])}
        if with_pid:
            row["pid"] = int(f.pop(1))
        row["lwp"], row["event"] = int(f[1]), f[2]
        rest = f[3:]
        if "#" in rest:
            row["note"] = " ".join(rest[rest.index("#") + 1:])
            rest = rest[: rest.index("#")]
        row["counts"] = [int(x) for x in rest]
        rows.append(row)
    return rows


class Family(unittest.TestCase):
    """cputrack -c task-clock,page-faults -f -e family 300: the family
    touches 300 pages, again in a second thread, then forks a child that
    execs pagetouch 300, and exits 7."""

    @classmethod
    def setUpClass(cls):
        cls.r = run("-f", "-e", "-c", "task-clock,page-faults", workload("family"), "300")

    def test_exit_status_and_title(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)
        title = self.r.stdout.splitlines()[0]
        # illumos's columns: time, pid (with -f), lwp, event, one per request.
        self.assertEqual(title, "   time    pid lwp      event      pic0      pic1 ")

    def test_fork_exec_exit_lines(self):
        rows = parse(self.r.stdout, True)
        parent = rows[-1]["pid"]
        forks = [r for r in rows if r["event"] == "fork"]
        self.assertEqual(len(forks), 1, self.r.stdout)
        # illumos's layout: "PARENT LWP fork # CHILD" (the forking LWP, the
        # main thread here), from libpctx's (ppid, child, lwpid) arguments.
        self.assertEqual(forks[0]["pid"], parent)
        self.assertEqual(forks[0]["lwp"], 1, self.r.stdout)
        child = int(forks[0]["note"])
        self.assertNotEqual(child, parent)
        execs = [r for r in rows if r["event"] == "exec" and "note" in r]
        self.assertEqual(len(execs), 1, self.r.stdout)
        self.assertEqual(execs[0]["pid"], child)
        self.assertEqual(execs[0]["note"], "'pagetouch 300'")
        exits = {r["pid"]: r for r in rows if r["event"] == "exit"}
        self.assertEqual(set(exits), {parent, child}, self.r.stdout)
        # Sane counts: the child after its exec touched 300 pages.
        clock, faults = exits[child]["counts"]
        self.assertGreaterEqual(faults, 300)
        self.assertLess(faults, 450)
        self.assertGreater(clock, 0)
        # The parent's LWPs together touched 2 x 300 pages.
        clock, faults = exits[parent]["counts"]
        self.assertGreaterEqual(faults, 600)
        self.assertLess(faults, 900)
        self.assertGreater(clock, 0)
        # The image before the exec is reported with the exec: the forked
        # child's own counts only (a few faults), not its parent's.
        before = [r for r in rows if r["event"] == "exec" and "note" not in r]
        self.assertEqual(len(before), 1)
        self.assertEqual(before[0]["pid"], child)
        self.assertLess(before[0]["counts"][1], 200, self.r.stdout)

    def test_lwp_lines(self):
        rows = parse(self.r.stdout, True)
        created = [r for r in rows if r["event"] == "lwp_create"]
        exited = [r for r in rows if r["event"] == "lwp_exit"]
        self.assertEqual([r["lwp"] for r in created], [2], self.r.stdout)
        self.assertEqual([r["lwp"] for r in exited], [2])
        self.assertGreaterEqual(exited[0]["counts"][1], 300)  # the thread's own pages

    def test_times_are_sane(self):
        rows = parse(self.r.stdout, True)
        for r in rows:
            self.assertGreaterEqual(r["time"], 0.0)
            self.assertLess(r["time"], LIMIT)


class Options(unittest.TestCase):
    def test_without_follow(self):
        # Without -f the fork is still reported (no pid column), the child
        # is not followed; without -e an exec ends the tracking, exit 0.
        r = run("-c", "page-faults", workload("family"), "100")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = parse(r.stdout, False)
        self.assertEqual([x["event"] for x in rows], ["lwp_create", "lwp_exit", "fork", "exit"], r.stdout)
        self.assertGreaterEqual(rows[-1]["counts"][0], 200)
        r = run("-c", "page-faults", "/bin/sh", "-c", "exec %s 50" % workload("pagetouch"))
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = parse(r.stdout, False)
        self.assertEqual([x["event"] for x in rows], ["exec", "exec"], r.stdout)
        self.assertIn("pagetouch 50", rows[-1]["note"])

    def test_ticks_and_count(self):
        # sleeper 300 sleeps at least 300 ms: ticks every 50 ms; -N 2 stops
        # after two of them and lets the program finish on its own.  Its
        # context switches happen in the kernel: "sys" counts them.
        r = run("-T", "0.05", "-N", "2", "-c", "context-switches,sys", workload("sleeper"), "300")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = parse(r.stdout, False)
        self.assertEqual([x["event"] for x in rows], ["tick", "tick"], r.stdout)
        self.assertLessEqual(rows[0]["time"], rows[1]["time"])
        r = run("-T", "0.05", "-c", "context-switches,sys", workload("sleeper"), "300")
        rows = parse(r.stdout, False)
        ticks = [x for x in rows if x["event"] == "tick"]
        self.assertGreaterEqual(len(ticks), 1, r.stdout)
        self.assertEqual(rows[-1]["event"], "exit")
        # Each tick is the count since the previous one: they add up.
        self.assertLessEqual(sum(t["counts"][0] for t in ticks), rows[-1]["counts"][0])
        self.assertGreaterEqual(rows[-1]["counts"][0], 300)

    def test_sets_cycled(self):
        r = run("-T", "0.03", "-c", "task-clock", "-c", "page-faults,context-switches",
                workload("sleeper"), "300")
        self.assertEqual(r.returncode, 0, r.stderr)
        ticks = [l for l in r.stdout.splitlines() if " tick " in l]
        self.assertGreaterEqual(len(ticks), 1, r.stdout)
        names = [l.split("#")[1].strip() for l in ticks]
        self.assertEqual(names[0], "task-clock")
        for a, b in zip(names, names[1:]):
            self.assertNotEqual(a, b)  # one set per sample, in turn
        self.assertLessEqual(set(names), {"task-clock", "page-faults,context-switches"})
        # The exit shows the total of each set that was counted.
        exits = [l for l in r.stdout.splitlines() if " exit " in l]
        self.assertEqual(len(exits), min(2, len(ticks) + 1), r.stdout)

    def test_tick_column_no_title_and_output_file(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            r = run("-t", "-o", out, "-c", "page-faults", workload("pagetouch"), "100")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
            with open(out) as f:
                text = f.read()
        self.assertEqual(text.splitlines()[0], "   time lwp      event       tsc      pic0 ")
        fields = text.splitlines()[1].split()
        self.assertEqual(fields[2], "exit")
        self.assertEqual(len(fields), 5)
        r = run("-n", "-c", "page-faults", workload("pagetouch"), "100")
        self.assertEqual(len(r.stdout.splitlines()), 1)
        self.assertIn(" exit ", r.stdout)

    def test_verbose(self):
        r = run("-v", "-c", "page-faults", workload("pagetouch"), "100")
        events = [x["event"] for x in parse(r.stdout, False)]
        self.assertEqual(events, ["init_lwp", "fini_lwp", "exit"], r.stdout)

    def test_pid(self):
        p = subprocess.Popen([workload("sleeper"), "400"])
        try:
            r = run("-T", "0.05", "-c", "context-switches", "-p", str(p.pid))
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = parse(r.stdout, False)
            self.assertIn("tick", [x["event"] for x in rows], r.stdout)
            self.assertEqual(rows[-1]["event"], "exit")
        finally:
            self.assertEqual(p.wait(timeout=LIMIT), 0)

    def test_help(self):
        r = run("-h")
        self.assertEqual(r.returncode, 0)
        self.assertIn("Usage:", r.stdout)
        self.assertIn("CPU performance counter interface:", r.stdout)
        self.assertIn("event specification syntax:", r.stdout)
        self.assertIn("task-clock", r.stdout)
        self.assertIn("attributes:", r.stdout)


class Errors(unittest.TestCase):
    def usage_error(self, *args, message=None):
        r = run(*args)
        self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
        self.assertIn("Usage:", r.stderr)
        self.assertEqual(r.stdout, "")
        if message:
            self.assertIn(message, r.stderr)

    def test_usage(self):
        self.usage_error("true", message="-c events is required")
        self.usage_error("-c", "task-clock", message="no command to run and no -p pid")
        self.usage_error("-c", "task-clock", "-p", "1", "true", message="not both")
        self.usage_error("-x", "-c", "task-clock", "true")
        self.usage_error("-T", "soon", "-c", "task-clock", "true", message="invalid interval 'soon'")
        self.usage_error("-N", "-3", "-c", "task-clock", "true", message="invalid count '-3'")
        self.usage_error("-p", "x1", "-c", "task-clock", message="invalid pid 'x1'")
        self.usage_error("-c", "no-such-event", "true", message="unknown event 'no-such-event'")
        self.usage_error("-c", "task-clock,umask=0x1", "true", message="'umask' applies only to processor events")
        self.usage_error("-c", "pic0=task-clock,pic0=page-faults", "true", message="repeated 'pic0' token")
        self.usage_error("-c", "task-clock,cmask=zz", "true", message="invalid value 'zz'")

    def test_failures(self):
        r = run("-c", "task-clock", "/nonexistent/program")
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot find program '/nonexistent/program'", r.stderr)
        self.assertIn("failed to start program", r.stderr)
        r = run("-c", "task-clock", "-p", "999999999")
        self.assertEqual(r.returncode, 1)
        self.assertIn("pid 999999999 doesn't exist", r.stderr)
        p = subprocess.Popen(["true"])
        p.wait()
        r = run("-c", "task-clock", "-p", str(p.pid))
        self.assertEqual(r.returncode, 1)
        self.assertIn("failed to capture pid %d" % p.pid, r.stderr)
        with tempfile.TemporaryDirectory() as d:
            r = run("-o", os.path.join(d, "no", "such", "dir"), "-c", "task-clock", "true")
            self.assertEqual(r.returncode, 1)
            self.assertIn("cannot create %s: No such file or directory"
                          % os.path.join(d, "no", "such", "dir"), r.stderr)


class Signals(unittest.TestCase):
    def test_terminated_mid_run(self):
        # The program sleeps 300 ms then leaves a marker; cputrack is told to
        # stop at 50 ms: it prints the counts so far, lets the program go,
        # and the program finishes normally.
        for sig in (signal.SIGINT, signal.SIGTERM):
            with tempfile.TemporaryDirectory() as d:
                marker = os.path.join(d, "done")
                cmd = "%s 300 && echo ok > %s" % (workload("sleeper"), marker)
                p = subprocess.Popen([CPUTRACK, "-T", "10", "-c", "context-switches", "/bin/sh", "-c", cmd],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                # Wait for the title: the program runs under control by then.
                title = p.stdout.readline()
                self.assertIn("pic0", title)
                time.sleep(0.05)
                p.send_signal(sig)
                out, err = p.communicate(timeout=LIMIT)
                self.assertEqual(p.returncode, -sig, err)
                # (sh forks for the command: a fork line, not followed.)
                rows = parse(title + out, False)
                self.assertEqual([x["event"] for x in rows if x["event"] != "fork"], ["tick"], out)
                for _ in range(LIMIT * 10):
                    if os.path.exists(marker):
                        break
                    time.sleep(0.1)
                with open(marker) as f:
                    self.assertEqual(f.read(), "ok\n")


if __name__ == "__main__":
    unittest.main(verbosity=2)
