"""Kernel symbols from perf's copy of /proc/kallsyms in the build-id cache,
$HOME/.debug/[kernel.kallsyms]/BUILDID/kallsyms (issue 14, section 4):
reading it spares the kernel formatting all of /proc/kallsyms, but it is
taken only when it is the running kernel's: named by its build-id,
beginning as /proc/kallsyms does (the same addresses: the same boot), with
no module that is not loaded.  The copies here are /proc/kallsyms with
one hot kernel function renamed, so the names tell which file was read.

hwc record writes that copy as perf record does, once the recording is in
its file (RecordWritesCopy): perf reads it too, and a cache that is a
symbolic link or holds someone else's file is left as it is."""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
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


def running_kernel():
    """The running kernel's build-id and the text of /proc/kallsyms;
    SkipTest when there is no build-id or the addresses are hidden."""
    bid = kernel_build_id()
    if not bid:
        raise unittest.SkipTest("no build-id in /sys/kernel/notes")
    with open("/proc/kallsyms") as f:
        text = f.read()
    if not text or text.startswith("0000000000000000"):
        raise unittest.SkipTest("/proc/kallsyms hides its addresses here")
    return bid, text


class KallsymsCache(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bid, text = running_kernel()
        cls.lines = text.splitlines(keepends=True)
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


# A row of perf report -n --sort dso,sym --stdio in the kernel.
PERF_ROW = re.compile(r"^\s+[\d.]+%\s+(\d+)\s+\[kernel\.kallsyms\]\s+\[k\] (.+?)\s*$")
DD = ["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=300000"]


class RecordWritesCopy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.bid, text = running_kernel()
        cls.head = text.encode()[:65536]

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hwc-kcache-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.home = os.path.join(self.tmp, "home")
        os.makedirs(self.home)
        self.data = os.path.join(self.tmp, "k.data")
        self.entry = os.path.join(self.home, ".debug", "[kernel.kallsyms]", self.bid)
        self.copy = os.path.join(self.entry, "kallsyms")

    def env(self):
        return dict(os.environ, HOME=self.home)

    def record(self, *options, event="cpu-clock"):
        p = run([HWC, "record", "-e", event, *options, "-o", self.data, "--", *DD], env=self.env())
        if p.returncode != 0:
            raise AssertionError("hwc record failed (%d): %s" % (p.returncode, p.stderr))
        if "sampling user space only" in p.stderr:
            self.skipTest("kernel sampling is not allowed here")
        return p

    def kernel_samples(self):
        """Kernel symbol -> samples, by hwc report."""
        p = run([HWC, "report", "-i", self.data, "--json", "--no-children", "--sort", "dso,symbol"],
                env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        return {e["symbol"]: e["samples"] for e in json.loads(p.stdout)["entries"]
                if e["dso"] == "[kernel.kallsyms]"}

    def perf_kernel_samples(self, hide_host=False):
        """Kernel symbol -> samples, by perf report.  HIDE_HOST: with
        /sys/kernel/notes hidden in a mount namespace of its own, so that
        perf cannot tell the kernel is this one and takes the cached copy
        (for the running kernel it reads /proc/kallsyms)."""
        argv = ["perf", "report", "-i", self.data, "-n", "--no-children", "--sort", "dso,sym",
                "--stdio"]
        if hide_host:
            argv = ["unshare", "-m", "sh", "-c",
                    'mount --bind /dev/null /sys/kernel/notes && exec "$@"', "sh"] + argv
        p = run(argv, env=self.env())
        if p.returncode != 0:
            if hide_host:
                self.skipTest("cannot hide /sys/kernel/notes from perf here: " + p.stderr)
            raise AssertionError(p.stderr)
        return {m.group(2): int(m.group(1)) for m in map(PERF_ROW.match, p.stdout.splitlines()) if m}

    def test_record_writes_perfs_copy(self):
        # No kernel samples possible: no copy (the vDSO's image still).
        self.record(event="cpu-clock:u")
        self.assertTrue(os.path.isdir(os.path.join(self.home, ".debug", "[vdso]")))
        self.assertFalse(os.path.exists(os.path.join(self.home, ".debug", "[kernel.kallsyms]")))
        self.record()
        with open(self.copy, "rb") as f:
            self.assertEqual(f.read(len(self.head)), self.head)
        link = os.path.join(self.home, ".debug", ".build-id", self.bid[:2], self.bid[2:])
        self.assertEqual(os.readlink(link), "../../[kernel.kallsyms]/" + self.bid)
        if shutil.which("perf"):
            p = run(["perf", "buildid-cache", "-l"], env=self.env())
            self.assertIn("%s [kernel.kallsyms]" % self.bid, p.stdout.splitlines())

    def test_reports_read_the_copy(self):
        if not shutil.which("perf"):
            self.skipTest("perf is not installed")
        self.record()
        ours = self.kernel_samples()
        # The first rows of the copy are what the report checks it by.
        hot = [s for s in sorted(ours, key=ours.get, reverse=True)
               if s != "[unknown]" and (" " + s + "\n").encode() not in self.head]
        if not hot:
            self.skipTest("no kernel samples in a recording of dd")
        self.assertEqual(ours, {s: n for s, n in self.perf_kernel_samples().items()})
        with open(self.copy) as f:
            text = f.read()
        with open(self.copy, "w") as f:
            f.write(re.sub(r"(?m)^(\S+ \S )%s$" % re.escape(hot[0]), r"\1hwc_cached_" + hot[0], text))
        self.assertIn("hwc_cached_" + hot[0], self.kernel_samples())
        self.assertIn("hwc_cached_" + hot[0], self.perf_kernel_samples(hide_host=True))

    def test_no_buildid_cache(self):
        self.record("-N")
        self.assertFalse(os.path.exists(os.path.join(self.home, ".debug")))
        self.record("--no-buildid-cache")
        self.assertFalse(os.path.exists(os.path.join(self.home, ".debug")))

    def test_symlinked_directory_not_followed(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(elsewhere)
        os.makedirs(os.path.join(self.home, ".debug"))
        os.symlink(elsewhere, os.path.join(self.home, ".debug", "[kernel.kallsyms]"))
        p = self.record()
        self.assertEqual(os.listdir(elsewhere), [])
        self.assertIn("warning: no copy of kallsyms", p.stderr)
        self.assertIn("not a directory", p.stderr)
        self.assertGreater(json.loads(run([HWC, "report", "-i", self.data, "--json"], env=self.env()).stdout)
                           ["samples"], 0)

    def test_symlinked_file_not_followed(self):
        target = os.path.join(self.tmp, "precious")
        with open(target, "w") as f:
            f.write("precious\n")
        os.makedirs(self.entry)
        os.symlink(target, self.copy)
        p = self.record()
        self.assertEqual(os.readlink(self.copy), target)
        with open(target) as f:
            self.assertEqual(f.read(), "precious\n")
        self.assertIn("warning: no copy of kallsyms", p.stderr)

    def test_other_file_left_alone(self):
        os.makedirs(self.entry)
        with open(self.copy, "w") as f:
            f.write("ffffffff81000000 T someone_elses\n")
        os.chmod(self.copy, 0o600)
        before = os.stat(self.copy)
        p = self.record()
        after = os.stat(self.copy)
        self.assertEqual((after.st_ino, after.st_mode, after.st_size, after.st_mtime_ns),
                         (before.st_ino, before.st_mode, before.st_size, before.st_mtime_ns))
        # Quietly, as another boot's copy is left (the report reads /proc).
        self.assertNotIn("warning", p.stderr)
        self.assertIn("someone_elses", open(self.copy).read())

    def test_this_boots_copy_kept(self):
        # perf's copy (here one with a renamed symbol) is kept, and linked.
        os.makedirs(self.entry)
        with open(self.copy, "wb") as f:
            f.write(self.head + b"ffffffff81000000 T only_in_this_copy\n")
        before = os.stat(self.copy)
        p = self.record()
        self.assertNotIn("warning", p.stderr)
        self.assertEqual(os.stat(self.copy).st_mtime_ns, before.st_mtime_ns)
        link = os.path.join(self.home, ".debug", ".build-id", self.bid[:2], self.bid[2:])
        self.assertEqual(os.readlink(link), "../../[kernel.kallsyms]/" + self.bid)

    def test_copy_is_private(self):
        # The copy holds the kernel's real addresses (KASLR, kptr_restrict):
        # only its owner reads it, and the directories hwc makes are 0700.
        self.record()
        self.assertEqual(os.stat(self.copy).st_mode & 0o777, 0o600)
        for d in (os.path.join(self.home, ".debug"), os.path.dirname(self.entry), self.entry):
            self.assertEqual(os.stat(d).st_mode & 0o777, 0o700, d)
        vdso = os.path.join(self.home, ".debug", "[vdso]")
        image = os.path.join(vdso, os.listdir(vdso)[0], "vdso")
        self.assertEqual(os.stat(image).st_mode & 0o777, 0o666 & ~self.umask())

    @staticmethod
    def umask():
        mask = os.umask(0o22)
        os.umask(mask)
        return mask

    def other_users(self, path):
        if os.geteuid() != 0:
            self.skipTest("only root can make a directory another user's")
        os.chown(path, 65534, 65534)

    def test_home_of_another_user_left_alone(self):
        # Root under sudo -E: HOME is a user's, who could not remove
        # root's files from it; neither cache is written, one note says so.
        self.other_users(self.home)
        p = self.record("-a")
        self.assertEqual(os.listdir(self.home), [])
        self.assertEqual(p.stderr.count("note:"), 1, p.stderr)
        self.assertIn("belongs to uid 65534", p.stderr)
        self.assertNotIn("warning", p.stderr)

    def test_debug_of_another_user_left_alone(self):
        debug = os.path.join(self.home, ".debug")
        os.makedirs(debug)
        self.other_users(debug)
        p = self.record()
        self.assertEqual(os.listdir(debug), [])
        self.assertIn(debug + " belongs to uid 65534", p.stderr)

    def test_interrupted_recording_keeps_its_samples(self):
        # SIGINT ends the recording; the copy is written after the data.
        rec = subprocess.Popen([HWC, "record", "-a", "-e", "cpu-clock", "-o", self.data, "--",
                                "sleep", "60"], env=self.env(), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        rec.send_signal(signal.SIGINT)
        _, err = rec.communicate(timeout=60)
        self.assertEqual(rec.returncode, 130, err)
        written = int(re.search(r"(\d+) samples written", err).group(1))
        p = run([HWC, "report", "-i", self.data, "--json"], env=self.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout)["samples"], written)
        self.assertGreater(written, 0)
        self.assertTrue(os.path.isfile(self.copy))


if __name__ == "__main__":
    unittest.main(verbosity=2)
