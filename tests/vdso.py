"""[vdso] symbols: hwc record keeps the vDSO image in perf's build-id cache
($HOME/.debug/[vdso]/BUILDID/vdso, with perf's .build-id link), hwc report,
script and annotate name clock_gettime's vDSO function from it as perf
report does (on hwc's and perf's recordings of a clock_gettime loop), perf
finds hwc's copy, and without the copy (a fresh HOME) the samples stay
"[unknown]" in [vdso], not an error."""
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BUILD = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
HWC = os.path.join(BUILD, "bin", "hwc")
CLOCKLOOP = os.path.join(BUILD, "workloads", "clockloop")


def run(args, home, check=True):
    env = dict(os.environ, HOME=home)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=600, env=env)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def hwc_vdso_shares(path, home):
    """{symbol: self share} of hwc report's [vdso] rows."""
    doc = json.loads(run([HWC, "report", "--json", "--sort", "dso,symbol", path], home).stdout)
    return {e["symbol"]: e["self"] for e in doc["entries"] if e["dso"] == "[vdso]"}


def perf_vdso_shares(path, home):
    """{symbol: percent} of perf report's [vdso] rows."""
    p = run(["perf", "report", "--stdio", "-i", path, "--no-children", "--sort", "dso,symbol",
             "-g", "none"], home)
    rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+\[vdso\]\s+\[\.\]\s+(\S+)(?:\s+-\s+-)?\s*$", line)
        if m:
            rows[m.group(2)] = float(m.group(1))
    return rows


class Vdso(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(CLOCKLOOP):
            raise unittest.SkipTest("no %s: make all first" % CLOCKLOOP)
        cls.tmp = tempfile.mkdtemp(prefix="hwc-vdso-")
        cls.home = os.path.join(cls.tmp, "home")
        os.mkdir(cls.home)
        cls.data = os.path.join(cls.tmp, "hwc.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-F", "2000", "-o", cls.data, CLOCKLOOP,
                 "3000000"], cls.home, check=False)
        if p.returncode != 0:
            shutil.rmtree(cls.tmp)
            raise unittest.SkipTest("hwc record cannot sample here: %s" % p.stderr.strip())
        cls.record_err = p.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def cache(self):
        top = os.path.join(self.home, ".debug", "[vdso]")
        ids = os.listdir(top) if os.path.isdir(top) else []
        self.assertEqual(len(ids), 1, "one vDSO image in %s: %s" % (top, ids))
        return ids[0], os.path.join(top, ids[0], "vdso")

    def test_cache_layout(self):
        self.assertNotIn("warning", self.record_err)
        bid, image = self.cache()
        self.assertRegex(bid, r"^[0-9a-f]{40}$")
        with open(image, "rb") as f:
            self.assertEqual(f.read(4), b"\x7fELF")
        link = os.path.join(self.home, ".debug", ".build-id", bid[:2], bid[2:])
        self.assertEqual(os.readlink(link), "../../[vdso]/" + bid)
        # the recording names the same build-id for [vdso]
        if shutil.which("perf"):
            p = run(["perf", "buildid-list", "-i", self.data], self.home)
            self.assertIn("%s [vdso]" % bid, p.stdout)
        # a second record keeps the same file (same image): no warning
        data2 = os.path.join(self.tmp, "again.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-o", data2, CLOCKLOOP, "1000"], self.home)
        self.assertNotIn("warning", p.stderr)
        os.unlink(data2)

    def test_report_names_vdso_function(self):
        shares = hwc_vdso_shares(self.data, self.home)
        top = max(shares, key=shares.get)
        self.assertIn("clock_gettime", top)
        self.assertFalse(any(s.startswith("[unknown]") and v > 2 for s, v in shares.items()),
                         shares)
        self.assertGreater(shares[top], 50)

    def test_matches_perf(self):
        if not shutil.which("perf"):
            self.skipTest("perf is not installed")
        for data in (self.data, self.perf_data()):
            ours = hwc_vdso_shares(data, self.home)
            theirs = perf_vdso_shares(data, self.home)
            top = max(theirs, key=theirs.get)
            self.assertIn("clock_gettime", top, theirs)
            self.assertIn(top, ours, (ours, theirs))
            self.assertLessEqual(abs(ours[top] - theirs[top]), 2.0, (data, ours, theirs))

    def perf_data(self):
        out = os.path.join(self.tmp, "perf.data")
        if not os.path.exists(out):
            p = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", out,
                     CLOCKLOOP, "3000000"], self.home, check=False)
            if p.returncode != 0:
                self.skipTest("perf record failed: %s" % p.stderr.strip())
        return out

    def test_script_and_annotate(self):
        p = run([HWC, "script", "-i", self.data], self.home)
        self.assertRegex(p.stdout, r"__vdso_clock_gettime\+0x[0-9a-f]+ \(\[vdso\]\)")
        p = run([HWC, "annotate", "--stdio", "-i", self.data, "__vdso_clock_gettime"], self.home)
        self.assertIn("<__vdso_clock_gettime>:", p.stdout)

    def test_fallback_without_cache(self):
        fresh = tempfile.mkdtemp(prefix="hwc-vdso-home-", dir=self.tmp)
        shares = hwc_vdso_shares(self.data, fresh)
        self.assertTrue(shares, "the [vdso] samples are kept")
        self.assertTrue(all(s.startswith("[unknown]") for s in shares), shares)
        p = run([HWC, "report", "-i", self.data], fresh)
        self.assertIn("[unknown] [vdso]+0x", p.stdout)
        self.assertEqual(os.listdir(fresh), [], "report writes no cache")


if __name__ == "__main__":
    unittest.main()
