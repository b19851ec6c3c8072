"""perf's JSON event tables through the hwc tool: model::EVENT for models
this machine does not have (encode-only), this CPU's JSON names, modifiers,
uncore Units against sysfs PMUs (fake trees: HWC_SYSFS_ROOT), the search
order of the tables (--events-dir, HWC_EVENTS_DIR), hwc list, and that a
run which needs no table never opens one (strace)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from hwctest import SRC, program, run

HWC = program("hwc")
TREE = "/usr/local/share/hwc-test/events"
GOLDEN_SYSFS = os.path.join(SRC, "tests/golden/sysfs")


def hwc(*args, env=None):
    e = dict(os.environ, HWC_EVENTS_DIR=TREE)
    e.update(env or {})
    return run([HWC, *args], env=e, timeout=300)


def encoding(spec, env=None):
    """hwc list -v --json SPEC: the first event's encoding."""
    r = hwc("list", "-v", "--json", spec, env=env)
    if r.returncode != 0:
        raise AssertionError(f"hwc list -v {spec}: exit {r.returncode}: {r.stderr}")
    ev = json.loads(r.stdout)["events"][0]
    return ev["encoding"]


def num(v):
    return int(v, 0) if isinstance(v, str) else v


class ForcedModels(unittest.TestCase):
    def test_amd_extended_event_select(self):
        # ls_dispatch.ld_dispatch: event 0x29, umask 0x01 (Zen 4)
        enc = encoding("amdzen4::ls_dispatch.ld_dispatch")
        self.assertEqual(num(enc["config"]), 0x129)
        # an event select above 0xff goes to config bits 32-35 (AMD's format)
        enc = encoding("amdzen4::ic_tag_hit_miss.all_instruction_cache_accesses")
        self.assertEqual(num(enc["config"]), 0x100001F8E)

    def test_intel_offcore_and_ldlat_to_config1(self):
        enc = encoding("skylake::OFFCORE_RESPONSE.DEMAND_CODE_RD.ANY_RESPONSE")
        self.assertEqual((num(enc["config"]), num(enc["config1"])), (0x1B7, 0x10004))
        enc = encoding("graniterapids::MEM_TRANS_RETIRED.LOAD_LATENCY_GT_128")
        self.assertEqual((num(enc["config"]), num(enc["config1"])), (0x1CD, 0x80))

    def test_modifiers(self):
        base = num(encoding("skylake::BR_INST_RETIRED.ALL_BRANCHES")["config"])
        enc = encoding("skylake::BR_INST_RETIRED.ALL_BRANCHES:c=2:i:u")
        self.assertEqual(num(enc["config"]), base | 2 << 24 | 1 << 23)
        self.assertEqual((enc["exclude_user"], enc["exclude_kernel"]), (False, True))
        enc = encoding("amdzen5::ex_ret_brn:edge:cmask=3")
        self.assertEqual(num(enc["config"]), 0xC2 | 1 << 18 | 3 << 24)
        r = hwc("list", "-v", "skylake::BR_INST_RETIRED.ALL_BRANCHES:bogus")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown modifier 'bogus'", r.stderr)

    def test_arm64_std_event(self):
        enc = encoding("cortex-a76::L1D_CACHE_REFILL")
        self.assertEqual(num(enc["config"]), 0x3)

    def test_unknown_event_and_model(self):
        r = hwc("list", "-v", "amdzen5::ex_ret_brnn")
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown event 'ex_ret_brnn' in JSON model amdzen5", r.stderr)
        self.assertIn("did you mean 'amdzen5::ex_ret_brn'", r.stderr)
        r = hwc("list", "-v", "amdzen5::ex_ret_brn", env={"HWC_EVENTS_DIR": "/nonexistent"})
        self.assertEqual(r.returncode, 1)
        self.assertIn("unknown model 'amdzen5'", r.stderr)


