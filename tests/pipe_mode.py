"""Pipe mode both ways, with perf as the oracle: `perf record -o - | hwc
report -i -`, `hwc record -o - | perf report -i -` (no warnings) and `hwc
record -o - | hwc report -i -` give the bundled workload's profile as the
file versions do; standard input is read as `-`, as /dev/stdin and with no
file in a pipeline; the command's own output stays out of the stream; a
terminal is refused; Ctrl-C on the pipeline loses no sample; a cut stream
gives its records up to the cut or a clear error, never a crash; and
`hwc stat -o -` writes to stderr as `perf stat -o -` does."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from hwctest import LIMIT, program, run, workload

HWC = program("hwc")
HOTSPOTS = workload("hotspots")
HAVE_PERF = shutil.which("perf") is not None
needs_perf = unittest.skipUnless(HAVE_PERF, "perf (linux-perf) is not installed: it is the oracle")
SUMMARY = re.compile(r"hwc record: (\d+) samples written to standard output")
REC = ["-e", "cpu-clock", "-F", "4000", "-g"]
ROUNDS = "10"  # ~4000 samples: the shares within 2 points run to run


def pipeline(writer, reader, stdout_file=None):
    """WRITER | READER: (writer's stderr, reader's result)."""
    w = subprocess.Popen(writer, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    r = subprocess.run(reader, stdin=w.stdout, capture_output=True, text=True, timeout=LIMIT)
    w.stdout.close()
    werr = w.stderr.read().decode()
    w.stderr.close()
    w.wait(timeout=LIMIT)
    assert w.returncode == 0, (writer, w.returncode, werr)
    return werr, r


def hwc_shares(stdout):
    doc = json.loads(stdout)
    return doc, {e["symbol"]: e["self"] for e in doc["entries"]}


def perf_shares(stdout):
    """perf report --stdio --sort symbol --no-children -g none: {symbol: %}."""
    rows = {}
    for line in stdout.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+\[(.)\]\s+(.+?)(?:\s+-\s+-)?\s*$", line)
        if m:
            rows[m.group(3)] = float(m.group(1))
    return rows


PERF_REPORT = ["perf", "report", "--stdio", "--sort", "symbol", "--no-children", "-g", "none"]
HWC_REPORT = [HWC, "report", "--json", "--sort", "symbol", "--no-children"]


class PipeMode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="hwc-pipe-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def assert_profile(self, shares, reference):
        """The top two functions are the workload's f2 then f1 in both, and
        f2's part of their sum is within 2 points of the file version's
        (the kernel's share moves with the machine's load, theirs does not)."""
        for got in (shares, reference):
            top = sorted(got, key=got.get, reverse=True)[:2]
            self.assertEqual(top, ["f2", "f1"], got)
        split = [100 * d["f2"] / (d["f1"] + d["f2"]) for d in (shares, reference)]
        self.assertAlmostEqual(split[0], split[1], delta=2.0, msg=(shares, reference))

    def hwc_stream(self, name, rounds="4"):
        """A stream of hwc record -o - saved as it went through a pipe."""
        out = self.path(name)
        werr, r = pipeline([HWC, "record", "-o", "-", *REC, HOTSPOTS, rounds],
                           ["sh", "-c", 'cat > "$1"', "sh", out])
        self.assertEqual(r.returncode, 0)
        return out, int(SUMMARY.search(werr).group(1))

    # ------------------------------------------------------ perf into hwc

    @needs_perf
    def test_perf_pipe_into_hwc_report(self):
        f = self.path("perf-file.data")
        p = run(["perf", "record", "-q", *REC, "-o", f, HOTSPOTS, ROUNDS])
        if p.returncode:
            self.skipTest("perf record cannot record cpu-clock here: " + p.stderr)
        reference = perf_shares(run([*PERF_REPORT, "-i", f]).stdout)
        saved = self.path("perf-stream.data")
        _, r = pipeline(["perf", "record", "-q", *REC, "-o", "-", HOTSPOTS, ROUNDS],
                        ["sh", "-c", 'tee "$1" | "$2" report --json --sort symbol --no-children -i -',
                         "sh", saved, HWC])
        self.assertEqual(r.returncode, 0, r.stderr)
        doc, shares = hwc_shares(r.stdout)
        self.assertEqual(doc["file"], "standard input")
        self.assertGreater(doc["samples"], 0)
        self.assert_profile(shares, reference)
        # The very stream it read, as perf reads it: the same shares.
        theirs = perf_shares(run([*PERF_REPORT, "-i", saved]).stdout)
        for sym in ("f1", "f2"):
            self.assertAlmostEqual(shares[sym], theirs[sym], delta=0.1, msg=sym)

    # ------------------------------------------------------ hwc into perf

    @needs_perf
    def test_hwc_pipe_into_perf_report(self):
        f = self.path("hwc-file.data")
        p = run([HWC, "record", *REC, "-o", f, HOTSPOTS, ROUNDS])
        self.assertEqual(p.returncode, 0, p.stderr)
        reference = perf_shares(run([*PERF_REPORT, "-i", f]).stdout)
        _, r = pipeline([HWC, "record", "-o", "-", *REC, HOTSPOTS, ROUNDS], [*PERF_REPORT, "-i", "-"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "", "perf report warns about hwc's stream")
        self.assert_profile(perf_shares(r.stdout), reference)
        # perf script too reads every sample of it without a word.
        stream, n = self.hwc_stream("for-script.data", "2")
        with open(stream, "rb") as s:
            p = subprocess.run(["perf", "script", "-i", "-", "-F", "tid", "-G"], stdin=s,
                               capture_output=True, text=True, timeout=LIMIT)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(len(p.stdout.splitlines()), n)

    # ------------------------------------------------------- hwc into hwc

    def test_hwc_pipe_into_hwc_report(self):
        f = self.path("hwc-file2.data")
        p = run([HWC, "record", *REC, "-o", f, HOTSPOTS, ROUNDS])
        self.assertEqual(p.returncode, 0, p.stderr)
        _, reference = hwc_shares(run([*HWC_REPORT, f]).stdout)
        werr, r = pipeline([HWC, "record", "-o", "-", *REC, HOTSPOTS, ROUNDS], [*HWC_REPORT, "-i", "-"])
        self.assertEqual(r.returncode, 0, r.stderr)
        doc, shares = hwc_shares(r.stdout)
        self.assertEqual(doc["samples"], int(SUMMARY.search(werr).group(1)))
        self.assertEqual(doc["file"], "standard input")
        self.assert_profile(shares, reference)

    def test_standard_input_forms(self):
        """`-i -`, `-i /dev/stdin`, no file with a pipe on stdin, and a
        saved stream (or file) redirected to `-i -` read the same samples;
        another FIFO is still refused (it could hang)."""
        stream, n = self.hwc_stream("forms.data", "2")
        for argv in (["-i", "-"], ["-i", "/dev/stdin"], []):
            with self.subTest(argv=argv):
                _, r = pipeline(["cat", stream], [*HWC_REPORT, *argv])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(json.loads(r.stdout)["samples"], n)
        with open(stream, "rb") as s:
            r = subprocess.run([*HWC_REPORT, "-i", "-"], stdin=s, capture_output=True, text=True,
                               timeout=LIMIT)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["samples"], n)
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        r = run([HWC, "report", "-i", fifo])
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not a regular file", r.stderr)

    def test_command_output_kept_out_of_the_stream(self):
        """The command's standard output goes to stderr, as with perf."""
        w = subprocess.run([HWC, "record", "-o", "-", "-e", "cpu-clock", "--", "sh", "-c",
                            "echo marker-$((6*7)); exec \"$0\" 1", HOTSPOTS],
                           capture_output=True, timeout=LIMIT)
        self.assertEqual(w.returncode, 0, w.stderr)
        self.assertTrue(w.stdout.startswith(b"PERFILE2\x10\0\0\0\0\0\0\0"), w.stdout[:16])
        self.assertNotIn(b"marker-42", w.stdout)
        self.assertIn(b"marker-42", w.stderr)

    def test_terminal_refused(self):
        master, slave = os.openpty()
        try:
            p = subprocess.run([HWC, "record", "-o", "-", "-e", "cpu-clock", "true"], stdout=slave,
                               stderr=subprocess.PIPE, text=True, timeout=LIMIT)
        finally:
            os.close(slave)
            os.close(master)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("standard output is a terminal", p.stderr)

    @needs_perf
    def test_appending_to_a_file(self):
        """`hwc record -o - >> FILE`: pwrite cannot place a header in an
        O_APPEND file, so the stream is written; both readers read it."""
        f = self.path("appended.data")
        with open(f, "ab") as out:
            p = subprocess.run([HWC, "record", "-o", "-", "-e", "cpu-clock", HOTSPOTS, "1"],
                               stdout=out, stderr=subprocess.PIPE, text=True, timeout=LIMIT)
        self.assertEqual(p.returncode, 0, p.stderr)
        n = int(SUMMARY.search(p.stderr).group(1))
        self.assertEqual(json.loads(run([*HWC_REPORT, f]).stdout)["samples"], n)
        r = run(["perf", "report", "--stdio", "-i", f])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("arning", r.stderr)

    # ----------------------------------------------------- Ctrl-C, cuts

    def test_ctrl_c_loses_nothing(self):
        """SIGINT to the whole pipeline, as Ctrl-C sends it: hwc record
        ends the stream, hwc report reads it to the end: every sample the
        summary counts is reported."""
        w = subprocess.Popen([HWC, "record", "-o", "-", *REC, HOTSPOTS, "1000"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, process_group=0)
        r = subprocess.Popen([*HWC_REPORT, "-i", "-"], stdin=w.stdout, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, process_group=w.pid)
        w.stdout.close()
        try:
            # Ctrl-C once the stream is flowing (a hang guard, no timing).
            for _ in range(200):
                with open("/proc/%d/io" % w.pid) as io:
                    if int(re.search(r"wchar: (\d+)", io.read()).group(1)) > 4096:
                        break
                time.sleep(0.05)
            os.killpg(w.pid, signal.SIGINT)
            out, err = r.communicate(timeout=LIMIT)
            werr = w.stderr.read().decode()
            w.wait(timeout=LIMIT)
            w.stderr.close()
        finally:
            for p in (w, r):
                if p.poll() is None:
                    p.kill()
        self.assertEqual(w.returncode, 130, werr)
        self.assertEqual(r.returncode, 0, err)
        n = int(SUMMARY.search(werr).group(1))
        self.assertGreater(n, 0)
        self.assertEqual(json.loads(out)["samples"], n)

    def test_cut_stream(self):
        """A stream cut anywhere: the records before the cut, or a clear
        error naming the offset; never a crash or a hang."""
        stream, n = self.hwc_stream("cut.data", "2")
        with open(stream, "rb") as s:
            data = s.read()
        size = len(data)
        for cut in (0, 10, 16, 20, 200, size // 3, size // 2 + 3, size - 1):
            with self.subTest(cut=cut):
                r = subprocess.run([*HWC_REPORT, "-i", "-"], input=data[:cut], capture_output=True,
                                   timeout=LIMIT)
                self.assertIn(r.returncode, (0, 1), r.stderr)
                if r.returncode == 0:
                    got = json.loads(r.stdout)["samples"]
                    self.assertLessEqual(got, n)
                    if cut == size - 1:  # all but the last record
                        self.assertIn(got, (n - 1, n))
                else:
                    self.assertRegex(r.stderr.decode(), r"hwc report: .*(offset|needs at least)")

    # ------------------------------------------------------------ stat

    def test_stat_dash_is_stderr(self):
        """perf stat -o - writes where it writes without -o: stderr."""
        d = tempfile.mkdtemp(dir=self.tmp)
        p = run([HWC, "stat", "-o", "-", "-e", "task-clock", "true"], cwd=d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertIn("task-clock", p.stderr)
        self.assertEqual(os.listdir(d), [])
        if HAVE_PERF:
            q = run(["perf", "stat", "-o", "-", "-e", "task-clock", "true"], cwd=d)
            self.assertEqual(q.stdout, "")
            self.assertIn("task-clock", q.stderr)


if __name__ == "__main__":
    unittest.main()
