"""libhwc loads elfutils (libdw, libelf) and libzstd on first use, not at
start (issue 13, start-up): a command that only counts never maps them,
what needs them still works (report, record -z, annotate: their own tests),
and a library that cannot be loaded is a clear error naming it, never a
crash.  The missing library is real: in a private mount namespace,
/dev/null is bind-mounted over the library's file."""
import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from hwctest import program, run

HWC = program("hwc")
# What only symbols, unwinding, build-ids and compression need, and what
# those bring in; libpfm4 and json-c are loaded on demand as well.
LAZY = ("libdw.so", "libdw-", "libelf.so", "libelf-", "libzstd.so", "liblzma.so", "libbz2.so",
        "libpfm.so", "libjson-c.so")


def mapped_files(maps):
    """The files mapped in a /proc/PID/maps text."""
    return {line.split(None, 5)[5] for line in maps.splitlines() if len(line.split(None, 5)) == 6}


def library_file(soname):
    """The file the loader maps for SONAME, found by loading it here."""
    ctypes.CDLL(soname)
    stem = soname.split(".so")[0]  # libdw.so.1 is libdw-0.188.so, libzstd.so.1 libzstd.so.1.5.4
    with open("/proc/self/maps") as f:
        for path in mapped_files(f.read()):
            if os.path.basename(path).startswith((stem + ".", stem + "-")):
                return os.path.realpath(path)
    raise AssertionError(f"{soname} loaded but not found in /proc/self/maps")


def without(libs, argv):
    """Run ARGV in a private mount namespace where each of LIBS is
    /dev/null, so that dlopen fails on it as on a system without it."""
    binds = " && ".join(f"mount --bind /dev/null '{library_file(lib)}'" for lib in libs)
    return run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                binds + ' && exec "$@"', "sh"] + argv)


class LazyLibs(unittest.TestCase):
    def test_counting_maps_none_of_them(self):
        # The counted command prints the maps of its parent, hwc, while hwc
        # counts it: everything hwc loaded to get there.
        p = run([HWC, "stat", "-e", "task-clock", "--", "sh", "-c", 'cat /proc/$PPID/maps'])
        self.assertEqual(p.returncode, 0, p.stderr)
        files = mapped_files(p.stdout)
        self.assertTrue(any(os.path.basename(f) == "hwc" for f in files), p.stdout)
        loaded = sorted(f for f in files if any(lib in os.path.basename(f) for lib in LAZY))
        self.assertEqual(loaded, [], "hwc stat -e task-clock mapped them")


def encoding(spec):
    """What SPEC opens, as hwc list -v --json resolves it."""
    p = run([HWC, "list", "-v", "--json", spec])
    if p.returncode != 0:
        raise AssertionError(f"{spec}: {p.stderr}")
    return json.loads(p.stdout)["events"][0]["encoding"]


