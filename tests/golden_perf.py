#!/usr/bin/env python3
"""perf as the oracle for the golden encoding table.

For every row of tests/golden/encodings.tsv whose perf column is not "-",
run `perf stat -vv -e SPEC true` (perf prints each perf_event_attr it tries,
even when the open fails on this machine without a PMU) and compare type,
config, config1, config2, exclude_user, exclude_kernel, exclude_hv and
precise_ip with what hwc makes of the row's spec (`golden --encode`).

  =        perf must encode the spec the same way, or reject it as hwc does
  perf:S   perf must encode S the same way.  For a preset S is the event
           it stands for; for a libpfm4 row S is a name from perf's JSON
           event tables, and PERF_CPUID makes perf load the table of the
           row's model, so Intel's and AMD's own event lists check libpfm4's
           (perf 6.1 has one table, amdzen3, for all of family 19h)
  ~        hwc differs from perf 6.1 on purpose: perf must still differ, so
           that a perf that changes its mind is noticed

Rows on a fake sysfs tree run perf with SYSFS_PATH set to that tree, which
perf's sysfs lookups honour.  Finally a few specs on this machine's real
sysfs (msr/tsc/, a tracepoint) are compared where they exist.

exclude_guest and exclude_host are not compared: perf sets exclude_guest
depending on which modifier letters were typed (and clears it again when a
software PMU rejects it), while hwc never sets either bit except for the G
and H modifiers.  That policy is decided; golden.c checks hwc's bits.
"""
import json
import os
import shutil
import subprocess
import sys

from hwctest import BUILD, SRC

GOLDEN = os.path.join(BUILD, "tests", "golden")
TABLE = os.path.join(SRC, "tests", "golden", "encodings.tsv")
FIELDS = ["type", "config", "config1", "config2",
          "exclude_user", "exclude_kernel", "exclude_hv", "precise_ip"]
INTEL = "tests/golden/sysfs"
AMD = "tests/golden/sysfs-amd"
# libpfm4 model -> (the CPUID perf picks its JSON table by, fake sysfs tree)
MODELS = {
    "skl": ("GenuineIntel-6-5E", INTEL),
    "icl": ("GenuineIntel-6-7E", INTEL),
    "spr": ("GenuineIntel-6-8F", INTEL),
    "amd64_fam19h_zen3": ("AuthenticAMD-25-01", AMD),
    "amd64_fam19h_zen4": ("AuthenticAMD-25-11", AMD),
}
# perf prints config1 and config2 under their breakpoint names too.
PERF_KEYS = {"{ bp_addr, config1 }": "config1", "{ bp_len, config2 }": "config2"}


