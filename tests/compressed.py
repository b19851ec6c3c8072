"""Compressed recordings (perf record -z: PERF_RECORD_COMPRESSED records,
pieces of one zstd stream, and the COMPRESSED header feature), with perf
on this machine as the oracle: hwc report and pmcstat -R read perf's, perf
report reads hwc record -z's without a warning, both agree on every entry
of the same file, and broken compressed data is a clear error."""
import os
import re
import shutil
import struct
import tempfile
import unittest

from hwctest import program, run, workload

HWC = program("hwc")
PMCSTAT = program("pmcstat")
COMPRESSED = 81
FINISHED_ROUND = 68


def records(path):
    """[(offset, type, size)] of the records in PATH's data section."""
    with open(path, "rb") as f:
        d = f.read()
    off, size = struct.unpack_from("<QQ", d, 40)
    out, p = [], off
    while p < off + size:
        t, _, sz = struct.unpack_from("<IHH", d, p)
        out.append((p, t, sz))
        p += sz
    return out


def perf_samples(path):
    """perf report's samples per symbol of PATH ("[k] name" for the
    kernel's, the bare name for user space's), and its stderr."""
    p = run(["perf", "report", "--stdio", "-n", "--no-children", "--sort", "comm,dso,sym",
             "-i", path])
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+\S+\s+\S+\s+\[(.)\] (.+?)\s*$", line)
        if m:
            name = m.group(3) if m.group(2) == "." else "[k] " + m.group(3)
            out[name] = out.get(name, 0) + int(m.group(1))
    return out, p.stderr


def hwc_samples(path):
    """hwc report's samples per symbol of PATH, and the result."""
    p = run([HWC, "report", "--no-children", path])
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+\d+\s+\S+\s+\S+\s+(.+?)\s*$", line)
        if m:
            out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out, p


