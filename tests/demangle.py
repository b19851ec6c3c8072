"""C++ and Rust names demangled in every view and export of hwc report,
hwc top and pmcstat, and kept as they are with --no-demangle.

Real binaries: tests/demangle/names.cc built with g++ (a namespace,
template instances, overloads, an operator, a lambda, a std::vector
parameter), and tests/demangle/names.rs built with Debian's rustc in both
Rust manglings (legacy, rustc's default, and v0), sampled with cpu-clock
and frame pointers.  The reference names come from binutils' c++filt -i
(libiberty without its "implementation details": what perf -v shows) for
the same mangled symbols (nm), and from perf report on the same
recordings."""
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from hwctest import BUILD, SRC, program, run

HWC = program("hwc")
PMCSTAT = program("pmcstat")
HERE = os.path.join(SRC, "tests", "demangle")


def function_symbols(binary, pattern):
    """{mangled: demangled by c++filt -i} of BINARY's defined functions
    whose mangled name matches PATTERN."""
    nm = run(["nm", "--defined-only", binary])
    assert nm.returncode == 0, nm.stderr
    names = sorted({line.split()[2] for line in nm.stdout.splitlines()
                    if len(line.split()) == 3 and line.split()[1] in "tTwW"
                    and re.search(pattern, line.split()[2])})
    filt = run(["c++filt", "-i"], input="\n".join(names) + "\n")
    assert filt.returncode == 0, filt.stderr
    return dict(zip(names, filt.stdout.splitlines()))


def record(binary, arg, out):
    r = run([HWC, "record", "-e", "cpu-clock", "-F", "2000", "-g", "-o", out, "--", binary, arg])
    assert r.returncode == 0, r.stderr


def report_names(path, *opts, sampled=False):
    """The function names of hwc report --json's rows (SAMPLED: those with
    samples of their own only)."""
    r = run([HWC, "report", "--json", "--no-children", *opts, path])
    assert r.returncode == 0, r.stderr
    return {e["symbol"] for e in json.loads(r.stdout)["entries"] if e["samples"] or not sampled}


def perf_names(path, verbose):
    """The user-space function names perf report --stdio gives the rows
    (with -v: with their parameter types)."""
    r = run(["perf", "report", "-i", path, "--stdio", "--no-children", "--sort", "sym", "-g", "none"]
            + (["-v"] if verbose else []))
    assert r.returncode == 0, r.stderr
    return {m.group(1) for m in re.finditer(r"(?m)^ +[0-9.]+%.*?\[\.\] (.*?)\s*$", r.stdout)}


