"""hwc annotate on real recordings of the bundled hotspots workload, made
by perf and by hwc, with perf annotate as the oracle.

`perf annotate --stdio f2` and `hwc annotate --stdio f2` on the same file
must list the same instruction addresses with the same mnemonics, and
agree on the share of the hottest instructions within 1 point.  perf
disassembles with objdump and hwc with capstone: both write AT&T syntax,
but capstone adds the operand-size suffix objdump leaves out ("pushq" for
"push", "retq" for "ret", "movabsq" for "movabs"), so mnemonics are
compared with that suffix dropped; operands are not compared (objdump
writes "$0x0,%edx" where capstone writes "$0, %edx").

The source lines come from DWARF (the loop's text between the
instructions), --json carries the same numbers, the HTML page is looked at
in headless Chromium (the hottest row is shaded in the colour the page
gives it, across the table), and bad inputs (an unknown symbol, a
recording without samples, a binary that is gone) fail clearly."""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

from flamegraph import chromium, read_png, CHROMIUM
from hwctest import BUILD, SRC, program, run, workload

HWC = program("hwc")
HOTSPOTS = workload("hotspots")
INSN = re.compile(r"^\s+([\d.]+)\s+:\s+([0-9a-f]+):\s+(\S+)(.*)$")
TARGET = re.compile(r"[0-9a-f]+ <[^>]+>$")


def targets(text):
    """{address: "1199 <mark>"} of the direct branches of a --stdio listing."""
    out = {}
    for line in text.splitlines():
        m = INSN.match(line)
        # Not objdump's comments on data ("mov 0x2e75(%rip),%rax  # 4070 <sink>").
        t = m and "#" not in m.group(4) and TARGET.search(m.group(4).strip())
        if t:
            out[int(m.group(2), 16)] = t.group(0)
    return out


def parse_stdio(text):
    """[(percent, address, mnemonic)] of the first function in a --stdio listing."""
    out = []
    for line in text.splitlines():
        if out and line.startswith(" Percent |"):
            break
        m = INSN.match(line)
        if m:
            out.append((float(m.group(1)), int(m.group(2), 16), m.group(3)))
    return out


def same_mnemonic(ours, objdump):
    """Equal, or equal once capstone's AT&T size suffix is dropped."""
    return ours == objdump or (ours[-1] in "bwlq" and ours[:-1] == objdump)


