"""pctr(1): the display, -l, setting a counter, and every bad option."""
import os
import re
import unittest

from hwctest import HAVE_CORE_PMU, program, run

PCTR = program("pctr")
# Our own whole-CPU helper name: the default one is machine-wide.
ENV = dict(os.environ, HWC_PCTR_SOCKET="hwc-pctr-test-%d" % os.getpid())


def pctr(*args, **kw):
    kw["env"] = dict(ENV, **kw.get("env", {}))
    return run([PCTR, *args], **kw)


class Display(unittest.TestCase):
    def test_counters_and_tsc(self):
        r = pctr()
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 5, r.stdout)
        for i in range(4):  # pctr's own counters: never set
            self.assertRegex(lines[i], r"^ ctr%d = +0  \[---- 00 00 \]$" % i)
        m = re.match(r"^  tsc = +(\d+)$", lines[4])
        self.assertIsNotNone(m, lines[4])
        tsc1 = int(m.group(1))
        tsc2 = int(pctr().stdout.splitlines()[4].split()[-1])
        self.assertGreater(tsc2, tsc1)


class List(unittest.TestCase):
    def test_lists_events_with_codes_and_unit_masks(self):
        r = pctr("-l")
        if r.returncode != 0 and "no libpfm4 model" in r.stderr:
            self.skipTest(r.stderr.strip())
        self.assertEqual(r.returncode, 0, r.stderr)
        events = re.findall(r"^([0-9a-f]{2,3})  ([A-Za-z0-9_.:]+)", r.stdout, re.M)
        self.assertGreater(len(events), 20, r.stdout[:2000])
        umasks = re.findall(r"^      -m ([0-9a-f]{2})  \S", r.stdout, re.M)
        self.assertGreater(len(umasks), 0, r.stdout[:2000])
        self.assertEqual(r.stderr, "")

    def test_skylake_listing_is_exact(self):
        # libpfm4's own switch picks the model, so this holds on any host.
        env = dict(LIBPFM_FORCE_PMU="skl")
        r = pctr("-l", env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"(?m)^c0  INST_RETIRED$")
        # UOPS_ISSUED.STALL_CYCLES is umask 1, inverted, threshold 1.
        block = r.stdout.split("\n0e  UOPS_ISSUED\n", 1)[1].split("\n", 12)
        self.assertIn("      -m 01 -i -t 1  STALL_CYCLES: Counts the number of cycles no uops",
                      "\n".join(block))


class Set(unittest.TestCase):
    def test_set_counter(self):
        r = pctr("-s", "0", "-f", "c0", "-u")
        if HAVE_CORE_PMU:
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
            self.assertEqual(pctr("-s", "0", "-f", "0").returncode, 0)  # stops a helper
        else:
            self.assertEqual(r.returncode, 1)
            self.assertIn("cannot set counter 0 to function 0x4100c0: No such device", r.stderr)
            self.assertIn("no hardware performance counters", r.stderr)

    def test_function_word_from_options(self):
        # -t, -e, -i, -k and the unit mask bits all land in the word.
        r = pctr("-s", "3", "-f", "2e", "-m", "1", "-t", "2", "-e", "-i", "-k", "-M", "-S")
        want = 0x2E | (0x01 | 0x08 | 0x02) << 8 | 0x020000 | 0x040000 | 0x800000 | 0x400000 | 2 << 24
        if HAVE_CORE_PMU:
            self.skipTest("a PMU accepts the function silently; its word is shown only on error")
        self.assertEqual(r.returncode, 1)
        self.assertIn("counter 3 to function %#x:" % want, r.stderr)


class BadOptions(unittest.TestCase):
    def check_usage(self, *args):
        r = pctr(*args)
        self.assertEqual(r.returncode, 1, args)
        self.assertIn("usage: pctr [-AEeIiklMSu] [-f funct] [-m umask] [-s ctr] [-t thold]", r.stderr)
        self.assertEqual(r.stdout, "")

    def check_message(self, args, message):
        r = pctr(*args)
        self.assertEqual(r.returncode, 1, args)
        self.assertIn(message, r.stderr)
        self.assertEqual(r.stdout, "")

    def test_usage(self):
        self.check_usage("-x")
        self.check_usage("extra")
        self.check_usage("-s")
        self.check_usage("-A", "-M")
        self.check_usage("-A", "-S", "-s", "0", "-f", "10")

    def test_bad_numbers(self):
        self.check_message(["-s", "4"], "counter number is too large: 4")
        self.check_message(["-s", "-1"], "counter number is too small: -1")
        self.check_message(["-s", "x"], "counter number is invalid: x")
        self.check_message(["-f", "zz"], "invalid function number: zz")
        self.check_message(["-f", "100"], "invalid function number: 100")
        self.check_message(["-f", ""], "invalid function number: ")
        self.check_message(["-m", "1ff"], "invalid unit mask number: 1ff")
        self.check_message(["-t", "256"], "threshold is too large: 256")


if __name__ == "__main__":
    unittest.main()
