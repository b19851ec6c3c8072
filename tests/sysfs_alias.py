#!/usr/bin/env python3
"""A bare event name that is an alias in PMUs' sysfs events/ directories
(tsc, inst_retired, cas_count_read) opens on every PMU that has it, as
perf's parse_events_multi_pmu_add does: on this machine's real msr PMU
against perf stat, and on fake sysfs trees (HWC_SYSFS_ROOT) whose PMUs
carry the tracepoint PMU's type, so that the alias really opens and
counts getppid(2) calls exactly on each."""
import csv
import io
import json
import os
import shutil
import tempfile
import unittest

from hwctest import SYSFS, paranoid, program, run
from uncore import CALLS, PYTHON_CALLS, fake_pmu, getppid_id, hwc, stat_json, tree

HWC = program("hwc")
TSC = os.path.join(SYSFS, "msr/events/tsc")


def perf_csv(*args):
    """perf stat -x, rows: (value, event, running ns)."""
    if not shutil.which("perf"):
        raise unittest.SkipTest("no perf here to compare with")
    p = run(["perf", "stat", "-x,", *args])
    if p.returncode != 0:
        raise unittest.SkipTest("perf stat %s failed: %s" % (" ".join(args), p.stderr.strip()))
    rows = [r for r in csv.reader(io.StringIO(p.stderr)) if len(r) > 4 and r[0].isdigit()]
    return [(int(r[0]), r[2], int(r[3])) for r in rows]


class RealMsr(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(TSC):
            self.skipTest("no msr PMU with a tsc event here (%s is absent)" % TSC)
        if paranoid() > 0 and os.geteuid() != 0:
            self.skipTest("counting system-wide needs perf_event_paranoid <= 0 or root")

    def test_tsc_as_perf(self):
        # Both count the time stamp counter: per nanosecond of running time
        # it is the TSC's frequency, the same for hwc and perf, for tsc and
        # msr/tsc/ alike.
        p = run([HWC, "stat", "-j", "-a", "-e", "tsc,msr/tsc/", "--", "sleep", "0.1"])
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = json.loads(p.stderr)["counters"]
        self.assertEqual([c["event"] for c in rows], ["tsc", "msr/tsc/"])
        rate = [c["raw"] / c["running_ns"] for c in rows]
        self.assertAlmostEqual(rate[0] / rate[1], 1, delta=0.01)
        ((value, event, running),) = perf_csv("-a", "-e", "tsc", "--", "sleep", "0.1")
        self.assertEqual(event, "tsc")
        self.assertAlmostEqual(rate[0] / (value / running), 1, delta=0.01)
        p = run([HWC, "list", "-v", "--json", "tsc"])
        self.assertEqual(p.returncode, 0, p.stderr)
        (ev,) = json.loads(p.stdout)["events"]
        with open(os.path.join(SYSFS, "msr/type")) as f:
            self.assertEqual((ev["encoding"]["pmu"], ev["encoding"]["type"]), ("msr", int(f.read())))


class FakePmus(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hwc-alias-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_alias_on_several_pmus(self):
        # "ev" is an alias of uncore_fake_0..2, uncore_fake_free_running_0
        # and acme: perf's order is by name, the instances by number.
        tp = getppid_id()
        root = tree(self.tmp, 2, tp, ["0", "1", "0"])
        fake_pmu(root, "acme", 2, "0", {"ev": "config=%#x" % tp})
        merged = stat_json(root, "-e", "ev", "--", *PYTHON_CALLS)["counters"]
        split = stat_json(root, "--no-merge", "-e", "ev", "--", *PYTHON_CALLS)["counters"]
        self.assertEqual([c["event"] for c in split],
                         ["ev [acme]", "ev [uncore_fake_0]", "ev [uncore_fake_1]",
                          "ev [uncore_fake_2]", "ev [uncore_fake_free_running_0]"])
        for c in split:
            self.assertGreaterEqual(c["raw"], CALLS)
        self.assertEqual([c["event"] for c in merged], ["ev"])
        self.assertEqual(merged[0]["raw"], 5 * split[0]["raw"])
        # one PMU: the event as written, no copies
        shutil.rmtree(os.path.join(root, "bus/event_source/devices/acme"))
        for name in ("uncore_fake_1", "uncore_fake_2", "uncore_fake_free_running_0"):
            os.remove(os.path.join(root, "bus/event_source/devices", name, "events/ev"))
        (row,) = stat_json(root, "-e", "EV:k", "--", *PYTHON_CALLS)["counters"]
        self.assertEqual(row["event"], "EV:k")
        self.assertEqual(row["raw"], split[1]["raw"])

    def test_errors(self):
        root = tree(self.tmp, 1, 0, ["0", "1"])
        for spec, want in (("ew", ["unknown event 'ew'", "did you mean 'ev'"]),
                           ("{ev,cpu-clock}", ["'ev' opens on each of the 3 instances"]),
                           ("ev:q", ["unknown modifier 'q'"])):
            p = hwc(root, "stat", "-e", spec, "true")
            self.assertEqual(p.returncode, 1, spec)
            for text in want:
                self.assertIn(text, p.stderr)


if __name__ == "__main__":
    unittest.main()
