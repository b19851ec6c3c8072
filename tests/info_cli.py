"""hwc info: text and --json, compared with what the kernel's own files say;
no counters claimed without a hardware PMU; paranoid level and what it
allows, as root and as nobody; TSC source and rate."""
import json
import os
import re
import tempfile
import unittest

from hwctest import HAVE_CORE_PMU, SYSFS, online_cpus, paranoid, program, run

HWC = program("hwc")


def hwc(*args, nobody=False):
    return run([HWC, *args], nobody=nobody)


def info_json(nobody=False):
    r = hwc("info", "--json", nobody=nobody)
    if r.returncode != 0:
        raise AssertionError(f"hwc info --json: exit {r.returncode}: {r.stderr}")
    doc = json.loads(r.stdout)
    assert doc["schema"] == "hwc-info/1", doc["schema"]
    return doc


def read_int(path):
    with open(path) as f:
        return int(f.read())


def cpuinfo():
    out = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if not line.strip():
                break
            key, _, value = line.partition(":")
            out[key.strip()] = value.strip()
    return out


class Info(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = info_json()
        cls.text = hwc("info")

    def test_text_runs(self):
        self.assertEqual(self.text.returncode, 0, self.text.stderr)
        for label in ("CPU", "CPUs", "libpfm4", "Hardware PMU", "NMI watchdog", "Permissions",
                      "TSC", "User time", "rdpmc"):
            self.assertRegex(self.text.stdout, rf"(?m)^{label} +\S")

    def test_cpu(self):
        ci = cpuinfo()
        if "vendor_id" not in ci:
            self.skipTest("not x86: /proc/cpuinfo has no vendor_id")
        cpu = self.doc["cpu"]
        self.assertEqual(cpu["vendor"], ci["vendor_id"])
        self.assertEqual(cpu["family"], int(ci["cpu family"]))
        self.assertEqual(cpu["model"], int(ci["model"]))
        self.assertEqual(cpu["stepping"], int(ci["stepping"]))
        self.assertEqual(cpu["brand"], ci["model name"])
        self.assertEqual(cpu["cpus_online"], len(online_cpus()))
        self.assertIn(ci["vendor_id"], self.text.stdout)

    @unittest.skipIf(HAVE_CORE_PMU, "this machine has a core PMU")
    def test_no_hardware_pmu_said_plainly(self):
        pmu = self.doc["core_pmu"]
        self.assertFalse(pmu["present"])
        self.assertIsNone(pmu["name"])
        for key in ("counters", "counter_width", "fixed", "fixed_width", "usable_counters"):
            self.assertEqual(pmu[key], 0, key)
        self.assertFalse(self.doc["nmi_watchdog"]["holds_counter"])
        self.assertFalse(self.doc["time"]["rdpmc"])
        self.assertIn("no hardware PMU", self.doc["time"]["rdpmc_reason"])
        out = self.text.stdout
        self.assertIn("the kernel exposes no hardware PMU", out)
        self.assertIn("0 usable counters", out)
        self.assertNotRegex(out, r"[1-9]\d* general counters usable")

    @unittest.skipUnless(HAVE_CORE_PMU, "no core PMU here")
    def test_hardware_pmu_counters(self):
        pmu = self.doc["core_pmu"]
        self.assertTrue(pmu["present"])
        self.assertGreater(pmu["counters"], 0)
        self.assertTrue(pmu["source"])

    def test_pmus_match_sysfs(self):
        pmus = {p["name"]: p for p in self.doc["pmus"]}
        self.assertEqual(sorted(pmus), sorted(os.listdir(SYSFS)))
        for name, p in pmus.items():
            self.assertEqual(p["type"], read_int(f"{SYSFS}/{name}/type"), name)
            fmt = f"{SYSFS}/{name}/format"
            if os.path.isdir(fmt):
                self.assertEqual(sorted(p["formats"]), sorted(os.listdir(fmt)), name)
                for term, value in p["formats"].items():
                    with open(f"{fmt}/{term}") as f:
                        self.assertEqual(value, f.read().strip())
            self.assertIn(f"  {name} ", self.text.stdout)

    def test_nmi_watchdog(self):
        path = "/proc/sys/kernel/nmi_watchdog"
        if not os.path.exists(path):
            self.assertIsNone(self.doc["nmi_watchdog"]["enabled"])
            return
        on = read_int(path) != 0
        self.assertEqual(self.doc["nmi_watchdog"]["enabled"], on)
        self.assertEqual(self.doc["nmi_watchdog"]["holds_counter"], on and HAVE_CORE_PMU)
        self.assertIn(f"kernel.nmi_watchdog = {read_int(path)}", self.text.stdout)

    def test_paranoid(self):
        level = paranoid()
        self.assertEqual(self.doc["permissions"]["paranoid"], level)
        self.assertIn(f"perf_event_paranoid = {level}", self.text.stdout)
        if os.geteuid() == 0:
            perm = self.doc["permissions"]
            self.assertTrue(perm["privileged"])
            self.assertTrue(perm["user"] and perm["kernel"] and perm["cpu_wide"])

    def test_tsc(self):
        t = self.doc["time"]
        self.assertIn(t["tsc_source"], ("perf_mmap", "cpuid_15", "cpuid_16", "hypervisor",
                                        "calibrated"))
        self.assertGreater(t["tsc_hz"], 1e6)
        m = re.search(r"(?m)^TSC +([\d.]+) MHz \((\d+) Hz\), (.*)$", self.text.stdout)
        self.assertTrue(m, self.text.stdout)
        self.assertEqual(m.group(3), t["tsc_source_desc"])
        self.assertLess(abs(int(m.group(2)) / t["tsc_hz"] - 1), 50e-6)
        # Another process obtains the same rate (exactly, from the kernel or
        # CPUID; to a few ppm when calibrated).
        again = info_json()["time"]
        self.assertEqual(again["tsc_source"], t["tsc_source"])
        self.assertLess(abs(again["tsc_hz"] / t["tsc_hz"] - 1), 50e-6)
        if t["user_time"]:
            self.assertIsNone(t["user_time_reason"])
        else:
            self.assertTrue(t["user_time_reason"])
            self.assertIn(t["user_time_reason"], self.text.stdout)
        rdpmc_file = f"{SYSFS}/cpu/rdpmc"
        expect = read_int(rdpmc_file) if os.path.exists(rdpmc_file) else None
        self.assertEqual(t["rdpmc_sysfs"], expect)


class Unprivileged(unittest.TestCase):
    def test_nobody(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to become nobody")
        level = paranoid()
        perm = info_json(nobody=True)["permissions"]
        self.assertEqual(perm["uid"], 65534)
        self.assertFalse(perm["privileged"])
        self.assertEqual(perm["paranoid"], level)
        # perf_event_open(2): 2 user space only, 1 kernel too, 0 whole CPUs.
        self.assertEqual(perm["user"], level <= 2)
        self.assertEqual(perm["kernel"], level <= 1)
        self.assertEqual(perm["cpu_wide"], level <= 0)
        text = hwc("info", nobody=True)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn(perm["summary"], text.stdout)
        if level == 2:
            self.assertIn("user space only", text.stdout)
            self.assertIn("own processes, user space: yes; kernel: no; whole CPUs: no", text.stdout)


class JsonTables(unittest.TestCase):
    """Which model of perf's JSON tables this CPU maps to: a tree of our
    own whose mapfile.csv maps every x86 CPU id to one model, and none."""

    def info(self, tree, *args):
        r = run([HWC, "info", *args], env=dict(os.environ, HWC_EVENTS_DIR=tree))
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    @unittest.skipUnless("vendor_id" in cpuinfo(), "the tree maps x86 CPU ids")
    def test_model(self):
        with tempfile.TemporaryDirectory() as tree:
            os.makedirs(os.path.join(tree, "x86", "testcpu"))
            with open(os.path.join(tree, "x86", "mapfile.csv"), "w") as f:
                f.write("GenuineIntel-6-2A,v1,othercpu,core\n"
                        "[[:alnum:]]+-[[:xdigit:]]+-[[:xdigit:]]+-[[:xdigit:]]+,v1,testcpu,core\n")
            doc = json.loads(self.info(tree, "--json"))["json_tables"]
            self.assertEqual(doc["model"], "testcpu")
            self.assertEqual(doc["models"], 2)
            self.assertTrue(doc["mapping"].startswith("x86 [[:alnum:]]+-"), doc)
            self.assertRegex(self.info(tree), r"(?m)^JSON tables +testcpu \(mapfile.csv: x86 ")

    def test_none(self):
        with tempfile.TemporaryDirectory() as tree:
            missing = os.path.join(tree, "none")
            doc = json.loads(self.info(missing, "--json"))["json_tables"]
            self.assertEqual(doc, {"models": 0, "model": None, "mapping": None})
            self.assertRegex(self.info(missing), r"(?m)^JSON tables +none found")


class Usage(unittest.TestCase):
    def test_help(self):
        r = hwc("info", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: hwc info", r.stdout)

    def test_bad_arguments(self):
        for args in (["--frobnicate"], ["extra"]):
            with self.subTest(args=args):
                r = hwc("info", *args)
                self.assertEqual(r.returncode, 2)
                self.assertTrue(r.stderr.startswith("hwc info: "), r.stderr)
                self.assertEqual(r.stdout, "")


if __name__ == "__main__":
    unittest.main(verbosity=2)
