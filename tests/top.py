"""hwc top on the bundled workload: --batch frames system-wide, of a process
(-p) and of a command, with shares near the workload's 1:3 split of f1:f2;
call chains (-g); --count rates against hwc stat of the same workload; the
target's end and SIGINT (the cut-short interval is shown); the timing notes
(the first refresh counts from the start, a late one says why); the errors
(bad and dead pids, unknown events, unprivileged system-wide, no terminal,
bad usage); and the ncurses view driven in tmux (header and rows, q, resize,
Ctrl-C restoring the terminal).  Nothing here depends on timing: tests wait
for what the output shows, and shares are taken within the workload's own
samples, whatever else the machine runs."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import hwctest
from hwctest import HAVE_CORE_PMU, LIMIT, paranoid, program, workload

HWC = program("hwc")
HOTSPOTS = workload("hotspots")
LONG = "100000"  # hotspots rounds: far longer than any test, killed at its end


def run(args, **kw):
    return hwctest.run(args, stdin=subprocess.DEVNULL, **kw)


def read(path):
    with open(path) as f:
        return f.read()


def start_workload(*args):
    return subprocess.Popen([HOTSPOTS, *(args or (LONG,))], stdout=subprocess.DEVNULL)


def stop(p):
    if p.poll() is None:
        p.kill()
    p.wait()


class Frame:
    """One refresh of --batch output: header, status, notes, titles, rows."""

    def __init__(self, text):
        self.lines = text.split("\n")
        self.header = self.lines[0]
        self.status = self.lines[1] if len(self.lines) > 1 else ""
        t = next((i for i, l in enumerate(self.lines)
                  if re.match(r"^\s+((Children\s+)?Self|PID|TID)\s", l)), None)
        self.titles = self.lines[t] if t is not None else None
        self.rows = [l for l in self.lines[t + 1:] if l] if t is not None else []

    def samples(self):
        """[(children, self, samples, comm, dso, symbol)] of a sampling frame."""
        out = []
        for l in self.rows:
            # Command and DSO are padded columns that long names overflow.
            m = re.match(r"^\s*(?:([\d.]+)%\s+)?([\d.]+)%\s+(\d+)\s+\d+  (.+?)\s{2,}(.+?)\s{2,}(.*)$", l)
            if not m:
                raise AssertionError("not a row: %r" % l)
            out.append((float(m.group(1)) if m.group(1) else None, float(m.group(2)),
                        int(m.group(3)), m.group(4), m.group(5), m.group(6)))
        return out

    def counts(self):
        """{pid: (comm, [values], exited)} of a --count frame."""
        out = {}
        for l in self.rows:
            m = re.match(r"^\s*(\d+)  (.+?)\s{2,}(.*)$", l)
            if not m:
                raise AssertionError("not a row: %r" % l)
            fields = m.group(3).split()
            exited = fields[-1] == "(exited)"
            out[int(m.group(1))] = (m.group(2).strip(), fields[:-1] if exited else fields, exited)
        return out


def frames(text):
    """The frames of --batch output (a command's own output may come between)."""
    out = []
    for chunk in text.split("\n\n"):
        start = chunk.find("hwc top")
        if start == 0 or (start > 0 and chunk[start - 1] == "\n"):
            out.append(Frame(chunk[start:]))
    return out


def work_shares(rows, comm="hotspots"):
    """f1 and f2 in percent of the workload's f1 + f2 samples, and their order."""
    f = {}
    order = []
    for _, _, samples, c, _, sym in rows:
        if c == comm and sym in ("f1", "f2"):
            f[sym] = f.get(sym, 0) + samples
            order.append(sym)
    total = f.get("f1", 0) + f.get("f2", 0)
    if not total:
        return None, order
    return {k: 100.0 * v / total for k, v in f.items()}, order


def rate(value):
    """A --count cell: 0.943, 119.8, 12.3K, 1.2M."""
    value = value.rstrip("*")
    scale = {"K": 1e3, "M": 1e6, "G": 1e9}.get(value[-1:], 1)
    return float(value.rstrip("KMG")) * scale


def read_frame(stream):
    """Read one frame (up to its blank line) from a --batch pipe."""
    lines = []
    while True:
        line = stream.readline()
        if not line:
            return None
        if line == "\n":
            return Frame("".join(lines).rstrip("\n"))
        lines.append(line)


class Sampling(unittest.TestCase):
    def setUp(self):
        self.w = start_workload()

    def tearDown(self):
        stop(self.w)

    def check_split(self, fs):
        rows = [r for f in fs for r in f.samples()]
        shares, _ = work_shares(rows)
        self.assertIsNotNone(shares, "\n\n".join("\n".join(f.lines) for f in fs))
        self.assertAlmostEqual(shares["f2"], 75, delta=8, msg=shares)
        self.assertAlmostEqual(shares["f1"], 25, delta=8, msg=shares)
        for f in fs:
            _, order = work_shares(f.samples())
            # Rows are sorted by share: f2 above f1 in a refresh with enough
            # of their samples (a refresh late under load may have a handful,
            # where 3 to 2 for f1 is chance, not a wrong sort).
            n = sum(r[2] for r in f.samples() if r[3] == "hotspots" and r[5] in ("f1", "f2"))
            if "f1" in order and "f2" in order and n >= 60:
                self.assertLess(order.index("f2"), order.index("f1"), "\n".join(f.lines))

    def test_system_wide_batch(self):
        if os.geteuid() != 0:
            self.skipTest("system-wide sampling needs root here")
        p = run([HWC, "top", "--batch", "-n", "2", "-d", "0.5", "--rows", "0"])
        self.assertEqual(p.returncode, 0, p.stderr)
        fs = frames(p.stdout)
        self.assertEqual(len(fs), 2, p.stdout)
        for i, f in enumerate(fs, 1):
            self.assertRegex(f.header, r"^hwc top: \S+ at 4000 Hz, every CPU \(\d+ online\); every 0.5 s$")
            self.assertRegex(f.status, r"^refresh %d: [\d.]+ s, \d+ samples; since the start: \d+ "
                             r"samples, \d+ lost, \d+ throttled$" % i)
            self.assertRegex(f.titles, r"^\s+Self\s+Samples\s+Period\s+Command\s+Shared Object\s+Symbol$")
            # The self shares of a refresh add up to all of its samples.
            total = sum(r[1] for r in f.samples())
            self.assertAlmostEqual(total, 100, delta=0.5 + 0.01 * len(f.rows))
        self.check_split(fs)

    def test_process(self):
        p = run([HWC, "top", "--batch", "-n", "2", "-d", "0.5", "-p", str(self.w.pid)])
        self.assertEqual(p.returncode, 0, p.stderr)
        fs = frames(p.stdout)
        self.assertEqual(len(fs), 2, p.stdout)
        self.assertIn("process %d (hotspots) and what it creates" % self.w.pid, fs[0].header)
        for f in fs:
            self.assertEqual({r[3] for r in f.samples()}, {"hotspots"}, "\n".join(f.lines))
        self.check_split(fs)

    def test_call_chains(self):
        p = run([HWC, "top", "--batch", "-n", "1", "-g", "-p", str(self.w.pid), "--rows", "0"])
        self.assertEqual(p.returncode, 0, p.stderr)
        f = frames(p.stdout)[0]
        self.assertIn("call chains", f.header)
        self.assertRegex(f.titles, r"^\s+Children\s+Self\s+Samples")
        rows = {r[5]: r for r in f.samples() if r[3] == "hotspots"}
        for sym in ("main", "g", "f1", "f2"):
            self.assertIn(sym, rows, "\n".join(f.lines))
        # g does none of the work itself and has all of f1's and f2's below it.
        self.assertLess(rows["g"][1], 2)
        # (A sample at a function's first instruction, before it set up its
        # frame, misses its caller: hence the tolerance.)
        self.assertAlmostEqual(rows["g"][0], rows["f1"][0] + rows["f2"][0], delta=1)
        self.assertAlmostEqual(rows["main"][0], rows["g"][0], delta=1)
        # Sorted by the children column, as perf top -g.
        children = [r[0] for r in f.samples()]
        self.assertEqual(children, sorted(children, reverse=True))

    def test_process_ends_mid_run(self):
        top = subprocess.Popen([HWC, "top", "--batch", "-n", "1000", "-d", "0.3", "-p", str(self.w.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = read_frame(top.stdout)
        self.assertIsNotNone(first)
        stop(self.w)
        out, err = top.communicate(timeout=LIMIT)
        self.assertEqual(top.returncode, 0, err)
        self.assertIn("hwc top: process %d exited; nothing left to watch" % self.w.pid, err)
        self.assertLess(len(frames(out)) + 1, 1000)

    def test_sigint_shows_the_cut_short_interval(self):
        top = subprocess.Popen([HWC, "top", "--batch", "-d", "0.3", "-p", str(self.w.pid)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertIsNotNone(read_frame(top.stdout))
        top.send_signal(signal.SIGINT)
        out, err = top.communicate(timeout=LIMIT)
        self.assertEqual(top.returncode, 128 + signal.SIGINT, err)
        last = frames(out)[-1]
        self.assertRegex(last.status, r"^refresh \d+ \(cut short\): ")


class Command(unittest.TestCase):
    def test_command_to_its_end(self):
        p = run([HWC, "top", "--batch", "-d", "0.5", "--", HOTSPOTS, "30"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"hwc top: command \S*hotspots exited \(status 0\)")
        fs = frames(p.stdout)
        self.assertGreaterEqual(len(fs), 1, p.stdout)
        self.assertRegex(fs[-1].status, r"\(cut short\)")
        shares, _ = work_shares([r for f in fs for r in f.samples()])
        self.assertAlmostEqual(shares["f2"], 75, delta=8, msg=shares)

    def test_command_exit_status_and_exec_failure(self):
        p = run([HWC, "top", "--batch", "--", "sh", "-c", "exit 3"])
        self.assertEqual(p.returncode, 3, p.stderr)
        p = run([HWC, "top", "--batch", "--", "/nonexistent/program"])
        self.assertEqual(p.returncode, 127)
        self.assertIn("/nonexistent/program", p.stderr)
        p = run([HWC, "top", "--count", "--batch", "--", "/nonexistent/program"])
        self.assertEqual(p.returncode, 127)


class Counting(unittest.TestCase):
    def stat_rates(self):
        """hwc stat of the same workload, its own process only (-i), per second."""
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "stat.json")
            p = run([HWC, "stat", "-i", "-j", "-o", out, "-e", "task-clock,context-switches,page-faults",
                     "--", HOTSPOTS, "40"])
            self.assertEqual(p.returncode, 0, p.stderr)
            doc = json.loads(read(out))
        c = {x["event"]: x for x in doc["counters"]}
        secs = doc["elapsed_s"]
        return {"task-clock": c["task-clock"]["scaled"] / 1e9 / secs,
                "context-switches": c["context-switches"]["scaled"] / secs,
                "page-faults": c["page-faults"]["scaled"] / secs}

    def assert_order_of_magnitude(self, top, stat, what):
        self.assertGreater(top, 0, what)
        ratio = top / stat
        self.assertTrue(0.1 <= ratio <= 10, "%s: top %g vs stat %g" % (what, top, stat))

    def test_system_wide_rates_match_stat(self):
        if os.geteuid() != 0:
            self.skipTest("counting every process needs root here")
        stat = self.stat_rates()
        w = start_workload()
        try:
            p = run([HWC, "top", "--count", "--batch", "-n", "2", "-d", "0.5", "--rows", "0",
                     "-e", "task-clock,context-switches,page-faults"])
        finally:
            stop(w)
        self.assertEqual(p.returncode, 0, p.stderr)
        fs = frames(p.stdout)
        self.assertEqual(len(fs), 2, p.stdout)
        f = fs[-1]
        self.assertIn("counting task-clock, context-switches, page-faults in every process", f.header)
        self.assertRegex(f.titles, r"^\s+PID\s+Command\s+task-clock\s+context-switches\s+page-faults$")
        rows = f.counts()
        self.assertIn(w.pid, rows, p.stdout)
        comm, values, _ = rows[w.pid]
        self.assertEqual(comm, "hotspots")
        for name, v in zip(("task-clock", "context-switches", "page-faults"), values):
            self.assert_order_of_magnitude(rate(v), stat[name], name)
        # Sorted by the first event.
        listed = [rate(re.match(r"^\s*\d+  .+?\s{2,}(\S+)", l).group(1)) for l in f.rows]
        self.assertEqual(listed, sorted(listed, reverse=True))

    def test_process_threads(self):
        w = start_workload()
        try:
            p = run([HWC, "top", "--count", "--batch", "-n", "1", "-d", "0.5", "-p", str(w.pid)])
        finally:
            stop(w)
        self.assertEqual(p.returncode, 0, p.stderr)
        f = frames(p.stdout)[0]
        self.assertIn("in process %d (hotspots) and what it creates, per thread" % w.pid, f.header)
        self.assertRegex(f.titles, r"^\s+TID\s+Command\s+task-clock")
        rows = f.counts()
        self.assertEqual(list(rows), [w.pid])
        cpus = rate(rows[w.pid][1][0])
        self.assertTrue(0.05 < cpus <= 1.05, cpus)

    def test_exited_process_is_shown_once_more(self):
        if os.geteuid() != 0:
            self.skipTest("counting every process needs root here")
        victim = subprocess.Popen(["sleep", "1000"])
        top = subprocess.Popen([HWC, "top", "--count", "--batch", "-d", "0.3", "--rows", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            f = read_frame(top.stdout)
            while f and victim.pid not in f.counts():
                f = read_frame(top.stdout)
            self.assertIsNotNone(f)
            self.assertFalse(f.counts()[victim.pid][2])
            stop(victim)
            f = read_frame(top.stdout)
            while f and victim.pid in f.counts() and not f.counts()[victim.pid][2]:
                f = read_frame(top.stdout)
            self.assertTrue(f and f.counts()[victim.pid][2], "no (exited) row")
            f = read_frame(top.stdout)
            self.assertNotIn(victim.pid, f.counts())
        finally:
            stop(victim)
            top.send_signal(signal.SIGINT)
            top.communicate(timeout=LIMIT)


class Timing(unittest.TestCase):
    """The first refresh is due an interval after hwc top's start (starting
    up is part of it, never a delay before it), and a refresh that comes
    late says by how much and why.  Nothing here measures time itself: the
    frames' own numbers must agree with the interval asked for."""

    CAUSES = ("starting up", "symbolizing samples", "waiting to run")

    def check(self, f, delay):
        m = re.match(r"^refresh (\d+)( \(cut short\))?: ([\d.]+) s", f.status)
        self.assertTrue(m, f.status)
        n, cut, secs = int(m.group(1)), bool(m.group(2)), float(m.group(3))
        notes = [l for l in f.lines[:f.lines.index(f.titles)] if l.startswith("note: ")]
        started = [re.match(r"^note: counted from hwc top's start: ([\d.]+) s starting up, "
                            r"then ([\d.]+) s watching$", l) for l in notes]
        started = [m for m in started if m]
        if n == 1:
            # The first refresh covers starting up too, and says so.
            self.assertEqual(len(started), 1, "\n".join(f.lines))
            up, watching = float(started[0].group(1)), float(started[0].group(2))
            self.assertAlmostEqual(up + watching, secs, delta=0.011)
        else:
            self.assertEqual(started, [], "\n".join(f.lines))
        late = [re.match(r"^note: ([\d.]+) s late(?:: (.*))?$", l) for l in notes]
        late = [m for m in late if m]
        self.assertLessEqual(len(late), 1, notes)
        if cut:
            self.assertEqual(late, [], notes)  # shorter than asked, never late
            return
        # No longer than asked, but for what the frame explains.
        over = float(late[0].group(1)) if late else 0
        self.assertLessEqual(secs, delay + over + 0.011, "\n".join(f.lines))
        if late:
            parts = re.findall(r"([\d.]+) s ([a-z ]+?)(?:, |$)", late[0].group(2) or "")
            self.assertTrue(parts, late[0].group(0))
            for _, cause in parts:
                self.assertIn(cause, self.CAUSES, late[0].group(0))
            self.assertAlmostEqual(sum(float(v) for v, _ in parts), over, delta=0.011 * len(parts))

    def check_run(self, args, n, delay):
        """hwc top --batch -n N -d DELAY ARGS: N frames, each checked."""
        p = run([HWC, "top", "--batch", "-n", str(n), "-d", str(delay), *args])
        self.assertEqual(p.returncode, 0, p.stderr)
        fs = frames(p.stdout)
        self.assertEqual(len(fs), n, p.stdout)
        for f in fs:
            self.check(f, delay)

    def test_sampling_a_command(self):
        self.check_run(["--", HOTSPOTS, LONG], 3, 0.3)

    def test_sampling_every_cpu(self):
        if os.geteuid() != 0:
            self.skipTest("system-wide sampling needs root here")
        self.check_run(["-g"], 2, 0.5)

    def test_counting_and_cut_short(self):
        # The command ends before the first refresh: one frame, cut short,
        # that still says how much of it was starting up.
        p = run([HWC, "top", "--count", "--batch", "-d", "5", "--", HOTSPOTS, "1"])
        self.assertEqual(p.returncode, 0, p.stderr)
        fs = frames(p.stdout)
        self.assertEqual(len(fs), 1, p.stdout)
        self.assertIn("(cut short)", fs[0].status)
        self.check(fs[0], 5)
        w = start_workload()
        try:
            self.check_run(["--count", "-p", str(w.pid)], 2, 0.3)
        finally:
            stop(w)


class Errors(unittest.TestCase):
    def assert_fails(self, args, message, status=1, nobody=False):
        p = run([HWC, "top", *args], nobody=nobody)
        self.assertEqual(p.returncode, status, p.stderr)
        self.assertIn(message, p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def test_bad_and_dead_pids(self):
        for mode in ([], ["--count"]):
            self.assert_fails([*mode, "--batch", "-p", "0"], "invalid pid '0'", status=2)
            self.assert_fails([*mode, "--batch", "-p", "abc"], "invalid pid 'abc'", status=2)
            self.assert_fails([*mode, "--batch", "-p", "999999999"], "no process with pid 999999999")
            dead = subprocess.Popen(["true"])
            dead.wait()
            self.assert_fails([*mode, "--batch", "-p", str(dead.pid)], "no process with pid %d" % dead.pid)

    def test_unknown_event(self):
        for mode in ([], ["--count"]):
            self.assert_fails([*mode, "--batch", "-p", "1", "-e", "no-such-event"], "unknown event 'no-such-event'")

    def test_missing_hardware_is_an_error_in_counting(self):
        if HAVE_CORE_PMU:
            self.skipTest("this machine has a hardware PMU")
        self.assert_fails(["--count", "--batch", "-p", "1", "-e", "cycles"], "no hardware PMU")

    def test_unprivileged_system_wide(self):
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as nobody")
        level = paranoid()
        if level <= 0:
            self.skipTest("perf_event_paranoid is %d: nobody may watch every CPU" % level)
        for mode in ([], ["--count"]):
            p = self.assert_fails([*mode, "--batch"], "watching every CPU needs root or CAP_PERFMON",
                                  nobody=True)
            self.assertIn("perf_event_paranoid is %d" % level, p.stderr)
            self.assertIn("sysctl kernel.perf_event_paranoid=0", p.stderr)

    def test_no_terminal_without_batch(self):
        self.assert_fails(["-p", "1"], "the live view needs a terminal")

    def test_usage(self):
        for args, message in ((["-d", "0"], "invalid delay '0'"),
                              (["-n", "0"], "invalid number of refreshes '0'"),
                              (["--rows", "-1"], "invalid number of rows '-1'"),
                              (["--count", "-g"], "-F, -g and --no-demangle are for sampling"),
                              (["--count", "--no-demangle"], "--no-demangle are for sampling"),
                              (["--count", "-C", "0"], "-C does not apply"),
                              (["-e", "task-clock", "-e", "cpu-clock"], "samples one event"),
                              (["-p", "1", "-a"], "cannot be combined"),
                              (["--bogus"], "unknown option '--bogus'")):
            self.assert_fails(["--batch", *args], message, status=2)
        self.assert_fails(["--batch", "-e", "task-clock,cpu-clock", "-p", "1"], "samples one event",
                          status=2)
        p = run([HWC, "top", "--help"])
        self.assertEqual(p.returncode, 0)
        self.assertIn("usage: hwc top", p.stdout)


class Screen(unittest.TestCase):
    """The ncurses view in a tmux pane of its own server."""

    def setUp(self):
        if not shutil.which("tmux"):
            self.skipTest("tmux is not installed (scripts/deps)")
        # A server per test: kill-server returns before the old server has
        # gone, and a new session on its socket can meet it dying.
        self.sock = "hwc-top-test-%d-%s" % (os.getpid(), self._testMethodName)
        self.tmp = tempfile.mkdtemp(prefix="hwc-top-")
        self.w = start_workload()

    def tearDown(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], stderr=subprocess.DEVNULL)
        stop(self.w)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, *args], stdout=subprocess.PIPE, text=True,
                              check=True).stdout

    def start(self, *args, term="screen"):
        done = os.path.join(self.tmp, "done")
        # The shell outlives a Ctrl-C (trap) to say how hwc top ended.
        # The terminal's settings are saved before the status that says the
        # run is over.
        cmd = "trap : INT; %s top %s; rc=$?; stty -a > %s.stty; echo $rc > %s; sleep 600" % (
            HWC, " ".join(args), done, done)
        subprocess.run(["tmux", "-L", self.sock, "new-session", "-d", "-x", "120", "-y", "30",
                        "env", "TERM=" + term, "sh", "-c", cmd], check=True)
        return done

    def wait_for(self, what, pattern=None, path=None):
        """Wait until the pane shows PATTERN, or PATH exists: events, not time."""
        for _ in range(1200):
            if path and os.path.exists(path):
                text = read(path)
                if text.endswith("\n"):
                    return text
            if pattern:
                pane = self.tmux("capture-pane", "-p")
                if re.search(pattern, pane, re.M):
                    return pane
            time.sleep(0.1)
        self.fail("waited long for %s; the pane:\n%s" % (what, self.tmux("capture-pane", "-p")))

    def test_view_quits_on_q(self):
        done = self.start("-d", "0.3", "-p", str(self.w.pid))
        pane = self.wait_for("rows", r"^\s+[\d.]+%\s+\d+\s+\d+\s+hotspots\s+hotspots\s+f2$")
        self.assertRegex(pane, r"^hwc top \(q quits\): \S+ at 4000 Hz, process %d \(hotspots\)" % self.w.pid)
        self.assertRegex(pane, r"(?m)^refresh \d+: [\d.]+ s, \d+ samples; since the start: \d+ samples, "
                               r"\d+ lost, \d+ throttled$")
        self.assertRegex(pane, r"(?m)^\s+Self\s+Samples\s+Period\s+Command")
        # A resize redraws: every line fits the new width.
        self.tmux("resize-window", "-x", "50", "-y", "12")
        pane = self.wait_for("a redraw", r"^hwc top \(q quits\)")
        self.assertTrue(all(len(l) <= 50 for l in pane.split("\n")), pane)
        self.tmux("send-keys", "q")
        self.assertEqual(self.wait_for("the exit", path=done).strip(), "0")

    def test_count_view_and_ctrl_c_restore_the_terminal(self):
        done = self.start("--count", "-d", "0.3", "-p", str(self.w.pid))
        self.wait_for("the row", r"^\s+%d  hotspots\s+[\d.]+\s" % self.w.pid)
        self.tmux("send-keys", "C-c")
        self.assertEqual(self.wait_for("the exit", path=done).strip(), str(128 + signal.SIGINT))
        stty = read(done + ".stty")
        self.assertRegex(stty, r"(^|\s)icanon(\s|$)")
        self.assertRegex(stty, r"(^|\s)echo(\s|$)")

    def test_unknown_terminal(self):
        err = os.path.join(self.tmp, "err")
        done = self.start("-p", str(self.w.pid), "2>", err, term="no-such-terminal")
        self.assertEqual(self.wait_for("the exit", path=done).strip(), "1")
        self.assertIn("hwc top: cannot drive this terminal (TERM=no-such-terminal); give --batch",
                      read(err))

    def test_view_ends_with_its_target(self):
        done = self.start("-d", "0.3", "-p", str(self.w.pid), "2>", os.path.join(self.tmp, "err"))
        self.wait_for("rows", r"hotspots\s+hotspots\s+f[12]$")
        stop(self.w)
        self.assertEqual(self.wait_for("the exit", path=done).strip(), "0")
        self.assertIn("process %d exited" % self.w.pid, read(os.path.join(self.tmp, "err")))


if __name__ == "__main__":
    unittest.main()
