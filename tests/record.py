"""hwc record, end to end, with perf as the oracle: perf report and perf
script read hwc's files without a word on stderr (fp and DWARF call chains,
-p, -a, a command), the bundled workload's profile has f2 ~75% and f1 ~25%
under g, exit and context-switch counts match the workload's own, SIGINT,
the target's death and a full disk all leave a valid file, lost and
throttled records are counted in the summary and in the file, and every bad
input gets a clear error."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

BUILD = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
SRC = os.environ.get("HWC_SRC", os.path.join(os.path.dirname(__file__), ".."))
HWC = os.path.join(BUILD, "bin", "hwc")
WORK = os.path.join(BUILD, "workloads")
HAVE_PERF = shutil.which("perf") is not None
ROOT = os.geteuid() == 0

needs_perf = unittest.skipUnless(HAVE_PERF, "perf (linux-perf) is not installed: it is the oracle")
needs_root = unittest.skipUnless(ROOT, "needs root")

SUMMARY = re.compile(r"hwc record: (\d+) samples written to (.+) \((.+)\), (\d+) lost, (\d+) throttled")


def hwc(*args, **kw):
    return subprocess.run([HWC, "record", *args], capture_output=True, text=True, timeout=600, **kw)


def perf(*args):
    r = subprocess.run(["perf", *args], capture_output=True, text=True, timeout=600)
    return r


def summary(stderr):
    m = SUMMARY.search(stderr)
    assert m, "no summary in: " + stderr
    return {"samples": int(m.group(1)), "path": m.group(2), "lost": int(m.group(4)),
            "throttled": int(m.group(5))}


def wait_for(cond, what, limit=120):
    """Poll COND until it holds: synchronization, not a timing assertion."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    raise AssertionError("gave up waiting for " + what)


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError):
        return -1


def child_named(pid, name):
    """A child of PID that runs NAME, or None."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return None
    for k in kids:
        try:
            with open(f"/proc/{k}/comm") as f:
                if f.read().strip() == name:
                    return k
        except OSError:
            pass
    return None


def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                n += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]"
            except OSError:
                pass
    except OSError:
        pass
    return n


def dump_samples(dump):
    """From perf report -D: [(tid, group values or None, cpu)] of every sample,
    as written, before perf's own processing (perf before 6.12 drops group
    samples whose value did not change for the event instance, mixing
    threads)."""
    out, lines = [], dump.splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"^(\d+) .*PERF_RECORD_SAMPLE\([^)]*\): (\d+)/(\d+):", line)
        if not m:
            continue
        values = None
        if i + 1 < len(lines) and "sample_read:" in lines[i + 1]:
            values = []
            for nxt in lines[i + 2:]:
                v = re.match(r"\.+ id ([0-9a-f]+), value ([0-9a-f]+)", nxt.strip())
                if v:
                    values.append(int(v.group(2), 16))
                elif not re.match(r"\.+ (time|group)", nxt.strip()):
                    break
        out.append((int(m.group(3)), values, int(m.group(1))))
    return out


def notes(stdout):
    """procs' own counts: {pid: switches}."""
    return {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"pid (\d+) switches (\d+)", stdout)}


