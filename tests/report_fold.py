"""hwc report sums a recording's samples per raw call chain and resolves
each once: exact only while the chain's process maps the same files and
its thread keeps its name (hwc_symbols_span).  Here one process runs two
programs in turn (tests/fold/spin.c built twice, exec'ing the other): the
same code at the same addresses, named spin_one, then spin_two, so that the
same raw chains mean two functions and two commands.  hwc report must name
them as perf report does, on perf's recording and on hwc's."""
import os
import platform
import re
import shutil
import tempfile
import unittest

from hwctest import program, run, run_ok

HWC = program("hwc")
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fold")


def rows(out):
    """{(command, symbol): percent} of a --stdio --no-children --sort comm,symbol table."""
    got = {}
    for line in out.splitlines():
        m = re.match(r"^\s+([0-9.]+)%\s+(?:\d+\s+\d+\s+)?(\S+)\s+(?:\[\.\] )?(spin_\w+)\b", line)
        if m:
            got[(m.group(2), m.group(3))] = float(m.group(1))
    return got


class Fold(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if platform.machine() != "x86_64":
            raise unittest.SkipTest("tests/fold/spin.c is x86-64 code (its own _start)")
        if not shutil.which("cc"):
            raise unittest.SkipTest("needs a C compiler (cc)")
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf is not installed")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-fold.")
        for name in ("one", "two"):
            run_ok(["cc", "-O1", "-fno-omit-frame-pointer", "-fno-stack-protector", "-fno-pie",
                    "-no-pie", "-static", "-nostdlib", "-DSPIN=spin_" + name, "-o",
                    os.path.join(cls.tmp, name), os.path.join(HERE, "spin.c")])
        command = [os.path.join(cls.tmp, "one"), "200", os.path.join(cls.tmp, "two"), "200"]
        cls.files = {}
        for name, argv in (("perf", ["perf", "record", "-q"]), ("hwc", [HWC, "record"])):
            path = os.path.join(cls.tmp, name + ".data")
            r = run(argv + ["-e", "cpu-clock", "-g", "-o", path, "--", *command])
            if r.returncode != 0:
                raise unittest.SkipTest("%s cannot sample cpu-clock here: %s" % (name, r.stderr))
            cls.files[name] = path

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, data):
        theirs = rows(run_ok(["perf", "report", "-i", data, "--stdio", "--no-children",
                              "--sort", "comm,symbol"]).stdout)
        ours = rows(run_ok([HWC, "report", "--no-children", "--sort", "comm,symbol",
                            data]).stdout)
        # Both programs ran long enough to be seen, each under its own name.
        self.assertGreater(theirs.get(("one", "spin_one"), 0), 20, theirs)
        self.assertGreater(theirs.get(("two", "spin_two"), 0), 20, theirs)
        self.assertEqual(ours.keys(), theirs.keys())
        for key, share in theirs.items():
            self.assertAlmostEqual(ours[key], share, delta=0.01, msg=key)

    def test_perfs_recording(self):
        self.check(self.files["perf"])

    def test_hwcs_recording(self):
        self.check(self.files["hwc"])


if __name__ == "__main__":
    unittest.main()
