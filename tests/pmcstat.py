"""pmcstat(8) and pmccontrol(8): counting a pipeline with and without
descendants, system mode per CPU, intervals with incremental and cumulative
counts, sampling into a log and reading it back as text, gprof(1) profiles
(checked with gprof) and call graphs, counts at exit and per context
switch, top mode, SIGINT, -t, and the usage and runtime errors."""
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

BUILD = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
PMCSTAT = os.path.join(BUILD, "bin", "pmcstat")
PMCCONTROL = os.path.join(BUILD, "bin", "pmccontrol")
WORK = os.path.join(BUILD, "workloads")
PAGETOUCH = os.path.join(WORK, "pagetouch")
HOTSPOTS = os.path.join(WORK, "hotspots")
SLEEPER = os.path.join(WORK, "sleeper")
# A hang guard for every run, never a timing assertion.
LIMIT = 300
SANITIZED = "build-san" in BUILD
# Sanitized processes fault in their shadow memory too.
SLACK = 2.0 if SANITIZED else 1.25


def run(*args, prog=PMCSTAT, **kw):
    return subprocess.run([prog, *args], capture_output=True, text=True, timeout=LIMIT, **kw)


def wait_exec(pid, name):
    """Wait until process PID has exec'd NAME (its comm), or its parent
    process PID has a child that has; return that process's pid."""
    for _ in range(LIMIT * 100):
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                pids = [pid] + [int(c) for c in f.read().split()]
            for q in pids:
                with open(f"/proc/{q}/comm") as f:
                    if f.read().strip() == name:
                        return q
        except (FileNotFoundError, ProcessLookupError):
            pass
        time.sleep(0.01)
    raise AssertionError(f"process {pid} never ran {name}")


def counts(text):
    """The header's columns and each line of values after it."""
    lines = [l for l in text.splitlines() if l.strip()]
    head = next(i for i, l in enumerate(lines) if l.startswith("#"))
    cols = lines[head][1:].split()
    rows = [[int(v) for v in l.split()] for l in lines[head + 1:] if re.match(r"^\s*\d", l)]
    return cols, rows