class Annotate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("perf") or not shutil.which("objdump"):
            raise unittest.SkipTest("perf and objdump (perf annotate's disassembler) are needed")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-annotate-")
        cls.perf_rec = os.path.join(cls.tmp, "perf.data")
        p = run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", cls.perf_rec, HOTSPOTS, "20"])
        if p.returncode:
            raise unittest.SkipTest("perf record failed: " + p.stderr)
        cls.hwc_rec = os.path.join(cls.tmp, "hwc.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-F", "2000", "-o", cls.hwc_rec, HOTSPOTS, "20"])
        assert p.returncode == 0, p.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def hwc(self, *args):
        p = run([HWC, "annotate", *args])
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def compare_with_perf(self, rec):
        p = run(["perf", "annotate", "--stdio", "-i", rec, "f2"])
        theirs = parse_stdio(p.stdout)
        if not theirs:
            self.skipTest("perf annotate listed no instructions: " + p.stderr[-300:])
        text = self.hwc("--stdio", "-i", rec, "f2")
        ours = parse_stdio(text)
        # Branch targets named as objdump names them: "1199 <mark>", "1224 <f2+0x39>".
        self.assertEqual(targets(text), targets(p.stdout))
        self.assertTrue(any(t.endswith(" <mark>") for t in targets(text).values()), text)
        self.assertEqual([a for _, a, _ in ours], [a for _, a, _ in theirs])
        for (_, a, m), (_, _, n) in zip(ours, theirs):
            self.assertTrue(same_mnemonic(m, n), "%x: %s vs objdump's %s" % (a, m, n))
        # The hottest instructions (perf's three first) have the same share.
        ours_at = {a: pct for pct, a, _ in ours}
        hottest = sorted(theirs, reverse=True)[:3]
        self.assertGreater(hottest[0][0], 30)  # the loop: not an empty profile
        for pct, a, _ in hottest:
            self.assertLess(abs(ours_at[a] - pct), 1.0, "at %x: hwc %.2f, perf %.2f" % (a, ours_at[a], pct))

    def test_perf_recording_agrees_with_perf_annotate(self):
        self.compare_with_perf(self.perf_rec)

    def test_hwc_recording_agrees_with_perf_annotate(self):
        self.compare_with_perf(self.hwc_rec)

    def test_samples_as_perf_script_reads_them(self):
        # hwc annotate reads a sample's ip, pid, time and period where the
        # sample_type puts them, not through the full decoder: each of f2's
        # instructions must have exactly the samples and period perf script
        # gives them, with ADDR, ID and CPU before PERIOD in two events
        # (the second annotated), and with no PERIOD (-c) at all; two
        # processes map f2 at two addresses.
        both = '"$0" & "$0"; wait'
        for name, opts, event in (("fields.data", ["-e", "cpu-clock,task-clock", "-F", "2000", "-d",
                                                   "--sample-cpu"], "task-clock"),
                                  ("fixed.data", ["-e", "cpu-clock", "-c", "200000"], "cpu-clock")):
            rec = os.path.join(self.tmp, name)
            p = run(["perf", "record", "-q", *opts, "-o", rec, "--", "sh", "-c", both, HOTSPOTS, "5"])
            self.assertEqual(p.returncode, 0, p.stderr)
            p = run(["perf", "script", "-i", rec, "-F", "event,pid,ip,sym,symoff,period"])
            self.assertEqual(p.returncode, 0, p.stderr)
            theirs, pids = {}, set()
            for pid, period, ev, _, where in re.findall(r"^\s*(\d+)\s+(\d+)\s+(\S+):\s+([0-9a-f]+) (\S+)$",
                                                        p.stdout, re.M):
                if ev == event and where.startswith("f2+0x"):
                    off = int(where[len("f2+"):], 16)
                    n, total = theirs.get(off, (0, 0))
                    theirs[off] = (n + 1, total + int(period))
                    pids.add(pid)
            self.assertEqual(len(pids), 2, "f2 sampled in both processes")
            doc = json.loads(self.hwc("--json", "--event", event, "-i", rec, "f2"))
            self.assertEqual(doc["event"], event)
            ours = {i["offset"]: (i["samples"], i["period"])
                    for i in doc["functions"][0]["instructions"] if i["samples"]}
            self.assertEqual(ours, theirs, name)

    def test_source_lines_between_instructions(self):
        text = self.hwc("-i", self.perf_rec, "f2")
        lines = text.splitlines()
        loop = [i for i, l in enumerate(lines) if "x = x * 6364136223846793005UL" in l]
        self.assertTrue(loop, text)
        self.assertRegex(lines[loop[0]], r"^\s+: 28\s+x = x \* 6364136223846793005UL")
        self.assertIn("         :      work():", lines)  # the inlined function, by name
        self.assertRegex(lines[3], r"^\s+:\s+[0-9a-f]{16} <f2>:$")
        # --no-source: instructions only.
        bare = self.hwc("-i", self.perf_rec, "--no-source", "f2")
        self.assertNotIn("6364136223846793005UL", bare)
        self.assertEqual(parse_stdio(bare), parse_stdio(text))

    def test_json_matches_text(self):
        doc = json.loads(self.hwc("--json", "-i", self.perf_rec, "f2"))
        self.assertEqual(doc["schema"], "hwc-annotate/1")
        self.assertEqual(len(doc["functions"]), 1)
        f = doc["functions"][0]
        self.assertEqual(f["symbol"], "f2")
        self.assertEqual(f["machine"], "x86_64" if os.uname().machine == "x86_64" else "aarch64")
        insns = f["instructions"]
        self.assertEqual(sum(i["samples"] for i in insns), f["samples"])
        self.assertAlmostEqual(sum(i["percent"] for i in insns), 100.0, places=6)
        text = parse_stdio(self.hwc("-i", self.perf_rec, "f2"))
        self.assertEqual([(round(i["percent"], 2), int(i["address"], 16)) for i in insns],
                         [(pct, a) for pct, a, _ in text])
        hot = max(insns, key=lambda i: i["samples"])
        self.assertEqual(hot["function"], "work")
        self.assertIn(hot["line"], (27, 28))
        self.assertTrue(hot["file"].endswith("workloads/hotspots.c"), hot["file"])

    def test_perf_pipe_on_stdin(self):
        # perf record -o - | hwc annotate: the stream, read as hwc report reads it.
        p = run(["sh", "-c", '"$0" record -q -e cpu-clock -F 2000 -o - "$1" 5 | "$2" annotate --json f2',
                 "perf", HOTSPOTS, HWC])
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["file"], "standard input")
        f = doc["functions"][0]
        self.assertEqual(f["symbol"], "f2")
        self.assertGreater(f["samples"], 100)
        self.assertAlmostEqual(sum(i["percent"] for i in f["instructions"]), 100.0, places=6)

    def test_cxx_names(self):
        # SYMBOL as every view names it (demangled), or mangled with --no-demangle.
        if not shutil.which("g++"):
            self.skipTest("g++ is absent")
        src, prog, rec = (os.path.join(self.tmp, n) for n in ("spin.cc", "spin", "spin.data"))
        with open(src, "w") as f:
            f.write("namespace ns { template <typename T> __attribute__((noinline)) T spin(T n) {\n"
                    "    T s = 0; for (T i = 0; i < n; i++) s = s * 3 + i; return s; } }\n"
                    "int main() { volatile long r = ns::spin<long>(200000000L); return r == 1; }\n")
        self.assertEqual(run(["g++", "-O1", "-g", "-o", prog, src]).returncode, 0)
        p = run([HWC, "record", "-e", "cpu-clock", "-F", "2000", "-o", rec, prog])
        self.assertEqual(p.returncode, 0, p.stderr)
        text = self.hwc("-i", rec, "long ns::spin<long>(long)")
        self.assertRegex(text, r"(?m)^\s+:\s+[0-9a-f]{16} <long ns::spin<long>\(long\)>:$")
        self.assertIn("         :      long ns::spin<long>(long):", text.splitlines())
        mangled = self.hwc("-i", rec, "--no-demangle", "_ZN2ns4spinIlEET_S1_")
        self.assertEqual([a for _, a, _ in parse_stdio(mangled)], [a for _, a, _ in parse_stdio(text)])
        self.fails(["-i", rec, "ns::spin"], "no function 'ns::spin'", "long ns::spin<long>(long)")

    def test_hottest_first_without_symbol(self):
        text = self.hwc("-i", self.perf_rec)
        names = re.findall(r"^\s+:\s+[0-9a-f]{16} <(.+)>:$", text, re.M)
        self.assertEqual(names[:2], ["f2", "f1"])

    def test_html_highlights_hot_lines(self):
        if not CHROMIUM:
            self.skipTest("chromium is not installed (scripts/deps installs it)")
        page = os.path.join(self.tmp, "f2.html")
        self.hwc("--html", page, "-i", self.perf_rec, "f2")
        with open(page) as f:
            html = f.read()
        rows = re.findall(r'<tr class="insn"(?: style="background:rgb\((\d+),(\d+),(\d+)\)")? title="(\d+) '
                          r'samples"><td class="pct">([\d.]+)</td>', html)
        self.assertEqual(len(rows), len(parse_stdio(self.hwc("-i", self.perf_rec, "f2"))))
        hot = max(rows, key=lambda r: float(r[4]))
        cold = [r for r in rows if r[3] == "0"]
        self.assertTrue(hot[0] and cold and not cold[0][0], "hot rows shaded, cold rows not")
        # Source lines are shaded by the share of the instructions under them.
        srcs = re.findall(r'<tr class="src"(?: style="background:rgb\((\d+),(\d+),(\d+)\)")?><td class="pct">'
                          r'([\d.]+)</td>', html)
        hot_src = max(srcs, key=lambda r: float(r[3]))
        self.assertTrue(hot_src[0] and float(hot_src[3]) >= float(hot[4]), hot_src)
        rgb = tuple(int(v) for v in hot[:3])
        self.assertNotEqual(rgb, (255, 255, 255))
        shot = os.path.join(self.tmp, "shot.png")
        p = chromium(self.tmp, "--window-size=1000,1400", "--screenshot=" + shot, "file://" + page)
        self.assertTrue(os.path.exists(shot), p.stderr)
        width, _, pixels = read_png(shot)
        # A band of the hot colour across most of the table, a row high.
        band = [y for y, row in enumerate(pixels) if sum(1 for px in row if px == rgb) > width // 2]
        self.assertGreaterEqual(len(band), 10, "no row of rgb%s in the screenshot" % (rgb,))
        dom = chromium(self.tmp, "--dump-dom", "file://" + page).stdout
        self.assertIn("f2", dom)
        self.assertEqual(dom.count('class="insn"'), len(rows))

    # ------------------------------------------------------------ errors

    def fails(self, args, *needles):
        p = run([HWC, "annotate", *args])
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertFalse(p.stdout)
        self.assertNotIn("Traceback", p.stderr)
        for n in needles:
            self.assertIn(n, p.stderr)
        return p

    def test_unknown_symbol(self):
        self.fails(["-i", self.perf_rec, "no_such_function"], "no function 'no_such_function'", "f2")

    def test_kernel_function(self):
        # A kernel function has samples, but hwc annotate reads no kernel
        # code: it says so, not only that the function has none.
        rec = os.path.join(self.tmp, "kernel.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-F", "2000", "-o", rec, "--",
                 "dd", "if=/dev/zero", "of=/dev/null", "bs=64k", "count=40000"])
        self.assertEqual(p.returncode, 0, p.stderr)
        p = run([HWC, "report", "-i", rec, "--json", "--no-children", "--sort", "symbol"])
        self.assertEqual(p.returncode, 0, p.stderr)
        kernel = [e["symbol"] for e in json.loads(p.stdout)["entries"]
                  if e["kernel"] and not e["symbol"].startswith(("0x", "["))]
        if not kernel:
            self.skipTest("no sample named in the kernel (perf_event_paranoid, kptr_restrict?)")
        self.fails(["-i", rec, kernel[0]], "no function '%s'" % kernel[0],
                   "samples are in the kernel or its modules, whose code it does not read")

    def test_recording_without_samples(self):
        empty = os.path.join(self.tmp, "empty.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-c", "1000000000000", "-o", empty, "true"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.fails(["-i", empty], "no samples")
        self.fails(["-i", empty, "f2"], "no samples")

    def test_binary_gone(self):
        # Without its build-id: the copy in perf's build-id cache (~/.debug)
        # of the same binary must not stand in for it.
        copy = os.path.join(self.tmp, "hotspots-copy")
        p = run(["objcopy", "--remove-section", ".note.gnu.build-id", HOTSPOTS, copy])
        self.assertEqual(p.returncode, 0, p.stderr)
        rec = os.path.join(self.tmp, "gone.data")
        p = run([HWC, "record", "-e", "cpu-clock", "-F", "2000", "-o", rec, copy, "5"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.hwc("-i", rec, "f2")  # while it is there
        os.unlink(copy)
        self.fails(["-i", rec, "f2"], "no function 'f2'", copy, "no longer exists")
        # Without SYMBOL, what can be read is shown, with a warning.
        p = run([HWC, "annotate", "-i", rec])
        self.assertIn("warning: no symbols for %s: the file no longer exists" % copy, p.stderr)
        self.assertNotRegex(p.stdout, r"<f[12]>:")

    def test_sample_cut_short(self):
        # A user sample cut after its ip (the rest made a FINISHED_ROUND
        # record, so that the stream still parses) is too short for its
        # pid: said with its offset, no listing.
        with open(self.perf_rec, "rb") as f:
            data = bytearray(f.read())
        pos, size = struct.unpack_from("<QQ", data, 40)  # the data section
        end = pos + size
        while pos < end:
            kind, misc, n = struct.unpack_from("<IHH", data, pos)
            if kind == 9 and misc & 7 == 2 and n >= 32:  # SAMPLE, PERF_RECORD_MISC_USER
                break
            pos += n
        self.assertLess(pos, end, "no user sample")
        struct.pack_into("<IHH", data, pos, 9, misc, 16)
        struct.pack_into("<IHH", data, pos + 16, 68, 0, n - 16)
        cut = os.path.join(self.tmp, "cut.data")
        with open(cut, "wb") as f:
            f.write(data)
        self.fails(["-i", cut, "f2"], "perf.data offset %d: sample record of 16 bytes is too short" % pos)

    def test_usage_errors(self):
        self.fails(["--json", "--stdio", "-i", self.perf_rec], "choose one")
        self.fails(["-i", self.perf_rec, "f1", "f2"], "one SYMBOL")
        self.fails(["-i", os.path.join(self.tmp, "missing.data")], "missing.data")


class Arm64(unittest.TestCase):
    """arm64 code, recorded in scripts/pmu-vm's emulated ARMv8 machine with
    its real PMU: cycles:u (with -icount shift=0 a cycle is an instruction,
    and QEMU raises the overflow interrupt on this counter) sampled every
    100003 (a prime: no aliasing with the loop) fall evenly on f2's
    4-instruction loop, and the listing has the addresses and (movz/mov
    aside: capstone writes the instruction, objdump its alias) the
    mnemonics of the cross binutils' objdump (the guest has Debian's
    libcapstone4)."""

    def test_arm64_loop(self):
        pmu_vm = os.path.join(SRC, "scripts", "pmu-vm")
        hotspots = os.path.join(SRC, "build-arm64", "workloads", "hotspots")
        objdump = shutil.which("aarch64-linux-gnu-objdump")
        if not shutil.which("qemu-system-aarch64") or not objdump:
            self.skipTest("needs qemu-system-aarch64 and aarch64-linux-gnu-objdump (scripts/deps arm64)")
        if not os.path.exists(hotspots):
            self.skipTest("no arm64 build: make ARCH=arm64 (or make check-pmu) first")
        if "libasan" in run(["readelf", "-d", os.path.join(BUILD, "lib", "libhwc.so.0")]).stdout:
            self.skipTest("the guest runs the arm64 build, never this sanitized one: the plain suite tests it")
        script = ("hwc record -e cycles:u -c 100003 -o h.data ./hotspots 2 >/dev/null && "
                  "hwc annotate --json -i h.data f2")
        p = run([pmu_vm, "--copy", hotspots, "--", "sh", "-c", script], timeout=840)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        f = json.loads(p.stdout)["functions"][0]
        self.assertEqual((f["symbol"], f["machine"]), ("f2", "aarch64"))
        insns = f["instructions"]
        self.assertTrue(all(i["size"] == 4 for i in insns))
        loop = [i for i in insns if i["percent"] > 5]
        self.assertEqual([i["mnemonic"] for i in loop], ["madd", "add", "cmp", "b.ne"], loop)
        for i in loop:
            self.assertLess(abs(i["percent"] - 25), 1, i)
        # objdump's listing of the same binary on the host.
        d = run([objdump, "-d", "--no-show-raw-insn", "--disassemble=f2", hotspots]).stdout
        theirs = [(int(a, 16), m) for a, m in re.findall(r"^ *([0-9a-f]+):\t(\S+)", d, re.M)]
        ours = [(int(i["address"], 16), i["mnemonic"]) for i in insns]
        self.assertEqual([a for a, _ in ours], [a for a, _ in theirs])
        for (a, m), (_, n) in zip(ours, theirs):
            self.assertTrue(m == n or (m, n) == ("movz", "mov"), "%x: %s vs objdump's %s" % (a, m, n))


if __name__ == "__main__":
    unittest.main()
