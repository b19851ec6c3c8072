"""hwc list: glob filtering, every category, --pmu for other CPUs' models,
unit masks and modifiers, whether events can be opened here (with the
reason), --json parsed by json, -v encodings, and the error paths."""
import json
import os
import unittest

from hwctest import HAVE_CORE_PMU, SYSFS, program, run

HWC = program("hwc")


def hwc(*args, nobody=False):
    return run([HWC, *args], nobody=nobody, timeout=300)


def listing(*args):
    r = hwc("list", "--json", *args)
    if r.returncode != 0:
        raise AssertionError(f"hwc list --json {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    doc = json.loads(r.stdout)
    assert doc["schema"] == "hwc-list/1", doc["schema"]
    return doc


def event_block(text, name):
    """The lines of event NAME in hwc list's text output: its row and the
    more-indented lines under it."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("  ") and l.split()[0] == name)
    end = start + 1
    while end < len(lines) and lines[end].startswith("    "):
        end += 1
    return "\n".join(lines[start:end])


def by_name(doc):
    return {e["name"]: e for e in doc["events"]}


class Categories(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.doc = listing()
        cls.text = hwc("list")

    def test_every_category(self):
        sources = {e["source"] for e in self.doc["events"]}
        for s in ("generic", "cache", "software", "preset"):
            self.assertIn(s, sources)
        info = json.loads(hwc("info", "--json").stdout)
        if info["libpfm4"]["model"]:
            self.assertIn("libpfm4", sources)
            # The CPU's core model and the uncore ones libpfm4 finds present
            # (a Zen 3 also has amd64_fam19h_zen3_l3 and amd64_rapl), not
            # perf's own generic tables.
            models = json.loads(hwc("list", "--pmu", "help", "--json").stdout)["models"]
            present = {m["name"] for m in models if m["present"] and m["events"]} - {"perf", "perf_raw"}
            pmus = {e["pmu"] for e in self.doc["events"] if e["source"] == "libpfm4"}
            self.assertIn(info["libpfm4"]["model"], pmus)
            self.assertEqual(pmus, present)
        aliases = [a for p in os.listdir(SYSFS) if os.path.isdir(f"{SYSFS}/{p}/events")
                   for a in os.listdir(f"{SYSFS}/{p}/events") if "." not in a]
        self.assertEqual(len(aliases), sum(e["source"] == "pmu" for e in self.doc["events"]))
        if os.access("/sys/kernel/tracing/events", os.R_OK):
            self.assertIn("tracepoint", sources)
            self.assertIn("sched:sched_switch", by_name(self.doc))
        else:
            print("note: tracefs not readable: no tracepoints expected")

    def test_text_sections(self):
        self.assertEqual(self.text.returncode, 0, self.text.stderr)
        for header in ("generic hardware events", "generic cache events", "software events",
                       "presets (PAPI and illumos generic names)"):
            self.assertIn(header, self.text.stdout)

    def test_text_and_json_agree(self):
        rows = [l.split()[0] for l in self.text.stdout.splitlines()
                if l.startswith("  ") and not l.startswith("   ") and not l.startswith("  cannot")]
        self.assertEqual(rows, [e["name"] for e in self.doc["events"]])

    def test_presets_listed_with_or_without_mapping(self):
        ev = by_name(self.doc)
        self.assertEqual(ev["PAPI_TOT_INS"]["equiv"], "instructions")
        unmapped = ev["PAPI_L1_TCM"]
        self.assertIsNone(unmapped["equiv"])
        self.assertFalse(unmapped["open"])
        self.assertIn("no mapping", unmapped["reason"])
        self.assertIn("[no mapping here]", hwc("list", "PAPI_L1_TCM").stdout)


class Filtering(unittest.TestCase):
    def test_glob(self):
        names = [e["name"] for e in listing("L1-dcache-*")["events"]]
        self.assertEqual(names, ["L1-dcache-loads", "L1-dcache-load-misses", "L1-dcache-stores",
                                 "L1-dcache-store-misses", "L1-dcache-prefetches",
                                 "L1-dcache-prefetch-misses"])

    def test_glob_is_case_insensitive_and_matches_spec(self):
        self.assertEqual([e["name"] for e in listing("TASK-CLOCK")["events"]], ["task-clock"])
        self.assertEqual([e["spec"] for e in listing("--pmu", "skl", "skl::INST_RETIRED")["events"]],
                         ["skl::INST_RETIRED"])

    def test_substring(self):
        names = [e["name"] for e in listing("--pmu", "software", "fault")["events"]]
        self.assertEqual(sorted(names), sorted(["page-faults", "faults", "minor-faults",
                                                "major-faults", "alignment-faults",
                                                "emulation-faults"]))

    def test_text_glob(self):
        r = hwc("list", "*-misses")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = [l.split()[0] for l in r.stdout.splitlines()
                if l.startswith("  ") and not l.startswith("   ") and not l.startswith("  cannot")]
        self.assertTrue(rows)
        for name in rows:
            self.assertTrue(name.lower().endswith("-misses"), name)

    def test_no_match_is_an_error(self):
        r = hwc("list", "no-such-event-anywhere")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no event matches 'no-such-event-anywhere'", r.stderr)
        r = hwc("list", "--json", "no-such-event-anywhere")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")


class OpenHere(unittest.TestCase):
    def test_task_clock_opens(self):
        ev = by_name(listing("task-clock"))["task-clock"]
        self.assertTrue(ev["open"])
        self.assertIsNone(ev["reason"])
        line = [l for l in hwc("list", "task-clock").stdout.splitlines() if "task-clock" in l][0]
        self.assertEqual(line.split()[1], "yes")

    @unittest.skipIf(HAVE_CORE_PMU, "this machine has a core PMU: cycles may open")
    def test_cycles_does_not_open_and_says_why(self):
        ev = by_name(listing("cycles"))["cycles"]
        self.assertFalse(ev["open"])
        self.assertIn("no hardware PMU", ev["reason"])
        text = hwc("list", "cycles").stdout
        line = [l for l in text.splitlines() if l.split()[:1] == ["cycles"]][0]
        self.assertEqual(line.split()[1], "no")
        self.assertIn("cannot be opened here", text)
        self.assertIn("no hardware PMU", text)

    @unittest.skipIf(HAVE_CORE_PMU, "this machine has a core PMU")
    def test_libpfm_events_share_one_reason(self):
        info = json.loads(hwc("info", "--json").stdout)
        model = info["libpfm4"]["model"]
        if not model:
            self.skipTest("libpfm4 knows no model for this CPU")
        events = listing("--pmu", model)["events"]
        self.assertGreater(len(events), 10)
        self.assertEqual({e["open"] for e in events}, {False})
        reasons = {e["reason"] for e in events}
        self.assertEqual(len(reasons), 1)
        self.assertIn("no hardware PMU", reasons.pop())

    def test_unprivileged_counts_user_space_only(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to become nobody")
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            paranoid = int(f.read())
        if paranoid != 2:
            self.skipTest(f"perf_event_paranoid is {paranoid}, not 2")
        r = hwc("list", "--json", "task-clock", nobody=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        ev = by_name(json.loads(r.stdout))["task-clock"]
        self.assertTrue(ev["open"])
        self.assertTrue(ev["user_only"])
        line = [l for l in hwc("list", "task-clock", nobody=True).stdout.splitlines()
                if "task-clock" in l][0]
        self.assertEqual(line.split()[1], "user")


MODELS = {
    "skl": ("INST_RETIRED", "ANY_P"),
    "icl": ("INST_RETIRED", "ANY_P"),
    "spr": ("INST_RETIRED", "ANY"),
    "amd64_fam19h_zen3": ("RETIRED_INSTRUCTIONS", None),
    "amd64_fam19h_zen4": ("RETIRED_INSTRUCTIONS", None),
}


class Models(unittest.TestCase):
    def test_any_model_on_any_host(self):
        info = json.loads(hwc("info", "--json").stdout)
        for model, (event, umask) in MODELS.items():
            with self.subTest(model=model):
                doc = listing("--pmu", model)
                self.assertEqual(doc["pmu"], model)
                events = by_name(doc)
                self.assertGreater(len(events), 50)
                self.assertEqual({e["pmu"] for e in events.values()}, {model})
                self.assertIn(event, events)
                self.assertEqual(events[event]["spec"], f"{model}::{event}")
                if umask:
                    self.assertIn(umask, [a["name"] for a in events[event]["attrs"]
                                          if a["kind"] == "umask"])
                if model != info["libpfm4"]["model"]:
                    self.assertIn("not this machine's CPU", events[event]["reason"])

    def test_unit_masks_and_modifiers(self):
        ev = by_name(listing("--pmu", "skl", "INST_RETIRED"))["INST_RETIRED"]
        attrs = {a["name"]: a for a in ev["attrs"]}
        self.assertEqual(attrs["ANY_P"]["kind"], "umask")
        self.assertTrue(attrs["ANY_P"]["default"])
        self.assertFalse(attrs["PREC_DIST"]["default"])
        self.assertEqual(attrs["c"]["kind"], "value")
        self.assertEqual(attrs["u"]["kind"], "flag")
        self.assertTrue(all(a["desc"] for a in ev["attrs"]))
        text = hwc("list", "--pmu", "skl", "INST_RETIRED").stdout
        self.assertIn(":ANY_P", text)
        self.assertIn("[default]", text)
        self.assertIn("modifiers:", text)
        self.assertIn("c=N", text)
        self.assertIn("skl: Intel Skylake (libpfm4 model", text)

    def test_pmu_help(self):
        r = hwc("list", "--pmu", "help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for model in MODELS:
            self.assertIn(f" {model} ", r.stdout)
        for pmu in os.listdir(SYSFS):
            self.assertIn(f" {pmu} ", r.stdout)
        doc = json.loads(hwc("list", "--pmu", "help", "--json").stdout)
        self.assertEqual(doc["schema"], "hwc-list-pmus/1")
        self.assertTrue(set(MODELS) <= {m["name"] for m in doc["models"]})
        self.assertEqual(sorted(p["name"] for p in doc["pmus"]), sorted(os.listdir(SYSFS)))
        self.assertEqual([c["name"] for c in doc["categories"]],
                         ["generic", "cache", "software", "preset", "tracepoint"])
        present = [m["name"] for m in doc["models"] if m["present"] and m["core"]]
        self.assertLessEqual(len(present), 1)

    def test_unknown_pmu(self):
        for args in (["--pmu", "skx2"], ["--pmu", "skx2", "--json"]):
            r = hwc("list", *args)
            self.assertEqual(r.returncode, 1)
            self.assertEqual(r.stdout, "")
            self.assertIn("unknown PMU or libpfm4 model 'skx2'", r.stderr)
            self.assertIn("did you mean 'skx'", r.stderr)
            self.assertIn("hwc list --pmu help", r.stderr)
        r = hwc("list", "--pmu", "zen4")
        self.assertEqual(r.returncode, 1)
        self.assertIn("did you mean 'amd64_fam19h_zen4'?", r.stderr)

    def test_sysfs_pmu(self):
        if not os.path.isdir(f"{SYSFS}/msr/events"):
            self.skipTest("no msr PMU with events here")
        events = listing("--pmu", "msr")["events"]
        self.assertEqual(sorted(e["name"] for e in events),
                         sorted(a for a in os.listdir(f"{SYSFS}/msr/events") if "." not in a))
        tsc = by_name({"events": events}).get("tsc")
        if tsc:
            self.assertEqual(tsc["spec"], "msr/tsc/")
            self.assertTrue(tsc["open"], tsc["reason"])


class Verbose(unittest.TestCase):
    def test_spec_encoding(self):
        r = hwc("list", "-v", "cycles:u")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("type 0 (hardware)  config 0", r.stdout)
        self.assertIn("exclude_user 0  exclude_kernel 1  exclude_hv 1", r.stdout)
        self.assertIn("origin: generic event cycles", r.stdout)
        if not HAVE_CORE_PMU:
            self.assertIn("cannot be opened here", r.stdout)
            self.assertIn("no hardware PMU", r.stdout)

    def test_spec_encoding_json(self):
        r = hwc("list", "-v", "--json", "skl::INST_RETIRED:ANY_P:c=1:i")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["schema"], "hwc-list/1")
        enc = doc["events"][0]["encoding"]
        self.assertEqual(enc["type"], 4)
        # event 0xc0, inv (bit 23), cmask 1 (bits 24-31)
        self.assertEqual(enc["config"], "0x18000c0")
        self.assertEqual(enc["pmu"], "skl")
        self.assertIn("libpfm4 skl::INST_RETIRED:ANY_P", enc["origin"])

    def test_spec_group(self):
        doc = json.loads(hwc("list", "-v", "--json", "{task-clock,page-faults:u}").stdout)
        self.assertTrue(doc["open"])
        evs = doc["events"]
        self.assertEqual([e["name"] for e in evs], ["task-clock", "page-faults:u"])
        self.assertEqual([e["leader"] for e in evs], [True, False])
        self.assertEqual(evs[0]["group"], evs[1]["group"])
        self.assertEqual(evs[1]["encoding"]["config"], "0x2")
        self.assertTrue(evs[1]["encoding"]["exclude_kernel"])
        self.assertEqual(evs[0]["unit"], "msec")

    def test_listing_shows_encoding(self):
        r = hwc("list", "-v", "--pmu", "skl", "INST_RETIRED")
        self.assertEqual(r.returncode, 0, r.stderr)
        block = event_block(r.stdout, "INST_RETIRED")
        self.assertIn("spec: skl::INST_RETIRED", block)
        self.assertIn("type 4 (raw)  config 0xc0", block)
        self.assertIn("origin: libpfm4 skl::INST_RETIRED:ANY_P", block)
        ev = by_name(listing("-v", "--pmu", "software", "task-clock"))["task-clock"]
        self.assertEqual(ev["encoding"]["type"], 1)
        self.assertEqual(ev["encoding"]["config"], "0x1")

    def test_bad_spec(self):
        r = hwc("list", "-v", "cycles:q")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown modifier 'q'", r.stderr)


class Usage(unittest.TestCase):
    def test_help(self):
        r = hwc("list", "--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: hwc list", r.stdout)
        self.assertIn("--pmu", r.stdout)

    def test_bad_options(self):
        for args in (["--frobnicate"], ["--pmu"], ["--pmu", ""], ["a", "b"], [""]):
            with self.subTest(args=args):
                r = hwc("list", *args)
                self.assertEqual(r.returncode, 2)
                self.assertTrue(r.stderr.startswith("hwc list: "), r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