class Libpfm4Start(unittest.TestCase):
    """libpfm4 starts without its copy of perf's generic events, "perf" and
    "perf_raw" (src/pfm.c): setting that copy up reads the id file of every
    tracepoint, at each start of anything that needs a native name."""

    def test_native_name_reads_no_tracepoint(self):
        root = "/sys/kernel/tracing/events"
        if not os.access(root, os.R_OK):
            self.skipTest(root + " is not readable: libpfm4 would read no tracepoint either")
        ids = sum(1 for _, _, files in os.walk(root) for f in files if f == "id")
        if ids < 500:
            self.skipTest(f"only {ids} tracepoints: too few to tell the two starts apart")
        # hwc counts the opens of an inner hwc that needs libpfm4.
        p = run([HWC, "stat", "-x,", "-e", "syscalls:sys_enter_openat", "--",
                 HWC, "stat", "-e", "perf::TASK-CLOCK", "true"])
        if p.returncode != 0 and "syscalls:sys_enter_openat" in p.stderr:
            self.skipTest("no syscalls tracepoints here: " + p.stderr.strip())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("perf::TASK-CLOCK", p.stderr)  # the inner hwc counted
        opens = int(p.stderr.strip().splitlines()[-1].split(",")[0])
        self.assertLess(opens, 200, f"{opens} openat calls, with {ids} tracepoints here")

    def test_perf_names_still_encode(self):
        clock = encoding("perf::TASK-CLOCK")
        self.assertEqual((clock["type"], clock["config"], clock["pmu"]), (1, "0x1", "perf"))
        raw = encoding("perf_raw::r01c2")
        self.assertEqual((raw["type"], raw["config"], raw["pmu"]), (4, "0x1c2", "perf_raw"))
        root = "/sys/kernel/tracing/events/sched/sched_switch"
        if not os.access(root, os.R_OK):
            self.skipTest(root + " is not readable")
        # libpfm4's table named the tracepoints too: now they are hwc's own.
        tp, ours = encoding("perf::sched:sched_switch"), encoding("sched:sched_switch")
        self.assertEqual((tp["type"], tp["config"]), (ours["type"], ours["config"]))
        p = run([HWC, "stat", "-e", "perf::sched:no_such_event", "true"])
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("unknown tracepoint 'sched:no_such_event'", p.stderr)

    def test_environment_is_the_users(self):
        # LIBPFM_DISABLED_PMUS is set only while libpfm4 starts: the counted
        # command sees what the user set, or nothing.
        show = ["sh", "-c", 'printf %s "${LIBPFM_DISABLED_PMUS-unset}"']
        for value, seen in ((None, "unset"), ("amd64", "amd64")):
            env = dict(os.environ)
            env.pop("LIBPFM_DISABLED_PMUS", None)
            if value:
                env["LIBPFM_DISABLED_PMUS"] = value
            p = run([HWC, "stat", "-e", "perf::TASK-CLOCK", "--"] + show, env=env)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, seen)
        # The user's own list still applies.
        p = run([HWC, "stat", "-e", "skl::INST_RETIRED:ANY_P", "true"],
                env=dict(os.environ, LIBPFM_DISABLED_PMUS="skl"))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("unknown model 'skl'", p.stderr)

    def test_listing_the_copy_says_why(self):
        for table in ("perf", "perf_raw"):
            p = run([HWC, "list", "--pmu", table])
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(f"libpfm4's '{table}' table is not listed", p.stderr)
            self.assertIn("hwc list generic", p.stderr)


class MissingLibrary(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            raise unittest.SkipTest("needs root and unshare(1) to hide a library in a mount namespace")
        probe = subprocess.run(["unshare", "--mount", "true"], capture_output=True)
        if probe.returncode != 0:
            raise unittest.SkipTest("unshare --mount fails here: " + probe.stderr.decode().strip())
        cls.tmp = tempfile.mkdtemp()
        cls.data = os.path.join(cls.tmp, "perf.data")
        p = run([HWC, "record", "-e", "task-clock", "-o", cls.data, "--", "true"])
        if p.returncode != 0:
            raise unittest.SkipTest("hwc record fails here: " + p.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def assert_clear_error(self, p, soname):
        self.assertGreater(p.returncode, 0, p.stderr)  # an exit status, not a signal
        self.assertIn(soname, p.stderr)
        self.assertNotIn("Segmentation", p.stderr)

    def test_counting_needs_none_of_them(self):
        p = without(["libdw.so.1", "libelf.so.1", "libzstd.so.1"],
                    [HWC, "stat", "-e", "task-clock", "true"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("task-clock", p.stderr)

    def test_report_without_libdw(self):
        p = without(["libdw.so.1"], [HWC, "report", "-i", self.data])
        self.assert_clear_error(p, "libdw.so.1")
        self.assertIn("install libdw1", p.stderr)

    def test_record_without_libelf(self):
        out = os.path.join(self.tmp, "no-elf.data")
        p = without(["libelf.so.1"], [HWC, "record", "-e", "task-clock", "-o", out, "--", "true"])
        self.assert_clear_error(p, "libelf.so.1")
        self.assertFalse(os.path.exists(out))

    def test_record_z_without_libzstd(self):
        out = os.path.join(self.tmp, "no-zstd.data")
        p = without(["libzstd.so.1"],
                    [HWC, "record", "-z", "-e", "task-clock", "-o", out, "--", "true"])
        self.assert_clear_error(p, "libzstd.so.1")
        self.assertIn("install libzstd1", p.stderr)
        # Without -z, recording needs no libzstd.
        p = without(["libzstd.so.1"], [HWC, "record", "-e", "task-clock", "-o", out, "--", "true"])
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_metrics_without_json_c(self):
        events = "/usr/local/share/hwc-test/events"
        if not os.path.isdir(events):
            self.skipTest(events + " is absent (scripts/deps extracts perf's JSON tables there)")
        p = without(["libjson-c.so.5"],
                    ["env", "HWC_EVENTS_DIR=" + events, HWC, "stat", "-M", "all", "true"])
        self.assert_clear_error(p, "libjson-c.so.5")
        self.assertIn("install libjson-c5", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
