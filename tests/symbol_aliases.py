"""Symbol aliases named as perf names them: where several symbols start at
one address (workloads/aliases has a local and a weak name for one loop,
two globals for another; glibc has many, memrchr, __memrchr and
__memrchr_ifunc among them), hwc script and hwc report name the address
by perf's rule, on the same recordings made by hwc record and perf
record."""
import collections
import shutil
import tempfile
import unittest

from hwctest import as_perf_names, program, record_by_both, run, script_samples, workload

HWC = program("hwc")


class SymbolAliases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hwc-aliases-")
        cls.files = record_by_both(cls.dir, [workload("aliases"), "1"])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_script_names_every_sample_as_perf(self):
        for name, path in sorted(self.files.items()):
            with self.subTest(file=name):
                theirs = script_samples(["perf", "script", "-F", "ip,sym,dso", "-i", path])
                ours = script_samples([HWC, "script", "-F", "ip,sym,dso", "-i", path])
                perfs = {ip: sym for ip, sym, _ in theirs}
                ours = collections.Counter({(ip, as_perf_names(sym, perfs.get(ip, sym)), dso): n
                                            for (ip, sym, dso), n in ours.items()})
                self.assertEqual(ours - theirs, theirs - ours)
                syms = {sym for _, sym, dso in ours if dso == "aliases"}
                # perf's names: the local before the weak, no leading underscores.
                self.assertIn("spin_local", syms)
                self.assertIn("churn", syms)
                self.assertFalse({"spin_weak", "__churn"} & syms, syms)

    def test_report_names_as_perf(self):
        path = self.files["hwc"]
        r = run([HWC, "report", "-i", path, "--sort", "symbol"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"\bspin_local\b")
        self.assertRegex(r.stdout, r"\bchurn\b")
        self.assertNotRegex(r.stdout, r"\b(spin_weak|__churn)\b")


if __name__ == "__main__":
    unittest.main(verbosity=2)
