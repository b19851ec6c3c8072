"""The files hwc's tools write and read, as an attacker and a careless user
would try them: a failed `hwc record` leaves whatever its output names (a
device node, the previous recording) as it was, and a successful one keeps
the previous file as NAME.old; a symbolic link planted by another user in a
sticky world-writable directory is refused by every tool that writes a
file, its target untouched; FIFOs and directories are refused; readers
never hang on a FIFO (a recording's mapped file, hwc report's input) and
pmcstat -R never reads a device without end; a bad log prints no made-up
numbers; running out of descriptors is named as such."""
import os
import resource
import shutil
import stat
import subprocess
import tempfile
import unittest

from hwctest import BUILD, NOBODY, program, run, workload

HWC = program("hwc")
PMCSTAT = program("pmcstat")
CPUTRACK = program("cputrack")
HOTSPOTS = workload("hotspots")
SANITIZED = "build-san" in BUILD
# A recording's readers must finish: a hang guard, never a timing assertion.
GUARD = 120


def needs_root(f):
    def wrapper(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (mknod, setpriv)")
        return f(self)
    wrapper.__name__ = f.__name__
    return wrapper


class Tmp(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hwc-outputs-")
        os.chmod(self.dir, 0o755)  # nobody plants links in a subdirectory

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def record(self, *args, cwd=None):
        return run([HWC, "record", "-e", "cpu-clock", *args], cwd=cwd or self.dir)

    def assertNoTemporaries(self, d=None):
        left = [n for n in os.listdir(d or self.dir) if ".tmp-" in n]
        self.assertEqual(left, [], "temporary files left behind")


class Record(Tmp):
    @needs_root
    def test_device_node_survives_a_failed_record(self):
        dev = self.path("d")
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        r = run([HWC, "record", "-o", dev, "--", "/nonexistent/cmd"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("refusing to write %s: it is a character device" % dev, r.stderr)
        self.assertTrue(stat.S_ISCHR(os.lstat(dev).st_mode), "the device node was removed")
        self.assertNoTemporaries()

    def test_previous_recording_survives_and_is_kept_as_old(self):
        data = self.path("r.data")
        r = self.record("-o", data, "--", HOTSPOTS, "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        first = self.read("r.data")
        # A mistyped command: nothing is recorded, nothing is replaced.
        r = self.record("-o", data, "--", "/nonexistent/cmd")
        self.assertEqual(r.returncode, 127, r.stderr)
        self.assertIn("cannot execute '/nonexistent/cmd'", r.stderr)
        self.assertEqual(self.read("r.data"), first)
        self.assertFalse(os.path.exists(data + ".old"))
        self.assertNoTemporaries()
        # A recording that works replaces it and keeps it as r.data.old.
        r = self.record("-o", data, "--", "true")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.read("r.data.old"), first)
        self.assertNotEqual(self.read("r.data"), first)
        rep = run([HWC, "report", "-i", data])
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertNoTemporaries()

    def test_default_file_kept_as_old(self):
        self.assertEqual(self.record("true").returncode, 0)
        first = self.read("hwc.data")
        self.assertEqual(self.record("true").returncode, 0)
        self.assertEqual(self.read("hwc.data.old"), first)

    def test_dash_is_standard_output(self):
        """-o - streams to stdout (tests/pipe_mode.py reads it): no file is
        named "-"."""
        r = subprocess.run([HWC, "record", "-o", "-", "-e", "cpu-clock", "true"], cwd=self.dir,
                           capture_output=True, timeout=GUARD)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(b"PERFILE2"), r.stdout[:16])
        self.assertEqual(os.listdir(self.dir), [])

    def test_old_name_must_be_a_regular_file(self):
        os.mkdir(self.path("x.data.old"))
        r = self.record("-o", self.path("x.data"), "true")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("x.data.old is a directory", r.stderr)
        self.assertFalse(os.path.exists(self.path("x.data")))


def writers(d, target):
    """Every way a tool writes a file, each writing TARGET (in D, which
    holds a recording r.data): (name, argv)."""
    rec = os.path.join(d, "r.data")
    return [
        ("hwc record", [HWC, "record", "-e", "cpu-clock", "-o", target, "true"]),
        ("hwc stat -o", [HWC, "stat", "-e", "task-clock", "-o", target, "true"]),
        ("hwc report --folded", [HWC, "report", "-i", rec, "--folded=" + target]),
        ("hwc report --pprof", [HWC, "report", "-i", rec, "--pprof=" + target]),
        ("hwc report --flamegraph", [HWC, "report", "-i", rec, "--flamegraph=" + target]),
        ("pmcstat -O", [PMCSTAT, "-O", target, "-P", "cpu-clock", "true"]),
        ("pmcstat -o", [PMCSTAT, "-o", target, "-p", "task-clock", "true"]),
        ("pmcstat -G", [PMCSTAT, "-R", rec, "-G", target]),
        ("pmcstat -M", [PMCSTAT, "-R", rec, "-g", "-D", d, "-M", target]),
        ("cputrack -o", [CPUTRACK, "-o", target, "-c", "task-clock", "true"]),
    ]


class Writers(Tmp):
    def setUp(self):
        super().setUp()
        r = self.record("-g", "-o", self.path("r.data"), "--", HOTSPOTS, "1")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_every_writer_works(self):
        # The same commands on a plain new name and over an earlier file.
        for again in (False, True):
            for name, argv in writers(self.dir, self.path("out")):
                with self.subTest(name, again=again):
                    r = run(argv, cwd=self.dir)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertTrue(os.path.getsize(self.path("out")) > 0)
                    self.assertNoTemporaries()
                    os.unlink(self.path("out"))

    @needs_root
    def test_symlink_planted_by_nobody(self):
        sticky = self.path("shared")
        os.mkdir(sticky)
        os.chmod(sticky, 0o1777)
        victim = self.path("victim")
        with open(victim, "w") as f:
            f.write("root's file\n")
        link = os.path.join(sticky, "out")
        for name, argv in writers(self.dir, link):
            with self.subTest(name):
                r = run(NOBODY + ["ln", "-s", victim, link])
                self.assertEqual(r.returncode, 0, r.stderr)
                r = run(argv, cwd=sticky)
                self.assertNotEqual(r.returncode, 0, r.stderr)
                self.assertIn("refusing to write %s: it is a symbolic link" % link, r.stderr)
                with open(victim) as f:
                    self.assertEqual(f.read(), "root's file\n")
                self.assertTrue(os.path.islink(link))
                self.assertNoTemporaries(sticky)
                os.unlink(link)
        # hwc record's default name, from the issue: `hwc record true`.
        r = run(NOBODY + ["ln", "-s", victim, os.path.join(sticky, "hwc.data")])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.record("true", cwd=sticky)
        self.assertEqual(r.returncode, 1, r.stderr)
        with open(victim) as f:
            self.assertEqual(f.read(), "root's file\n")

    def test_fifo_and_directory_refused(self):
        fifo, d = self.path("fifo"), self.path("dir")
        os.mkfifo(fifo)
        os.mkdir(d)
        for target, what in ((fifo, "it is a FIFO (named pipe)"), (d, "it is a directory")):
            for name, argv in writers(self.dir, target):
                with self.subTest(name, target=target):
                    r = run(argv, cwd=self.dir, timeout=GUARD)
                    self.assertNotEqual(r.returncode, 0, r.stderr)
                    self.assertIn("refusing to write %s: %s" % (target, what), r.stderr)
                    self.assertTrue(os.path.exists(target))
                    self.assertNoTemporaries()

    def test_failed_stat_leaves_the_previous_report(self):
        out = self.path("stat.txt")
        with open(out, "w") as f:
            f.write("previous\n")
        r = run([HWC, "stat", "-e", "no-such-event", "-o", out, "true"])
        self.assertNotEqual(r.returncode, 0)
        r = run([HWC, "stat", "-e", "task-clock", "-o", out, "/nonexistent/cmd"])
        self.assertNotEqual(r.returncode, 0)
        with open(out) as f:
            self.assertEqual(f.read(), "previous\n")
        self.assertNoTemporaries()


class Readers(Tmp):
    def test_recording_whose_mapping_is_now_a_fifo(self):
        # A program recorded, then replaced by a FIFO (as a user may do to a
        # running binary): its readers say so and finish.
        prog = self.path("prog")
        shutil.copy(HOTSPOTS, prog)
        data = self.path("fifo.data")
        r = self.record("-g", "-o", data, "--", prog, "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        os.unlink(prog)
        os.mkfifo(prog)
        # An empty HOME: no copy in perf's build-id cache (~/.debug) stands in.
        env = dict(os.environ, HOME=self.dir)
        r = run([HWC, "report", "-i", data], timeout=GUARD, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("no symbols for %s: not a regular file" % prog, r.stderr)
        r = run([PMCSTAT, "-R", data, "-G", self.path("graph")], timeout=GUARD, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_report_of_a_fifo(self):
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        r = run([HWC, "report", "-i", fifo], timeout=GUARD)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("%s is not a regular file" % fifo, r.stderr)

    def test_pmcstat_reads_dev_zero(self):
        # Memory stays bounded: the address space is capped (not under ASan,
        # which reserves terabytes), and the peak is measured.
        def cap():
            if not SANITIZED:
                gib = 1 << 30
                resource.setrlimit(resource.RLIMIT_AS, (2 * gib, 2 * gib))
        p = subprocess.Popen([PMCSTAT, "-R", "/dev/zero"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=cap)
        try:
            out, err = p.communicate(timeout=GUARD)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            self.fail("pmcstat -R /dev/zero did not end")
        self.assertEqual(p.returncode, 65, err)
        self.assertIn('"/dev/zero" is not a complete log', err)
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        self.assertLess(peak_kib, 512 * 1024)

    def test_bad_log_prints_no_garbage(self):
        bad = self.path("bad.log")
        with open(bad, "wb") as f:
            f.write(b"not a log at all\n" * 100)
        r = run([PMCSTAT, "-R", bad])
        self.assertEqual(r.returncode, 65, r.stderr)
        self.assertIn("event parsing failed (record 1, offset 0x0)", r.stderr)

    def test_too_many_open_files(self):
        data = self.path("r.data")
        r = self.record("-g", "-o", data, "--", "sh", "-c", "ls -lR /usr/lib >/dev/null")
        self.assertEqual(r.returncode, 0, r.stderr)
        full = subprocess.run([HWC, "report", "-i", data], capture_output=True, text=True,
                              timeout=GUARD)
        self.assertEqual(full.returncode, 0, full.stderr)
        said = []
        # The smallest limits leave no descriptor for the recording itself;
        # a few more run out on the symbol files, or on their debug files
        # (libdw's search for those said only "not found": the DSO's own
        # table then named other functions' samples, without a word).
        for n in range(4, 24):
            def low(n=n):
                resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
            p = subprocess.run([HWC, "report", "-i", data], capture_output=True, text=True,
                               timeout=GUARD, preexec_fn=low)
            self.assertNotIn("not a readable ELF file", p.stderr)
            if "too many open files" in p.stderr:
                self.assertIn("too many open files (ulimit -n is %d): raise the limit with "
                              "ulimit -n" % n, p.stderr)
                said.append(n)
            else:
                self.assertEqual(p.stdout, full.stdout,
                                 "ulimit -n %d changed the report without a word" % n)
        self.assertTrue(said, "no limit made hwc report run out of descriptors")


if __name__ == "__main__":
    unittest.main(verbosity=2)
