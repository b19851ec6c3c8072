"""hwc record --switch-output, --switch-max-files, -k/--clockid and
--buildid-all, with perf as the oracle: every rotated file is named
FILE.<timestamp> as perf names them, perf report and perf script read each
one without a word on stderr and resolve the workload's functions in each,
the samples of all the files add up to the summary's and to what one file
holds (within the spread of a CPU-time clock), --switch-max-files removes
only the oldest files of its own run, and perf script's times lie on the
clock -k chose (compared with clock_gettime around the run)."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import hwctest

HWC = hwctest.program("hwc")
HOTSPOTS = hwctest.workload("hotspots")
HAVE_PERF = shutil.which("perf") is not None
needs_perf = unittest.skipUnless(HAVE_PERF, "perf (linux-perf) is not installed: it is the oracle")

SUMMARY = re.compile(r"hwc record: (\d+) samples written to (.+) \((.+)\), (\d+) lost, (\d+) throttled")
DUMPED = re.compile(r"hwc record: dumped (\S+): (\d+) samples")
ROTATED = re.compile(r"^hwc\.data\.\d{16}$")  # perf.data.YYYYmmddHHMMSScc
# One sample per millisecond of CPU time: a count that does not depend on
# the timer's frequency limit, comparable between two runs.
EVENT = ["-e", "cpu-clock", "-c", "1000000"]


def rotated(d):
    return sorted(f for f in os.listdir(d) if ROTATED.match(f))


def perf_samples(path):
    """perf script's samples of PATH; its stderr must be empty."""
    r = subprocess.run(["perf", "script", "-i", path, "-F", "comm,ip,sym"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", (path, r.returncode, r.stderr)
    return r.stdout.splitlines()


def perf_report(path):
    r = subprocess.run(["perf", "report", "-i", path, "--stdio", "--no-children", "--sort",
                        "sym"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", (path, r.returncode, r.stderr)
    return r.stdout


class SwitchOutput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hwc-recopts-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def record(self, *args, rounds=20):
        return hwctest.run([HWC, "record", *EVENT, *args, "--", HOTSPOTS, str(rounds)],
                           cwd=self.dir)

    def check_files(self, r, files):
        """Each file valid for perf, its samples as hwc said; returns the total."""
        self.assertEqual(r.returncode, 0, r.stderr)
        dumped = {os.path.basename(m.group(1)): int(m.group(2)) for m in DUMPED.finditer(r.stderr)}
        self.assertEqual(sorted(dumped), files, r.stderr)
        total = 0
        for f in files:
            path = os.path.join(self.dir, f)
            samples = perf_samples(path)
            self.assertEqual(len(samples), dumped[f], f)
            total += len(samples)
            if len(samples) >= 50:
                # each file describes the command's maps: its functions resolve
                self.assertRegex(perf_report(path), r"\bf2\b", f)
        m = SUMMARY.search(r.stderr)
        self.assertTrue(m, r.stderr)
        self.assertEqual(int(m.group(1)), total)
        self.assertEqual(int(m.group(4)), 0, "records lost")
        return total

    @needs_perf
    def test_signal(self):
        """Each SIGUSR2 closes a file and opens the next; nothing is lost."""
        p = subprocess.Popen([HWC, "record", *EVENT, "--switch-output", "--", HOTSPOTS, "100"],
                             cwd=self.dir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True)
        try:
            # synchronization: the recording has started once its file exists
            end = time.monotonic() + 60
            while not any(".tmp-" in f for f in os.listdir(self.dir)) and time.monotonic() < end:
                time.sleep(0.02)
            for n in (1, 2):
                time.sleep(0.3)
                p.send_signal(signal.SIGUSR2)
                while len(rotated(self.dir)) < n and time.monotonic() < end:
                    time.sleep(0.02)
            _, err = p.communicate(timeout=hwctest.LIMIT)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        files = rotated(self.dir)
        self.assertEqual(len(files), 3, err)
        self.assertEqual(os.listdir(self.dir).count("hwc.data"), 0)
        r = subprocess.CompletedProcess(p.args, p.returncode, "", err)
        self.check_files(r, files)

    @needs_perf
    def test_time_against_one_file(self):
        """--switch-output=1s: the files together hold what one file holds."""
        one = self.record()
        self.assertEqual(one.returncode, 0, one.stderr)
        whole = len(perf_samples(os.path.join(self.dir, "hwc.data")))
        os.unlink(os.path.join(self.dir, "hwc.data"))
        r = self.record("--switch-output=1s", rounds=40)
        files = rotated(self.dir)
        self.assertGreaterEqual(len(files), 2, r.stderr)
        total = self.check_files(r, files)
        # twice the rounds: twice the CPU time, within the usual spread
        self.assertLess(abs(total - 2 * whole), 0.2 * 2 * whole, (total, whole))

    @needs_perf
    def test_size(self):
        """--switch-output=20K: a new file once one reaches 20 KiB."""
        r = self.record("--switch-output=20K")
        files = rotated(self.dir)
        self.assertGreaterEqual(len(files), 2, r.stderr)
        self.check_files(r, files)
        for f in files[:-1]:
            self.assertGreaterEqual(os.path.getsize(os.path.join(self.dir, f)), 20 * 1024, f)

    def test_max_files(self):
        """--switch-max-files 2 keeps the newest two of its own files only."""
        other = os.path.join(self.dir, "hwc.data.2000010100000000")
        with open(other, "w") as f:
            f.write("not ours\n")
        # 40 rounds: files at least 4 even when the sanitizer slows each
        # switch (a switch at most every poll, 200 ms)
        r = self.record("--switch-output=8K", "--switch-max-files", "2", rounds=40)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreaterEqual(r.stderr.count("dumped"), 4, r.stderr)
        self.assertIn("(--switch-max-files)", r.stderr)
        files = rotated(self.dir)
        self.assertEqual(len(files), 3, files)  # two of ours and the other
        self.assertIn(os.path.basename(other), files)
        kept = [m.group(1) for m in DUMPED.finditer(r.stderr)][-2:]
        self.assertEqual(sorted(files[1:]), sorted(kept))

    def test_hostile_output(self):
        """The base name is checked as any output: a symlink is refused."""
        victim = os.path.join(self.dir, "victim")
        with open(victim, "w") as f:
            f.write("keep\n")
        os.symlink(victim, os.path.join(self.dir, "hwc.data"))
        r = self.record("--switch-output=8K")
        self.assertEqual(r.returncode, 1)
        self.assertIn("symbolic link", r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertEqual(rotated(self.dir), [])

    def test_usage_errors(self):
        for args, msg in (
            (["--switch-output=10x"], "invalid --switch-output '10x'"),
            (["--switch-output=10"], "invalid --switch-output '10'"),
            (["--switch-output=-1s"], "invalid --switch-output '-1s'"),
            (["--switch-output", "-o", "-"], "cannot go with -o -"),
            (["--switch-max-files", "2"], "needs --switch-output"),
            (["--switch-output", "--switch-max-files", "0"], "invalid --switch-max-files"),
            (["-k", "bogus"], "unknown clock 'bogus'"),
        ):
            r = hwctest.run([HWC, "record", *args, "--", "true"], cwd=self.dir)
            self.assertEqual(r.returncode, 2, (args, r.stderr))
            self.assertIn(msg, r.stderr, args)
        r = hwctest.run([HWC, "record", "-k", "3", "--", "true"], cwd=self.dir)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("clock 3 cannot time samples", r.stderr)


class ClockId(unittest.TestCase):
    CLOCKS = {"monotonic": time.CLOCK_MONOTONIC, "monotonic_raw": time.CLOCK_MONOTONIC_RAW,
              "realtime": time.CLOCK_REALTIME, "boottime": time.CLOCK_BOOTTIME,
              "tai": time.CLOCK_TAI, "CLOCK_REALTIME": time.CLOCK_REALTIME, "7": time.CLOCK_BOOTTIME}
    NAMES = {time.CLOCK_MONOTONIC: "monotonic", time.CLOCK_MONOTONIC_RAW: "monotonic_raw",
             time.CLOCK_REALTIME: "realtime", time.CLOCK_BOOTTIME: "boottime",
             time.CLOCK_TAI: "tai"}

    @needs_perf
    def test_times_on_the_clock(self):
        """perf script's times lie between clock_gettime before and after."""
        d = tempfile.mkdtemp(prefix="hwc-clockid-")
        try:
            for name, clock in self.CLOCKS.items():
                with self.subTest(clock=name):
                    path = os.path.join(d, "hwc.data")
                    before = time.clock_gettime_ns(clock)
                    r = hwctest.run([HWC, "record", "-k", name, *EVENT, "-o", path, "--",
                                     HOTSPOTS, "2"])
                    after = time.clock_gettime_ns(clock)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    s = subprocess.run(["perf", "script", "-i", path, "-F", "time"],
                                       capture_output=True, text=True, timeout=120)
                    self.assertEqual(s.stderr, "")
                    times = [float(t.rstrip(":")) for t in s.stdout.split()]
                    self.assertGreater(len(times), 10)
                    # perf prints microseconds: allow one either side
                    self.assertGreaterEqual(min(times), before / 1e9 - 1e-6)
                    self.assertLessEqual(max(times), after / 1e9 + 1e-6)
                    h = subprocess.run(["perf", "report", "--header-only", "-i", path],
                                       capture_output=True, text=True, timeout=120)
                    self.assertIn(f"# clockid: {self.NAMES[clock]} ({clock})", h.stdout)
        finally:
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
