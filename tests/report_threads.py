"""hwc report and hwc annotate read a recording on two threads (a reader
decoding the records, the main thread symbolizing and summing them) when
there are two CPUs; HWC_PROFILE_THREADS=1 keeps them to one.  On real perf
recordings (several programs, kernel and user frames, frame-pointer and DWARF
call chains), every view must be the same byte for byte either way."""
import os
import shutil
import struct
import subprocess
import tempfile
import unittest

BUILD = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
HWC = os.path.join(BUILD, "bin", "hwc")
HOTSPOTS = os.path.join(BUILD, "workloads", "hotspots")

# Views whose output is fully ordered (the srcline key's ties are not).
VIEWS = [
    ["report"],
    ["report", "--no-children", "--sort", "comm,pid,dso,symbol"],
    ["report", "--sort", "tid,symbol,parent"],
    ["report", "--json"],
    ["report", "--view=caller"],
    ["report", "--view=callee"],
    ["report", "--view=gprof"],
    ["report", "--view=threads"],
    ["report", "--folded=-"],
    ["report", "--comm=hotspots", "--max-stack=3"],
]


def run(args, env=None):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=600, env=env)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


class Threads(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf is not installed")
        if os.cpu_count() < 2:
            raise unittest.SkipTest("one CPU: hwc reads on one thread only")
        cls.tmp = tempfile.mkdtemp()
        cls.recs = {}
        work = "%s 3 & %s 3; ls -lR /usr/lib >/dev/null 2>&1; wait" % (HOTSPOTS, HOTSPOTS)
        for name, cg in (("fp", ["-g"]), ("dwarf", ["--call-graph=dwarf,8192"])):
            out = os.path.join(cls.tmp, name + ".data")
            p = subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", *cg,
                                "-o", out, "--", "sh", "-c", work],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                raise unittest.SkipTest("perf record failed: %s" % p.stderr)
            cls.recs[name] = out

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def both(self, args):
        one = dict(os.environ, HWC_PROFILE_THREADS="1")
        return run([HWC, *args], env=one), run([HWC, *args])

    def test_views_match(self):
        for name, rec in self.recs.items():
            for view in VIEWS:
                with self.subTest(recording=name, view=view):
                    a, b = self.both([*view, rec])
                    self.assertGreater(len(a.stdout.splitlines()), 5)
                    self.assertEqual(a.stdout, b.stdout)
                    self.assertEqual(a.stderr, b.stderr)

    def test_kernel_and_user_frames(self):
        """The recordings exercise both resolutions: kernel symbols (kallsyms,
        read on a thread of its own) and the workload's."""
        a, b = self.both(["report", "--no-children", "--sort", "symbol", self.recs["fp"]])
        self.assertIn("[k] ", b.stdout)
        self.assertIn(" f2\n", b.stdout)
        self.assertEqual(a.stdout, b.stdout)

    def test_annotate_matches(self):
        for name, rec in self.recs.items():
            with self.subTest(recording=name):
                a, b = self.both(["annotate", "--stdio", "-i", rec, "f2"])
                self.assertIn("f2", a.stdout)
                self.assertEqual(a.stdout, b.stdout)

    def test_bad_sample_same_error(self):
        """A sample in the middle whose call chain cannot fit its record: the
        same message and exit either way, after the same records."""
        data = bytearray(open(self.recs["fp"], "rb").read())
        attrs_off, = struct.unpack_from("<Q", data, 24)
        data_off, data_size = struct.unpack_from("<QQ", data, 40)
        sample_type, = struct.unpack_from("<Q", data, attrs_off + 24)
        # The u64 words before the call chain's nr (no PERF_SAMPLE_READ here).
        self.assertFalse(sample_type & 16)
        before = sum(1 for bit in (1 << 16, 1, 2, 4, 8, 64, 512, 128, 256) if sample_type & bit)
        samples = []
        off = data_off
        while off < data_off + data_size:
            rtype, _, size = struct.unpack_from("<IHH", data, off)
            if size < 8:
                break
            if rtype == 9:
                samples.append(off)
            off += size
        self.assertGreater(len(samples), 100)
        struct.pack_into("<Q", data, samples[len(samples) // 2] + 8 + 8 * before, 1 << 40)
        cut = os.path.join(self.tmp, "bad.data")
        with open(cut, "wb") as f:
            f.write(data)
        res = []
        for env in (dict(os.environ, HWC_PROFILE_THREADS="1"), None):
            p = subprocess.run([HWC, "report", cut], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
            res.append((p.returncode, p.stdout, p.stderr))
        self.assertNotEqual(res[0][0], 0)
        self.assertIn("perf.data offset %d" % samples[len(samples) // 2], res[0][2])
        self.assertEqual(res[0], res[1])


if __name__ == "__main__":
    unittest.main(verbosity=2)
