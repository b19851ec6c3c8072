"""Separate debug info without debuginfod (issue 14, section 4): libdwfl's
standard search ends, when nothing was found locally, by loading
libdebuginfod (libcurl, GnuTLS, OpenSSL: megabytes of mappings) only to
hear that no server is configured.  hwc asks it only when DEBUGINFOD_URLS
names a server; a debug file found by name (the stripped file's
.gnu_debuglink in its .debug directory) or by build-id is still found.
The dynamic loader's own trace (LD_DEBUG=files) tells what was loaded."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

from hwctest import program, run, workload

HWC = program("hwc")


class Debuginfo(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in ("objcopy", "strip"):
            if not shutil.which(tool):
                raise unittest.SkipTest(f"needs {tool} (binutils)")
        cls.tmp = tempfile.mkdtemp()
        # A stripped copy of the workload whose f1 and f2 (in .symtab only)
        # are named only from its debug file, and one without any.
        cls.linked = os.path.join(cls.tmp, "linked")
        cls.bare = os.path.join(cls.tmp, "bare")
        os.makedirs(os.path.join(cls.tmp, ".debug"))
        debug = os.path.join(cls.tmp, ".debug", "linked.debug")
        subprocess.run(["objcopy", "--only-keep-debug", workload("hotspots"), debug], check=True)
        for exe in (cls.linked, cls.bare):
            shutil.copy(workload("hotspots"), exe)
            subprocess.run(["strip", exe], check=True)
        subprocess.run(["objcopy", "--add-gnu-debuglink=" + debug, cls.linked], check=True)
        cls.home = os.path.join(cls.tmp, "home")  # no build-id cache to find them by
        os.makedirs(cls.home)
        cls.recs = {}
        for exe in (cls.linked, cls.bare):
            rec = exe + ".data"
            p = run([HWC, "record", "-e", "cpu-clock", "-o", rec, "--", exe, "4"])
            if p.returncode != 0:
                raise unittest.SkipTest("hwc record fails here: " + p.stderr)
            cls.recs[exe] = rec

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def report(self, exe, urls=None):
        """hwc report --json of EXE's recording, and the libraries loaded."""
        env = {k: v for k, v in os.environ.items() if k != "DEBUGINFOD_URLS"}
        env.update(HOME=self.home, LD_DEBUG="files")
        if urls is not None:
            env["DEBUGINFOD_URLS"] = urls
            env["DEBUGINFOD_CACHE_PATH"] = os.path.join(self.home, "cache")
            env["DEBUGINFOD_TIMEOUT"] = "5"
        p = run([HWC, "report", "--json", "--sort", "symbol", self.recs[exe]], env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        symbols = {e["symbol"] for e in json.loads(p.stdout)["entries"]}
        return symbols, "libdebuginfod.so" in p.stderr

    def test_no_debug_file_no_server_no_libdebuginfod(self):
        symbols, loaded = self.report(self.bare)
        self.assertNotIn("f2", symbols)
        self.assertFalse(loaded, "libdebuginfod loaded without DEBUGINFOD_URLS")
        symbols, loaded = self.report(self.bare, urls="")
        self.assertFalse(loaded, "libdebuginfod loaded with DEBUGINFOD_URLS empty")

    def test_debuglink_found_by_name_without_server(self):
        symbols, loaded = self.report(self.linked)
        self.assertIn("f2", symbols)
        self.assertIn("f1", symbols)
        self.assertFalse(loaded)

    def test_server_configured_asks_debuginfod(self):
        # A server that refuses at once: libdebuginfod is asked, finds
        # nothing, and the report goes on.
        symbols, loaded = self.report(self.bare, urls="http://127.0.0.1:9")
        self.assertTrue(loaded, "DEBUGINFOD_URLS names a server: libdwfl's search asks it")
        self.assertNotIn("f2", symbols)


if __name__ == "__main__":
    unittest.main(verbosity=2)