class Uncore(unittest.TestCase):
    def test_present_pmu_uses_its_sysfs_format_and_type(self):
        # The fake Skylake's uncore_imc is the client's (no umask field) ...
        r = hwc("list", "-v", "skylakex::UNC_M_CAS_COUNT.RD", env={"HWC_SYSFS_ROOT": GOLDEN_SYSFS})
        self.assertEqual(r.returncode, 1)
        self.assertIn("PMU uncore_imc has no field 'umask'", r.stderr)
        # ... a server's has one: the sysfs format and type are used.
        with tempfile.TemporaryDirectory() as root:
            shutil.copytree(GOLDEN_SYSFS, root, dirs_exist_ok=True)
            devs = os.path.join(root, "bus/event_source/devices")
            shutil.rmtree(os.path.join(devs, "uncore_imc"))
            shutil.copytree(os.path.join(devs, "uncore_imc_0"), os.path.join(devs, "uncore_imc"))
            enc = encoding("skylakex::UNC_M_CAS_COUNT.RD:u", env={"HWC_SYSFS_ROOT": root})
            self.assertEqual(enc["type"], 13)
            self.assertEqual(num(enc["config"]), 0x0304)
            self.assertEqual(enc["exclude_kernel"], True)

    def test_absent_pmu_is_named(self):
        r = hwc("stat", "-e", "amdzen3::l3_request_g1.caching_l3_cache_accesses", "true")
        self.assertEqual(r.returncode, 1)
        self.assertIn("is an event of PMU amd_l3 (Unit L3PMC), which this machine does not have",
                      r.stderr)

    def test_instances_are_used(self):
        # Unit QPI LL is uncore_qpi: the event opens on its instance uncore_qpi_0
        # (tests/uncore.py: several instances, counting and summing them)
        env = {"HWC_SYSFS_ROOT": GOLDEN_SYSFS}
        enc = encoding("haswellx::UNC_Q_CLOCKTICKS", env=env)
        self.assertEqual((enc["pmu"], enc["type"], num(enc["config"])), ("uncore_qpi_0", 14, 0x14))

    def test_fake_amd_l3(self):
        with tempfile.TemporaryDirectory() as root:
            shutil.copytree(os.path.join(SRC, "tests/golden/sysfs-amd"), root, dirs_exist_ok=True)
            pmu = os.path.join(root, "bus/event_source/devices/amd_l3")
            os.makedirs(os.path.join(pmu, "format"))
            for name, text in (("type", "11"), ("format/event", "config:0-7"),
                               ("format/umask", "config:8-15")):
                with open(os.path.join(pmu, name), "w") as f:
                    f.write(text + "\n")
            enc = encoding("amdzen3::l3_request_g1.caching_l3_cache_accesses",
                           env={"HWC_SYSFS_ROOT": root})
            self.assertEqual(enc["type"], 11)
            self.assertEqual(num(enc["config"]), 0x8001)


def fake_tree(tree, events):
    """A JSON tree whose one model, fake, matches any x86 CPU."""
    os.makedirs(os.path.join(tree, "x86/fake"))
    with open(os.path.join(tree, "x86/mapfile.csv"), "w") as f:
        f.write("Family-model,Version,Filename,EventType\n")
        f.write("[[:alnum:]]+-[[:alnum:]]+-[[:alnum:]]+-[[:alnum:]]+,v1,fake,core\n")
    with open(os.path.join(tree, "x86/fake/events.json"), "w") as f:
        json.dump(events, f)


class CorruptTables(unittest.TestCase):
    @unittest.skipUnless(os.uname().machine.startswith("x86"), "the fake tree is x86's")
    def test_nul_byte_is_refused(self):
        # A valid array, then a NUL byte and more: JSON text has no NUL, and
        # reading up to it would silently take the file's first part.
        with tempfile.TemporaryDirectory() as tree:
            fake_tree(tree, [{"EventName": "FAKE_A", "EventCode": "0x1"}])
            path = os.path.join(tree, "x86/fake/events.json")
            with open(path, "ab") as f:
                f.write(b"\0 [{\"EventName\": \"FAKE_B\"}]")
            size = os.path.getsize(path)
            r = hwc("list", "-v", "FAKE_A", env={"HWC_EVENTS_DIR": tree})
            self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
            offset = size - len(b"\0 [{\"EventName\": \"FAKE_B\"}]")
            self.assertIn(f"{path} is not JSON: a NUL byte at offset {offset}", r.stderr)