class Counting(unittest.TestCase):
    def total(self, *opts):
        r = run(*opts, "--", "sh", "-c", f"{PAGETOUCH} 3000 | {PAGETOUCH} 2000")
        self.assertEqual(r.returncode, 0, r.stderr)
        cols, rows = counts(r.stderr)
        self.assertEqual(cols, ["p/page-faults"])
        return rows[-1][0]

    def test_pipeline_descendants(self):
        alone = self.total("-p", "page-faults")
        self.assertLess(alone, 3000)  # the shell's own
        # -d before -p, as FreeBSD has it, and after it (pmcstat(8), LINUX).
        for opts in (("-d", "-p", "page-faults"), ("-p", "page-faults", "-d")):
            every = self.total(*opts)
            self.assertGreaterEqual(every, 5000 + alone // 2)
            self.assertLess(every, (5000 + alone) * SLACK + 500)

    def test_pipeline_task_clock(self):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = run("-p", "task-clock", "-d", "--", "sh", "-c", f"{HOTSPOTS} 3 | {HOTSPOTS} 3")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.assertEqual(r.returncode, 0, r.stderr)
        ns = counts(r.stderr)[1][-1][0]
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        # The pipeline's CPU time: what the kernel accounted to the waited-for
        # processes (pmcstat itself included, with tick granularity).
        self.assertGreater(ns, 0.5 * cpu * 1e9 - 20e6)
        self.assertLess(ns, cpu * 1e9 + 50e6)
        r = run("-p", "task-clock", "--", "sh", "-c", f"{HOTSPOTS} 3 | {HOTSPOTS} 3")
        self.assertLess(counts(r.stderr)[1][-1][0] * 10, ns)

    def test_qualifiers(self):
        # FreeBSD's usr and os on software events: the faults pagetouch
        # takes writing its pages are user-mode faults.
        def faults(spec):
            r = run("-p", spec, "--", PAGETOUCH, "3000")
            self.assertEqual(r.returncode, 0, r.stderr)
            cols, rows = counts(r.stderr)
            self.assertEqual(cols, ["p/page-faults"])
            return rows[-1][0]
        both, usr, os_ = (faults("page-faults" + q) for q in (",usr,os", ",usr", ",os"))
        self.assertGreaterEqual(usr, 3000)
        self.assertGreaterEqual(both, 3000)
        self.assertLess(os_, 1000)
        for spec in ("cpu-clock,usr,os", "task-clock,usr", "context-switches,os"):
            r = run("-p", spec, "--", "true")
            self.assertEqual(r.returncode, 0, f"{spec}: {r.stderr}")
        # Hardware events parse; without a PMU they are "not supported".
        if not os.path.exists("/sys/bus/event_source/devices/cpu"):
            for spec in ("instructions,usr,os", "unhalted-cycles,usr", "r1c2,edge,cmask=2,os"):
                r = run("-p", spec, "--", "true")
                self.assertEqual(r.returncode, 71, r.stderr)
                self.assertIn("not supported", r.stderr)
                self.assertNotIn("modifier", r.stderr)
        r = run("-p", "cpu-clock,cmask=2", "--", "true")
        self.assertEqual(r.returncode, 71, r.stderr)
        self.assertIn("cpu-clock is a software event, counted by the kernel: it takes usr and "
                      "os, not 'cmask=2'", r.stderr)

    def test_counts_the_command_only(self):
        # The command's page faults, not those of pmcstat's child before it
        # execs the command (~75 copy-on-write faults).  pmcstat waits for
        # the child to say it is waiting before attaching; when it did not,
        # the child ran after the PMCs had started whenever it had to wait
        # for the CPU (on one CPU, every other run), and with two PMCs
        # started in turn one could count faults the other missed.
        cpu = {min(os.sched_getaffinity(0))}
        def pin():
            os.sched_setaffinity(0, cpu)
        # The reference: hwc stat counts from the exec on (enable_on_exec).
        ref = []
        for _ in range(3):
            r = subprocess.run([os.path.join(BUILD, "bin", "hwc"), "stat", "-x,", "-e", "minor-faults",
                                "--", SLEEPER, "1"], capture_output=True, text=True, timeout=LIMIT)
            self.assertEqual(r.returncode, 0, r.stderr)
            ref.append(int(next(l for l in r.stderr.splitlines() if ",minor-faults," in l).split(",")[0]))
        for _ in range(10):
            r = run("-p", "minor-faults", "-p", "minor-faults", "--", SLEEPER, "1", preexec_fn=pin)
            self.assertEqual(r.returncode, 0, r.stderr)
            last = counts(r.stderr)[1][-1]
            self.assertEqual(last[0], last[1], r.stderr)
            self.assertLess(last[0], min(ref) * SLACK + 20, (ref, r.stderr))

    def test_system_per_cpu(self):
        r = run("-c", "0", "-s", "page-faults", "--", "taskset", "-c", "0", PAGETOUCH, "3000")
        if r.returncode != 0 and "Operation not permitted" in r.stderr:
            self.skipTest("no system-wide counting for this user")
        self.assertEqual(r.returncode, 0, r.stderr)
        cols, rows = counts(r.stderr)
        self.assertEqual(cols, ["s/00/page-faults"])
        self.assertGreaterEqual(rows[-1][0], 3000)
        # Without -c: every CPU, one column each.
        r = run("-s", "page-faults", "--", PAGETOUCH, "3000")
        cols, rows = counts(r.stderr)
        self.assertEqual(cols, [f"s/{c:02d}/page-faults" for c in range(os.cpu_count())])
        self.assertGreaterEqual(sum(rows[-1]), 3000)

    def test_intervals(self):
        # The first PMC prints increments, the second (-C) the running total.
        r = run("-w", "0.2", "-p", "minor-faults", "-C", "-p", "minor-faults", "--", "sh", "-c",
                f"{PAGETOUCH} 2000; {SLEEPER} 300; {PAGETOUCH} 2000; {SLEEPER} 300")
        self.assertEqual(r.returncode, 0, r.stderr)
        cols, rows = counts(r.stderr)
        self.assertEqual(cols, ["p/minor-faults", "p/minor-faults"])
        self.assertGreaterEqual(len(rows), 2)
        self.assertEqual(sum(row[0] for row in rows), rows[-1][1])
        self.assertEqual([row[1] for row in rows], sorted(row[1] for row in rows))

    def test_duration_and_sigint(self):
        r = run("-l", "0.3", "-s", "context-switches")
        if r.returncode != 0 and "Operation not permitted" in r.stderr:
            self.skipTest("no system-wide counting for this user")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(sum(counts(r.stderr)[1][-1]), 0)
        # SIGINT ends the measurement (and the command): the counts are printed.
        p = subprocess.Popen([PMCSTAT, "-p", "page-faults", "--", SLEEPER, "100000"],
                             stderr=subprocess.PIPE, text=True)
        # pmcstat handles SIGINT by the time it lets the command run; a
        # fixed 0.5 s wait assumed it had got there, loaded and sanitized.
        wait_exec(p.pid, "sleeper")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=LIMIT)
        self.assertEqual(p.returncode, 0, err)
        self.assertGreater(counts(err)[1][-1][0], 0)

    def test_target_processes(self):
        tmp = tempfile.mkdtemp()
        try:
            # A name no other process has (another suite may run this test),
            # and -t only once the probe runs it: Popen returns at the fork.
            name = f"pmcprobe{os.getpid()}"
            probe = os.path.join(tmp, name)
            shutil.copy(SLEEPER, probe)
            p = subprocess.Popen([probe, "1000"])
            wait_exec(p.pid, name)
            r = run("-t", f"^{name}$", "-p", "context-switches")
            p.wait(timeout=LIMIT)
            self.assertEqual(r.returncode, 0, r.stderr)
            # It ends when the target does, having seen its sleeps.
            self.assertGreater(counts(r.stderr)[1][-1][0], 100)
            r = run("-t", "^nosuchcommand-anywhere$", "-p", "task-clock")
            self.assertEqual(r.returncode, 65)
            self.assertIn("No matching target processes", r.stderr)
        finally:
            shutil.rmtree(tmp)


