"""Versioned symbols named as perf names them: glibc's full symbol table
(libc6-dbg) names the two versions of pthread_cond_signal
"pthread_cond_signal@@GLIBC_2.3.2" (the default) and
"pthread_cond_signal@GLIBC_2.2.5"; perf report, perf script and hwc name
them so, on the same recordings of workloads/versioned (which calls both),
made by hwc record and by perf record."""
import collections
import os
import re
import shutil
import tempfile
import unittest

from hwctest import program, record_by_both, run, workload

HWC = program("hwc")
ROW = re.compile(r"^\s+[\d.]+%\s+(\d+)\s+(\S+)\s+\[[.k]\] (.+?)\s*$")


class SymbolVersions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hwc-versions-")
        cls.files = record_by_both(cls.dir, [workload("versioned"), "20"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def perf_report(self, path):
        r = run(["perf", "report", "-i", path, "-n", "--no-children", "--sort", "dso,sym", "--stdio"])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {}
        for line in r.stdout.splitlines():
            m = ROW.match(line)
            if m and m.group(2).startswith("libc.so"):
                rows[m.group(3)] = int(m.group(1))
        return rows

    def hwc_report(self, path):
        r = run([HWC, "report", "-i", path, "--sort", "dso,symbol"])
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {}
        for line in r.stdout.splitlines():
            m = re.match(r"^\s+[\d.]+%\s+(\d+)\s+\d+\s+(\S+)\s+(.+?)\s*$", line)
            if m and m.group(2).startswith("libc.so"):
                rows[m.group(3)] = int(m.group(1))
        return rows

    def test_report_names_versions_as_perf(self):
        for name, path in sorted(self.files.items()):
            with self.subTest(file=name):
                theirs = self.perf_report(path)
                if not any("@" in s for s in theirs):
                    self.skipTest("perf names no versioned libc symbol (%s): glibc's full "
                                  "symbol table (libc6-dbg) is not installed" % sorted(theirs))
                self.assertIn("pthread_cond_signal@@GLIBC_2.3.2", theirs)
                # Every libc row but PLT stubs, some of which perf 6.1 names
                # "@plt" alone (hwctest.as_perf_names).
                ours = {k: v for k, v in self.hwc_report(path).items() if not k.endswith("@plt")}
                theirs = {k: v for k, v in theirs.items() if not k.endswith("@plt")}
                self.assertEqual(ours, theirs)

    def test_script_names_versions_as_perf(self):
        # -F ip,sym: perf 6.1 prints no symbol for -F sym alone.  Samples in
        # pthread_cond_signal's versions, by address, must have perf's names.
        path = self.files["hwc"]
        seen = []
        for argv in (["perf", "script", "-F", "ip,sym", "-i", path],
                     [HWC, "script", "-F", "ip,sym", "-i", path]):
            r = run(argv)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = [line.split(None, 1) for line in r.stdout.splitlines() if line.strip()]
            seen.append(collections.Counter((ip, sym.strip()) for ip, sym in rows
                                            if sym.startswith("pthread_cond_signal@")
                                            and not sym.strip().endswith("@plt")))
        if not seen[0]:
            self.skipTest("perf names no versioned symbol: libc6-dbg is not installed")
        self.assertIn("pthread_cond_signal@@GLIBC_2.3.2", {sym for _, sym in seen[0]})
        self.assertEqual(seen[1], seen[0])

if __name__ == "__main__":
    unittest.main(verbosity=2)