class HostAndListing(unittest.TestCase):
    @unittest.skipUnless(os.uname().machine.startswith("x86"), "the fake tree is x86's")
    def test_uncore_instance_alias(self):
        # perf's pmu/NAME/: a JSON event of this CPU on one instance of its PMU
        with tempfile.TemporaryDirectory() as tree:
            fake_tree(tree, [{"EventName": "UNC_Q_FAKE.READS", "EventCode": "0x4",
                              "UMask": "0x3", "Unit": "QPI LL"}])
            env = {"HWC_EVENTS_DIR": tree, "HWC_SYSFS_ROOT": GOLDEN_SYSFS}
            enc = encoding("UNC_Q_FAKE.READS", env=env)  # on each instance: the one here
            self.assertEqual((enc["pmu"], enc["type"], num(enc["config"])), ("uncore_qpi_0", 14, 0x304))
            enc = encoding("uncore_qpi_0/UNC_Q_FAKE.READS/", env=env)
            self.assertEqual((enc["type"], num(enc["config"])), (14, 0x304))
            r = hwc("list", "-v", "msr/UNC_Q_FAKE.READS/", env=env)
            self.assertEqual(r.returncode, 1)  # not an event of msr


    def host_model(self):
        r = hwc("list", "--pmu", "help", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        present = [m["name"] for m in json.loads(r.stdout)["json_models"] if m["present"]]
        if not present:
            self.skipTest("the JSON tree has no model for this CPU")
        return present[0]

    def test_host_names_resolve_after_libpfm4(self):
        model = self.host_model()
        r = hwc("list", "--pmu", model, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        events = json.loads(r.stdout)["events"]
        self.assertTrue(all(e["source"] == "json" for e in events))
        name = events[0]["name"]
        r = hwc("list", "-v", name)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("source json", r.stdout)
        # without the tables the bare name is unknown
        r = hwc("list", "-v", name, env={"HWC_EVENTS_DIR": "/nonexistent"})
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"unknown event '{name}'", r.stderr)

    def test_libpfm4_wins_a_name_both_know(self):
        # A tree whose model matches any x86 CPU, with one event named as a
        # libpfm4 event of this CPU and one only it has.
        r = hwc("list", "--pmu", "help", "--json")
        pfm = [m["name"] for m in json.loads(r.stdout)["models"] if m["present"] and m["core"]]
        if not pfm or not os.uname().machine.startswith("x86"):
            self.skipTest("needs an x86 CPU that libpfm4 knows")
        r = hwc("list", "--pmu", pfm[0], "--json")
        # hwc list -v lists an event that needs a unit mask too (its
        # encoding is an error): the first that encodes as it is.
        name = next((e["name"] for e in json.loads(r.stdout)["events"]
                     if "error" not in encoding(e["name"])), None)
        if not name:
            self.skipTest(f"no event of {pfm[0]} resolves without a unit mask")
        with tempfile.TemporaryDirectory() as tree:
            fake_tree(tree, [{"EventName": name, "EventCode": "0x77"},
                             {"EventName": "FAKE_ONLY.EVENT", "EventCode": "0x78"}])
            env = {"HWC_EVENTS_DIR": tree}
            self.assertEqual(encoding(name, env)["origin"].split()[0], "libpfm4")
            self.assertEqual(num(encoding("fake::" + name, env)["config"]), 0x77)
            enc = encoding("FAKE_ONLY.EVENT", env)
            self.assertEqual(num(enc["config"]), 0x78)
            self.assertTrue(enc["origin"].startswith("JSON fake/events.json"), enc["origin"])

    def test_events_dir_option_wins(self):
        empty = tempfile.mkdtemp()
        try:
            r = hwc("--events-dir", empty, "list", "-v", "amdzen5::ex_ret_brn")
            self.assertEqual(r.returncode, 1)
            r = run([HWC, "--events-dir", TREE, "list", "-v", "amdzen5::ex_ret_brn"],
                    env=dict(os.environ, HWC_EVENTS_DIR=empty))
            self.assertEqual(r.returncode, 0, r.stderr)
        finally:
            os.rmdir(empty)
        r = hwc("--events-dir", "/nonexistent", "list")
        self.assertEqual(r.returncode, 2)
        self.assertIn("events directory '/nonexistent' does not exist", r.stderr)

    def test_help_lists_json_models(self):
        r = hwc("list", "--pmu", "help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("JSON models", r.stdout)
        self.assertIn("graniterapids", r.stdout)


class StartUp(unittest.TestCase):
    def test_no_table_opened_for_software_events(self):
        if not shutil.which("strace"):
            self.skipTest("strace is not installed")
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "trace")

            def traced(event):
                # LeakSanitizer cannot run under a tracer (a sanitized build)
                env = dict(os.environ, HWC_EVENTS_DIR=TREE, ASAN_OPTIONS="detect_leaks=0")
                r = run(["strace", "-f", "-o", log, "-e", "trace=%file", HWC, "stat", "-e",
                         event, "true"], env=env)
                with open(log) as f:
                    return r, f.read()

            r, trace = traced("task-clock")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn(TREE, trace)
            self.assertNotIn("libjson-c", trace)
            # the same trace sees the tables when a name needs them
            r, trace = traced("amdzen5::ex_ret_brn")
            self.assertIn(TREE + "/x86/amdzen5", trace)
            self.assertIn("libjson-c", trace)


if __name__ == "__main__":
    if not os.path.exists(os.path.join(TREE, "x86/mapfile.csv")):
        print(f"SKIP: perf's JSON event tables are not at {TREE} (scripts/deps extracts them "
              "from linux-source-6.12)", file=sys.stderr)
        sys.exit(77)
    unittest.main()