class Sampling(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        # A copy with a name of its own: other programs may run a hotspots
        # too, and -S samples them; so may this test in another suite.
        self.name = f"hotspots-pmcstat-{os.getpid()}"
        self.prog = os.path.join(self.tmp, self.name)
        shutil.copy(HOTSPOTS, self.prog)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def record(self, mode, *extra, rounds="8"):
        # One sample per ms of CPU: hotspots' ~0.4 s give the profiles
        # hundreds of samples, and the log's 256 KB per CPU hold 2 s of them
        # should the writer thread wait that long on a loaded machine.  At
        # the default 65536 ns they held 140 ms, and -S sampled both CPUs
        # at 15 kHz: it lost samples and warned ("sampling was paused").
        log = os.path.join(self.tmp, "sample.out")
        r = run("-n", "1000000", mode, "cpu-clock", *extra, "-O", log, "--", self.prog, rounds)
        if r.returncode != 0 and "Operation not permitted" in r.stderr:
            self.skipTest("no system-wide sampling for this user")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.strip(), "")  # the log holds it all
        return log

    def test_gprof_profile(self):
        if not shutil.which("gprof"):
            self.skipTest("gprof (binutils) is not installed")
        log = self.record("-S")
        out = os.path.join(self.tmp, "prof")
        os.mkdir(out)
        mapfile = os.path.join(self.tmp, "map")
        r = run("-R", log, "-g", "-D", out, "-M", mapfile)
        self.assertEqual(r.returncode, 0, r.stderr)
        gmon = os.path.join(out, "cpu-clock", self.name + ".gmon")
        with open(mapfile) as f:
            self.assertIn(f"{gmon} {self.prog}\n", f.read())
        g = subprocess.run(["gprof", "-b", "-p", self.prog, gmon], capture_output=True, text=True,
                           timeout=LIMIT)
        self.assertEqual(g.returncode, 0, g.stderr)
        share = {}
        for line in g.stdout.splitlines():
            f = line.split()
            if len(f) >= 4 and re.match(r"^\d+\.\d+$", f[0]):
                share[f[-1]] = float(f[0])
        # f2 does three times f1's work (workloads/hotspots.c).
        self.assertGreater(share.get("f1", 0) + share.get("f2", 0), 90, g.stdout)
        self.assertGreater(share["f2"] / (share["f1"] + share["f2"]), 0.6, g.stdout)
        self.assertLess(share["f2"] / (share["f1"] + share["f2"]), 0.9, g.stdout)

    def test_callgraph(self):
        log = self.record("-P")
        r = run("-R", log, "-G", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        m = re.match(r"^@ cpu-clock \[(\d+) samples\]$", lines[0])
        self.assertTrue(m, lines[0])
        self.assertEqual(lines[1], "")
        # The hottest function first, its callers below it, one more column each.
        top = re.match(r"^(\d\d\.\d\d)%  \[(\d+)\]\s+f2 @ (\S+)$", lines[2])
        self.assertTrue(top, lines[2])
        self.assertEqual(top.group(3), self.prog)
        self.assertGreater(float(top.group(1)), 60)
        self.assertRegex(lines[3], r"^ (100\.0|\d\d\.\d\d)%  \[\d+\]\s+ g$")
        self.assertRegex(lines[4], r"^  (100\.0|\d\d\.\d\d)%  \[\d+\]\s+  main$")
        self.assertIn(f"f1 @ {self.prog}", r.stdout)
        # -z limits the depth.
        r = run("-R", log, "-z", "2", "-G", "-")
        # No third column (main may still be sampled itself, as a function).
        self.assertNotRegex(r.stdout, r"(?m)^  (100\.0|\d\d\.\d\d)%")
        self.assertIn(" g\n", r.stdout)

    def test_log_as_text(self):
        log = self.record("-P", "-N", rounds="3")
        r = run("-R", log)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertRegex(lines[0], r'^initlog   0x9030000 "\w+"$')
        self.assertRegex(lines[1], r'^allocate  0x[0-9a-f]+ "cpu-clock" 0x[0-9a-f]+$')
        self.assertEqual(lines[-1].rstrip(), "closelog")
        kinds = {l.split()[0] for l in lines}
        self.assertTrue({"attach", "map-in", "exec", "sample", "fork"} <= kinds, kinds)
        self.assertNotIn("callchain", kinds)  # -N: no call chains
        self.assertTrue(any(re.match(r'^exec +0x[0-9a-f]+ \d+ 0x[0-9a-f]+ 0x[0-9a-f]+ ".*/%s"$' % self.name, l)
                            for l in lines))

    def test_exit_and_switch_counts(self):
        # No -O: the log is printed when the measurement ends.
        r = run("-d", "-E", "-W", "-p", "task-clock", "--", "sh", "-c",
                f"{PAGETOUCH} 100; {SLEEPER} 20")
        self.assertEqual(r.returncode, 0, r.stderr)
        exits = [l.split() for l in r.stderr.splitlines() if l.startswith("exitval")]
        pids = {int(f[2]) for f in exits}
        self.assertGreaterEqual(len(pids), 3)  # sh and its two children
        self.assertTrue(all(int(f[3]) > 0 for f in exits))
        switches = [l for l in r.stderr.splitlines() if l.startswith("cswval")]
        self.assertGreater(len(switches), 20)  # the sleeper's 20 naps at least

    def test_top(self):
        r = run("-T", "-w", "0.3", "-P", "cpu-clock", "--", self.prog, "8")
        self.assertEqual(r.returncode, 0, r.stderr)
        frames = r.stdout.split("PMC: ")[1:]
        self.assertGreaterEqual(len(frames), 1)
        last = frames[-1].splitlines()
        self.assertRegex(last[0], r"^\[cpu-clock\] Samples: \d+ \(100\.0%\) , \d+ unresolved$")
        self.assertEqual(last[2].split(), ["%SAMP", "IMAGE", "FUNCTION", "CALLERS"])
        rows = {l.split()[2]: l.split() for l in r.stdout.splitlines()
                if re.match(r"^ *\d+\.\d ", l)}
        self.assertIn("f2", rows)
        # g alone, or g first when a few samples fell in f2's prologue,
        # where the frame pointer still names g's caller (perf's -g sees
        # the same): "g:99.9 main:0.1".
        caller, _, share = rows["f2"][3].partition(":")
        self.assertEqual(caller, "g", rows["f2"])
        self.assertGreaterEqual(float(share or 100), 95, rows["f2"])


def symbols(prog):
    """PROG's functions: name -> (start, end), from nm(1)."""
    out = subprocess.run(["nm", "-S", "--defined-only", prog], capture_output=True, text=True,
                         timeout=LIMIT, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tT":
            funcs[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    return funcs


class Options(unittest.TestCase):
    """The options FreeBSD's pmcstat has besides those above (issue 11)."""
    setUp, tearDown, record = Sampling.setUp, Sampling.tearDown, Sampling.record

    def written(self, log, opt):
        """What -R LOG OPT FILE writes into FILE."""
        out = os.path.join(self.tmp, "written" + opt)
        r = run("-R", log, opt, out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return f.read()

    def test_list_events(self):
        r = run("-L")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = r.stdout.splitlines()
        self.assertTrue(all(n.startswith("\t") and n.strip() == n[1:] for n in names), names)
        names = [n[1:] for n in names]
        self.assertEqual(len(names), len(set(names)))
        for name in ("cpu-clock", "task-clock", "page-faults", "CLOCK.HARD"):
            self.assertIn(name, names)
        # What it lists is what -p takes.
        r = run("-p", "page-faults", "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        # -u: the events whose name holds the text, with a description.
        r = run("-u", "CLOCK")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        described = dict(l.split(":\t", 1) for l in lines)
        self.assertIn("task-clock", described)
        self.assertIn("cpu-clock", described)
        self.assertTrue(all("clock" in n.lower() and d for n, d in described.items()), lines)
        r = run("-u", "no-such-event-anywhere")
        self.assertEqual(r.returncode, 65, r.stderr)
        self.assertIn("-L lists the events", r.stderr)

    def test_calltree(self):
        log = self.record("-P")
        text = self.written(log, "-F")
        head = text.split("\n\n")[0].splitlines()
        self.assertEqual(head[:4], ["version: 1", "creator: pmcstat", "positions: instr line",
                                    "events: cpu_clock_0"])
        total = int(re.match(r"^summary: (\d+)$", head[4]).group(1))
        g = run("-R", log, "-G", "-")
        self.assertEqual(total, int(re.match(r"^@ cpu-clock \[(\d+) samples\]", g.stdout).group(1)))
        # Each function block: ob=, fn=, its self cost, then its calls.
        blocks = {}
        for b in re.split(r"\n(?=ob=)", text.split("\n\n", 1)[1]):
            lines = b.splitlines()
            fn = lines[1][3:]
            blocks[fn] = lines
        self.assertIn("ROOT", blocks)
        self.assertEqual(blocks["f2"][0], "ob=" + self.prog)
        self.assertRegex(blocks["f2"][2], r"^\* \* \d+$")
        calls = {}
        lines = blocks["g"]
        for i, l in enumerate(lines):
            if l.startswith("cfn="):
                m = re.match(r"^calls=(\d+) 0x[0-9a-f]+ 0$", lines[i + 1])
                cost = re.match(r"^\* \* (\d+)$", lines[i + 2])
                self.assertTrue(m and cost, lines)
                calls[l[4:]] = int(cost.group(1))
        # f2 does three times f1's work; g calls nothing else, but a sample
        # in mark()'s prologue (f1's frame pointer still set up) shows g
        # calling mark, as frame-pointer call chains do in perf too.
        self.assertLessEqual(set(calls), {"f1", "f2", "mark"})
        self.assertLessEqual(calls.get("mark", 0), (calls["f1"] + calls["f2"]) * 0.02, calls)
        self.assertGreater(calls["f2"], calls["f1"] * 1.5)
        self.assertLessEqual(calls["f1"] + calls["f2"], total)
        # "-": the print output.
        r = run("-R", log, "-F", "-")
        self.assertEqual(r.stdout, text)

    def test_annotate(self):
        log = self.record("-P")
        funcs = symbols(self.prog)
        seen = {}
        for line in self.written(log, "-m").splitlines():
            pc, name, start, end = line.split()
            pc, start, end = int(pc, 16), int(start, 16), int(end, 16)
            self.assertTrue(start <= pc < end, line)
            if name in funcs:
                self.assertEqual((start, end), funcs[name], line)
            seen[name] = seen.get(name, 0) + 1
        out = os.path.join(self.tmp, "m.out")
        self.assertGreater(seen.get("f2", 0), seen.get("f1", 0) * 1.5)
        self.assertGreater(seen["f1"], 0)
        # -m and -a read a log, and are not -g or -G.
        r = run("-m", out, "-P", "cpu-clock", "true")
        self.assertEqual(r.returncode, 64)
        self.assertIn("option -m requires an input file", r.stderr)
        r = run("-R", log, "-m", out, "-G", "-")
        self.assertEqual(r.returncode, 64)
        self.assertIn("mutually exclusive", r.stderr)
        # A file through hwc_output: never through a symlink in its place.
        target = os.path.join(self.tmp, "target")
        with open(target, "w") as f:
            f.write("keep\n")
        link = os.path.join(self.tmp, "link")
        os.symlink(target, link)
        r = run("-R", log, "-m", link)
        self.assertEqual(r.returncode, 71, r.stderr)
        self.assertIn("symbolic link", r.stderr)
        with open(target) as f:
            self.assertEqual(f.read(), "keep\n")

    def test_annotate_callgraph(self):
        log = self.record("-P")
        chains = [c.splitlines() for c in self.written(log, "-a").split("--\n") if c]
        funcs = symbols(self.prog)
        hot = 0
        for chain in chains:
            frames = [l.split() for l in chain]
            self.assertTrue(all(len(fr) == 3 for fr in frames), chain)
            if frames[0][1] != "f2":
                continue
            hot += 1
            # f2's line, then g's call of it, then main's of g.
            self.assertRegex(frames[0][2], r"hotspots\.c:\d+$")
            self.assertEqual([fr[1] for fr in frames[1:3]], ["g", "main"], chain)
            for pc, name, _ in frames[:3]:
                start, end = funcs[name]
                self.assertTrue(start <= int(pc, 16) <= end, chain)
        self.assertGreater(hot, len(chains) // 3)
        r = run("-a", "a.out", "-P", "cpu-clock", "true")
        self.assertEqual(r.returncode, 64)
        self.assertIn("option -a requires an input file", r.stderr)

    def test_leaf_addresses(self):
        funcs = symbols(self.prog)
        def rows(*opts):
            r = run("-T", "-w", "0.3", *opts, "-P", "cpu-clock", "--", self.prog, "8")
            self.assertEqual(r.returncode, 0, r.stderr)
            # Every screen's rows: under load the last screen can come
            # after the program's last sample and be empty.
            return [l.split() for l in r.stdout.splitlines() if re.match(r"^ *\d+\.\d ", l)]
        # -A: the sampled addresses themselves, each in f1 or f2 (g calls both).
        addr = [r for r in rows("-A") if r[1] == self.name[:10]]
        self.assertGreater(len(addr), 1)
        for row in addr:
            pc = int(row[2], 16)
            self.assertTrue(any(s <= pc < e for s, e in funcs.values()), row)
        self.assertTrue(any(funcs["f2"][0] <= int(r[2], 16) < funcs["f2"][1] for r in addr))
        # -I: function+offset.
        off = [r for r in rows("-I") if r[1] == self.name[:10]]
        self.assertTrue(any(re.match(r"^f2\+0x[0-9a-f]+$", r[2]) for r in off), off)
        for row in off:
            m = re.match(r"^(\w+)\+(0x[0-9a-f]+)$", row[2])
            self.assertTrue(m, row)
            start, end = funcs[m.group(1)]
            self.assertLess(int(m.group(2), 16), end - start)
        # -G keeps the sampled addresses apart too, still named by function.
        log = self.record("-P")
        f2 = r"(?m)^\S+%  \[\d+\]\s+f2( @ \S+)?$"
        self.assertEqual(len(re.findall(f2, run("-R", log, "-G", "-").stdout)), 1)
        self.assertGreater(len(re.findall(f2, run("-R", log, "-I", "-G", "-").stdout)), 1)
        r = run("-A", "-P", "cpu-clock", "true")
        self.assertEqual(r.returncode, 64)
        self.assertIn("-A and -I", r.stderr)

    def test_wide_gprof(self):
        if not shutil.which("gprof"):
            self.skipTest("gprof (binutils) is not installed")
        log = self.record("-P")
        def flat(*opts):
            d = tempfile.mkdtemp(dir=self.tmp)
            r = run("-R", log, "-g", *opts, "-D", d)
            self.assertEqual(r.returncode, 0, r.stderr)
            g = subprocess.run(["gprof", "-b", "-p", self.prog,
                                os.path.join(d, "cpu-clock", self.name + ".gmon")],
                               capture_output=True, text=True, timeout=LIMIT)
            self.assertEqual(g.returncode, 0, g.stderr)
            return g.stdout
        wide = flat("-e")
        self.assertRegex(wide, r"(?m) f2$")
        self.assertEqual(wide, flat())  # no bucket past 65535 here: the same profile
        r = run("-R", log, "-e")
        self.assertEqual(r.returncode, 64)
        self.assertIn("option -e requires gprof mode", r.stderr)

    def test_thread_filter(self):
        # family touches its pages in main, then in a second thread.
        log = os.path.join(self.tmp, "family.out")
        r = run("-n", "1", "-P", "page-faults", "-O", log, "--", os.path.join(WORK, "family"), "300")
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = re.search(r"(?m)^exec +0x[0-9a-f]+ (\d+) ", run("-R", log).stdout).group(1)
        every = run("-R", log, "-G", "-").stdout
        self.assertIn("start_thread", every)
        main = run("-R", log, "-i", pid, "-G", "-")
        self.assertEqual(main.returncode, 0, main.stderr)
        self.assertRegex(main.stdout, r"touch @ ")
        self.assertNotIn("start_thread", main.stdout)  # the other thread's
        n_every = int(re.match(r"^@ page-faults \[(\d+) samples\]", every).group(1))
        n_main = int(re.match(r"^@ page-faults \[(\d+) samples\]", main.stdout).group(1))
        self.assertLess(n_main, n_every)
        self.assertEqual(run("-R", log, "-i", "999999999", "-G", "-").stdout, "")
        r = run("-R", log, "-i", "x", "-G", "-")
        self.assertEqual(r.returncode, 64)
        self.assertIn('Illegal thread id "x"', r.stderr)
        r = run("-R", log, "-i", pid)
        self.assertEqual(r.returncode, 64)

    def test_fsroot(self):
        # Without a build-id the moved program cannot be found in a build-id
        # cache (other tests may have put hotspots there): only under -r.
        if not shutil.which("objcopy"):
            self.skipTest("objcopy (binutils) is not installed")
        subprocess.run(["objcopy", "--remove-section", ".note.gnu.build-id", self.prog],
                       check=True, timeout=LIMIT)
        log = self.record("-P")
        # The program moves under a root of its own, as on another machine.
        root = os.path.join(self.tmp, "root")
        os.makedirs(root + self.tmp)
        os.rename(self.prog, root + self.prog)
        r = run("-R", log, "-G", "-")
        self.assertIn(f"[unknown] {self.name}+", r.stdout)
        r = run("-R", log, "-r", root, "-G", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"(?m)^\S+%  \[\d+\]\s+f2 @ " + re.escape(self.prog) + "$")
        os.rename(root + self.prog, self.prog)
        r = run("-R", log, "-r", os.path.join(self.tmp, "none"), "-G", "-")
        self.assertEqual(r.returncode, 71)
        self.assertIn("Cannot stat", r.stderr)

    def test_user_callchains(self):
        log = self.record("-S", "-U")
        r = run("-R", log, "-G", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"(?m)^\S+%  \[\d+\]\s+f2 @ " + re.escape(self.prog) + "$")
        self.assertRegex(r.stdout, r"(?m)^ \S+%  \[\d+\]\s+ g$")
        r = run("-U", "-p", "task-clock", "true")
        self.assertEqual(r.returncode, 64)
        self.assertIn("-U", r.stderr)

    def test_plugin_option(self):
        r = run("-T", "-w", "0.3", "-f", "threshold=20", "-P", "cpu-clock", "--", self.prog, "8")
        self.assertEqual(r.returncode, 0, r.stderr)
        last = r.stdout.split("PMC: ")[-1]
        pcts = [float(l.split()[0]) for l in last.splitlines() if re.match(r"^ *\d+\.\d ", l)]
        self.assertTrue(pcts)
        self.assertTrue(all(p >= 20 for p in pcts), last)
        for args, text in ((["-f", "threshold=20", "-T"], "needs -F, -G, -T"),
                           (["-T", "-f", "threshold=abc"], 'Illegal threshold "abc"'),
                           (["-T", "-f", "colour=1"], 'Unknown plugin option "colour=1"')):
            r = run(*args, "-P", "cpu-clock", "true")
            self.assertEqual(r.returncode, 64, (args, r.stderr))
            self.assertIn(text, r.stderr)

    def test_duration(self):
        # -l ends a system-wide measurement without a command.
        log = os.path.join(self.tmp, "l.out")
        r = run("-l", "0.5", "-n", "1000000", "-S", "cpu-clock", "-O", log)
        if r.returncode != 0 and "Operation not permitted" in r.stderr:
            self.skipTest("no system-wide sampling for this user")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(run("-R", log).stdout, r"(?m)^callchain ")

    def test_kernel_dir_and_Z(self):
        r = run("-k", "/boot", "-p", "page-faults", "--", PAGETOUCH, "100")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("-k has no effect", r.stderr)
        self.assertGreaterEqual(counts(r.stderr)[1][-1][0], 100)
        r = run("-Z", "-p", "page-faults", "true")
        self.assertEqual(r.returncode, 64)
        self.assertIn("-Z means nothing", r.stderr)
        self.assertNotIn("invalid option", r.stderr)


class Errors(unittest.TestCase):
    def check(self, args, code, text):
        r = run(*args)
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertIn(text, r.stderr)

    def test_usage(self):
        self.check([], 64, "usage: pmcstat")
        self.check(["-p", "page-faults"], 64, "require a target process")
        self.check(["-O", "a", "-R", "b"], 64, "mutually exclusive")
        self.check(["-n", "0", "-P", "cpu-clock", "true"], 64, 'Illegal count value "0"')
        self.check(["-w", "soon", "-p", "task-clock", "true"], 64, "Illegal wait interval")
        self.check(["-c", "99", "-s", "page-faults"], 64, 'Illegal CPU "99"')
        self.check(["-p", "task-clock", "-P", "cpu-clock", "true"], 64, "option -O is required")
        self.check(["-R", "x", "-p", "task-clock"], 64, "may not be used with")
        self.check(["-g", "-P", "cpu-clock", "true"], 64, "give it with -R")
        self.check(["-x"], 64, "usage: pmcstat")

    def test_runtime(self):
        self.check(["-p", "no-such-event", "--", "true"], 71, "no-such-event")
        self.check(["-p", "task-clock", "--", "/nonexistent/program"], 71,
                   'cannot run "/nonexistent/program": No such file or directory')
        self.check(["-t", "999999999", "-p", "task-clock"], 71, "No such process")
        self.check(["-R", "/nonexistent/log"], 71, "Cannot open")
        with tempfile.NamedTemporaryFile("w", suffix=".out") as f:
            f.write("not a log at all\n")
            f.flush()
            self.check(["-R", f.name], 65, "not a complete log")


class Control(unittest.TestCase):
    def test_lists(self):
        r = run("-l", prog=PMCCONTROL)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        m = re.match(r"^(\d+) (\w+) CPUs present, with (\d+) PMCs per CPU$", lines[0])
        self.assertTrue(m, lines[0])
        self.assertEqual(int(m.group(1)), os.cpu_count())
        self.assertEqual(lines[1], "#CPU 0:")
        self.assertEqual(lines[2], "#N  NAME             CLASS  STATE    ROW-DISP")
        soft = [l for l in lines if " SOFT-" in l]
        self.assertEqual(len(soft), 16 * os.cpu_count())
        self.assertRegex(soft[0], r"^ \d+ +SOFT-0 +SOFT +ENABLED +FREE")
        r = run("-L", prog=PMCCONTROL)
        lines = r.stdout.splitlines()
        self.assertIn("SOFT", lines)
        soft = lines[lines.index("SOFT") + 1:]
        self.assertIn("\tCLOCK.HARD", soft)
        self.assertIn("\tPAGE_FAULT.WRITE", soft)
        r = run("-s", prog=PMCCONTROL)
        self.assertEqual(len(r.stdout.splitlines()), 8)
        self.assertRegex(r.stdout, r"(?m)^system calls: +\d+$")

    def test_enable_disable(self):
        with tempfile.NamedTemporaryFile() as admin:
            env = dict(os.environ, HWPMC_ADMIN_FILE=admin.name)
            if os.geteuid() != 0:
                self.skipTest("not root")
            r = run("-c", "0", "-d", "*", prog=PMCCONTROL, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = run("-l", prog=PMCCONTROL, env=env)
            cpu0 = r.stdout.split("#CPU 1:")[0]
            self.assertNotIn(" ENABLED ", cpu0)
            self.assertIn(" DISABLED ", cpu0)
            # libpmc allocations honour it: nothing of the class on CPU 0.
            r = run("-p", "page-faults", "--", "true", env=env)
            self.assertEqual(r.returncode, 71)
            self.assertIn("administratively disabled", r.stderr)
            r = run("-c", "*", "-e", "*", prog=PMCCONTROL, env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("DISABLED", run("-l", prog=PMCCONTROL, env=env).stdout)
            # Unprivileged: EPERM.
            if shutil.which("setpriv"):
                r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                    "--clear-groups", PMCCONTROL, "-d", "0"],
                                   capture_output=True, text=True, timeout=LIMIT, env=env)
                self.assertEqual(r.returncode, 71, r.stderr)
                self.assertIn("Operation not permitted", r.stderr)

    def test_usage(self):
        for args, code, text in ((["-x"], 64, "Usage:"), ([], 64, "Usage:"),
                                 (["-d", "x"], 65, "not a valid PMC id"),
                                 (["-c", "9999", "-d", "0"], 65, "CPU id too large"),
                                 (["-l", "-s"], 64, "one kind at a time")):
            r = run(*args, prog=PMCCONTROL)
            self.assertEqual(r.returncode, code, (args, r.stderr))
            self.assertIn(text, r.stderr)


if __name__ == "__main__":
    unittest.main()