class Cxx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not shutil.which("g++") or not shutil.which("c++filt"):
            raise unittest.SkipTest("needs g++ and binutils' c++filt (scripts/deps)")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-demangle.")
        cls.bin = os.path.join(cls.tmp, "names")
        cc = run(["g++", "-std=c++17", "-O1", "-g", "-fno-omit-frame-pointer", "-Wall", "-Werror",
                  "-o", cls.bin, os.path.join(HERE, "names.cc")])
        assert cc.returncode == 0, cc.stderr
        cls.data = os.path.join(cls.tmp, "names.data")
        record(cls.bin, "200", cls.data)
        # The hot functions: everything in namespace hot, and main's lambda.
        cls.hot = function_symbols(cls.bin, r"3hot|^_ZZ4main")
        assert len(cls.hot) == 7, cls.hot

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_names_are_cxxfilts(self):
        names = report_names(self.data)
        for mangled, name in self.hot.items():
            self.assertIn(name, names, f"{mangled} should show as c++filt's {name!r}")
            self.assertNotIn(mangled, names)
        self.assertIn("main::{lambda(unsigned long)#1}::operator()(unsigned long) const", names)
        self.assertIn("hot::Vec::operator+(hot::Vec const&) const", names)

    def test_no_demangle_keeps_the_symbol_table_names(self):
        names = report_names(self.data, "--no-demangle")
        for mangled, name in self.hot.items():
            self.assertIn(mangled, names)
            self.assertNotIn(name, names)

    def test_perf_report_agrees(self):
        # perf shows parameter types with -v only; without, the names cut there.
        ours = report_names(self.data)
        theirs = perf_names(self.data, verbose=True)
        for name in self.hot.values():
            self.assertIn(name, theirs)
            self.assertIn(name, ours)

    def text_of(self, *opts):
        r = run([HWC, "report", *opts, self.data])
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def test_every_view_and_export(self):
        folded = os.path.join(self.tmp, "folded")
        pprof = os.path.join(self.tmp, "pprof.gz")
        svg = os.path.join(self.tmp, "flame.svg")
        outputs = {
            "flat": self.text_of(),
            "caller": self.text_of("--view=caller"),
            "callee": self.text_of("--view=callee"),
            "gprof": self.text_of("--view=gprof"),
            "json caller": self.text_of("--view=caller", "--json"),
        }
        self.text_of("--folded", folded, "--pprof", pprof, "--flamegraph", svg)
        with open(folded) as f:
            outputs["folded"] = f.read()
        with gzip.open(pprof) as f:
            outputs["pprof"] = f.read().decode("utf-8", "replace")
        with open(svg) as f:
            outputs["flamegraph"] = f.read()
        # Names without characters an export escapes (&, <, >, ").
        plain = [n for n in self.hot.values() if not re.search(r'[&<>"]', n)]
        self.assertGreaterEqual(len(plain), 3)
        for view, text in outputs.items():
            for name in plain:
                self.assertIn(name, text, f"{view} lacks {name!r}")
            for mangled in self.hot:
                self.assertNotIn(mangled, text, view)
        self.assertIn("hot::Vec::operator+(hot::Vec const&amp;) const", outputs["flamegraph"])

    def test_symbol_selection_takes_the_demangled_name(self):
        # --symbol takes a comma-separated list: a name without a comma.
        name = "hot::Vec::operator+(hot::Vec const&) const"
        self.assertEqual(report_names(self.data, "--symbol=" + name, sampled=True), {name})

    def test_pmcstat(self):
        plain = [n for n in self.hot.values() if "&" not in n]
        g = run([PMCSTAT, "-R", self.data, "-G", "-"])
        self.assertEqual(g.returncode, 0, g.stderr)
        calltree = run([PMCSTAT, "-R", self.data, "-F", "-"])
        self.assertEqual(calltree.returncode, 0, calltree.stderr)
        m = os.path.join(self.tmp, "pcs")
        pcs = run([PMCSTAT, "-R", self.data, "-m", m])
        self.assertEqual(pcs.returncode, 0, pcs.stderr)
        with open(m) as f:
            pcs_text = f.read()
        for text in (g.stdout, calltree.stdout, pcs_text):
            for name in plain:
                self.assertIn(name, text)
            for mangled in self.hot:
                self.assertNotIn(mangled, text)

    def test_top(self):
        r = run([HWC, "top", "--batch", "-n", "1", "--rows", "0", "--", self.bin, "100"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("hot::work(int, unsigned long)", r.stdout)
        self.assertNotIn("_ZN3hot", r.stdout)
        r = run([HWC, "top", "--batch", "-n", "1", "--rows", "0", "--no-demangle", "--",
                 self.bin, "100"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("_ZN3hot4workEim", r.stdout)
        self.assertNotIn("hot::work(int, unsigned long)", r.stdout)


class Rust(unittest.TestCase):
    """Both Rust manglings, named as perf report names them."""

    @classmethod
    def setUpClass(cls):
        # Debian's rustc (scripts/deps), not another toolchain on $PATH.
        cls.rustc = "/usr/bin/rustc" if os.access("/usr/bin/rustc", os.X_OK) else None
        if not cls.rustc or not shutil.which("perf"):
            raise unittest.SkipTest("needs Debian's rustc and perf (scripts/deps)")
        cls.tmp = tempfile.mkdtemp(prefix="hwc-demangle-rust.")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, mangling, prefix):
        os.makedirs(os.path.join(self.tmp, mangling), exist_ok=True)
        binary = os.path.join(self.tmp, mangling, "names")
        flags = ["-C", "symbol-mangling-version=v0"] if mangling == "v0" else []
        rc = run([self.rustc, "-C", "opt-level=1", "-g", "-C", "force-frame-pointers=yes", *flags,
                  "-o", binary, os.path.join(HERE, "names.rs")])
        self.assertEqual(rc.returncode, 0, rc.stderr)
        hot = function_symbols(binary, r"3hot")
        self.assertTrue(hot and all(m.startswith(prefix) for m in hot), hot)
        data = binary + ".data"
        record(binary, "300000000", data)
        ours, theirs = report_names(data), perf_names(data, verbose=False)
        expected = {"names::hot::spin::<u32>" if mangling == "v0" else "names::hot::spin",
                    "<names::hot::Acc as names::hot::Step>::step"}
        self.assertLessEqual(expected, theirs)
        self.assertLessEqual(expected, ours)
        # Every user-space name perf gives a row is one of ours.
        self.assertLessEqual({n for n in theirs if "::" in n}, ours)
        self.assertLessEqual(set(hot), report_names(data, "--no-demangle"))

    def test_v0(self):
        self.check("v0", "_R")

    def test_legacy(self):
        self.check("legacy", "_ZN")


if __name__ == "__main__":
    unittest.main()
