"""Samples in kernel modules named as perf names them: the DSO "[module]"
and the module's function from its .ko file, else from /proc/kallsyms'
"[module]" entries (tests/pmu/kernel_modules.sh runs the same comparison
in the emulated arm64 machine, whose Debian kernel loads modules).  A
system-wide cpu-clock recording, made while the machine reads files (the
file system and block drivers are modules on a distribution kernel), is
reported by hwc report and perf report; every module row of perf's must
be hwc's, with the same samples.  Skips, saying why, on a kernel without
loadable modules (no /proc/modules) or when no sample lands in a module."""
import json
import os
import re
import shutil
import sys
import tempfile
import unittest

from hwctest import program, run

HWC = program("hwc")
ROW = re.compile(r"^\s+[\d.]+%\s+(\d+)\s+(\[\S+\])\s+\[k\] (.+?)\s*$")


def loaded_modules():
    try:
        with open("/proc/modules") as f:
            return [line.split()[0] for line in f]
    except OSError:
        return None


class KernelModules(unittest.TestCase):
    def setUp(self):
        mods = loaded_modules()
        if not mods:
            self.skipTest("no kernel module is loaded")
        if not shutil.which("perf"):
            self.skipTest("perf is not installed")
        self.dir = tempfile.mkdtemp(prefix="hwc-modules-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_module_samples_named_as_perf(self):
        path = os.path.join(self.dir, "sys.data")
        # Work in the modules: read every file under /usr, dropping the page
        # cache first where we may, for a few seconds.
        work = ("sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null; "
                "timeout 4 find /usr -type f -exec cat {} + > /dev/null 2>&1; true")
        r = run([HWC, "record", "-a", "-e", "cpu-clock", "-o", path, "--", "sh", "-c", work])
        if r.returncode != 0:
            self.skipTest("hwc record -a cannot sample here: " + r.stderr)
        r = run(["perf", "report", "-i", path, "-n", "--no-children", "--sort", "dso,sym", "--stdio"])
        self.assertEqual(r.returncode, 0, r.stderr)
        theirs = {}
        for line in r.stdout.splitlines():
            m = ROW.match(line)
            if m and m.group(2) not in ("[kernel.kallsyms]", "[unknown]") \
                    and not m.group(3).startswith("0x"):
                theirs[(m.group(2), m.group(3))] = int(m.group(1))
        if not theirs:
            self.skipTest("no sample landed in a kernel module (modules: %s)"
                          % " ".join(loaded_modules()[:10]))
        r = run([HWC, "report", "-i", path, "--json", "--no-children", "--sort", "dso,symbol"])
        self.assertEqual(r.returncode, 0, r.stderr)
        ours = {(e["dso"], e["symbol"]): e["samples"] for e in json.loads(r.stdout)["entries"]
                if e["kernel"]}
        self.assertEqual({k: ours.get(k) for k in theirs}, theirs)


if __name__ == "__main__":
    if loaded_modules() is None:
        print("SKIP: this kernel has no loadable modules (no /proc/modules: CONFIG_MODULES "
              "is off), so no sample can land in one", file=sys.stderr)
        sys.exit(77)
    unittest.main(verbosity=2)
