"""A new user's first run: `hwc record -- CMD` then `hwc report` with no
file, in a fresh directory.  With no file named, hwc report reads hwc.data
(hwc record's default), else perf.data (perf record's), names the one it
read, and says what to do when neither is there."""
import json
import os
import shutil
import tempfile
import unittest

from hwctest import program, run, workload

HWC = program("hwc")


class DefaultInput(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hwc-first-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def hwc(self, *args):
        return run([HWC, *args], cwd=self.dir)

    def record(self, name="hwc.data"):
        r = self.hwc("record", "-e", "cpu-clock", "-o", name, "--", workload("hotspots"), "2")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_record_then_report(self):
        self.record()
        r = self.hwc("report")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("# hwc report of hwc.data: event cpu-clock, "), r.stdout)
        self.assertIn("hotspots", r.stdout)
        self.assertEqual(r.stderr, "")

    def test_perf_data_when_no_hwc_data(self):
        self.record("perf.data")
        r = self.hwc("report", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["file"], "perf.data")
        r = self.hwc("report", "--view=caller")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("# hwc report of perf.data: "), r.stdout)

    def test_both_prefers_hwc_data_and_says_so(self):
        self.record()
        self.record("perf.data")
        r = self.hwc("report")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("# hwc report of hwc.data: "), r.stdout)
        self.assertIn("reading hwc.data (perf.data is here too", r.stderr)
        # A named file is read without a word.
        r = self.hwc("report", "perf.data")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("# hwc report of perf.data: "), r.stdout)
        self.assertEqual(r.stderr, "")

    def test_exports_only_name_the_input(self):
        # Nothing on stdout names the file: stderr does.
        self.record()
        r = self.hwc("report", "--folded=out.folded")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "hwc report: reading hwc.data\n")
        self.assertIn("f2 ", open(os.path.join(self.dir, "out.folded")).read())

    def test_neither(self):
        r = self.hwc("report")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr, "hwc report: no hwc.data or perf.data here: record one with "
                                   "`hwc record -- CMD` or name a file\n")

    def test_broken_default_is_named(self):
        # hwc.data exists but is no recording: the error names it, and
        # perf.data is not tried behind the user's back.
        with open(os.path.join(self.dir, "hwc.data"), "w") as f:
            f.write("not a recording\n")
        r = self.hwc("report")
        self.assertEqual(r.returncode, 1)
        self.assertIn("hwc.data", r.stderr)


if __name__ == "__main__":
    unittest.main()
