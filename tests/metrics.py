"""hwc stat -M / --topdown / --metric-only and hwc list --metrics, end to
end on this machine: a JSON tree of our own (HWC_EVENTS_DIR) maps this CPU
to metrics over software events, so the metrics are computed from real
counts and checked against the counts and times the same report prints."""
import json
import os
import platform
import shutil
import tempfile
import unittest

from hwctest import program, run, workload

HWC = program("hwc")

METRICS = [
    {"MetricName": "pf_rate", "MetricExpr": "page\\-faults / duration_time",
     "MetricGroup": "TestGroup", "ScaleUnit": "1faults/s",
     "BriefDescription": "page faults per second"},
    {"MetricName": "cpus_used", "MetricExpr": "task\\-clock / (duration_time * 1e9)",
     "MetricGroup": "TestGroup;TopdownL1", "MetricThreshold": "cpus_used > 0.0001",
     "BriefDescription": "CPUs used"},
    {"MetricName": "never_over", "MetricExpr": "task\\-clock",
     "MetricGroup": "TopdownL1", "MetricThreshold": "never_over < 0"},
    {"MetricName": "double_pf_rate", "MetricExpr": "2 * pf_rate", "ScaleUnit": "100%"},
    {"MetricName": "cs_per_fault", "MetricExpr": "d_ratio(context\\-switches, page\\-faults)",
     "MetricConstraint": "NO_GROUP_EVENTS"},
    {"MetricName": "smt_pick",
     "MetricExpr": "page\\-faults if #smt_on else page\\-faults + 0 * context\\-switches"},
    {"MetricName": "tsc_ghz", "MetricExpr": "#SYSTEM_TSC_FREQ / 1e9 * page\\-faults / page\\-faults"},
    {"MetricName": "needs_missing", "MetricExpr": "no_such_event_xyz / page\\-faults"},
    {"MetricName": "loop_a", "MetricExpr": "loop_b + 1"},
    {"MetricName": "loop_b", "MetricExpr": "loop_a * 2"},
    {"MetricName": "bad_syntax", "MetricExpr": "page\\-faults / (task\\-clock"},
    {"MetricName": "faults_per_switch", "MetricExpr": "page\\-faults / context\\-switches"},
    # chain_0 refers to chain_1, ..., chain_100 to page-faults: chain_deep
    # enters it where each step resolves fewer than 32 deep, but evaluating
    # chain_0 recurses through all 101; chain_ok's go 26 deep
    {"MetricName": "chain_deep", "MetricExpr": "chain_90 + chain_60 + chain_30 + chain_0"},
    {"MetricName": "chain_ok", "MetricExpr": "chain_80 + chain_75"},
] + [{"MetricName": "chain_%d" % i, "MetricExpr": "chain_%d + 1" % (i + 1)} for i in range(100)] + [
    {"MetricName": "chain_100", "MetricExpr": "page\\-faults"}]


class Tree(unittest.TestCase):
    """A tree of our own that maps this CPU to the model testcpu, whose
    metrics are MODEL; ARCH, when given, is the x86 directory's own."""
    MODEL, ARCH = [], None

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="hwc-metrics.")
        model = os.path.join(cls.dir, "x86", "testcpu")
        os.makedirs(model)
        with open(os.path.join(cls.dir, "x86", "mapfile.csv"), "w") as f:
            f.write("[[:alnum:]]+-[[:xdigit:]]+-[[:xdigit:]]+-[[:xdigit:]]+,v1,testcpu,core\n")
        with open(os.path.join(model, "metrics.json"), "w") as f:
            json.dump(cls.MODEL, f)
        if cls.ARCH:
            with open(os.path.join(cls.dir, "x86", "arch.json"), "w") as f:
                json.dump(cls.ARCH, f)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def hwc(self, *args):
        return run([HWC, *args], env=dict(os.environ, HWC_EVENTS_DIR=self.dir))


@unittest.skipUnless(platform.machine() == "x86_64",
                     "the test tree maps x86 CPU ids (arm64 maps MIDRs)")
