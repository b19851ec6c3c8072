"""scripts/pmu-vm, the emulated arm64 machine with a PMU: one boot runs a
command that checks the guest (the copies, the PMU, hwc and perf) and exits
3; stdout and stderr come back apart and the status is passed through.  A
second boot hangs and is killed by --timeout; a third is interrupted by
SIGINT.  Neither leaves a QEMU or a temporary file behind.  Bad options are
refused before any boot."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from hwctest import BUILD, SRC, program, run

PMU_VM = os.path.join(SRC, "scripts", "pmu-vm")
# The first use builds the guest's base and the arm64 build of hwc.
FIRST_USE = 840


def skip(why):
    print(f"skip: {why}", file=sys.stderr)
    sys.exit(77)


if not shutil.which("qemu-system-aarch64"):
    skip("qemu-system-aarch64 is absent (scripts/deps arm64 installs it)")
if "libasan" in run(["readelf", "-d", os.path.join(BUILD, "lib", "libhwc.so.0")]).stdout:
    skip("the guest runs the arm64 build, never this sanitized one: the plain suite tests it")


def ours(stderr):
    """stderr without pmu-vm's own progress lines (a first use builds)."""
    return [line for line in stderr.splitlines() if not line.startswith("pmu-vm: ")]


def qemus_in(tmpdir):
    """The QEMU processes whose command line names TMPDIR."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
        except OSError:
            continue
        if "qemu-system-aarch64" in cmd and tmpdir in cmd:
            found.append(int(pid))
    return found


class Guest(unittest.TestCase):
    """One boot that checks everything a command in the guest sees."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        with open(os.path.join(cls.dir, "note.txt"), "w") as f:
            f.write("a copied file\n")
        os.makedirs(os.path.join(cls.dir, "tree", "sub"))
        with open(os.path.join(cls.dir, "tree", "sub", "deep.txt"), "w") as f:
            f.write("a copied directory\n")
        script = """
cat note.txt tree/sub/deep.txt
echo to-stderr >&2
test -d /sys/bus/event_source/devices/armv8_pmuv3 && echo "pmu: armv8_pmuv3"
hwc --version || exit 10
perf --version || exit 11
printf 'arg[%s]\\n' "$@"
exit 3"""
        cls.r = run([PMU_VM, "--copy", os.path.join(cls.dir, "note.txt"),
                     "--copy", os.path.join(cls.dir, "tree"),
                     "--", "sh", "-c", script, "sh", "it's", "two  words"], timeout=FIRST_USE)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_status_passed_through(self):
        self.assertEqual(self.r.returncode, 3, self.r.stderr)

    def test_stdout(self):
        hwc_version = run([program("hwc"), "--version"]).stdout
        self.assertRegex(self.r.stdout, "^" + re.escape(
            "a copied file\na copied directory\npmu: armv8_pmuv3\n" + hwc_version)
            + r"perf version \S+\n" + re.escape("arg[it's]\narg[two  words]\n") + "$")

    def test_stderr_apart(self):
        self.assertEqual(ours(self.r.stderr), ["to-stderr"], self.r.stderr)
        self.assertNotIn("to-stderr", self.r.stdout)


class Stops(unittest.TestCase):
    """A guest that hangs, or a ^C on the host: QEMU is stopped, nothing stays."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.env = dict(os.environ, TMPDIR=self.tmp)

    def tearDown(self):
        for pid in qemus_in(self.tmp):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.tmp)

    def assert_nothing_left(self):
        self.assertEqual(qemus_in(self.tmp), [])
        self.assertEqual(os.listdir(self.tmp), [])

    def test_timeout(self):
        r = run([PMU_VM, "--timeout", "10", "--", "sleep", "1000"], env=self.env, timeout=FIRST_USE)
        self.assertEqual(r.returncode, 124, r.stderr)
        self.assertIn("pmu-vm: the guest did not finish within 10 s (--timeout); it was killed\n",
                      r.stderr)
        self.assertEqual(r.stdout, "")
        self.assert_nothing_left()

    def test_interrupt(self):
        p = subprocess.Popen([PMU_VM, "--", "sleep", "1000"], env=self.env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + FIRST_USE
        while not qemus_in(self.tmp) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        self.assertTrue(qemus_in(self.tmp), "QEMU never started")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("pmu-vm: interrupted; the guest was stopped\n", err)
        self.assert_nothing_left()


class Usage(unittest.TestCase):
    """Bad command lines: usage or the reason, exit 2, no boot."""

    def test_bad(self):
        missing = os.path.join(tempfile.gettempdir(), "pmu-vm-no-such-path")
        for args, message in ((["--frobnicate", "--", "true"], "unknown option: --frobnicate"),
                              (["--"], "no COMMAND after --"),
                              ([], "no COMMAND after --"),
                              (["--timeout", "soon", "--", "true"], "--timeout soon: not a number"),
                              (["--copy", missing, "--", "true"], "no such file or directory"),
                              (["--cpu"], "--cpu needs a MODEL")):
            with self.subTest(args=args):
                r = run([PMU_VM, *args])
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertTrue(r.stderr.startswith("pmu-vm: "), r.stderr)
                self.assertIn(message, r.stderr)
                self.assertEqual(r.stdout, "")

    def test_help(self):
        r = run([PMU_VM, "--help"])
        self.assertEqual(r.returncode, 0)
        self.assertTrue(r.stdout.startswith("usage: scripts/pmu-vm "), r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
