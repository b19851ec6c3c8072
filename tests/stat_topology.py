#!/usr/bin/env python3
"""`hwc stat` topology aggregation (--per-core, --per-cache, --per-die,
--per-socket, --per-node) and the run-control options -D, --timeout,
--interval-count, -B/--no-big-num, with perf stat as the oracle where the
installed perf has the option.

The fake machines: a sysfs tree (HWC_SYSFS_ROOT) of 2 sockets x 2 dies x
2 cores x 2 SMT threads (one NUMA node per socket, L1/L2 per core, L3 per
die), numbered two ways.  hwc reads only the topology from it: the CPUs
counted are this machine's online CPUs (software events), and real CPU N
takes the place of the fake tree's CPU N, so a tree has at least as many
CPUs as this machine (more cores per die when it has more than 16).  With
two real CPUs, "spread" puts CPUs 0 and 1 in different sockets and
"siblings" makes them SMT threads of one core: between the two, every
aggregate is seen both split and merged.  Each aggregate's counts are
checked against the per-CPU counts of the same run (the JSON report lists
each CPU's part)."""
import csv
import io
import json
import math
import os
import re
import select
import shutil
import subprocess
import tempfile
import unittest

from hwctest import online_cpus, program, run

HWC = program("hwc")
PERF = shutil.which("perf")
CPUS = online_cpus()


def perf_works():
    return PERF and run([PERF, "stat", "-e", "task-clock", "true"]).returncode == 0