class Metrics(Tree):
    MODEL = METRICS

    def stat_json(self, *args):
        r = self.hwc("stat", "--json", *args, "--", workload("pagetouch"))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stderr)
        counts = {c["event"]: c["value"] for c in doc["counters"]}
        metrics = {m["metric"]: m for m in doc["metrics"]}
        return doc, counts, metrics

    def test_values_from_the_counts(self):
        doc, counts, m = self.stat_json("-M", "TestGroup,double_pf_rate,cs_per_fault")
        secs = doc["elapsed_s"]
        self.assertGreater(counts["page-faults"], 0)
        self.assertAlmostEqual(m["pf_rate"]["value"], counts["page-faults"] / secs,
                               delta=1e-6 * m["pf_rate"]["value"])
        self.assertEqual(m["pf_rate"]["unit"], "faults/s")
        # task-clock prints in msec; the metric takes its count in ns
        self.assertAlmostEqual(m["cpus_used"]["value"], counts["task-clock"] * 1e6 / (secs * 1e9),
                               delta=1e-6)
        self.assertIs(m["cpus_used"]["over_threshold"], True)
        self.assertIsNone(m["pf_rate"]["over_threshold"])
        # a metric referring to another, and ScaleUnit's factor
        self.assertAlmostEqual(m["double_pf_rate"]["value"], 200 * m["pf_rate"]["value"],
                               delta=1e-6 * m["double_pf_rate"]["value"])
        self.assertEqual(m["double_pf_rate"]["unit"], "%")
        self.assertAlmostEqual(m["cs_per_fault"]["value"],
                               counts["context-switches"] / counts["page-faults"])

    def test_modifiers(self):
        """-M NAME:MOD puts MOD on each of the metric's events, as perf's
        decode_all_metric_ids does."""
        doc, counts, m = self.stat_json("-M", "double_pf_rate:u,cs_per_fault:k")
        self.assertIn("page-faults:u", counts)
        self.assertIn("context-switches:k", counts)
        self.assertNotIn("page-faults", counts)
        # and the metric is named with them, as perf's metricgroup.c names it
        self.assertEqual(sorted(m), ["cs_per_fault:k", "double_pf_rate:u"])
        self.assertAlmostEqual(m["double_pf_rate:u"]["value"],
                               200 * counts["page-faults:u"] / doc["elapsed_s"],
                               delta=1e-6 * m["double_pf_rate:u"]["value"])
        r = self.hwc("stat", "-x", ",", "-M", "pf_rate:u", "--", workload("pagetouch"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([l.split(",")[2] for l in r.stderr.splitlines() if ",metric," in l],
                         ["pf_rate:u"], r.stderr)
        r = self.hwc("stat", "-M", "pf_rate:u", "--", workload("pagetouch"))
        self.assertRegex(r.stderr, r"\d      pf_rate:u +# faults/s\n")
        r = self.hwc("stat", "-M", "pf_rate:zz", "true")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("metric pf_rate: its events do not take the modifiers 'zz'", r.stderr)

    def test_groups(self):
        """A metric's events are one weak group, as perf's -M writes them
        ({...}:W), unless its MetricConstraint or --metric-no-group says
        not."""
        doc, counts, m = self.stat_json("-M", "faults_per_switch")
        groups = {c["event"]: c["group"] for c in doc["counters"]}
        self.assertEqual(groups["page-faults"], groups["context-switches"], doc["counters"])
        self.assertEqual(doc["notes"], [])  # the group opened as one
        for args in (["-M", "cs_per_fault"], ["--metric-no-group", "-M", "faults_per_switch"]):
            doc, counts, m = self.stat_json(*args)
            groups = {c["event"]: c["group"] for c in doc["counters"]}
            self.assertNotEqual(groups["page-faults"], groups["context-switches"], args)

    def test_system_tsc_freq(self):
        """#system_tsc_freq as perf's arch_get_tsc_freq: Intel's CPUID 0x15
        or the brand string's GHz; elsewhere it has no value, and the
        metric is refused, naming it (perf's 0 would give a wrong number)."""
        with open("/proc/cpuinfo") as f:
            intel = "GenuineIntel" in f.read()
        if intel:
            doc, counts, m = self.stat_json("-M", "tsc_ghz")
            self.assertGreater(m["tsc_ghz"]["value"], 0.1)
            self.assertLess(m["tsc_ghz"]["value"], 10)
        else:
            r = self.hwc("stat", "-M", "tsc_ghz", "true")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("metric tsc_ghz needs #SYSTEM_TSC_FREQ, which this machine lacks",
                          r.stderr)

    def test_smt_literal_picks_the_events(self):
        doc, counts, m = self.stat_json("-M", "smt_pick")
        with open("/sys/devices/system/cpu/smt/active") as f:
            smt = f.read().strip() == "1"
        # #smt_on is a constant: only the branch it takes is counted
        self.assertEqual("context-switches" in counts, not smt, counts)
        self.assertEqual(m["smt_pick"]["value"], counts["page-faults"])

    def test_topdown_and_metric_only(self):
        r = self.hwc("stat", "--topdown", "--metric-only", "--", workload("pagetouch"))
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        names = [l.split()[1] for l in lines if "cpus_used" in l or "never_over" in l]
        self.assertEqual(names, ["cpus_used", "never_over"], r.stderr)
        self.assertNotIn("task-clock", r.stderr)
        self.assertIn("(over threshold)", [l for l in lines if "cpus_used" in l][0])
        self.assertNotIn("(over threshold)", [l for l in lines if "never_over" in l][0])

    def test_csv(self):
        r = self.hwc("stat", "-x", ";", "-M", "cpus_used,pf_rate", "--", workload("pagetouch"))
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l.split(";") for l in r.stderr.splitlines() if ";metric;" in l]
        self.assertEqual([(x[2], x[3], x[4]) for x in rows],
                         [("cpus_used", "metric", "over"), ("pf_rate", "metric", "")])
        self.assertEqual(rows[1][1], "faults/s")
        self.assertGreater(float(rows[1][0]), 0)

    def test_per_core_aggregates(self):
        """With --per-core a metric is computed from each core's summed
        counts (its own line after the core's counts), not from one CPU."""
        r = self.hwc("stat", "-a", "--per-core", "-x", ",", "-M", "cs_per_fault", "--",
                     "sleep", "0.2")
        self.assertEqual(r.returncode, 0, r.stderr)
        counts, metrics = {}, {}
        for f in (l.split(",") for l in r.stderr.splitlines()):
            if len(f) > 5 and f[5] == "metric":
                metrics[f[0]] = float(f[2])
            elif len(f) > 4 and f[4] in ("context-switches", "page-faults"):
                counts.setdefault(f[0], {})[f[4]] = float(f[2])
        self.assertTrue(counts)
        self.assertEqual(sorted(metrics), sorted(counts))
        for core, c in counts.items():
            want = c["context-switches"] / c["page-faults"] if c["page-faults"] else 0
            self.assertAlmostEqual(metrics[core], want, places=5, msg=core)

    def test_errors(self):
        for args, code, text in [
            (["-M", "nonesuch"], 1, "no metric or metric group 'nonesuch'"),
            (["-M", "needs_missing"], 1, "needs no_such_event_xyz, which this machine lacks"),
            (["-M", "loop_a"], 1, "refer back"),
            (["-M", "chain_deep"], 1, "refer to others more than 32 deep"),
            (["-M", "bad_syntax"], 1, "metric expression"),
            (["-M", "pf_rate", "--topdown"], 2, "cannot be combined"),
            (["--metric-only"], 2, "need -M or --topdown"),
        ]:
            r = self.hwc("stat", *args, "true")
            self.assertEqual(r.returncode, code, (args, r.stderr))
            self.assertIn(text, r.stderr, args)

    def test_chain(self):
        """Metrics that refer to metrics 26 deep are computed."""
        doc, counts, m = self.stat_json("-M", "chain_ok")
        self.assertEqual(m["chain_ok"]["value"], 2 * counts["page-faults"] + 20 + 25)

    def test_no_tree(self):
        r = run([HWC, "stat", "-M", "pf_rate", "true"],
                env=dict(os.environ, HWC_EVENTS_DIR=os.path.join(self.dir, "none"),
                         XDG_DATA_HOME=self.dir))
        self.assertEqual(r.returncode, 1)
        self.assertIn("JSON", r.stderr)

    def test_list_metrics(self):
        r = self.hwc("list", "--metrics", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [m["name"] for m in json.loads(r.stdout)["metrics"]]
        self.assertEqual(names, [m["MetricName"] for m in METRICS])
        r = self.hwc("list", "--metrics", "-v", "topdownl1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("cpus_used", r.stdout)
        self.assertIn("threshold: cpus_used > 0.0001", r.stdout)
        self.assertNotIn("pf_rate", r.stdout)
        r = self.hwc("list", "--metrics", "zzz*")
        self.assertEqual(r.returncode, 1)


# The architecture directory's own metrics (arm64's sbsa.json is such a
# file): taken for a name or group the CPU's table lacks.
ARCH_METRICS = [
    {"MetricName": "arch_td", "MetricExpr": "page\\-faults / duration_time",
     "MetricGroup": "TopdownL1", "ScaleUnit": "1faults/s",
     "BriefDescription": "Page faults per second.\nTwo lines, as sbsa.json's have."},
    {"MetricName": "dup", "MetricExpr": "context\\-switches"},
    {"MetricName": "lacks_a", "MetricExpr": "no_such_a / page\\-faults", "MetricGroup": "Lacking"},
    {"MetricName": "lacks_b", "MetricExpr": "no_such_b + no_such_a + context\\-switches",
     "MetricGroup": "Lacking"},
]


@unittest.skipUnless(platform.machine() == "x86_64",
                     "the test tree maps x86 CPU ids (arm64 maps MIDRs)")
class ArchMetrics(Tree):
    MODEL = [{"MetricName": "dup", "MetricExpr": "page\\-faults"}]
    ARCH = ARCH_METRICS

    def test_topdown_from_the_arch_directory(self):
        for args in (["--topdown"], ["-M", "TopdownL1"]):
            r = self.hwc("stat", "--json", *args, "--", workload("pagetouch"))
            self.assertEqual(r.returncode, 0, (args, r.stderr))
            doc = json.loads(r.stderr)
            counts = {c["event"]: c["value"] for c in doc["counters"]}
            m = {x["metric"]: x["value"] for x in doc["metrics"]}
            self.assertEqual(list(m), ["arch_td"], args)
            self.assertGreater(counts["page-faults"], 0)
            self.assertAlmostEqual(m["arch_td"], counts["page-faults"] / doc["elapsed_s"],
                                   delta=1e-6 * m["arch_td"])

    def test_the_cpu_table_first(self):
        r = self.hwc("stat", "-x", ",", "-M", "dup", "--", workload("pagetouch"))
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l.split(",") for l in r.stderr.splitlines()]
        self.assertEqual([x[2] for x in rows if len(x) > 3 and x[3] != "metric"], ["page-faults"])

    def test_list(self):
        r = self.hwc("list", "--metrics", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [m["name"] for m in json.loads(r.stdout)["metrics"]]
        self.assertEqual(names, ["dup", "arch_td", "lacks_a", "lacks_b"])
        r = self.hwc("list", "--metrics", "arch_td")
        self.assertEqual(r.stdout.splitlines()[1:],
                         ["    Page faults per second.", "    Two lines, as sbsa.json's have."])

    def test_all_that_lacks_named_at_once(self):
        r = self.hwc("stat", "-M", "Lacking", "true")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("metrics lacks_a, lacks_b need no_such_a, no_such_b, which this machine "
                      "lacks (unknown event 'no_such_a'", r.stderr)
        self.assertNotIn("context-switches", r.stderr)


if __name__ == "__main__":
    unittest.main()
