#!/usr/bin/env python3
"""`hwc stat` from the command line: every option, the CSV and JSON outputs
(read with python's csv and json), exit statuses, signals, unprivileged
use, every error the issue lists, and perf stat as the oracle for counts.

Everything is live: real events, real processes, real files.  Nothing
asserts wall-clock time; where a test must know that hwc is counting, it
waits for hwc's own output (the JSON header, an interval record)."""
import csv
import io
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import unittest

from hwctest import HAVE_CORE_PMU, online_cpus, paranoid, program, run, workload

HWC = program("hwc")
PAGETOUCH = workload("pagetouch")
SLEEPER = workload("sleeper")
SOFTWARE_DEFAULTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults"]
HARDWARE_DEFAULTS = ["cycles", "instructions", "branches", "branch-misses"]

# A process with two sleeping threads besides the main one; it prints its
# pid and the threads' ids, and exits when its stdin is closed.
THREADS = r"""
import os, sys, threading, time
def nap():
    while True:
        time.sleep(0.001)
ts = [threading.Thread(target=nap, daemon=True) for _ in range(2)]
for t in ts:
    t.start()
print(os.getpid(), *[t.native_id for t in ts], flush=True)
sys.stdin.read()
"""


def stat(*args, env=None, user=False, cwd=None):
    return run([HWC, "stat", *args], nobody=user, env=env, cwd=cwd, timeout=300)


def hwc_lines(stderr):
    """hwc's own lines on stderr (notes and errors), not the report."""
    return [l for l in stderr.splitlines() if l.startswith("hwc stat:")]


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hwc-stat-")
        os.chmod(self.dir, 0o777)  # writable by nobody too

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def stat_json(self, *args, rc=0, **kw):
        out = self.path("out.json")
        p = stat("--json", "-o", out, *args, **kw)
        self.assertEqual(p.returncode, rc, p.stderr)
        with open(out) as f:
            return json.load(f), p

    def stat_csv(self, *args, sep=";", **kw):
        out = self.path("out.csv")
        p = stat("-x", sep, "-o", out, *args, **kw)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out, newline="") as f:
            return list(csv.reader(f, delimiter=sep)), p

    def marker_cmd(self):
        """A command that leaves a file behind when it runs."""
        return ["sh", "-c", f"touch {self.path('ran')}"]

    def assert_not_run(self):
        self.assertFalse(os.path.exists(self.path("ran")), "the command ran")

    def by_event(self, doc):
        return {c["event"]: c for c in doc["counters"]}