def perf_attrs(spec, env):
    """The attributes perf tries for SPEC, first attempts only, or None
    when perf rejects the spec."""
    out = subprocess.run(["perf", "stat", "-vv", "-e", spec, "true"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=120).stdout
    attrs, cur, failed_last = [], None, False
    for line in out.splitlines():
        if line.startswith("perf_event_attr:"):
            cur = dict.fromkeys(FIELDS, 0)
            continue
        if cur is not None and line.startswith("  ") and not line.startswith("  -"):
            key, _, value = line.strip().rpartition("  ")
            key = PERF_KEYS.get(key.strip(), key.strip())
            if key in cur:
                cur[key] = int(value.strip(), 0)
            continue
        if cur is not None and line.startswith("sys_perf_event_open"):
            # perf retries a failed open with other bits (exclude_guest,
            # exclude_kernel): the same event again, not a new one.
            prev = attrs[-1] if attrs else None
            same = prev and all(prev[k] == cur[k] for k in FIELDS[:4])
            if not (failed_last and same):
                attrs.append(cur)
            cur = None
        if line.startswith("sys_perf_event_open failed"):
            failed_last = True
        elif line.startswith("sys_perf_event_open:"):
            failed_last = False
    return attrs if attrs else None


def hwc_attrs(spec, env):
    out = subprocess.run([GOLDEN, "--encode", spec], env=env, stdout=subprocess.PIPE,
                         universal_newlines=True, timeout=60, check=True).stdout
    events = [json.loads(line) for line in out.splitlines()]
    if events and "error" in events[0]:
        return None, events[0]["error"]
    return events, None


def environment(row_env, model=None):
    """(hwc's environment, perf's environment) for a row."""
    hwc = dict(os.environ)
    perf = dict(os.environ)
    for var in ("LIBPFM_FORCE_PMU", "HWC_SYSFS_ROOT", "SYSFS_PATH", "PERF_CPUID"):
        hwc.pop(var, None)
        perf.pop(var, None)
    if row_env != "-":
        for assignment in row_env.split():
            name, _, value = assignment.partition("=")
            if name == "HWC_SYSFS_ROOT":
                value = os.path.join(SRC, value)
                perf["SYSFS_PATH"] = value
            if name == "LIBPFM_FORCE_PMU":
                model = value
            hwc[name] = value
    if model:
        cpuid, tree = MODELS[model]
        perf["PERF_CPUID"] = cpuid
        perf["SYSFS_PATH"] = os.path.join(SRC, tree)
    return hwc, perf


def show(attrs):
    return " ".join("%s=%#x" % (k, attrs[k]) if k.startswith("config") else "%s=%d" % (k, attrs[k])
                    for k in FIELDS)


def compare(where, spec, perf_spec, hwc_env, perf_env, mode):
    """Check one spec; returns a failure message or None."""
    events, error = hwc_attrs(spec, hwc_env)
    perf = perf_attrs(perf_spec, perf_env)
    label = spec if perf_spec == spec else "%s (perf: %s)" % (spec, perf_spec)
    if mode == "=" and events is None:
        if perf is not None:
            return "%s: %s\n  hwc:  error: %s\n  perf: %s" % (where, label, error, show(perf[0]))
        return None
    if events is None:
        if mode == "~" and perf is not None:
            return None
        return "%s: %s\n  hwc:  error: %s\n  perf: %s" % (
            where, label, error, "rejects it" if perf is None else show(perf[0]))
    if perf is None:
        return "%s: %s\n  hwc:  %s\n  perf: rejects it" % (where, label, show(events[0]))
    n = min(len(events), len(perf))
    differs = [i for i in range(n) if any(events[i][k] != perf[i][k] for k in FIELDS)]
    if mode == "~":
        if differs:
            return None
        return ("%s: %s: perf now encodes it as hwc does; change the perf column to '='\n"
                "  both: %s" % (where, label, show(perf[0])))
    if differs:
        i = differs[0]
        return "%s: %s (event %d)\n  hwc:  %s\n  perf: %s" % (
            where, label, i, show(events[i]), show(perf[i]))
    return None


def rows():
    with open(TABLE) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            spec, env, perf = line.split("\t")[:3]
            yield "%s:%d" % (TABLE, lineno), spec, env, perf


def live_checks():
    """Specs on this machine's real sysfs, where the PMU exists."""
    checks = []
    msr = "/sys/bus/event_source/devices/msr"
    if os.path.isdir(msr):
        checks += ["msr/tsc/", "msr/tsc/u", "msr/event=0x0/k", "msr/tsc,period=1000/"]
    else:
        print("skip: no msr PMU here (%s is absent): no live msr rows" % msr)
    tp = "/sys/kernel/tracing/events/sched/sched_switch"
    if os.path.isdir(tp):
        checks += ["sched:sched_switch"]
    else:
        print("skip: tracefs is not mounted at /sys/kernel/tracing: no tracepoint row")
    return checks


def main():
    if not shutil.which("perf"):
        print("SKIP: perf is not installed (Debian package linux-perf)", file=sys.stderr)
        return 77
    if not os.access(GOLDEN, os.X_OK):
        print("%s is missing: run make first" % GOLDEN, file=sys.stderr)
        return 1
    failures, checked, seen = [], 0, set()
    for where, spec, env, mode in rows():
        if mode == "-":
            continue
        perf_spec, model = spec, None
        if mode.startswith("perf:"):
            perf_spec, mode = mode[5:], "="
            model = spec.split("::")[0].lower() if "::" in spec else None
        elif mode not in ("=", "~"):
            failures.append("%s: bad perf column '%s'" % (where, mode))
            continue
        if (spec, env, perf_spec) in seen:  # several rows for the events of one spec
            continue
        seen.add((spec, env, perf_spec))
        hwc_env, perf_env = environment(env, model)
        msg = compare(where, spec, perf_spec, hwc_env, perf_env, mode)
        checked += 1
        if msg:
            failures.append(msg)
    for spec in live_checks():
        hwc_env, perf_env = environment("-")
        msg = compare("live", spec, spec, hwc_env, perf_env, "=")
        checked += 1
        if msg:
            failures.append(msg)
    for msg in failures:
        print(msg)
    print("%d specs compared with perf, %d differ" % (checked, len(failures)))
    if checked < 150:
        print("fewer than 150 specs compared: the table lost its perf rows")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