class Compressed(unittest.TestCase):
    def setUp(self):
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf is not installed (scripts/deps installs linux-perf)")
        self.dir = tempfile.mkdtemp(prefix="hwc-zstd-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def perf_record(self, name, *opts):
        out = self.path(name)
        p = run(["perf", "record", "-q", "-e", "cpu-clock", *opts, "-o", out, "--",
                 workload("hotspots"), "2"])
        if p.returncode != 0:
            raise unittest.SkipTest("perf record cannot record cpu-clock here: " + p.stderr)
        return out

    def hwc_record(self, name, *opts):
        out = self.path(name)
        p = run([HWC, "record", "-e", "cpu-clock", *opts, "-o", out, "--",
                 workload("hotspots"), "2"])
        self.assertEqual(p.returncode, 0, p.stderr)
        return out

    def assert_same_as_perf(self, path):
        """hwc report and perf report agree on every symbol's samples."""
        theirs, err = perf_samples(path)
        self.assertEqual(err, "")
        ours, p = hwc_samples(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        total = sum(ours.values())
        self.assertGreater(total, 200)
        self.assertEqual(total, sum(theirs.values()))
        self.assertGreater(ours.get("f2", 0), ours.get("f1", 0))
        # The entries of 1% and more (rare ones, in ld.so and libc, are
        # named after other aliases than perf's).
        self.assertEqual({k: v for k, v in ours.items() if v * 100 >= total},
                         {k: v for k, v in theirs.items() if v * 100 >= total})

    def test_perf_z_read(self):
        # perf's default level, and dwarf call graphs: stacks big enough for
        # many compressed records, records straddling two of them.
        for opts, name in ((("-z",), "z"), (("--call-graph", "dwarf", "-z"), "dwarf")):
            with self.subTest(name):
                path = self.perf_record(name + ".data", *opts)
                n = sum(t == COMPRESSED for _, t, _ in records(path))
                self.assertGreater(n, 0 if name == "z" else 1)
                self.assert_same_as_perf(path)

    def test_pmcstat_reads_perf_z(self):
        path = self.perf_record("p.data", "-z")
        theirs, _ = perf_samples(path)
        p = run([PMCSTAT, "-R", path, "-G", "-"])
        self.assertEqual(p.returncode, 0, p.stderr)
        ours = {m.group(2): int(m.group(1))
                for m in re.finditer(r"^[\d.]+%\s+\[(\d+)\]\s+(\S+) @ ", p.stdout, re.M)}
        for sym in ("f1", "f2"):
            self.assertEqual(ours.get(sym), theirs[sym], p.stdout)

    def test_hwc_record_z(self):
        plain = self.hwc_record("plain.data")
        self.assertFalse(any(t == COMPRESSED for _, t, _ in records(plain)))
        for opt, level in (("-z", 1), ("-z9", 9), ("--compression-level", 1),
                           ("--compression-level=19", 19)):
            with self.subTest(opt):
                path = self.hwc_record("z.data", opt)
                recs = records(path)
                # Everything is in compressed records.
                self.assertEqual({t for _, t, _ in recs}, {COMPRESSED})
                h = run(["perf", "report", "--header-only", "-i", path])
                self.assertIn("# compressed : Zstd, level = %d, ratio = " % level, h.stdout)
                self.assertEqual(h.stderr, "")
                self.assert_same_as_perf(path)
                self.assertLess(os.path.getsize(path), os.path.getsize(plain) / 2)
        # Call graphs: many compressed records, records straddling them.
        path = self.hwc_record("dwarf.data", "-z", "--call-graph", "dwarf")
        self.assertGreater(len(records(path)), 1)
        self.assert_same_as_perf(path)

    def test_bad_level(self):
        for opt in ("-z0", "-z23", "-zx", "--compression-level=", "--compression-level=-1"):
            with self.subTest(opt):
                p = run([HWC, "record", opt, "-o", self.path("bad.data"), "--", "true"])
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("invalid compression level", p.stderr)
                self.assertFalse(os.path.exists(self.path("bad.data")))

    def broken(self, name, change):
        """hwc report and pmcstat -R on a copy of a perf -z recording that
        CHANGE(bytes, records) broke: an error naming the damage."""
        path = self.perf_record("ok.data", "--call-graph", "dwarf", "-z")
        with open(path, "rb") as f:
            d = bytearray(f.read())
        change(d, [r for r in records(path) if r[1] == COMPRESSED])
        bad = self.path(name)
        with open(bad, "wb") as f:
            f.write(d)
        for argv in ([HWC, "report", bad], [PMCSTAT, "-R", bad, "-G", "-"]):
            p = run(argv)
            self.assertNotIn(p.returncode, (0, -6, -11), p.stderr)
            self.assertEqual(p.stdout, "")
            self.assertIn(bad, p.stderr)
            yield p.stderr

    def test_corrupt(self):
        def garble(d, comp):
            off, _, size = comp[len(comp) // 2]
            for i in range(off + 8, off + size):
                d[i] = (d[i] * 7 + 13) & 0xFF
        errs = list(self.broken("garbled.data", garble))
        self.assertRegex(errs[0], "does not unpack: zstd says|ends inside a (zstd block|record)")

    def test_truncated(self):
        # The last compressed record loses the second half of its payload
        # (a record of another type takes its place): the stream ends inside
        # a block. Half, not a fixed count: the last record can be short.
        def cut(d, comp):
            off, _, size = comp[-1]
            lost = (size - 8) // 2 & ~7
            self.assertGreaterEqual(lost, 8, "last compressed record too short to cut")
            struct.pack_into("<IHH", d, off, COMPRESSED, 0, size - lost)
            struct.pack_into("<IHH", d, off + size - lost, FINISHED_ROUND, 0, lost)
        errs = list(self.broken("cut.data", cut))
        self.assertRegex(errs[0], "ends inside a (zstd block|record)")


if __name__ == "__main__":
    unittest.main(verbosity=2)