def layout(numbering, ncpus):
    """{cpu: dict(socket, die, core, thread, node, l2, l3)} for NCPUS CPUs
    (a multiple of 8) of 2 sockets x 2 dies x ncpus/8 cores x 2 threads."""
    cores = ncpus // 8  # per die
    places = {}
    for cpu in range(ncpus):
        if numbering == "spread":  # as Intel numbers them: sockets alternate, siblings last
            thread, j = divmod(cpu, ncpus // 2)
            socket, j = j % 2, j // 2
            die, core = j % 2, j // 2
        else:  # "siblings": each core's threads next to each other
            core_no, thread = divmod(cpu, 2)
            socket, rest = divmod(core_no, 2 * cores)
            die, core = divmod(rest, cores)
        places[cpu] = dict(socket=socket, die=die, core=die * cores + core, thread=thread,
                           node=socket)
    for cpu, p in places.items():  # a cache's instance is its first CPU
        same_core = [c for c, q in places.items()
                     if (q["socket"], q["core"]) == (p["socket"], p["core"])]
        same_die = [c for c, q in places.items() if (q["socket"], q["die"]) == (p["socket"], p["die"])]
        p["l2"], p["l3"] = min(same_core), min(same_die)
        p["l2_cpus"], p["l3_cpus"] = same_core, same_die
    return places


def read(path):
    with open(path) as f:
        return f.read()


def cpu_list(cpus):
    return ",".join(str(c) for c in sorted(cpus))


def write_tree(root, places):
    def put(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")
    base = os.path.join(root, "devices/system")
    for cpu, p in places.items():
        d = f"{base}/cpu/cpu{cpu}"
        put(f"{d}/topology/physical_package_id", str(p["socket"]))
        put(f"{d}/topology/die_id", str(p["die"]))
        put(f"{d}/topology/core_id", str(p["core"]))
        caches = [(1, "Data", p["l2_cpus"]), (1, "Instruction", p["l2_cpus"]),
                  (2, "Unified", p["l2_cpus"]), (3, "Unified", p["l3_cpus"])]
        for i, (level, kind, shared) in enumerate(caches):
            put(f"{d}/cache/index{i}/level", str(level))
            put(f"{d}/cache/index{i}/type", kind)
            put(f"{d}/cache/index{i}/shared_cpu_list", cpu_list(shared))
        put(f"{base}/node/node{p['node']}/cpu{cpu}/online", "1")


def expected(places, cpus, mode):
    """{aggregate id: [cpus]} in perf's order for the counted CPUS."""
    def key(c):
        p = places[c]
        return {"core": (p["socket"], p["die"], p["core"]),
                "cache": (p["socket"], p["die"], 3, p["l3"]),
                "cache=L2": (p["socket"], p["die"], 2, p["l2"]),
                "die": (p["socket"], p["die"]),
                "socket": (p["socket"],),
                "node": (p["node"],)}[mode]
    fmt = {"core": "S%d-D%d-C%d", "cache": "S%d-D%d-L%d-ID%d", "cache=L2": "S%d-D%d-L%d-ID%d",
           "die": "S%d-D%d", "socket": "S%d", "node": "N%d"}[mode]
    groups = {}
    for c in cpus:
        groups.setdefault(key(c), []).append(c)
    return [(fmt % k, sorted(v)) for k, v in sorted(groups.items())]


MODES = ["core", "cache", "cache=L2", "die", "socket", "node"]
JSON_KEY = {"core": "core", "cache": "cache", "cache=L2": "cache", "die": "die", "socket": "socket",
            "node": "node"}


class FakeTopology(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hwc-topo-")
        self.ncpus = max(16, 8 * math.ceil((max(CPUS) + 1) / 8))

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def tree(self, numbering):
        root = os.path.join(self.tmp, numbering)
        places = layout(numbering, self.ncpus)
        write_tree(root, places)
        return root, places

    def stat(self, root, *args):
        env = dict(os.environ, HWC_SYSFS_ROOT=root, LC_ALL="C")
        return run([HWC, "stat", *args], env=env)

    def test_json_sums_per_aggregate(self):
        for numbering in ("spread", "siblings"):
            root, places = self.tree(numbering)
            for mode in MODES:
                with self.subTest(numbering=numbering, mode=mode):
                    p = self.stat(root, "--per-" + mode, "-a", "-j", "-e",
                                  "cpu-clock,context-switches", "--", "sleep", "0.05")
                    self.assertEqual(p.returncode, 0, p.stderr)
                    doc = json.loads(p.stderr)
                    want = expected(places, CPUS, mode)
                    self.assertEqual(doc["aggregation"], "per-" + mode.split("=")[0])
                    for event in ("cpu-clock", "context-switches"):
                        rows = [c for c in doc["counters"] if c["event"] == event]
                        key = JSON_KEY[mode]
                        got = [(c[key], [x["cpu"] for x in c["cpus"]]) for c in rows]
                        self.assertEqual(got, want)
                        for c in rows:
                            self.assertEqual(c["aggregate_number"], len(c["cpus"]))
                            for field in ("raw", "scaled", "enabled_ns", "running_ns"):
                                self.assertEqual(c[field], sum(x[field] for x in c["cpus"]), field)
                            if event == "cpu-clock":  # every CPU's clock runs, idle or not
                                self.assertTrue(all(x["raw"] > 0 for x in c["cpus"]))

    def test_table_and_csv_layout(self):
        root, places = self.tree("siblings")
        width = {"core": 15, "cache": 22, "die": 12, "socket": 6, "node": 6}
        for mode in MODES:
            with self.subTest(mode=mode):
                want = expected(places, CPUS, mode)
                p = self.stat(root, "--per-" + mode, "-a", "-e", "cpu-clock", "--", "true")
                self.assertEqual(p.returncode, 0, p.stderr)
                rows = [l for l in p.stderr.splitlines() if "cpu-clock" in l]
                w = width[mode.split("=")[0]]
                # perf's prefix: the id left-aligned in its column, the CPU count in 4
                self.assertEqual([l[:w + 6] for l in rows],
                                 ["%-*s %4d " % (w, i, len(c)) for i, c in want])
                p = self.stat(root, "--per-" + mode, "-a", "-x", ";", "-e", "cpu-clock", "--", "true")
                self.assertEqual(p.returncode, 0, p.stderr)
                got = [r[:2] for r in csv.reader(io.StringIO(p.stderr), delimiter=";")]
                self.assertEqual(got, [[i, str(len(c))] for i, c in want])

    def test_cpu_list_and_intervals(self):
        root, places = self.tree("siblings")
        p = self.stat(root, "--per-socket", "-C", str(CPUS[0]), "-j", "-I", "50",
                      "--interval-count", "2", "-e", "cpu-clock")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stderr)
        self.assertEqual(len(doc["intervals"]), 2)
        for iv in doc["intervals"]:
            (c,) = iv["counters"]
            self.assertEqual(c["socket"], "S%d" % places[CPUS[0]]["socket"])
            self.assertEqual(c["cpus"][0]["cpu"], CPUS[0])
        # the total is the intervals' sum, nothing after the last
        self.assertEqual(doc["counters"][0]["raw"],
                         sum(iv["counters"][0]["raw"] for iv in doc["intervals"]))
        p = self.stat(root, "--per-core", "-a", "-I", "50", "--interval-count", "1", "-e", "cpu-clock")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"^#\s+time core\s+cpus\s+counts unit events\n")

    def test_repeat_sums_per_run(self):
        # -r: each run of an aggregate is the sum of its CPUs in that run;
        # its deviation is of those sums
        root, places = self.tree("siblings")  # several CPUs per die
        p = self.stat(root, "--per-die", "-a", "-r", "3", "-j", "-e", "cpu-clock", "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stderr)
        self.assertEqual(doc["runs"], 3)
        want = expected(places, CPUS, "die")
        self.assertEqual([(c["die"], [x["cpu"] for x in c["cpus"]]) for c in doc["counters"]], want)
        for c in doc["counters"]:
            self.assertEqual(len(c["runs"]), 3)
            for field in ("raw", "scaled", "enabled_ns"):
                self.assertEqual(c[field], sum(r[field] for r in c["runs"]))
                self.assertEqual(c[field], sum(x[field] for x in c["cpus"]))
            mean = c["scaled"] / 3
            dev = (sum((r["scaled"] - mean) ** 2 for r in c["runs"]) / 2) ** 0.5
            self.assertAlmostEqual(c["stddev"], dev / 1e6, delta=1e-9 + 1e-9 * dev)

    def test_missing_topology(self):
        root = os.path.join(self.tmp, "empty")
        os.makedirs(os.path.join(root, "devices/system/cpu"))
        p = self.stat(root, "--per-core", "-a", "-e", "cpu-clock", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("CPU %d has no topology in %s/devices/system/cpu/cpu%d/topology"
                      % (CPUS[0], root, CPUS[0]), p.stderr)
        root, _ = self.tree("spread")
        p = self.stat(root, "--per-cache=L4", "-a", "-e", "cpu-clock", "true")
        self.assertEqual(p.returncode, 1)
        self.assertIn("has no level 4 cache", p.stderr)


class RealTopology(unittest.TestCase):
    def test_per_core_socket_die_node_match_perf(self):
        if not perf_works():
            self.skipTest("no working perf stat here")
        for mode in ("core", "die", "socket", "node"):
            with self.subTest(mode=mode):
                args = ["--per-" + mode, "-a", "-x", ",", "-e", "cpu-clock", "--", "true"]
                perf = run([PERF, "stat", *args])
                self.assertEqual(perf.returncode, 0, perf.stderr)
                hwc = run([HWC, "stat", *args])
                self.assertEqual(hwc.returncode, 0, hwc.stderr)
                ids = lambda text: [r[:2] for r in csv.reader(io.StringIO(text)) if r]
                self.assertEqual(ids(hwc.stderr), ids(perf.stderr))
                # the table: the same prefix columns as perf's
                perf = run([PERF, "stat", "--per-" + mode, "-a", "-e", "cpu-clock", "true"])
                hwc = run([HWC, "stat", "--per-" + mode, "-a", "-e", "cpu-clock", "true"])
                prefix = lambda text: [l.split("msec")[0].rsplit(None, 1)[0]
                                       for l in text.splitlines() if "cpu-clock" in l]
                self.assertEqual(prefix(hwc.stderr), prefix(perf.stderr))

    def test_per_cache_from_sysfs(self):
        # perf 6.1 has no --per-cache: sysfs is the oracle, read here
        def last_level(cpu):
            best = None
            base = f"/sys/devices/system/cpu/cpu{cpu}/cache"
            for d in sorted(os.listdir(base)) if os.path.isdir(base) else []:
                if not d.startswith("index"):
                    continue
                level = int(read(f"{base}/{d}/level"))
                first = int(re.split(r"[-,]", read(f"{base}/{d}/shared_cpu_list"))[0])
                if best is None or level > best[0]:
                    best = (level, first)
            return best
        levels = {c: last_level(c) for c in CPUS}
        if None in levels.values():
            self.skipTest("the kernel describes no caches here")
        p = run([HWC, "stat", "--per-cache", "-a", "-j", "-e", "cpu-clock", "true"])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stderr)
        for c in doc["counters"]:
            for x in c["cpus"]:
                level, first = levels[x["cpu"]]
                self.assertTrue(c["cache"].endswith("-L%d-ID%d" % (level, first)), c["cache"])


class RunControl(unittest.TestCase):
    def test_usage_errors(self):
        cases = [
            (["--per-core", "true"], "--per-core needs -a or -C"),
            (["--per-core", "--per-socket", "-a"], "give one of"),
            (["--per-core", "-A", "-a"], "cannot be combined with -A"),
            (["--per-cache=L5", "-a"], "invalid cache level 'L5'"),
            (["--per-cache=3", "-a"], "invalid cache level '3'"),
            (["--interval-count", "2", "true"], "--interval-count needs -I"),
            (["--interval-count", "0", "-I", "100", "true"], "invalid interval count '0'"),
            (["--timeout", "5", "true"], "invalid timeout '5'"),
            (["--timeout", "100", "-I", "100", "true"], "--timeout and -I cannot be combined"),
            (["-D", "-1", "true"], "invalid delay '-1'"),
            (["-B", "-x", ",", "true"], "-B groups digits"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                p = run([HWC, "stat", *args])
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn(message, p.stderr)

    def test_timeout_ends_the_command(self):
        p = run([HWC, "stat", "--timeout", "100", "-j", "-e", "task-clock", "--", "sleep", "60"])
        self.assertEqual(p.returncode, 0, p.stderr)  # as perf stat: the end asked for
        doc = json.loads(p.stderr)
        self.assertEqual(doc["exit_status"], 0)
        if perf_works():
            perf = run([PERF, "stat", "--timeout", "100", "-e", "task-clock", "--", "sleep", "60"])
            self.assertEqual(perf.returncode, 0)
        p = run([HWC, "stat", "--timeout", "50", "-a", "-x", ",", "-e", "cpu-clock"])
        self.assertEqual(p.returncode, 0, p.stderr)
        (row,) = list(csv.reader(io.StringIO(p.stderr)))
        self.assertGreater(int(row[4]), 0)

    def test_interval_count(self):
        p = run([HWC, "stat", "-I", "50", "--interval-count", "3", "-a", "-x", ",", "-e", "cpu-clock"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 3)
        if perf_works():
            perf = run([PERF, "stat", "-I", "50", "--interval-count", "3", "-a", "-x", ",",
                        "-e", "cpu-clock"])
            self.assertEqual(len(perf.stderr.splitlines()), 3)
        # with a command: as perf stat, the command runs on to its end
        p = run([HWC, "stat", "-I", "50", "--interval-count", "1", "-x", ",", "-e", "task-clock",
                 "--", "sh", "-c", "sleep 0.3; exit 3"])
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1)

    def test_delay_skips_the_start(self):
        # The command faults in BEFORE pages, says so, waits for a line,
        # faults in AFTER pages.  With -D only the second part is counted.
        before, after = 20000, 2000
        script = ("import mmap,sys\n"
                  "def touch(n):\n"
                  "    m = mmap.mmap(-1, n * 4096)\n"
                  "    for i in range(0, n * 4096, 4096): m[i] = 1\n"
                  "    return m\n"
                  f"a = touch({before})\n"
                  "print('touched', flush=True)\n"
                  "sys.stdin.readline()\n"
                  f"b = touch({after})\n")
        report = os.path.join(tempfile.mkdtemp(prefix="hwc-delay-"), "report.json")
        try:
            hwc = subprocess.Popen([HWC, "stat", "-D", "3000", "-j", "-o", report, "-e", "page-faults",
                                    "--", "python3", "-c", script], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            seen = []
            while "enabled" not in "".join(seen):
                ready, _, _ = select.select([hwc.stdout, hwc.stderr], [], [], 120)
                self.assertTrue(ready, "hwc stat said nothing")
                for f in ready:
                    line = f.readline()
                    self.assertTrue(line, "hwc stat ended early")
                    seen.append(line)
            in_order = any("touched" in l for l in seen)
            hwc.stdin.write("go\n")
            hwc.stdin.close()
            hwc.wait(120)
            err = hwc.stderr.read()
            hwc.stdout.close()
            hwc.stderr.close()
            self.assertEqual(hwc.returncode, 0, err)
            with open(report) as f:
                doc = json.load(f)
        finally:
            shutil.rmtree(os.path.dirname(report))
        if not in_order:
            self.skipTest("the command had not faulted its first pages in when -D's 3 s ended")
        faults = doc["counters"][0]["raw"]
        self.assertGreaterEqual(faults, after)
        self.assertLess(faults, before // 2)
        self.assertIn("events disabled for 3000 ms (-D)", "".join(seen))

    def test_big_num(self):
        # 2 CPUs' clocks over 0.6 s: over 1,000 msec, grouped by the locale's
        # separator unless --no-big-num (which keeps its decimal point), as perf
        env = dict(os.environ, LC_ALL="de_DE.utf8")
        if run(["locale", "-a"]).stdout.lower().find("de_de.utf8") < 0:
            self.skipTest("no de_DE.utf8 locale here")
        if len(CPUS) < 2:
            self.skipTest("one CPU's clock over 0.6 s stays under 1,000 msec")
        value = lambda text: re.search(r"^\s*([\d.,]+) msec cpu-clock", text, re.M).group(1)
        for opts, pattern in (([], r"^\d{1,3}(\.\d{3})+,\d\d$"), (["-B"], r"^\d{1,3}(\.\d{3})+,\d\d$"),
                              (["--no-big-num"], r"^\d{4,},\d\d$")):
            with self.subTest(opts=opts):
                p = run([HWC, "stat", *opts, "-a", "-e", "cpu-clock", "--", "sleep", "0.6"], env=env)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertRegex(value(p.stderr), pattern)
                if perf_works():
                    perf = run([PERF, "stat", *opts, "-a", "-e", "cpu-clock", "--", "sleep", "0.6"],
                               env=env)
                    self.assertRegex(value(perf.stderr), pattern)


if __name__ == "__main__":
    unittest.main()
