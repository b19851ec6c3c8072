#!/usr/bin/env python3
"""Code regions (hwc-regions(3)): the reports of a real program built with
-lhwc (tests/regions.c, "client" modes), read with python's json, and
`hwc stat --regions` in its three formats.  Counts are of software events
(page-faults, task-clock), which this machine has."""
import csv
import io
import json
import os
import shutil
import tempfile
import unittest

from hwctest import program, run

HWC = program("hwc")
CLIENT = os.path.join(os.environ.get("HWC_BUILD", "build"), "tests", "regions")
PAGES = 200


class Regions(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="hwc-regions-")
        self.out = os.path.join(self.dir, "r.json")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def client(self, *args, events="page-faults,task-clock"):
        env = dict(os.environ, HWC_REGIONS_OUT=self.out)
        if events is None:
            env.pop("HWC_EVENTS", None)
        else:
            env["HWC_EVENTS"] = events
        p = run([CLIENT, "client", *args], env=env)
        with open(self.out) as f:
            return p, json.load(f)

    @staticmethod
    def regions(thread):
        return {r["name"]: r for r in thread["regions"]}

    def test_nested_page_faults(self):
        p, doc = self.client("nested", str(PAGES))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(doc["events"], ["page-faults", "task-clock"])
        self.assertEqual(doc["errors"], [])
        self.assertEqual(len(doc["threads"]), 1)
        r = self.regions(doc["threads"][0])
        for name in ("outer", "touch", "idle"):
            self.assertEqual(r[name]["calls"], 3, name)
        touch = r["touch"]["counts"]["page-faults"]
        outer = r["outer"]["counts"]["page-faults"]
        self.assertGreaterEqual(touch, 3 * PAGES)  # each call touches PAGES fresh pages
        self.assertGreaterEqual(outer, touch)      # inclusive of the nested region
        # not the 2*PAGES pages touched outside any region
        self.assertLess(outer, 3 * PAGES + PAGES // 2)
        self.assertLess(r["idle"]["counts"]["page-faults"], PAGES // 10)
        self.assertGreater(r["touch"]["counts"]["task-clock"], 0)

    def test_threads_merged(self):
        p, doc = self.client("threads", "4", str(PAGES))
        self.assertEqual(p.returncode, 0, p.stderr)
        threads = doc["threads"]
        self.assertEqual(len(threads), 5)  # 4 ended workers and main
        self.assertEqual(len({t["tid"] for t in threads}), 5)
        workers = [self.regions(t)["work"] for t in threads if "work" in self.regions(t)]
        self.assertEqual(len(workers), 4)
        for w in workers:
            self.assertEqual(w["calls"], 1)
            self.assertGreaterEqual(w["counts"]["page-faults"], PAGES)
        main = [t for t in threads if t["tid"] == doc["pid"]][0]
        # the main thread's region does not count its threads' faults
        self.assertLess(self.regions(main)["main"]["counts"]["page-faults"], PAGES)

    def test_errors_reported_once(self):
        p, doc = self.client("errors")
        self.assertEqual(p.returncode, 0, p.stderr)
        errs = {e["error"]: e["count"] for e in doc["errors"]}
        self.assertEqual(len(errs), 2, errs)
        self.assertTrue(all(c == 2 for c in errs.values()), errs)
        self.assertTrue(any("without hwc_region_begin" in e for e in errs))
        self.assertTrue(any("must nest" in e for e in errs))
        lines = [l for l in p.stderr.splitlines() if l.startswith("hwc regions:")]
        self.assertEqual(len(lines), 2, p.stderr)  # each once, not per call
        r = self.regions(doc["threads"][0])
        self.assertEqual(r["ok"]["calls"], 1)
        self.assertEqual(r["a"]["calls"], 2)  # the misnested end was ignored

    def test_fork_child_measures_nothing(self):
        p, doc = self.client("fork")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(doc["threads"]), 1)  # the child's exit wrote no report
        self.assertEqual([r["name"] for r in doc["threads"][0]["regions"]], ["parent"])
        self.assertEqual(doc["threads"][0]["tid"], doc["pid"])

    def test_unknown_event(self):
        p, doc = self.client("nested", "1", events="no-such-event")
        self.assertEqual(p.returncode, 3)  # hwc_region_begin returned the error
        self.assertIn("no-such-event", p.stderr)
        self.assertEqual(doc["threads"], [])
        self.assertIn("no-such-event", doc["errors"][0]["error"])

    def test_defaults_skip_what_is_missing(self):
        p, doc = self.client("nested", "10", events=None)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("page-faults", doc["events"])
        self.assertIn("task-clock", doc["events"])

    def test_off_writes_nothing(self):
        env = dict(os.environ)
        env.pop("HWC_REGIONS_OUT", None)
        p = run([CLIENT, "client", "nested", "1"], env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(os.listdir(self.dir), [])

    def test_hostile_output(self):
        os.symlink("/etc/passwd", self.out)
        env = dict(os.environ, HWC_REGIONS_OUT=self.out, HWC_EVENTS="page-faults")
        p = run([CLIENT, "client", "nested", "1"], env=env)
        self.assertEqual(p.returncode, 0)
        self.assertIn("cannot write HWC_REGIONS_OUT", p.stderr)
        self.assertTrue(os.path.islink(self.out))

    def stat(self, *args):
        return run([HWC, "stat", "--regions", *args, "--", CLIENT, "client", "nested",
                    str(PAGES)], env=dict(os.environ, TMPDIR=self.dir))

    def test_stat_human(self):
        p = self.stat("-e", "page-faults,task-clock")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [l.split() for l in p.stderr.splitlines()]
        touch = [r for r in rows if len(r) > 2 and r[1] == "touch"][0]
        self.assertEqual(touch[2], "3")
        self.assertGreaterEqual(int(touch[3].replace(",", "")), 3 * PAGES)
        self.assertEqual(os.listdir(self.dir), [])  # its directory is removed

    def test_stat_csv(self):
        p = self.stat("-x", ";", "-e", "page-faults")
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = [r for r in csv.reader(io.StringIO(p.stderr), delimiter=";") if r and r[0] == "region"]
        byname = {(r[2], r[5]): r for r in rows}
        self.assertEqual(set(n for n, _ in byname), {"outer", "touch", "idle"})
        self.assertGreaterEqual(int(byname[("touch", "page-faults")][4]), 3 * PAGES)

    def test_stat_json(self):
        p = self.stat("--json", "-e", "page-faults")
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stderr)
        regs = self.regions(doc["regions"]["threads"][0])
        self.assertGreaterEqual(regs["touch"]["counts"]["page-faults"], 3 * PAGES)
        self.assertEqual(doc["regions"]["events"], ["page-faults"])

    def test_stat_without_regions(self):
        p = run([HWC, "stat", "--regions", "-j", "-e", "page-faults", "true"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("wrote no region report", p.stderr)

    def test_stat_usage(self):
        p = run([HWC, "stat", "--regions", "-a"])
        self.assertEqual(p.returncode, 2)
        self.assertIn("--regions", p.stderr)


if __name__ == "__main__":
    unittest.main()
