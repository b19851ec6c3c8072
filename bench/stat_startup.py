#!/usr/bin/env python3
"""Start-up cost of `hwc stat -e task-clock true` next to `perf stat`.

Runs both commands alternately (so machine load hits both alike) and prints
the median wall time and peak RSS of each and hwc's ratio to perf.  Wall
time is measured around a direct start; peak RSS in separate runs under
/usr/bin/time -f %M (a fork of this Python process would report Python's
own memory).  Usage: bench/stat_startup.py [runs]   (HWC_BUILD: build dir)
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

def measure(argv, rss_file):
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + argv,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(rss_file) as f:
        return wall, int(f.read().split()[-1])

def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    build = os.environ.get("HWC_BUILD", os.path.join(os.path.dirname(__file__), "..", "build"))
    hwc = [os.path.join(build, "bin", "hwc"), "stat", "-e", "task-clock", "true"]
    perf = [shutil.which("perf") or sys.exit("perf is not installed"), "stat", "-e", "task-clock", "true"]
    if not os.access("/usr/bin/time", os.X_OK):
        sys.exit("/usr/bin/time is not installed (Debian package time)")
    results = {"hwc": [], "perf": [], "true": []}
    with tempfile.NamedTemporaryFile() as rss:
        for _ in range(runs):
            results["hwc"].append(measure(hwc, rss.name))
            results["perf"].append(measure(perf, rss.name))
            results["true"].append(measure(["true"], rss.name))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(m for _, m in v))
           for k, v in results.items()}
    for k, (wall, rss) in med.items():
        print(f"{k:5} median wall {wall * 1e3:8.3f} ms   median peak RSS {rss:7.0f} KB")
    # `true` alone: the cost of starting any process from here, paid by both.
    base = med["true"][0]
    print(f"hwc/perf: wall {med['hwc'][0] / med['perf'][0]:.3f}x"
          f" ({(med['hwc'][0] - base) / (med['perf'][0] - base):.3f}x without the start of `true` itself)"
          f"   RSS {med['hwc'][1] / med['perf'][1]:.3f}x   ({runs} runs each, alternating)")

if __name__ == "__main__":
    main()