class Record(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hwc-record-")
        os.chmod(self.dir, 0o777)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertPerfReads(self, data, *extra):
        """perf report and perf script read DATA with nothing on stderr."""
        rep = perf("report", "--stdio", "-i", data, *extra)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertEqual(rep.stderr, "", "perf report complained")
        scr = perf("script", "-i", data, *extra)
        self.assertEqual(scr.returncode, 0, scr.stderr)
        self.assertEqual(scr.stderr, "", "perf script complained")
        return rep.stdout, scr.stdout

    # ------------------------------------------------------------ profiles

    def check_hotspots(self, data):
        """f2 ~75% and f1 ~25% (within 5 points), g the caller of both."""
        rep = perf("report", "--stdio", "--no-children", "--sort", "sym", "-g", "none", "-i", data)
        self.assertEqual(rep.stderr, "")
        share, top = {}, []
        for line in rep.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+\[([.k])\]\s+(\S+)", line)
            if m:
                top.append(m.group(3))
                if m.group(2) == ".":
                    share[m.group(3)] = share.get(m.group(3), 0) + float(m.group(1))
        self.assertEqual(top[:2], ["f2", "f1"], rep.stdout[:2000])
        # Shares of the workload's own (user-space) samples: on a loaded
        # machine the workload is preempted, and the cpu-clock timer then
        # fires in the kernel's return-to-user path, a share that depends on
        # the load, not on the workload.
        user = sum(share.values())
        self.assertAlmostEqual(100 * share["f2"] / user, 75, delta=5, msg=share)
        self.assertAlmostEqual(100 * share["f1"] / user, 25, delta=5, msg=share)
        # In every call chain that ends in f1 or f2, g calls it.
        scr = perf("script", "-F", "ip,sym", "-i", data)
        self.assertEqual(scr.stderr, "")
        leaves = under_g = 0
        for block in scr.stdout.split("\n\n"):
            frames = [f.split()[1] for f in block.strip().splitlines() if len(f.split()) > 1]
            frames = [f for f in frames if f != "work"]  # inlined into f1 and f2
            if frames and frames[0] in ("f1", "f2"):
                leaves += 1
                under_g += len(frames) > 1 and frames[1] == "g"
        self.assertGreater(leaves, 100)
        self.assertGreaterEqual(under_g, 0.95 * leaves)
        rep = perf("report", "--stdio", "--children", "--sort", "sym", "-g", "none", "-i", data)
        children = {}
        for line in rep.stdout.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[\.\]\s+(\S+)", line)
            if m:
                children[m.group(3)] = float(m.group(1))
        self.assertGreaterEqual(children.get("g", 0), share["f1"] + share["f2"] - 1, children)
        self.assertLess(children.get("f2", 100), children["g"])
        self.assertLess(children.get("f1", 100), children["g"])

    @needs_perf
    def test_hotspots_frame_pointers(self):
        data = self.path("fp.data")
        r = hwc("-g", "-o", data, "--", os.path.join(WORK, "hotspots"))
        self.assertEqual(r.returncode, 0, r.stderr)
        s = summary(r.stderr)
        self.assertEqual((s["path"], s["lost"]), (data, 0))
        self.assertGreater(s["samples"], 500)
        self.assertPerfReads(data)
        self.check_hotspots(data)

    @needs_perf
    def test_hotspots_dwarf(self):
        data = self.path("dwarf.data")
        r = hwc("-e", "cpu-clock", "--call-graph", "dwarf,4096", "-o", data, "--",
                os.path.join(WORK, "hotspots"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(summary(r.stderr)["lost"], 0)
        head = perf("report", "--header-only", "-i", data).stdout
        self.assertIn("sample_stack_user = 4096", head)
        self.assertIn("REGS_USER|STACK_USER", head)
        self.assertPerfReads(data)
        self.check_hotspots(data)

    @needs_perf
    def test_header(self):
        data = self.path("h.data")
        r = hwc("-e", "cpu-clock", "-o", data, "--", os.path.join(WORK, "hotspots"), "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        head = perf("report", "--header-only", "-I", "-i", data)
        self.assertEqual(head.stderr, "")
        for want in ("# hostname : " + os.uname().nodename, "# os release : " + os.uname().release,
                     "# arch : " + os.uname().machine, "# nrcpus online : ", "# cpuid : ",
                     "# total memory : ", "# cmdline : hwc record -e cpu-clock -o " + data,
                     "name = cpu-clock", "# sibling threads : ", "# pmu mappings: ",
                     "# time of first sample : ", "# clockid: monotonic"):
            self.assertIn(want, head.stdout)
        # Build-ids of the binaries that ran, and of the kernel.
        ids = perf("buildid-list", "-i", data).stdout
        hot = os.path.realpath(os.path.join(WORK, "hotspots"))
        note = subprocess.run(["readelf", "-n", hot], capture_output=True, text=True).stdout
        m = re.search(r"Build ID: ([0-9a-f]+)", note)
        self.assertTrue(m)
        self.assertIn(f"{m.group(1)} {hot}", ids)
        kernel = perf("buildid-list", "-k").stdout.strip()
        if ROOT and kernel:
            self.assertIn(f"{kernel} [kernel.kallsyms]", ids)

    @needs_perf
    def test_group_values(self):
        data = self.path("g.data")
        r = hwc("-e", "{cpu-clock,page-faults}", "--group-values", "-c", "500000", "-o", data,
                "--", os.path.join(WORK, "pagetouch"), "20000")
        self.assertEqual(r.returncode, 0, r.stderr)
        head = perf("report", "--header-only", "-i", data).stdout
        leader = [l for l in head.splitlines() if "name = cpu-clock" in l][0]
        self.assertRegex(leader, r"sample_type = [A-Z_|]*\bREAD\b")
        self.assertRegex(leader, r"read_format = [A-Z_|]*\bGROUP\b")
        self.assertPerfReads(data)
        samples = dump_samples(perf("report", "-D", "-i", data).stdout)
        self.assertGreater(len(samples), 10)
        # Every sample is cpu-clock's and carries both values.  They count
        # the thread on the sample's CPU: they only grow per CPU, and the
        # latest of each CPU add up to the faults so far.
        self.assertTrue(all(v and len(v) == 2 for _, v, _ in samples), samples[:5])
        last = {}
        for _, v, cpu in samples:
            self.assertGreaterEqual(v[1], last.get(cpu, 0))
            last[cpu] = v[1]
        self.assertGreaterEqual(sum(last.values()), 10000)

    @needs_perf
    def test_weak_group(self):
        """{...}:W records its events apart when the kernel refuses the group
        (a pinned member), as perf record does: the file has no group then,
        and a weak group that fits stays one."""
        work = [os.path.join(WORK, "pagetouch"), "2000"]
        data = self.path("w.data")
        r = hwc("-e", "{cpu-clock,task-clock:D}", "-o", data, "--", *work)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("only a group's leader may be pinned (D)", r.stderr)
        for spec, groups in (("{cpu-clock,task-clock:D}:W", "cpu-clock\ntask-clock:D\n"),
                             ("{cpu-clock,task-clock}:W", "{cpu-clock,task-clock}\n")):
            r = hwc("-e", spec, "-o", data, "--", *work)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(perf("evlist", "-g", "-i", data).stdout, groups, spec)
            self.assertPerfReads(data)

    # ------------------------------------------------------------- targets

    def assertEnds(self, rec, code, data):
        """REC exits with CODE, says what it wrote, and DATA is valid."""
        err = rec.communicate(timeout=120)[1]
        self.assertEqual(rec.returncode, code, err)
        self.assertGreater(summary(err)["samples"], 0)
        return self.assertPerfReads(data)

    def start_pid_recording(self, data, *args):
        """A long-running hotspots, and hwc record -p on it, sampling."""
        target = subprocess.Popen([os.path.join(WORK, "hotspots"), "100000"],
                                  stdout=subprocess.DEVNULL)
        rec = subprocess.Popen([HWC, "record", *args, "-p", str(target.pid), "-o", data],
                               stderr=subprocess.PIPE, text=True)
        wait_for(lambda: perf_fds(rec.pid) > 0, "hwc record to open its events")
        t0 = cpu_ticks(target.pid)
        wait_for(lambda: cpu_ticks(target.pid) >= t0 + 30, "the target to run 0.3 s")
        return target, rec

    @needs_perf
    def test_pid(self):
        data = self.path("p.data")
        target, rec = self.start_pid_recording(data, "-g")
        try:
            rec.send_signal(signal.SIGINT)
            rep, scr = self.assertEnds(rec, 128 + signal.SIGINT, data)
            self.assertIsNone(target.poll(), "-p must not kill the process it sampled")
            self.assertIn(" f2", scr)
            pids = {int(l.split()[0]) for l in perf("script", "-F", "pid", "-i", data)
                    .stdout.split("\n") if l.strip()}
            # The process and the children it forked meanwhile (inherited).
            forks = {int(x) for x in re.findall(r"PERF_RECORD_FORK\((\d+):",
                                                perf("report", "-D", "-i", data).stdout)}
            self.assertIn(target.pid, pids)
            self.assertLessEqual(pids, {target.pid} | forks)
        finally:
            target.kill()
            target.wait()

    @needs_perf
    def test_pid_dies(self):
        data = self.path("p.data")
        target, rec = self.start_pid_recording(data)
        target.terminate()
        target.wait()
        self.assertEnds(rec, 0, data)  # the target ended: a normal end

    @needs_perf
    @needs_root
    def test_all_cpus(self):
        data = self.path("a.data")
        r = hwc("-a", "-g", "-o", data, "--", os.path.join(WORK, "hotspots"), "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertPerfReads(data)
        comms = perf("report", "--stdio", "--sort", "comm", "-i", data).stdout
        self.assertIn("hotspots", comms)
        # Processes that existed before: their COMM records came from /proc.
        dump = perf("report", "-D", "-i", data).stdout
        self.assertRegex(dump, r"PERF_RECORD_COMM: \S+:1/1\b")
        # -C: only the CPUs asked for.
        data = self.path("c.data")
        r = hwc("-C", "0", "-o", data, "--", os.path.join(WORK, "hotspots"), "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertPerfReads(data)
        cpus = set(perf("script", "-F", "cpu", "-i", data).stdout.split())
        self.assertEqual(cpus, {"[000]"})

    @needs_perf
    @needs_root
    def test_no_loss_at_4khz_per_cpu(self):
        # Both CPUs busy, every CPU sampled at 4 kHz with call chains: the
        # default buffers are drained in time, nothing is lost.
        data = self.path("busy.data")
        hot = os.path.join(WORK, "hotspots")
        r = hwc("-a", "-F", "4000", "-g", "-o", data, "--", "sh", "-c",
                f"{hot} 20 & {hot} 20 & wait")
        self.assertEqual(r.returncode, 0, r.stderr)
        s = summary(r.stderr)
        self.assertEqual((s["lost"], s["throttled"]), (0, 0), r.stderr)
        self.assertGreater(s["samples"], 4000)
        self.assertPerfReads(data)

    # ------------------------------------------------------- hwpmc logs

    def assertSwitchesMatch(self, counted, own):
        """COUNTED (from the file) against the workload's OWN notes.  A child
        notes its count with its last system call before _exit, so only an
        involuntary switch in those few instructions can come between: at
        most 2.  The parent is counted from its exec but notes from main(),
        after the dynamic loader, and writes its report after noting; on a
        loaded machine it is preempted in those windows (perf stat
        --no-inherit counts as many), so only the lower bound holds for it."""
        parent = list(own)[-1]  # procs prints the parent last
        for pid, n in own.items():
            self.assertGreaterEqual(counted[pid], n, (pid, counted, own))
            if pid != parent:
                self.assertLessEqual(counted[pid], n + 2, (pid, counted, own))

    def record_procs(self, data, *args):
        """procs (4 children, 5 naps each) recorded with ARGS: its own notes."""
        r = hwc("-e", "cpu-clock", *args, "-o", data, "--", os.path.join(WORK, "procs"), "4", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertPerfReads(data)
        own = notes(r.stdout)
        self.assertEqual(len(own), 5)
        return own

    @needs_perf
    def test_exit_counts(self):
        data = self.path("exit.data")
        own = self.record_procs(data, "--log-exit", "--log-events", "context-switches")
        counts = {}
        for m in re.finditer(r"PERF_RECORD_READ: (\d+) (\d+) context-switches (\d+)",
                             perf("report", "-D", "-i", data).stdout):
            counts[int(m.group(1))] = counts.get(int(m.group(1)), 0) + int(m.group(3))
        # One process in the file for each the workload ran, no other.
        self.assertEqual(set(counts), set(own))
        self.assertSwitchesMatch(counts, own)

    @needs_perf
    def test_hwc_report_reads_the_logs(self):
        # hwc report's threads view, reading exit and switch logs as
        # hwc-data(5) describes them, agrees with the workload's own counts.
        data = self.path("logs.data")
        own = self.record_procs(data, "--log-exit", "--log-switch", "--log-events",
                                "context-switches")
        r = subprocess.run([HWC, "report", "--view", "threads", "--json", data],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        threads = {t["tid"]: t for t in json.loads(r.stdout)["threads"]}
        self.assertEqual(set(threads), set(own))
        self.assertTrue(all(t["exited"] for t in threads.values()), threads)
        self.assertSwitchesMatch({t: threads[t]["switches"] for t in own}, own)
        self.assertSwitchesMatch({t: threads[t]["counts"]["context-switches"] for t in own}, own)

    @needs_perf
    def test_switch_counts(self):
        data = self.path("csw.data")
        own = self.record_procs(data, "--log-switch", "--log-events", "task-clock")
        samples, outs = {}, {}
        for tid, values, _ in dump_samples(perf("report", "-D", "-i", data).stdout):
            if values is not None:  # the context-switches group's, not cpu-clock's
                self.assertEqual(len(values), 2)
                samples[tid] = samples.get(tid, 0) + 1
        for line in perf("script", "--show-switch-events", "-F", "tid", "-i", data).stdout.splitlines():
            f = line.split()
            if len(f) >= 3 and f[1] == "PERF_RECORD_SWITCH" and f[2] == "OUT":
                outs[int(f[0])] = outs.get(int(f[0]), 0) + 1
        self.assertEqual(set(samples), set(own))
        self.assertEqual(samples, outs)  # one counted sample per switch record
        self.assertSwitchesMatch(samples, own)

    # ---------------------------------------------------------- endings

    def start_hotspots(self, data, *args):
        rec = subprocess.Popen([HWC, "record", *args, "-o", data, "--",
                                os.path.join(WORK, "hotspots"), "100000"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        child = wait_for(lambda: child_named(rec.pid, "hotspots"), "hotspots to start")
        t0 = cpu_ticks(child)
        wait_for(lambda: cpu_ticks(child) >= t0 + 30, "hotspots to run 0.3 s")
        return rec, child

    @needs_perf
    def test_sigint(self):
        data = self.path("int.data")
        rec, child = self.start_hotspots(data, "-g")
        rec.send_signal(signal.SIGINT)
        rep, _ = self.assertEnds(rec, 128 + signal.SIGINT, data)
        wait_for(lambda: not os.path.exists(f"/proc/{child}"), "the command to be stopped too")
        self.assertIn("f2", rep)

    @needs_perf
    def test_target_killed(self):
        data = self.path("kill.data")
        rec, child = self.start_hotspots(data, "-g")
        os.kill(child, signal.SIGKILL)
        self.assertEnds(rec, 128 + signal.SIGKILL, data)

    @needs_perf
    @needs_root
    def test_full_disk(self):
        mnt = self.path("small")
        os.mkdir(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "none", mnt],
                           capture_output=True, text=True)
        if r.returncode:
            self.skipTest("cannot mount a tmpfs: " + r.stderr.strip())
        try:
            data = os.path.join(mnt, "full.data")
            r = hwc("-g", "-e", "cpu-clock", "-o", data, "--",
                    os.path.join(WORK, "hotspots"), "100")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(f"cannot write {data}: No space left on device", r.stderr)
            s = summary(r.stderr)
            self.assertGreater(s["samples"], 100)
            self.assertLessEqual(os.path.getsize(data), 256 * 1024)
            self.assertPerfReads(data)
            count = perf("script", "-F", "event", "-i", data).stdout.split().count("cpu-clock:")
            self.assertEqual(count, s["samples"])  # the summary tells what the file holds
        finally:
            subprocess.run(["umount", mnt])

    # ---------------------------------------------------- lost, throttled

    @needs_perf
    def test_lost(self):
        data = self.path("lost.data")
        r = hwc("-e", "page-faults", "-c", "1", "-m", "1", "-o", data, "--",
                os.path.join(WORK, "pagetouch"), "100000")
        self.assertEqual(r.returncode, 0, r.stderr)
        s = summary(r.stderr)
        self.assertGreater(s["lost"], 0)
        self.assertIn("lost %d records on full ring buffers" % s["lost"], r.stderr)
        dump = perf("report", "-D", "-i", data).stdout
        in_file = sum(int(x) for x in re.findall(r"PERF_RECORD_LOST: id:\d+: lost:(\d+)", dump))
        # perf 6.1 prints "PERF_RECORD_LOST_SAMPLES: id:N: lost samples :M"
        in_file += sum(int(x) for x in re.findall(r"PERF_RECORD_LOST_SAMPLES:.*\D(\d+)$", dump,
                                                  re.M))
        self.assertEqual(in_file, s["lost"])
        # Every page fault is in the file or counted as lost.
        self.assertGreaterEqual(s["samples"] + s["lost"], 100000)

    @needs_perf
    @needs_root
    def test_throttled(self):
        # A 10 us cpu-clock period is 100k samples a second: above a limit of
        # 20000, the kernel throttles.  The limit is global: restore it.
        knob = "/proc/sys/kernel/perf_event_max_sample_rate"
        with open(knob) as f:
            old = f.read().strip()
        data = self.path("thr.data")
        try:
            with open(knob, "w") as f:
                f.write("20000")
            r = hwc("-e", "cpu-clock", "-c", "10000", "-o", data, "--",
                    os.path.join(WORK, "hotspots"), "3")
        finally:
            with open(knob, "w") as f:
                f.write(old)
        self.assertEqual(r.returncode, 0, r.stderr)
        s = summary(r.stderr)
        self.assertGreater(s["throttled"], 0)
        self.assertIn("throttled sampling %d times" % s["throttled"], r.stderr)
        dump = perf("report", "-D", "-i", data).stdout
        self.assertEqual(len(re.findall(r"PERF_RECORD_THROTTLE", dump)), s["throttled"])
        self.assertPerfReads(data)

    # ------------------------------------------------------------ errors

    def test_usage_errors(self):
        cases = [
            (["-c", "10", "-F", "10", "true"], "not both"),
            (["--call-graph", "lbr", "true"], "unknown call graph mode 'lbr'"),
            (["--call-graph", "dwarf,13", "true"], "multiple of 8"),
            (["-m", "3", "true"], "power of 2"),
            (["-F", "0", "true"], "invalid frequency '0'"),
            (["-c", "x", "true"], "invalid period 'x'"),
            ([], "nothing to record"),
            (["-p", "1", "true"], "unexpected command 'true'"),
            (["-p", "1", "-a"], "cannot be combined"),
            (["-C", "1-0", "true"], "malformed CPU list '1-0'"),
            (["-a", "--log-exit"], "not -a or -C"),
            (["--log-events", "task-clock", "true"], "needs --log-exit or --log-switch"),
            (["-a", "--no-inherit"], "applies to tasks"),
            (["--bogus", "true"], "unknown option '--bogus'"),
            (["-e"], "option '-e' needs a value"),
        ]
        for args, msg in cases:
            r = hwc(*args, cwd=self.dir)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(msg, r.stderr, args)
            self.assertFalse(os.path.exists(self.path("hwc.data")), args)

    def test_runtime_errors(self):
        true = shutil.which("true")
        cases = [
            (["-e", "no-such-event", true], 1, "no-such-event"),
            (["-p", "1073741800"], 1, "no process with pid 1073741800"),
            (["-o", "/nonexistent-dir/x.data", true], 1, "cannot create /nonexistent-dir/x.data"),
            (["-F", "100000000", true], 1, "perf_event_max_sample_rate"),
            (["-C", "4095", true], 1, "CPU 4095 is out of range"),
            (["/nonexistent/command"], 127, "cannot execute '/nonexistent/command'"),
        ]
        if os.path.exists("/sys/bus/event_source/devices/msr"):
            cases.append((["-e", "msr/tsc/", true], 1, "'msr/tsc/' cannot be sampled"))
        for args, code, msg in cases:
            r = hwc(*args, cwd=self.dir)
            self.assertEqual(r.returncode, code, (args, r.stderr))
            self.assertIn(msg, r.stderr, args)
            self.assertFalse(os.path.exists(self.path("hwc.data")), args)

    def test_exit_status_and_default_file(self):
        r = subprocess.run([HWC, "record", "-e", "cpu-clock", "--", "sh", "-c", "exit 3"],
                           cwd=self.dir, capture_output=True, text=True)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertTrue(os.path.exists(self.path("hwc.data")))
        self.assertEqual(oct(os.stat(self.path("hwc.data")).st_mode & 0o777), "0o600")

    @needs_perf
    @needs_root
    def test_unprivileged(self):
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            if int(f.read()) < 2:
                self.skipTest("perf_event_paranoid is below 2: nothing is denied")
        data = self.path("nobody.data")
        r = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                            HWC, "record", "-g", "-o", data, "--",
                            os.path.join(WORK, "hotspots"), "5"],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sampling user space only", r.stderr)
        os.chown(data, 0, 0)  # perf reads only its own user's files (or root's)
        self.assertPerfReads(data)
        modes = perf("report", "--stdio", "--sort", "sym", "-i", data).stdout
        self.assertNotIn("[k] ", modes)
        self.check_hotspots(data)

    def test_help_and_man_page(self):
        r = subprocess.run([HWC, "record", "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        longs = set(re.findall(r"--[a-z][a-z-]+", r.stdout)) - {"--help"}
        self.assertGreater(len(longs), 10)
        with open(os.path.join(SRC, "docs", "hwc-record.1")) as f:
            man = f.read().replace("\\-", "-")
        for opt in longs:
            self.assertIn(opt, man, f"hwc-record(1) does not document {opt}")
        r = subprocess.run([HWC, "--help"], capture_output=True, text=True)
        self.assertIn("record", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
