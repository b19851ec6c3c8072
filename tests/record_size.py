"""hwc record's files are no larger than perf record's for the same options
on the same workload: each sample carries what the options need, as perf
decides (its event's id only with several events, its CPU only system-wide
or with --sample-cpu).  Measured in bytes per sample (the sample records'
sizes that perf report -D lists, over their number), never in time; perf
reads hwc's files without warnings, and hwc report reads every sample."""
import json
import os
import re
import shutil
import tempfile
import unittest

import hwctest

HWC = hwctest.program("hwc")
HOTSPOTS = hwctest.workload("hotspots")
# hwc's samples may be larger than perf's by at most this share: call
# chains are as deep as the code sampled, so their average differs a
# little from run to run.
MARGIN = 0.03


def sample_sizes(path):
    """(samples, bytes of sample records) as perf report -D lists them."""
    out = hwctest.run_ok(["perf", "report", "-D", "-i", path]).stdout
    sizes = [int(m.group(1), 16) for m in re.finditer(r"\[(0x[0-9a-f]+)\]: PERF_RECORD_SAMPLE", out)]
    return len(sizes), sum(sizes)


def sample_type(path):
    """Each event's sample_type bits as perf evlist -v names them."""
    out = hwctest.run_ok(["perf", "evlist", "-v", "-i", path]).stdout
    return [set(m.group(1).split("|")) for m in re.finditer(r"sample_type: ([A-Z_|]+)", out)]


class Sizes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("perf"):
            raise unittest.SkipTest("perf (the oracle) is not installed")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-recsize-")
        p = hwctest.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", os.path.join(cls.tmp, "probe"),
                         "true"], timeout=600)
        if p.returncode != 0:
            raise unittest.SkipTest("perf record cannot record cpu-clock here: " + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compare(self, name, opts, events="cpu-clock"):
        ours = os.path.join(self.tmp, name + ".hwc")
        theirs = os.path.join(self.tmp, name + ".perf")
        work = [HOTSPOTS, "3"]
        hwctest.run_ok([HWC, "record", "-e", events, *opts, "-o", ours, "--", *work])
        hwctest.run_ok(["perf", "record", "-q", "-e", events, *opts, "-o", theirs, "--", *work])
        n_ours, b_ours = sample_sizes(ours)
        n_theirs, b_theirs = sample_sizes(theirs)
        self.assertGreater(n_ours, 50, name)
        self.assertGreater(n_theirs, 50, name)
        per_ours, per_theirs = b_ours / n_ours, b_theirs / n_theirs
        print("%-24s hwc %7.1f B/sample (%d samples, file %d B)   perf %7.1f B/sample "
              "(%d samples, file %d B)" % (name, per_ours, n_ours, os.path.getsize(ours),
                                           per_theirs, n_theirs, os.path.getsize(theirs)))
        self.assertLessEqual(per_ours, per_theirs * (1 + MARGIN), name)
        # No field perf leaves out: an id (IDENTIFIER or ID) only when perf
        # has one (perf -a adds a side-band event, so ids), the CPU exactly
        # when perf has it.
        a, b = sample_type(ours)[0], sample_type(theirs)[0]
        if a & {"IDENTIFIER", "ID"}:
            self.assertTrue(b & {"IDENTIFIER", "ID"}, (a, b))
        self.assertEqual("CPU" in a, "CPU" in b, (a, b))
        # perf reads hwc's file without a word; hwc report sees every sample.
        p = hwctest.run_ok(["perf", "report", "--stdio", "-i", ours])
        self.assertNotRegex(p.stderr, r"(?i)warning|error|failed", p.stderr)
        doc = json.loads(hwctest.run_ok([HWC, "report", "--json", "--event", events.split(",")[0], ours]).stdout)
        per_event = {}
        for line in hwctest.run_ok(["perf", "script", "-i", ours, "-F", "event"]).stdout.splitlines():
            per_event[line.strip().rstrip(":")] = per_event.get(line.strip().rstrip(":"), 0) + 1
        self.assertEqual(doc["samples"] + doc["not_selected"], per_event[events.split(",")[0]])
        return ours

    def test_plain(self):
        self.compare("plain", ["-F", "4000"])

    def test_frame_pointers(self):
        self.compare("fp", ["-F", "4000", "-g"])

    def test_dwarf(self):
        self.compare("dwarf", ["-F", "1000", "--call-graph", "dwarf"])

    def test_system_wide(self):
        path = self.compare("system-wide", ["-F", "1000", "-a"])
        # Its samples name their CPU: hwc report can sort and select by it.
        doc = json.loads(hwctest.run_ok([HWC, "report", "--json", "--sort", "cpu", path]).stdout)
        self.assertTrue(doc["entries"])

    def test_sample_cpu(self):
        path = self.compare("sample-cpu", ["-F", "4000", "--sample-cpu"])
        doc = json.loads(hwctest.run_ok([HWC, "report", "--json", "--sort", "cpu", path]).stdout)
        self.assertTrue(doc["entries"])

    def test_two_events(self):
        # Several events: each sample names its event, as perf's do.
        self.compare("two-events", ["-F", "1000"], events="cpu-clock,task-clock")


if __name__ == "__main__":
    unittest.main(verbosity=2)