class Output(Tmp):
    def test_default_events(self):
        p = stat("--", PAGETOUCH, "100")
        self.assertEqual(p.returncode, 0, p.stderr)
        table = [l.split() for l in p.stderr.splitlines() if not l.startswith("hwc stat:")]
        names = [w for l in table for w in l if w in SOFTWARE_DEFAULTS + HARDWARE_DEFAULTS]
        if HAVE_CORE_PMU:
            self.assertEqual(names, SOFTWARE_DEFAULTS + HARDWARE_DEFAULTS)
            self.assertEqual(hwc_lines(p.stderr), [])
        else:
            self.assertEqual(names, SOFTWARE_DEFAULTS)
            notes = hwc_lines(p.stderr)
            self.assertEqual(len(notes), 1, p.stderr)
            self.assertTrue(notes[0].startswith(
                "hwc stat: not counting cycles, instructions, branches, branch-misses: "), notes)
            self.assertIn("not supported on this machine", notes[0])
            self.assertIn("no hardware PMU", notes[0])
        self.assertIn(f"Performance counter stats for '{PAGETOUCH} 100'", p.stderr)
        self.assertRegex(p.stderr, r"\d\.\d{9} seconds time elapsed")
        self.assertRegex(p.stderr, r"seconds user\n")

    def test_default_events_json_names_the_skipped(self):
        doc, _ = self.stat_json("--", "true")
        counted = [c["event"] for c in doc["counters"]]
        skipped = [s["event"] for s in doc["skipped"]]
        if HAVE_CORE_PMU:
            self.assertEqual(counted, SOFTWARE_DEFAULTS + HARDWARE_DEFAULTS)
        else:
            self.assertEqual(counted, SOFTWARE_DEFAULTS)
            self.assertEqual(skipped, HARDWARE_DEFAULTS)
            self.assertTrue(all("not supported" in s["reason"] for s in doc["skipped"]))
            self.assertEqual(len(doc["notes"]), 1)

    def test_event_lists_and_groups(self):
        doc, _ = self.stat_json("-e", "task-clock", "-e", "page-faults,context-switches",
                                "-e", "{cpu-clock,minor-faults}", "--", PAGETOUCH, "300")
        events = [c["event"] for c in doc["counters"]]
        self.assertEqual(events, ["task-clock", "page-faults", "context-switches", "cpu-clock",
                                  "minor-faults"])
        ev = self.by_event(doc)
        self.assertEqual(ev["cpu-clock"]["group"], ev["minor-faults"]["group"])
        self.assertEqual(len({c["group"] for c in doc["counters"]}), 4)
        # One read of the group: its members share their times.
        self.assertEqual(ev["cpu-clock"]["enabled_ns"], ev["minor-faults"]["enabled_ns"])
        self.assertEqual(ev["cpu-clock"]["running_ns"], ev["minor-faults"]["running_ns"])
        self.assertGreaterEqual(ev["page-faults"]["raw"], 300)
        self.assertGreaterEqual(ev["minor-faults"]["raw"], 300)

    def test_json_schema(self):
        doc, _ = self.stat_json("-e", "task-clock,page-faults,context-switches", "--",
                                PAGETOUCH, "500")
        self.assertEqual(doc["schema"], "hwc-stat/1")
        self.assertIsInstance(doc["hwc_version"], str)
        self.assertEqual(doc["target"], {"kind": "command", "argv": [PAGETOUCH, "500"]})
        self.assertEqual(doc["aggregation"], "total")
        self.assertEqual((doc["notes"], doc["skipped"], doc["runs"]), ([], [], 1))
        self.assertEqual((doc["exit_status"], doc["interrupted"]), (0, False))
        for key in ("elapsed_s", "user_s", "system_s"):
            self.assertIsInstance(doc[key], (int, float))
            self.assertGreaterEqual(doc[key], 0)
        self.assertNotIn("intervals", doc)
        for c in doc["counters"]:
            for key in ("raw", "enabled_ns", "running_ns", "scaled", "group"):
                self.assertIsInstance(c[key], int, key)
            self.assertEqual(c["percent_running"], 100 * c["running_ns"] / c["enabled_ns"])
            self.assertEqual(c["multiplexed"], c["running_ns"] < c["enabled_ns"])
            self.assertFalse(c["multiplexed"])  # software events never share a counter
            self.assertEqual(c["scaled"], c["raw"])
            self.assertFalse(c["user_only"])
            self.assertIsInstance(c["metrics"], dict)
            self.assertNotIn("runs", c)
        ev = self.by_event(doc)
        self.assertEqual(ev["task-clock"]["unit"], "msec")
        self.assertAlmostEqual(ev["task-clock"]["value"], ev["task-clock"]["scaled"] / 1e6, places=9)
        self.assertEqual(ev["page-faults"]["unit"], "")
        self.assertEqual(ev["page-faults"]["value"], ev["page-faults"]["scaled"])
        cpus = ev["task-clock"]["metrics"]["cpus_utilized"]
        self.assertAlmostEqual(cpus, ev["task-clock"]["raw"] / 1e9 / doc["elapsed_s"], places=6)
        self.assertEqual(ev["page-faults"]["metrics"], {})

    def test_csv_fields(self):
        rows, _ = self.stat_csv("-e", "task-clock,page-faults", "--", PAGETOUCH, "500")
        self.assertEqual(len(rows), 2, rows)
        for r in rows:
            self.assertEqual(len(r), 9, r)
        clock, faults = rows
        # value;unit;event;raw;enabled_ns;running_ns;percent_running;metric;metric_name
        self.assertEqual(clock[1:3], ["msec", "task-clock"])
        self.assertAlmostEqual(float(clock[0]), int(clock[3]) / 1e6, places=6)
        self.assertEqual(clock[8], "cpus_utilized")
        self.assertGreater(float(clock[7]), 0)
        self.assertEqual(faults[1:3], ["", "page-faults"])
        self.assertGreaterEqual(int(faults[0]), 500)
        self.assertEqual(faults[0], faults[3])
        self.assertEqual(float(faults[6]), 100.0)
        self.assertEqual(faults[7:], ["", ""])

    def test_csv_quotes_a_name_holding_the_separator(self):
        rows, _ = self.stat_csv("-e", "software/config=2,config1=0/", "--", PAGETOUCH, "200",
                                sep=",")
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0][2], "software/config=2,config1=0/")
        self.assertGreaterEqual(int(rows[0][0]), 200)

    def test_csv_multichar_separator(self):
        p = stat("-x", "::", "-e", "page-faults", "--", PAGETOUCH, "200")
        line = [l for l in p.stderr.splitlines() if "page-faults" in l][0]
        self.assertEqual(line.split("::")[2], "page-faults")
        self.assertEqual(len(line.split("::")), 9)

    def test_output_file(self):
        out = self.path("report.txt")
        p = stat("-o", out, "-e", "page-faults", "--", PAGETOUCH, "100")
        self.assertEqual(p.returncode, 0)
        self.assertNotIn("Performance counter stats", p.stderr)
        with open(out) as f:
            text = f.read()
        self.assertIn("Performance counter stats", text)
        self.assertIn("page-faults", text)

    def test_output_file_unwritable(self):
        p = stat("-o", self.path("no/such/dir/x"), "-e", "page-faults", "--", *self.marker_cmd())
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot create %s: No such file or directory" % self.path("no/such/dir/x"),
                      p.stderr)
        self.assert_not_run()

    def test_locale(self):
        locales = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
        if not any(l.lower() in ("de_de.utf8", "de_de.utf-8") for l in locales):
            self.skipTest("no de_DE.UTF-8 locale (scripts/deps generates it)")
        env = dict(os.environ, LC_ALL="de_DE.UTF-8")
        # People get the locale's decimal comma and digit grouping...
        p = stat("-e", "task-clock,page-faults", "--", PAGETOUCH, "2000", env=env)
        self.assertRegex(p.stderr, r"\d,\d\d msec task-clock")
        self.assertRegex(p.stderr, r"\d\.\d\d\d\s+page-faults")
        # The variables count in setlocale's order (hwc skips loading a C
        # locale): an empty LC_ALL is unset, LC_NUMERIC beats LANG.
        c_lang = dict(os.environ, LC_ALL="", LC_NUMERIC="de_DE.UTF-8", LANG="C.UTF-8")
        p = stat("-e", "page-faults", "--", PAGETOUCH, "2000", env=c_lang)
        self.assertRegex(p.stderr, r"\d\.\d\d\d\s+page-faults")
        # ...programs never do.
        rows, _ = self.stat_csv("-e", "task-clock,page-faults", "--", PAGETOUCH, "2000",
                                sep=",", env=env)
        self.assertEqual(len(rows), 2)
        self.assertRegex(rows[0][0], r"^\d+\.\d{6}$")
        self.assertRegex(rows[1][0], r"^\d+$")
        self.assertRegex(rows[0][6], r"^100\.00$")
        doc, _ = self.stat_json("-e", "task-clock", "--", "true", env=env)
        self.assertIsInstance(doc["counters"][0]["value"], float)

    def test_help(self):
        p = subprocess.run([HWC, "stat", "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        for opt in ("-e,", "-p,", "-t,", "-a,", "-C,", "-A,", "--per-thread", "-I,", "-r,", "-x,",
                    "--json", "-o,", "--no-inherit", "hwc-stat(1)"):
            self.assertIn(opt, p.stdout)


class Commands(Tmp):
    def test_exit_status_is_the_commands(self):
        self.assertEqual(stat("-e", "task-clock", "--", "sh", "-c", "exit 7").returncode, 7)
        self.assertEqual(stat("-e", "task-clock", "--", "true").returncode, 0)
        # Killed by a signal: 128 + the signal, as a shell says.
        p = stat("-e", "task-clock", "--", "sh", "-c", "kill -SEGV $$")
        self.assertEqual(p.returncode, 128 + signal.SIGSEGV)
        self.assertIn("Performance counter stats", p.stderr)

    def test_exit_status_in_json(self):
        doc, _ = self.stat_json("-e", "task-clock", "--", "sh", "-c", "exit 3", rc=3)
        self.assertEqual(doc["exit_status"], 3)

    def test_command_not_executable(self):
        with open(self.path("not-executable"), "w") as f:
            f.write("echo ran\n")
        for cmd, why in ((["hwc-no-such-command-x"], "not found in PATH"),
                         ([self.path("missing")], "No such file or directory"),
                         ([self.path("not-executable")], "Permission denied")):
            for extra in ([], ["-a"]):
                p = stat(*extra, "-e", "cpu-clock", "--", *cmd)
                self.assertEqual(p.returncode, 127, (cmd, extra, p.stderr))
                self.assertIn(f"hwc stat: cannot execute '{cmd[0]}'", p.stderr)
                self.assertIn(why, p.stderr)
                self.assertNotIn("Performance counter stats", p.stderr)

    def test_inherit(self):
        cmd = ["sh", "-c", f"{PAGETOUCH} 3000; exit 0"]
        doc, _ = self.stat_json("-e", "page-faults", "--", *cmd)
        self.assertGreaterEqual(doc["counters"][0]["raw"], 3000)
        doc, _ = self.stat_json("--no-inherit", "-e", "page-faults", "--", *cmd)
        self.assertLess(doc["counters"][0]["raw"], 3000)  # the shell's own faults only
        self.assertGreater(doc["counters"][0]["raw"], 0)

    def test_repeat(self):
        doc, _ = self.stat_json("-r", "3", "-e", "page-faults,task-clock", "--", PAGETOUCH, "1000")
        self.assertEqual(doc["runs"], 3)
        self.assertIn("elapsed_stddev_s", doc)
        for c in doc["counters"]:
            runs = c["runs"]
            self.assertEqual(len(runs), 3)
            scaled = [r["scaled"] for r in runs]
            scale = 1e-6 if c["unit"] == "msec" else 1
            self.assertAlmostEqual(c["value"], statistics.mean(scaled) * scale, places=6)
            self.assertEqual(c["raw"], sum(r["raw"] for r in runs))
            self.assertEqual(c["enabled_ns"], sum(r["enabled_ns"] for r in runs))
            self.assertAlmostEqual(c["stddev"], statistics.stdev(scaled) * scale, places=6)
            self.assertAlmostEqual(c["rel_stddev_pct"],
                                   100 * statistics.stdev(scaled) / statistics.mean(scaled), places=6)
        self.assertTrue(all(r["raw"] >= 1000 for r in self.by_event(doc)["page-faults"]["runs"]))
        p = stat("-r", "2", "-e", "page-faults", "--", PAGETOUCH, "100")
        self.assertEqual(p.returncode, 0)
        self.assertIn(f"'{PAGETOUCH} 100' (2 runs)", p.stderr)
        self.assertRegex(p.stderr, r"page-faults\s+\( \+-\s+\d+\.\d\d% \)")
        rows, _ = self.stat_csv("-r", "2", "-e", "page-faults", "--", PAGETOUCH, "100")
        self.assertEqual(len(rows[0]), 10)  # rel_stddev_pct after percent_running
        float(rows[0][7])

    def test_interval(self):
        n = 300
        doc, _ = self.stat_json("-I", "100", "-e", "context-switches,task-clock", "--", SLEEPER, str(n))
        intervals = doc["intervals"]
        self.assertGreaterEqual(len(intervals), 1)
        times = [i["time_s"] for i in intervals]
        self.assertEqual(times, sorted(times))
        self.assertTrue(all(i["duration_s"] > 0 for i in intervals))
        self.assertAlmostEqual(sum(i["duration_s"] for i in intervals), times[-1], places=6)
        for k, c in enumerate(doc["counters"]):
            for key in ("raw", "enabled_ns", "running_ns", "scaled"):
                self.assertEqual(c[key], sum(i["counters"][k][key] for i in intervals), key)
        self.assertGreaterEqual(self.by_event(doc)["context-switches"]["raw"], n)

    def test_interval_csv_and_human(self):
        rows, _ = self.stat_csv("-I", "50", "-e", "context-switches", "--", SLEEPER, "100")
        self.assertGreaterEqual(len(rows), 1)
        for r in rows:  # time first
            self.assertEqual(len(r), 10)
            self.assertRegex(r[0], r"^\d+\.\d{9}$")
            self.assertEqual(r[3], "context-switches")
        self.assertGreaterEqual(sum(int(r[1]) for r in rows), 100)
        p = stat("-I", "50", "-e", "context-switches", "--", SLEEPER, "100")
        self.assertIn("#", p.stderr.splitlines()[0])
        self.assertRegex(p.stderr, r"\n\s+\d+\.\d{9}\s+\d+\s+context-switches")
        self.assertNotIn("Performance counter stats", p.stderr)


def read_until(pipe, needle):
    """Read lines from PIPE until one holds NEEDLE; returns all text read."""
    text = ""
    while True:
        line = pipe.readline()
        if not line:
            raise AssertionError(f"hwc ended before printing {needle!r}: {text}")
        text += line
        if needle in line:
            return text


class Attach(Tmp):
    def start_threads(self):
        p = subprocess.Popen([sys.executable, "-c", THREADS], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        self.addCleanup(p.stdout.close)
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        ids = [int(x) for x in p.stdout.readline().split()]
        return p, ids[0], ids[1:]

    def counting(self, *args):
        """Start hwc stat with JSON intervals on stderr; return once it counts."""
        p = subprocess.Popen([HWC, "stat", "--json", "-I", "50", *args], stderr=subprocess.PIPE,
                             text=True, start_new_session=True)
        self.addCleanup(p.stderr.close)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        head = read_until(p.stderr, '"time_s"')
        return p, head

    def finish(self, p, head, rc=0):
        rest = p.stderr.read()
        self.assertEqual(p.wait(timeout=120), rc, head + rest)
        return json.loads(head + rest)

    def test_pid_per_thread_until_exit(self):
        target, pid, tids = self.start_threads()
        p, head = self.counting("-p", str(pid), "--per-thread", "-e", "context-switches,task-clock")
        target.stdin.close()  # the process exits; hwc stat ends with it
        doc = self.finish(p, head)
        self.assertEqual(doc["target"], {"kind": "process", "pid": pid})
        self.assertEqual(doc["aggregation"], "per-thread")
        self.assertFalse(doc["interrupted"])
        self.assertIsNone(doc["exit_status"])
        rows = {(c["tid"], c["event"]): c for c in doc["counters"]}
        self.assertEqual({t for t, _ in rows}, {pid, *tids})
        self.assertTrue(all(c["comm"].startswith("python") for c in doc["counters"]))
        for tid in tids:  # the napping threads switch out at every nap
            self.assertGreater(rows[(tid, "context-switches")]["raw"], 0)

    def test_pid_total(self):
        target, pid, _ = self.start_threads()
        p, head = self.counting("-p", str(pid), "-e", "context-switches")
        target.stdin.close()
        doc = self.finish(p, head)
        self.assertEqual(len(doc["counters"]), 1)
        self.assertNotIn("tid", doc["counters"][0])
        self.assertGreater(doc["counters"][0]["raw"], 0)

    def test_tid(self):
        target, pid, tids = self.start_threads()
        p, head = self.counting("-t", str(tids[0]), "--per-thread", "-e", "context-switches")
        target.stdin.close()  # the thread ends with its process
        doc = self.finish(p, head)
        self.assertEqual(doc["target"], {"kind": "thread", "tid": tids[0]})
        self.assertEqual([c["tid"] for c in doc["counters"]], [tids[0]])
        self.assertGreater(doc["counters"][0]["raw"], 0)

    def test_system_wide_until_sigint(self):
        p, head = self.counting("-a", "-e", "cpu-clock")
        p.send_signal(signal.SIGINT)
        doc = self.finish(p, head, rc=0)
        self.assertTrue(doc["interrupted"])
        self.assertEqual(doc["target"], {"kind": "system", "cpus": online_cpus()})
        self.assertGreater(doc["counters"][0]["raw"], 0)

    def test_sigterm_also_reports(self):
        p, head = self.counting("-C", "0", "-e", "cpu-clock")
        p.send_signal(signal.SIGTERM)
        doc = self.finish(p, head, rc=0)
        self.assertTrue(doc["interrupted"])
        self.assertEqual(doc["target"]["cpus"], [0])

    def test_sigint_to_command_and_hwc(self):
        # Ctrl-C: the terminal signals the whole process group.
        p, head = self.counting("-e", "context-switches", "--", SLEEPER, "100000000")
        os.killpg(p.pid, signal.SIGINT)
        doc = self.finish(p, head, rc=128 + signal.SIGINT)
        self.assertTrue(doc["interrupted"])
        self.assertIn(doc["exit_status"], (None, 128 + signal.SIGINT))
        self.assertGreater(doc["counters"][0]["raw"], 0)

    def test_sigint_command_that_ignores_it(self):
        pidfile = self.path("pid")
        p, head = self.counting("-e", "task-clock", "--", "sh", "-c",
                                f"trap '' INT; echo $$ > {pidfile}; exec {SLEEPER} 100000000")
        p.send_signal(signal.SIGINT)
        doc = self.finish(p, head, rc=128 + signal.SIGINT)
        self.assertTrue(doc["interrupted"])
        self.assertIsNone(doc["exit_status"])
        with open(pidfile) as f:
            child = int(f.read())
        # hwc ended it with SIGTERM (as perf does): wait for it to be gone.
        for _ in range(600):
            try:
                with open(f"/proc/{child}/stat") as f:
                    if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                        break
            except FileNotFoundError:
                break
            subprocess.run(["sleep", "0.1"])
        else:
            os.kill(child, signal.SIGKILL)
            self.fail("the command outlived hwc stat")

    def test_system_wide_per_cpu_with_command(self):
        doc, _ = self.stat_json("-a", "-A", "-e", "cpu-clock,context-switches", "--", SLEEPER, "20")
        cpus = online_cpus()
        self.assertEqual(doc["target"], {"kind": "system", "argv": [SLEEPER, "20"], "cpus": cpus})
        self.assertEqual(doc["aggregation"], "per-cpu")
        self.assertEqual(doc["exit_status"], 0)
        self.assertEqual(sorted({c["cpu"] for c in doc["counters"]}), cpus)
        self.assertEqual(len(doc["counters"]), 2 * len(cpus))
        for c in doc["counters"]:
            if c["event"] == "cpu-clock":  # a CPU's clock runs whether busy or idle
                self.assertGreater(c["raw"], 0)
        total = sum(c["raw"] for c in doc["counters"] if c["event"] == "context-switches")
        self.assertGreaterEqual(total, 20)  # the sleeper's, at least
        rows, _ = self.stat_csv("-a", "-A", "-e", "cpu-clock", "--", "true")
        self.assertEqual(sorted(int(r[0]) for r in rows), cpus)  # CPU first
        p = stat("-a", "-A", "-e", "cpu-clock", "--", "true")
        for cpu in cpus:
            self.assertRegex(p.stderr, rf"\nCPU{cpu}\s+[\d.,]+ msec cpu-clock")
        self.assertIn("'system wide' while running 'true'", p.stderr)

    def test_cpu_list(self):
        doc, _ = self.stat_json("-C", "0", "-e", "cpu-clock", "--", "true")
        self.assertEqual(doc["target"]["cpus"], [0])
        self.assertEqual(doc["aggregation"], "total")
        self.assertNotIn("cpu", doc["counters"][0])
        p = stat("-C", "0", "-e", "cpu-clock", "--", "true")
        self.assertIn("CPU(s) 0 while running 'true'", p.stderr)


class Errors(Tmp):
    def check_error(self, args, *needles, rc=1, env=None):
        p = stat(*args, "--", *self.marker_cmd(), env=env)
        self.assertEqual(p.returncode, rc, p.stderr)
        lines = hwc_lines(p.stderr)
        self.assertTrue(lines, p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)
        self.assert_not_run()
        self.assertNotIn("Performance counter stats", p.stderr)

    def test_unknown_event(self):
        self.check_error(["-e", "cyclez"], "unknown event 'cyclez'", "did you mean 'cycles'")

    def test_malformed_specs(self):
        self.check_error(["-e", "cycles:q"], "malformed event 'cycles:q'", "unknown modifier 'q'")
        self.check_error(["-e", "cpu/event=zz/"], "malformed value 'zz' for term 'event'")
        self.check_error(["-e", "{a,b"], "malformed '{a,b'", "missing '}'")

    def test_unsupported_event(self):
        if HAVE_CORE_PMU:
            self.skipTest("this machine has a hardware PMU: cycles is supported")
        self.check_error(["-e", "cycles"], "'cycles' is not supported on this machine",
                         "no hardware PMU")
        # Explicit events are never skipped, even next to ones that work.
        self.check_error(["-e", "task-clock,instructions"], "'instructions' is not supported")

    def test_group_larger_than_the_counters(self):
        general = ["BR_INST_RETIRED:ALL_BRANCHES", "BR_MISP_RETIRED:ALL_BRANCHES", "L2_RQSTS:MISS",
                   "L2_RQSTS:REFERENCES", "LONGEST_LAT_CACHE:MISS", "LONGEST_LAT_CACHE:REFERENCE",
                   "UOPS_ISSUED:ANY", "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES"]
        env = dict(os.environ, LIBPFM_FORCE_PMU="skl")
        group = "{" + ",".join("skl::" + e for e in general) + "}"
        self.check_error(["-e", group], "group starting at 'skl::BR_INST_RETIRED:ALL_BRANCHES' has 9 "
                         "hardware events that need a general-purpose counter but skl has only 8",
                         "split the group", "make it weak ({...}:W)", env=env)
        # Eight fit, and so do instructions and cycles beside them (fixed counters).
        fits = "{" + ",".join("skl::" + e for e in general[:8]) + ",instructions,cycles}"
        p = stat("-e", fits, "--", "true", env=env)
        self.assertNotIn("split the group", p.stderr)

    def test_weak_group(self):
        """perf's weak groups: {...}:W opens as independent events when the
        kernel refuses the group (here: a pinned member, which only a
        leader may be), and says so; without W that is the error."""
        self.check_error(["-e", "{cpu-clock,task-clock:D}"],
                         "cannot open 'task-clock:D': only a group's leader may be pinned (D)")
        self.check_error(["-e", "cpu-clock:W"], "malformed event 'cpu-clock:W'",
                         "the weak modifier 'W' is for groups")
        self.check_error(["-e", "{cpu-clock,task-clock}:WuW"], "modifier 'W' is repeated")
        self.check_error(["-e", "{cpu-clock,task-clock}:Wq"], "unknown modifier 'q'",
                         "W weak group")
        doc, p = self.stat_json("-e", "{cpu-clock,task-clock:D,page-faults}:W,"
                                "{cpu-clock,page-faults}:uW", "--", PAGETOUCH, "300")
        note = ("the kernel refused the weak group led by 'cpu-clock' (3 events) as one "
                "group: its events count apart")
        self.assertEqual(len(doc["notes"]), 1, doc["notes"])
        self.assertIn(note, doc["notes"][0])
        self.assertIn("hwc stat: " + note, p.stderr)
        events = [c["event"] for c in doc["counters"]]
        self.assertEqual(events, ["cpu-clock", "task-clock:D", "page-faults", "cpu-clock",
                                  "page-faults"])
        self.assertTrue(all(c["raw"] > 0 for c in doc["counters"]), doc["counters"])
        self.assertGreaterEqual(doc["counters"][2]["raw"], 300)
        # The weak group that opened is one group: one read, the same times.
        self.assertEqual(doc["counters"][3]["enabled_ns"], doc["counters"][4]["enabled_ns"])
        rows, p = self.stat_csv("-e", "{cpu-clock,task-clock:D}:W", "--", "true")
        self.assertEqual([r[2] for r in rows], ["cpu-clock", "task-clock:D"])
        self.assertIn("hwc stat: " + note.replace("3 events", "2 events"), p.stderr)

    def test_group_modifiers_pin_the_leader(self):
        """A group's D and e go to its leader alone (perf's rule; the kernel
        refuses them on a member)."""
        for mods in ("D", "e", "De"):
            doc, _ = self.stat_json("-e", "{cpu-clock,page-faults}:" + mods, "--", PAGETOUCH, "50")
            self.assertGreaterEqual(doc["counters"][1]["raw"], 50)

    def test_weak_group_larger_than_the_counters(self):
        """A weak group may hold more events than the counters: it is not
        refused before the kernel sees it (it is opened apart then)."""
        general = ["BR_INST_RETIRED:ALL_BRANCHES", "BR_MISP_RETIRED:ALL_BRANCHES", "L2_RQSTS:MISS",
                   "L2_RQSTS:REFERENCES", "LONGEST_LAT_CACHE:MISS", "LONGEST_LAT_CACHE:REFERENCE",
                   "UOPS_ISSUED:ANY", "MEM_INST_RETIRED:ALL_LOADS", "MEM_INST_RETIRED:ALL_STORES"]
        env = dict(os.environ, LIBPFM_FORCE_PMU="skl")
        p = stat("-e", "{" + ",".join("skl::" + e for e in general) + "}:W", "--", "true", env=env)
        self.assertNotIn("split the group", p.stderr)
        if not HAVE_CORE_PMU:
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("not supported on this machine", p.stderr)

    def test_missing_pid_and_tid(self):
        with open("/proc/sys/kernel/pid_max") as f:
            absent = int(f.read()) + 1
        for opt, needle in (("-p", f"no process with pid {absent}"),
                            ("-t", f"no process or thread with id {absent}")):
            p = stat(opt, str(absent), "-e", "task-clock")
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(needle, p.stderr)

    def test_cpu_out_of_range(self):
        cpu = os.sysconf("SC_NPROCESSORS_CONF") + 3
        self.check_error(["-C", str(cpu), "-e", "cpu-clock"], f"CPU {cpu} is out of range",
                         "online CPUs are")

    def test_usage_errors(self):
        cases = [
            ([], "nothing to count"),
            (["-C", "1-x"], "malformed CPU list '1-x'"),
            (["-C", "3-1"], "malformed CPU list '3-1'"),
            (["-C", ""], "malformed CPU list"),
            (["-p", "abc"], "invalid pid 'abc'"),
            (["-p", "0"], "invalid pid '0'"),
            (["-t", "-5"], "invalid thread id '-5'"),
            (["-p", "1", "-t", "1"], "either -p or -t"),
            (["-p", "1", "-a"], "cannot be combined with -a"),
            (["-p", "1", "true"], "unexpected command 'true'"),
            (["-A", "true"], "-A (one row per CPU) needs -a or -C"),
            (["--per-thread", "true"], "--per-thread needs -p or -t"),
            (["-a", "-A", "--per-thread"], "--per-thread needs -p or -t"),
            (["-r", "0", "true"], "invalid repeat count '0'"),
            (["-r", "2", "-a"], "-r repeats a command"),
            (["-r", "2", "-I", "100", "true"], "-r and -I cannot be combined"),
            (["-I", "5", "true"], "invalid interval '5'"),
            (["-I", "x", "true"], "invalid interval 'x'"),
            (["-x", "", "true"], "cannot be empty"),
            (["-x", ",", "--json", "true"], "cannot be combined"),
            (["-a", "--no-inherit", "true"], "--no-inherit applies to tasks"),
            (["--bogus", "true"], "unknown option '--bogus'"),
            (["-e"], "option '-e' needs a value"),
        ]
        for args, needle in cases:
            p = stat(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(needle, p.stderr, args)
            self.assertIn("hwc stat --help", p.stderr)


def libpfm_path():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    m = re.search(r"libpfm\.so\.4 .*=> (\S+)", out)
    return m.group(1) if m else None


class WithoutLibpfm(Tmp):
    """libhwc loads libpfm4 only when a native name needs it: with the
    library hidden (a bind mount in a private mount namespace), software
    events still count and native names say what is missing."""

    def stat_hidden(self, *args):
        lib = libpfm_path()
        if os.geteuid() != 0 or not lib or not shutil.which("unshare"):
            self.skipTest("needs root, unshare and libpfm.so.4 to hide it")
        probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
        if probe.returncode:
            self.skipTest(f"cannot make a mount namespace: {probe.stderr.decode().strip()}")
        return subprocess.run(["unshare", "--mount", "sh", "-c", 'mount --bind /dev/null "$0" && exec "$@"',
                               lib, HWC, "stat", *args], capture_output=True, text=True, timeout=120)

    def test_software_events_need_no_libpfm(self):
        p = self.stat_hidden("-e", "task-clock,page-faults", "--", PAGETOUCH, "100")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("page-faults", p.stderr)

    def test_native_names_say_libpfm_is_missing(self):
        p = self.stat_hidden("-e", "skl::INST_RETIRED:ANY_P", "--", *self.marker_cmd())
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("libpfm4 is needed for native event names but cannot be loaded", p.stderr)
        self.assertIn("install the libpfm4 package", p.stderr)
        self.assert_not_run()
        p = self.stat_hidden("-e", "INST_RETIRED:ANY_P", "--", "true")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("unknown event 'INST_RETIRED:ANY_P'", p.stderr)
        self.assertIn("native event names are unavailable: libpfm4 cannot be loaded", p.stderr)


@unittest.skipUnless(shutil.which("setpriv"), "setpriv (util-linux) is not installed")
class Unprivileged(Tmp):
    """As nobody, with the machine's perf_event_paranoid (2 on these VMs)."""

    def test_command_counts_user_space_only(self):
        if paranoid() < 2:
            self.skipTest(f"perf_event_paranoid is {paranoid()}: users may count the kernel")
        p = stat("-e", "task-clock,page-faults", "--", PAGETOUCH, "500", user=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        notes = hwc_lines(p.stderr)
        self.assertEqual(len(notes), 1, p.stderr)
        self.assertIn("counting user space only", notes[0])
        self.assertIn("perf_event_paranoid is 2", notes[0])
        self.assertIn("Performance counter stats", p.stderr)
        doc, p = self.stat_json("-e", "task-clock,page-faults", "--", PAGETOUCH, "500", user=True)
        self.assertTrue(all(c["user_only"] for c in doc["counters"]))
        self.assertEqual(len(doc["notes"]), 1)
        self.assertGreaterEqual(self.by_event(doc)["page-faults"]["raw"], 500)
        # The default set: still one line about user space, one about the PMU.
        p = stat("--", "true", user=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len([l for l in hwc_lines(p.stderr) if "user space only" in l]), 1)

    def test_kernel_counting_denied(self):
        if paranoid() < 2:
            self.skipTest(f"perf_event_paranoid is {paranoid()}: users may count the kernel")
        p = stat("-e", "task-clock:k", "--", "true", user=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("permission denied: perf_event_paranoid is 2", p.stderr)
        self.assertIn("sysctl kernel.perf_event_paranoid=1", p.stderr)

    def test_system_wide_denied(self):
        if paranoid() < 1:
            self.skipTest(f"perf_event_paranoid is {paranoid()}: users may count system-wide")
        p = stat("-a", "-e", "cpu-clock", "--", "true", user=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("system-wide counting needs root or CAP_PERFMON", p.stderr)
        self.assertIn(f"perf_event_paranoid is {paranoid()}", p.stderr)
        self.assertIn("sysctl kernel.perf_event_paranoid=0", p.stderr)

    def test_other_users_process_denied(self):
        p = stat("-p", "1", "-e", "task-clock", user=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot open 'task-clock' on pid 1: permission denied", p.stderr)
        self.assertIn("belongs to uid 0", p.stderr)


@unittest.skipUnless(shutil.which("perf"), "perf (linux-perf) is not installed: no oracle")
class PerfOracle(unittest.TestCase):
    """hwc and perf count the same program; the machine is shared and loaded,
    so each side runs several times, alternating, and medians are compared."""
    RUNS = 7

    def count(self, tool, event, argv):
        p = subprocess.run([tool, "stat", "-x", ",", "-e", event, "--", *argv],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        line = [l for l in p.stderr.splitlines() if f",{event}," in l][0]
        return int(line.split(",")[0])

    def agree(self, event, argv):
        hwc, perf = [], []
        for _ in range(self.RUNS):
            hwc.append(self.count(HWC, event, argv))
            perf.append(self.count("perf", event, argv))
        h, p = statistics.median(hwc), statistics.median(perf)
        self.assertLessEqual(abs(h - p), 0.02 * p, f"{event}: hwc {hwc} perf {perf}")
        return h

    def test_page_faults(self):
        n = 10000
        self.assertGreaterEqual(self.agree("page-faults", [PAGETOUCH, str(n)]), n)

    def test_context_switches(self):
        n = 300
        self.assertGreaterEqual(self.agree("context-switches", [SLEEPER, str(n)]), n)


if __name__ == "__main__":
    unittest.main(verbosity=2)
