#!/usr/bin/env python3
"""Uncore PMUs with numbered instances (uncore_imc_0, uncore_imc_1, ...), as
perf opens them: an event of the PMU named without its number (sysfs
uncore_fake/EVENT/, a JSON event of Unit FAKE) opens on every instance,
each on the CPUs of its cpumask (-a), and hwc stat sums the instances into
one row unless --no-merge (or -A); metrics use the sums; JSON events with
a Compat field (arm's CMN) open only on instances whose identifier it
matches.  Fake sysfs trees (HWC_SYSFS_ROOT) whose instances carry a real
PMU's type, so that the events really open and count: the software PMU
(cpu-clock) or the tracepoint PMU (getppid(2) calls, counted exactly)."""
import json
import os
import shutil
import tempfile
import unittest

from hwctest import SRC, online_cpus, program, run

HWC = program("hwc")
EVENTS = "/usr/local/share/hwc-test/events"
GETPPID = "/sys/kernel/tracing/events/syscalls/sys_enter_getppid/id"
CALLS = 20000
PYTHON_CALLS = ["python3", "-c", "import os\nfor _ in range(%d): os.getppid()" % CALLS]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def fake_pmu(root, name, type_, cpumask=None, events=None, formats=None, identifier=None):
    d = os.path.join(root, "bus/event_source/devices", name)
    write(os.path.join(d, "type"), str(type_))
    if cpumask is not None:
        write(os.path.join(d, "cpumask"), cpumask)
    if identifier is not None:
        write(os.path.join(d, "identifier"), identifier)
    for ev, body in (events or {}).items():
        write(os.path.join(d, "events", ev), body)
    for term, bits in (formats or {}).items():
        write(os.path.join(d, "format", term), bits)


def tree(tmp, type_, config, cpumasks):
    """The golden sysfs tree plus uncore_fake_N (one per cpumask) counting
    event CONFIG of PMU type TYPE_, and a uncore_fake_free_running_0 that
    perf does not take for an instance of uncore_fake."""
    root = os.path.join(tmp, "sysfs")
    shutil.copytree(os.path.join(SRC, "tests/golden/sysfs"), root)
    for i, mask in enumerate(cpumasks):
        fake_pmu(root, "uncore_fake_%d" % i, type_, mask, {"ev": "config=%#x" % config})
    fake_pmu(root, "uncore_fake_free_running_0", type_, "0", {"ev": "config=%#x" % config})
    return root


def hwc(root, *args, events=EVENTS):
    env = dict(os.environ, HWC_SYSFS_ROOT=root, HWC_EVENTS_DIR=events, LC_ALL="C")
    return run([HWC, *args], env=env)


def stat_json(root, *args, events=EVENTS):
    p = hwc(root, "stat", "-j", *args, events=events)
    if p.returncode != 0:
        raise AssertionError("hwc stat %s: exit %d: %s" % (args, p.returncode, p.stderr))
    return json.loads(p.stderr)


def getppid_id():
    try:
        with open(GETPPID) as f:
            return int(f.read())
    except OSError as e:
        raise unittest.SkipTest("no tracepoint syscalls:sys_enter_getppid here: %s" % e)


def json_tree(tmp, config, metric=None):
    """A JSON tree whose one model matches any x86 CPU: UNC_FAKE.EV of Unit
    FAKE (uncore_fake), and METRIC over it."""
    d = os.path.join(tmp, "events")
    write(os.path.join(d, "x86/mapfile.csv"), "Family-model,Version,Filename,EventType\n"
          "[[:alnum:]]+-[[:alnum:]]+-[[:alnum:]]+-[[:alnum:]]+,v1,fake,core")
    records = [{"EventName": "UNC_FAKE.EV", "ConfigCode": "%#x" % config, "Unit": "FAKE",
                "BriefDescription": "a fake uncore event"}]
    if metric:
        records.append(metric)
    write(os.path.join(d, "x86/fake/uncore.json"), json.dumps(records))
    return d


