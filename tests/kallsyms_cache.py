"""Kernel symbols from perf's copy of /proc/kallsyms in the build-id cache,
$HOME/.debug/[kernel.kallsyms]/BUILDID/kallsyms (issue 14, section 4):
reading it spares the kernel formatting all of /proc/kallsyms, but it is
taken only when it is the running kernel's: named by its build-id,
beginning as /proc/kallsyms does (the same addresses: the same boot), with
no module that is not loaded.  The copies here are /proc/kallsyms with
one hot kernel function renamed, so the names tell which file was read."""
import json
import os
import shutil
import tempfile
import unittest

from hwctest import program, run

HWC = program("hwc")


def kernel_build_id():
    """The running kernel's build-id from /sys/kernel/notes, or None."""
    try:
        with open("/sys/kernel/notes", "rb") as f:
            notes = f.read()
    except OSError:
        return None
    off = 0
    while off + 12 <= len(notes):
        namesz, descsz, kind = (int.from_bytes(notes[off + i:off + i + 4], "little") for i in (0, 4, 8))
        name = off + 12
        desc = name + (namesz + 3) // 4 * 4
        if kind == 3 and notes[name:name + namesz] == b"GNU\0":
            return notes[desc:desc + descsz].hex()
        off = desc + (descsz + 3) // 4 * 4
    return None


class KallsymsCache(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bid = kernel_build_id()
        if not cls.bid:
            raise unittest.SkipTest("no build-id in /sys/kernel/notes")
        with open("/proc/kallsyms") as f:
            cls.lines = f.read().splitlines(keepends=True)
        if not cls.lines or cls.lines[0].startswith("0000000000000000"):
            raise unittest.SkipTest("/proc/kallsyms hides its addresses here")
        cls.tmp = tempfile.mkdtemp()
        cls.data = os.path.join(cls.tmp, "perf.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-o", cls.data, "--",
                 "dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=300000"])
        if p.returncode != 0:
            raise unittest.SkipTest("hwc record fails here: " + p.stderr)
        # The hottest kernel function named nowhere in the first 4 KiB.
        head = len("".join(cls.lines).encode()[:4096].decode(errors="ignore").splitlines())
        early = {l.split()[2] for l in cls.lines[:head + 1] if len(l.split()) >= 3}
        names = [e["symbol"] for e in cls.report(os.path.join(cls.tmp, "empty"))
                 if e["dso"] == "[kernel.kallsyms]" and e["known"] and e["symbol"] not in early]
        if not names:
            raise unittest.SkipTest("no kernel samples in a recording of dd")
        cls.hot = names[0]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    @classmethod
    def report(cls, home):
        os.makedirs(home, exist_ok=True)
        p = run([HWC, "report", "--json", "--sort", "dso,symbol", cls.data],
                env=dict(os.environ, HOME=home))
        if p.returncode != 0:
            raise AssertionError(p.stderr)
        return json.loads(p.stdout)["entries"]

    def copy(self, name, lines, bid=None):
        """A HOME whose cache holds LINES (the hot function renamed) for BID."""
        home = os.path.join(self.tmp, name)
        d = os.path.join(home, ".debug", "[kernel.kallsyms]", bid or self.bid)
        os.makedirs(d)
        renamed = []
        for l in lines:
            f = l.split()
            if len(f) >= 3 and f[2] == self.hot:
                l = l.replace(" " + self.hot, " hwc_cached_" + self.hot, 1)
            renamed.append(l)
        with open(os.path.join(d, "kallsyms"), "w") as f:
            f.writelines(renamed)
        return home

    def symbols(self, home):
        return {e["symbol"] for e in self.report(home) if e["dso"] == "[kernel.kallsyms]"}

    def test_copy_of_the_running_kernel_is_read(self):
        names = self.symbols(self.copy("same", self.lines))
        self.assertIn("hwc_cached_" + self.hot, names)
        self.assertNotIn(self.hot, names)

    def test_other_kernel_not_read(self):
        names = self.symbols(self.copy("other", self.lines, bid="0" * 40))
        self.assertIn(self.hot, names)

    def test_other_boot_not_read(self):
        # KASLR: another boot of the same kernel has every address moved.
        moved = ["%016x%s" % (int(l[:16], 16) + 0x200000, l[16:]) for l in self.lines]
        names = self.symbols(self.copy("moved", moved))
        self.assertIn(self.hot, names)
        self.assertNotIn("hwc_cached_" + self.hot, names)

    def test_module_not_loaded_not_read(self):
        gone = self.lines + ["ffffffffc0000000 t gone_function\t[hwc_unloaded_module]\n"]
        names = self.symbols(self.copy("unloaded", gone))
        self.assertIn(self.hot, names)


if __name__ == "__main__":
    unittest.main(verbosity=2)
