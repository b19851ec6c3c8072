"""Symbols without a size (an assembly function without .size; gcc's
crtstuff has deregister_tm_clones and __do_global_dtors_aux in every
binary): libhwc gives one the extent perf gives it, up to the next
symbol's start, so that every consumer reads the same function.
workloads/sizeless spends its time in sizeless_spin, followed by the sized
sized_after.  On the same recordings, hwc script names every sample as
perf script does, hwc annotate counts each instruction of sizeless_spin as
perf does, and pmcstat -m gives its samples sizeless_spin's range."""
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from hwctest import as_perf_names, program, record_by_both, run, script_samples, workload

HWC = program("hwc")
PROG = workload("sizeless")


def nm_starts(path):
    """PATH's text symbols: name -> start address, sized or not (nm -S
    prints no size for a sizeless one)."""
    out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    starts = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[-2] in "tT":
            starts[f[-1]] = int(f[0], 16)
    return starts


class Sizeless(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hwc-sizeless-")
        cls.files = record_by_both(cls.dir, [PROG, "1000"])
        starts = nm_starts(PROG)
        cls.extent = (starts["sizeless_spin"], starts["sized_after"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_the_workload_has_a_sizeless_function(self):
        out = subprocess.run(["nm", "-S", PROG], capture_output=True, text=True).stdout
        self.assertRegex(out, r"(?m)^[0-9a-f]+ T sizeless_spin$")  # no size column
        self.assertLess(*self.extent)

    def test_script_as_perf(self):
        for name, path in sorted(self.files.items()):
            with self.subTest(file=name):
                argv = ["script", "-F", "ip,sym,symoff,dso", "-i", path]
                theirs = script_samples(["perf"] + argv)
                ours = script_samples([HWC] + argv)
                perfs = {ip: sym for ip, sym, _ in theirs}
                ours = collections.Counter({(ip, as_perf_names(sym, perfs.get(ip, sym)), dso): n
                                            for (ip, sym, dso), n in ours.items()})
                self.assertEqual(ours - theirs, theirs - ours)
                spin = sum(n for (_, sym, _), n in ours.items() if sym.startswith("sizeless_spin+"))
                self.assertGreater(spin, 100)

    def test_annotate_as_perf(self):
        """Each instruction's samples in sizeless_spin, by hwc annotate and
        by perf script's sym+offset; the function's size is its extent."""
        path = self.files["hwc"]
        r = run(["perf", "script", "-F", "ip,sym,symoff", "-i", path])
        self.assertEqual(r.returncode, 0, r.stderr)
        theirs = collections.Counter(int(m.group(1), 16) for m in
                                     re.finditer(r"(?m)^\s*[0-9a-f]+ sizeless_spin\+(0x[0-9a-f]+)$", r.stdout))
        r = run([HWC, "annotate", "--json", "-i", path, "sizeless_spin"])
        self.assertEqual(r.returncode, 0, r.stderr)
        funcs = json.loads(r.stdout)["functions"]
        self.assertEqual([f["symbol"] for f in funcs], ["sizeless_spin"])
        start, end = self.extent
        self.assertEqual((int(funcs[0]["start"], 16), funcs[0]["size"]), (start, end - start))
        ours = collections.Counter({i["offset"]: i["samples"] for i in funcs[0]["instructions"]
                                    if i["samples"]})
        self.assertEqual(ours, theirs)
        self.assertGreater(sum(ours.values()), 100)

    def test_pmcstat_ranges(self):
        """pmcstat -m: each sample's function and its range, which holds it."""
        pmcstat = program("pmcstat")
        log, out = os.path.join(self.dir, "pmc.log"), os.path.join(self.dir, "m.out")
        r = run([pmcstat, "-n", "1000000", "-P", "cpu-clock", "-O", log, "--", PROG, "500"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run([pmcstat, "-R", log, "-m", out])
        self.assertEqual(r.returncode, 0, r.stderr)
        spin = 0
        with open(out) as f:
            for line in f:
                pc, name, start, end = line.split()
                pc, start, end = int(pc, 16), int(start, 16), int(end, 16)
                self.assertTrue(start <= pc < end, line)
                if name == "sizeless_spin":
                    self.assertEqual((start, end), self.extent, line)
                    spin += 1
        self.assertGreater(spin, 20)


if __name__ == "__main__":
    unittest.main(verbosity=2)