class Instances(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hwc-uncore-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def test_sum_is_the_instances(self):
        # The tracepoint counts the command's getppid calls exactly, so the
        # merged run and the --no-merge run are comparable number for number.
        root = tree(self.tmp, 2, getppid_id(), ["0", "1", "0"])
        merged = stat_json(root, "-e", "uncore_fake/ev/", "--", *PYTHON_CALLS)["counters"]
        self.assertEqual([c["event"] for c in merged], ["uncore_fake/ev/"])
        split = stat_json(root, "--no-merge", "-e", "fake/ev/", "--", *PYTHON_CALLS)["counters"]
        glob = stat_json(root, "-e", "uncore_fake_[01]/ev/", "--", *PYTHON_CALLS)["counters"]
        self.assertEqual([(c["event"], c["raw"]) for c in glob],
                         [("uncore_fake_[01]/ev/", 2 * split[0]["raw"])])
        self.assertEqual([c["event"] for c in split],
                         ["uncore_fake_%d/ev/" % i for i in range(3)])
        for c in split:
            self.assertGreaterEqual(c["raw"], CALLS)
        self.assertEqual(merged[0]["raw"], sum(c["raw"] for c in split))
        self.assertEqual(merged[0]["raw"], 3 * split[0]["raw"])

    def test_each_instance_on_its_cpumask(self):
        cpus = online_cpus()
        if cpus[:2] != [0, 1]:
            self.skipTest("needs CPUs 0 and 1 online")
        root = tree(self.tmp, 1, 0, ["0", "1", "0"])  # cpu-clock
        doc = stat_json(root, "-a", "-A", "-e", "uncore_fake/ev/", "--", "sleep", "0.05")
        # as perf (stat-display.c should_skip_zero_counter): no rows for the
        # CPUs outside an instance's cpumask
        seen = [(c["event"], c["cpu"]) for c in doc["counters"]]
        self.assertEqual(sorted(seen), [("uncore_fake_0/ev/", 0), ("uncore_fake_1/ev/", 1),
                                        ("uncore_fake_2/ev/", 0)])
        self.assertTrue(all(c["enabled_ns"] for c in doc["counters"]), doc["counters"])
        p = hwc(root, "stat", "-x,", "-a", "-A", "-e", "uncore_fake/ev/,cpu-clock", "--",
                "sleep", "0.05")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [l.split(",")[:4:3] for l in p.stderr.splitlines() if l[:1].isdigit()]
        self.assertEqual(sorted(rows), sorted([["0", "uncore_fake_0/ev/"], ["1", "uncore_fake_1/ev/"],
                                               ["0", "uncore_fake_2/ev/"]] +
                                              [[str(c), "cpu-clock"] for c in cpus]))
        # -C: on the CPUs asked for, as perf
        doc = stat_json(root, "-C", "1", "-e", "uncore_fake/ev/", "--no-merge", "--", "true")
        self.assertTrue(all(c["enabled_ns"] > 0 for c in doc["counters"]), doc["counters"])

    def test_json_event_and_metric_use_the_sum(self):
        root = tree(self.tmp, 2, 0, ["0", "1"])
        events = json_tree(self.tmp, getppid_id(), {
            "MetricName": "fake_kcalls", "MetricExpr": "UNC_FAKE.EV / 1000",
            "BriefDescription": "fake"})
        p = hwc(root, "list", "-v", "UNC_FAKE.EV", events=events)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("UNC_FAKE.EV [uncore_fake_0]\n", p.stdout)
        self.assertIn("UNC_FAKE.EV [uncore_fake_1]\n", p.stdout)
        self.assertNotIn("free_running", p.stdout)
        p = hwc(root, "list", "--json", events=events)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("UNC_FAKE.EV", [e["name"] for e in json.loads(p.stdout)["events"]])
        doc = stat_json(root, "-M", "fake_kcalls", "--", *PYTHON_CALLS, events=events)
        (row,) = doc["counters"]
        self.assertEqual(row["event"], "UNC_FAKE.EV")
        self.assertGreaterEqual(row["raw"], 2 * CALLS)
        (m,) = [x for x in doc["metrics"] if x["metric"] == "fake_kcalls"]
        self.assertAlmostEqual(m["value"], row["raw"] / 1000)
        split = stat_json(root, "--no-merge", "-e", "UNC_FAKE.EV", "true", events=events)
        self.assertEqual([c["event"] for c in split["counters"]],
                         ["UNC_FAKE.EV [uncore_fake_0]", "UNC_FAKE.EV [uncore_fake_1]"])

    def test_each_occurrence_is_its_own_sum(self):
        # -e X,X and two metrics over X: each occurrence sums its own
        # instances (perf's first_wildcard_match), never the other's.
        root = tree(self.tmp, 2, getppid_id(), ["0", "1"])
        events = json_tree(self.tmp, getppid_id())
        write(os.path.join(events, "x86/fake/metrics.json"), json.dumps([
            {"MetricName": "fake_kcalls", "MetricExpr": "UNC_FAKE.EV / 1000", "MetricGroup": "fk",
             "BriefDescription": "fake"},
            {"MetricName": "fake_calls", "MetricExpr": "UNC_FAKE.EV", "MetricGroup": "fk",
             "BriefDescription": "fake"}]))
        one = stat_json(root, "-e", "UNC_FAKE.EV", "--", *PYTHON_CALLS, events=events)["counters"]
        self.assertGreaterEqual(one[0]["raw"], 2 * CALLS)
        twice = stat_json(root, "-e", "uncore_fake/ev/,uncore_fake/ev/", "--", *PYTHON_CALLS)
        self.assertEqual([(c["event"], c["raw"]) for c in twice["counters"]],
                         [("uncore_fake/ev/", one[0]["raw"])] * 2)
        doc = stat_json(root, "-M", "fk", "--", *PYTHON_CALLS, events=events)
        values = {m["metric"]: m["value"] for m in doc["metrics"]}
        self.assertEqual(values["fake_calls"], one[0]["raw"], doc)
        self.assertAlmostEqual(values["fake_kcalls"], one[0]["raw"] / 1000, msg=doc)

    def test_system_event_by_compat(self):
        # perf's sys/ tables: a bare name of any model's sys/ directory of
        # this architecture, on the PMUs whose identifier its Compat matches
        root = tree(self.tmp, 1, 0, ["0", "1", "1"])
        for i, ident in enumerate(("acme-1.0", "acme-1.1", "other")):
            write(os.path.join(root, "bus/event_source/devices/uncore_fake_%d/identifier" % i), ident)
        events = json_tree(self.tmp, 0)
        write(os.path.join(events, "x86/acme/sys/soc.json"), json.dumps([
            {"EventName": "acme_ev", "ConfigCode": "0x0", "Unit": "FAKE", "Compat": "acme-1\\..*"},
            {"MetricName": "acme_kev", "MetricExpr": "acme_ev / 1000", "Unit": "FAKE",
             "Compat": "acme-1\\..*", "BriefDescription": "acme"}]))
        doc = stat_json(root, "--no-merge", "-a", "-e", "acme_ev", "--", "true", events=events)
        self.assertEqual([c["event"] for c in doc["counters"]],
                         ["acme_ev [uncore_fake_0]", "acme_ev [uncore_fake_1]"])
        p = hwc(root, "list", "--json", "acme*", events=events)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([e["spec"] for e in json.loads(p.stdout)["events"]], ["acme::acme_ev"])
        doc = stat_json(root, "-a", "-M", "acme_kev", "--", "true", events=events)
        (row,) = doc["counters"]
        (m,) = [x for x in doc["metrics"] if x["metric"] == "acme_kev"]
        self.assertEqual(row["event"], "acme_ev")
        self.assertAlmostEqual(m["value"], row["raw"] / 1000)
        p = hwc(root, "list", "--metrics", events=events)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("acme_kev", p.stdout)
        for i in range(2):
            write(os.path.join(root, "bus/event_source/devices/uncore_fake_%d/identifier" % i), "x")
        p = hwc(root, "stat", "-e", "acme_ev", "true", events=events)
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown event 'acme_ev'", p.stderr)

    def test_errors(self):
        root = tree(self.tmp, 1, 0, ["0", "1"])
        p = hwc(root, "stat", "-e", "{uncore_fake/ev/,cpu-clock}", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("opens on each of the 2 instances of its PMU (uncore_fake_0, ...)", p.stderr)
        p = hwc(root, "stat", "-e", "uncore_fake_free/ev/", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown PMU 'uncore_fake_free'", p.stderr)
        # A real uncore PMU refuses a task (EINVAL): the breakpoint PMU's type
        # with no breakpoint type is refused the same way.
        root = tree(os.path.join(self.tmp, "bp"), 5, 0, ["0", "1"])
        p = hwc(root, "stat", "-e", "uncore_fake/ev/", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("PMU 'uncore_fake_0' counts per CPU (its cpumask is 0), not per task: "
                      "count system-wide, with -a or -C", p.stderr)


class RealTables(unittest.TestCase):
    """perf's own JSON uncore events on fake instances."""

    def setUp(self):
        if not os.path.isdir(EVENTS):
            self.skipTest("no JSON tree at %s (scripts/deps extracts it)" % EVENTS)
        self.root = tempfile.mkdtemp(prefix="hwc-uncore-")
        self.addCleanup(shutil.rmtree, self.root)

    def encodings(self, spec):
        p = hwc(self.root, "list", "-v", "--json", spec)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [(e["encoding"]["pmu"], e["encoding"]["type"], int(str(e["encoding"]["config"]), 0))
                for e in json.loads(p.stdout)["events"]]

    def record(self, path, name):
        with open(os.path.join(EVENTS, path)) as f:
            (r,) = [r for r in json.load(f) if r.get("EventName") == name]
        return int(r["EventCode"], 0) | int(r.get("UMask", "0"), 0) << 8

    def test_intel_imc(self):
        for i in range(3):
            fake_pmu(self.root, "uncore_imc_%d" % i, 20 + i, "0",
                     {"cas_count_read": "event=0x04,umask=0x03"},
                     {"event": "config:0-7", "umask": "config:8-15"})
        fake_pmu(self.root, "uncore_imc_free_running_0", 30, "0")
        for model, path in (("skylakex", "x86/skylakex/uncore-memory.json"),
                            ("icelakex", "x86/icelakex/uncore-memory.json")):
            want = self.record(path, "UNC_M_CAS_COUNT.RD")
            self.assertEqual(self.encodings("%s::UNC_M_CAS_COUNT.RD" % model),
                             [("uncore_imc_%d" % i, 20 + i, want) for i in range(3)])
        self.assertEqual(self.encodings("uncore_imc/cas_count_read/"),
                         [("uncore_imc_%d" % i, 20 + i, 0x304) for i in range(3)])

    def test_arm_cmn_compat(self):
        cmn = {"type": "config:0-15", "eventid": "config:16-31", "occupid": "config:32-35",
               "bynodeid": "config:36", "nodeid": "config:47-61"}
        fake_pmu(self.root, "arm_cmn_0", 40, "0", formats=cmn, identifier="500")
        p = hwc(self.root, "list", "-v", "cmn::hnf_cache_miss")
        self.assertEqual(p.returncode, 1)
        self.assertIn("whose identifier matches '(434|436|43c|43a).*' (Compat), and no PMU "
                      "arm_cmn of this machine has such an identifier; arm_cmn_0's is 500", p.stderr)
        fake_pmu(self.root, "arm_cmn_1", 41, "1", formats=cmn, identifier="43c")
        fake_pmu(self.root, "arm_cmn_2", 42, "1", formats=cmn, identifier="434")
        # hnf_cache_miss: EventidCode 0x1, NodeType 0x5 (arm/cmn/sys/cmn.json)
        self.assertEqual(self.encodings("cmn::hnf_cache_miss"),
                         [("arm_cmn_1", 41, 0x10005), ("arm_cmn_2", 42, 0x10005)])


if __name__ == "__main__":
    unittest.main()
