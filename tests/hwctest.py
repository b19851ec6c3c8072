"""What the CLI tests (tests/*.py) share: where the source tree and the
build are, running the build's programs (as nobody too), and what this
machine has.

A module, not a test: tests/run does not run it.  The tests import it by
name, since python3 puts a script's own directory (tests/) on sys.path."""
import os
import subprocess

SRC = os.environ.get("HWC_SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("HWC_BUILD", os.path.join(SRC, "build"))
SYSFS = "/sys/bus/event_source/devices"
# Does the kernel expose a core PMU (hardware counters)?  The VMs here do not.
HAVE_CORE_PMU = any(os.path.exists(f"{SYSFS}/{p}") for p in ("cpu", "cpu_core"))
# Put before a command, runs it as nobody without root's groups.
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
# A hang guard for every run, never a timing assertion.
LIMIT = 120


def program(name):
    """The build's program NAME: $HWC_BUILD/bin/NAME."""
    return os.path.join(BUILD, "bin", name)


def workload(name):
    """The build's workload NAME: $HWC_BUILD/workloads/NAME."""
    return os.path.join(BUILD, "workloads", name)


def run(argv, nobody=False, timeout=LIMIT, **kw):
    """Run ARGV to its end, its output captured as text; as nobody if
    NOBODY; stdin is /dev/null unless given.  More keywords go to
    subprocess.run (env, cwd, input, ...)."""
    if nobody:
        argv = NOBODY + list(argv)
    # Not the runner's stdin: in a pipe, `hwc report` with no file reads it.
    if "input" not in kw:
        kw.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def run_ok(argv, timeout=600, **kw):
    """run(), and an AssertionError with its standard error unless ARGV
    exits 0 (for the oracle and the setup steps of a test)."""
    p = run(argv, timeout=timeout, **kw)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(argv), p.returncode, p.stderr))
    return p


def online_cpus():
    """The numbers of the online CPUs, from sysfs."""
    with open("/sys/devices/system/cpu/online") as f:
        cpus = []
        for part in f.read().strip().split(","):
            a, _, b = part.partition("-")
            cpus += range(int(a), int(b or a) + 1)
        return cpus


def paranoid():
    """kernel.perf_event_paranoid."""
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        return int(f.read())


def as_perf_names(ours, theirs):
    """OURS, a symbol hwc names, with perf's name THEIRS where the two only
    differ by a fault of perf's: perf 6.1 names some PLT stubs of libc and
    ld.so "@plt" alone, which hwc names after their function; and it gives
    a sizeless _init (crti.o's) an end past the PLT stubs that follow it
    (its symbols__fixup_end runs before it makes the stubs), so that some
    stubs' samples are _init's.  Either may end in the same "+0x..."
    offset (script -F symoff)."""
    import re
    off = re.search(r"\+0x[0-9a-f]+$", theirs)
    off = off.group(0) if off else ""
    if not ours.endswith(off):
        return ours
    name, their_name = ours[:len(ours) - len(off)], theirs[:len(theirs) - len(off)]
    return theirs if their_name in ("@plt", "_init") and name.endswith("@plt") else ours


def script_samples(argv):
    """(ip, symbol, dso basename) -> samples, from the output of ARGV, a
    `script -F ip,sym,dso` (or ip,sym,symoff,dso) of hwc or perf."""
    import collections
    import re
    r = run_ok(argv)
    out = collections.Counter()
    for line in r.stdout.splitlines():
        m = re.match(r"^\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
        if not m:
            raise AssertionError("not a line of script -F ip,sym,dso: %r" % line)
        out[(m.group(1), m.group(2), os.path.basename(m.group(3)))] += 1
    return out


def record_by_both(directory, command):
    """Recordings of COMMAND (cpu-clock samples) by hwc record and by perf
    record, in DIRECTORY: {"hwc": path, "perf": path}.  Raises SkipTest
    when perf is absent or either cannot sample here."""
    import shutil
    import unittest
    if not shutil.which("perf"):
        raise unittest.SkipTest("perf is not installed")
    files = {}
    for name, argv in (("hwc", [program("hwc"), "record"]), ("perf", ["perf", "record", "-q"])):
        path = os.path.join(directory, name + ".data")
        r = run(argv + ["-e", "cpu-clock", "-o", path, "--", *command])
        if r.returncode != 0:
            raise unittest.SkipTest("%s cannot sample cpu-clock here: %s" % (name, r.stderr))
        files[name] = path
    return files
