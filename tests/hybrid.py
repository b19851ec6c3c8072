#!/usr/bin/env python3
"""Machines with several core PMUs (Intel hybrids: cpu_core + cpu_atom;
big.LITTLE arm64: armv8_cortex_*), on the fake sysfs trees of
tests/golden (HWC_SYSFS_ROOT): what hwc info lists, how hwc stat names and
reports the per-PMU copies of a generic event, and the errors.  The
encodings themselves are golden rows (tests/golden/encodings.tsv, checked
against perf by golden_perf.py).  This machine has no such PMU, so nothing
here counts hardware events; the real-machine check skips, saying why,
unless the kernel exposes several core PMUs."""
import json
import os
import shutil
import tempfile
import unittest

from hwctest import SRC, online_cpus, program, run

HWC = program("hwc")
TREES = {
    "hybrid": (os.path.join(SRC, "tests/golden/sysfs-hybrid"),
               [("cpu_atom", 10, "16-23"), ("cpu_core", 4, "0-15")]),
    "biglittle": (os.path.join(SRC, "tests/golden/sysfs-biglittle"),
                  [("armv8_cortex_a53", 8, "0-3"), ("armv8_cortex_a72", 9, "4-5")]),
}


def hwc(tree, *args):
    env = dict(os.environ, HWC_SYSFS_ROOT=TREES[tree][0], LC_ALL="C")
    return run([HWC, *args], env=env)


def real_core_pmus():
    base = "/sys/bus/event_source/devices"
    return sorted(p for p in os.listdir(base)
                  if os.path.exists(f"{base}/{p}/cpus") or p in ("cpu", "cpu_core", "cpu_atom"))


class Info(unittest.TestCase):
    def test_core_pmus_listed(self):
        for tree, (_, pmus) in TREES.items():
            with self.subTest(tree=tree):
                p = hwc(tree, "info")
                self.assertEqual(p.returncode, 0, p.stderr)
                line = "; ".join("%s (type %d) on CPUs %s" % pmu for pmu in pmus)
                self.assertIn("Core PMUs     %s\n" % line, p.stdout)
                for name, type_, cpus in pmus:
                    self.assertRegex(p.stdout, r"\n  %s\s+type %d\s.*  cpus %s\n" % (name, type_, cpus))
                doc = json.loads(hwc(tree, "info", "--json").stdout)
                got = [(x["name"], x["type"], x["cpus"]) for x in doc["pmus"] if x["core"]]
                self.assertEqual(got, pmus)

    def test_one_core_pmu_is_not_hybrid(self):
        p = run([HWC, "info"], env=dict(os.environ, HWC_SYSFS_ROOT=os.path.join(SRC, "tests/golden/sysfs-arm64")))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("Core PMUs", p.stdout)


class Stat(unittest.TestCase):
    def test_default_events_per_core_pmu(self):
        # The default set leaves out what the machine lacks: each core PMU's
        # copy is named PMU/EVENT/, in perf's order.
        for tree, (_, pmus) in TREES.items():
            with self.subTest(tree=tree):
                p = hwc(tree, "stat", "-j", "true")
                self.assertEqual(p.returncode, 0, p.stderr)
                doc = json.loads(p.stderr)
                names = [s["event"] for s in doc["skipped"]]
                want = ["%s/%s/" % (pmu[0], ev) for ev in ("cycles", "instructions", "branches",
                                                           "branch-misses") for pmu in pmus]
                self.assertEqual(names, want)
                self.assertIn("type in bits 63-32", doc["skipped"][0]["reason"])

    def test_errors(self):
        p = hwc("hybrid", "stat", "-e", "cycles", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("'cpu_atom/cycles/' is not supported on this machine: its PMU (cpu_atom)", p.stderr)
        self.assertIn("config 0xa00000000", p.stderr)
        p = hwc("hybrid", "stat", "-e", "{cycles,instructions}", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("2 core PMUs (cpu_atom, cpu_core)", p.stderr)
        self.assertIn("name the PMU of each event of the group, as cpu_core/cycles/", p.stderr)
        p = hwc("biglittle", "stat", "-e", "{cycles}", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("as armv8_cortex_a72/cycles/", p.stderr)
        p = hwc("hybrid", "stat", "-e", "cpu_core/cycles/", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("'cpu_core/cycles/' is not supported", p.stderr)
        self.assertNotIn("cpu_atom", p.stderr)  # one PMU named: one event

    def test_software_events_unchanged(self):
        p = hwc("hybrid", "stat", "-j", "--hybrid-merge", "-e", "task-clock,page-faults", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stderr)
        self.assertEqual([c["event"] for c in doc["counters"]], ["task-clock", "page-faults"])

    def test_pmu_cpus_limit_where_events_open(self):
        # The mechanism that keeps cpu_core's copy off cpu_atom's CPUs, shown
        # with an event this machine has: a tree whose software PMU lists
        # only CPU 0 in a cpus file.  Counting and sampling on every CPU
        # then open it on CPU 0 alone.
        cpus = online_cpus()
        if len(cpus) < 2 or cpus[0] != 0:
            self.skipTest("needs CPU 0 and another CPU online")
        with tempfile.TemporaryDirectory(prefix="hwc-pmucpus-") as root:
            shutil.copytree(TREES["hybrid"][0], root, dirs_exist_ok=True)
            with open(os.path.join(root, "bus/event_source/devices/software/cpus"), "w") as f:
                f.write("0\n")
            env = dict(os.environ, HWC_SYSFS_ROOT=root)
            p = run([HWC, "stat", "-a", "-A", "-j", "-e", "cpu-clock", "--", "sleep", "0.05"], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            rows = {c["cpu"]: c for c in json.loads(p.stderr)["counters"]}
            self.assertGreater(rows[0]["raw"], 0)
            for cpu in cpus[1:]:
                self.assertEqual((rows[cpu]["raw"], rows[cpu]["enabled_ns"]), (0, 0))
            data = os.path.join(root, "r.data")
            p = run([HWC, "record", "-a", "-F", "1000", "-e", "cpu-clock", "-o", data, "--",
                     "sleep", "0.2"], env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            p = run([HWC, "script", "-i", data, "-F", "cpu"])
            self.assertEqual(p.returncode, 0, p.stderr)
            seen = {int(l.strip().strip("[]")) for l in p.stdout.splitlines() if l.strip()}
            self.assertEqual(seen, {0})

    def test_real_hybrid_machine(self):
        pmus = real_core_pmus()
        if len(pmus) < 2:
            self.skipTest("this machine has %s core PMU%s (%s): not a hybrid or big.LITTLE machine"
                          % (len(pmus) or "no", "" if len(pmus) == 1 else "s", ", ".join(pmus) or "-"))
        p = run([HWC, "stat", "-a", "-j", "-e", "cycles", "--", "sleep", "0.1"])
        self.assertEqual(p.returncode, 0, p.stderr)
        split = json.loads(p.stderr)
        self.assertEqual([c["event"] for c in split["counters"]], ["%s/cycles/" % x for x in pmus])
        p = run([HWC, "stat", "-a", "-j", "--hybrid-merge", "-e", "cycles", "--", "sleep", "0.1"])
        self.assertEqual(p.returncode, 0, p.stderr)
        merged = json.loads(p.stderr)
        self.assertEqual([c["event"] for c in merged["counters"]], ["cycles"])
        self.assertGreater(merged["counters"][0]["raw"], 0)


if __name__ == "__main__":
    unittest.main()
