#!/usr/bin/env python3
"""Write the seed corpus of a fuzz target (tests/fuzz.sh) into OUTDIR,
taken from perf's JSON tree at TREE (scripts/deps extracts it from Debian's
linux-source: it is not copied into this repository).

  seeds.py metric_expr TREE OUTDIR   the MetricExpr and MetricThreshold
                                     texts of a few models, one per file,
                                     and a few expressions of our own
  seeds.py json_tables TREE OUTDIR   a few models cut down to some metrics,
                                     the events they name and the standard
                                     events those name, as json_tables_fuzz
                                     takes them: events, metrics, standard
                                     events, separated by lines "==="
"""
import json
import os
import re
import sys

# (architecture directory, model directory or "" for the architecture's
# own files, files of metrics); a few kinds: Intel's TMA with #SMT_on and
# metrics of metrics, AMD's, Arm's with ArchStdEvent, POWER's.
MODELS = [
    ("x86", "skylake", ["skl-metrics.json"]),
    ("x86", "alderlake", ["adl-metrics.json"]),
    ("x86", "amdzen4", ["recommended.json"]),
    ("arm64", "arm/neoverse-n1", ["metrics.json"]),
    ("arm64", "", ["sbsa.json"]),
    ("powerpc", "power10", ["metrics.json"]),
]

# Our own: the corners of the grammar.
EXPRESSIONS = [
    "a + b * c - d / e % f",
    "-(-x) if #smt_on else y if #core_wide < 1 else NaN",
    "min(a, max(b, d_ratio(c, 0))) | e & f ^ g > h < i",
    "source_count(cpu@ev\\,cmask\\=1@) * has_event(x) + strcmp_cpuid_str(0x41)",
    "uncore_imc_?@cas_count_read@ + 1e-3 + .5 + 5. + 1e9",
    "ev\\-name:u / duration_time * #num_cpus_online / #slots",
]

SEP = "\n===\n"


def records(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return []
    return [r for r in data if isinstance(r, dict)] if isinstance(data, list) else []


def names_in(text):
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", text or ""))


def metric_expr(tree, out):
    texts = list(EXPRESSIONS)
    for arch, model, files in MODELS:
        found = [r[k] for name in files for r in records(os.path.join(tree, arch, model, name))
                 for k in ("MetricExpr", "MetricThreshold") if k in r]
        texts += found[:80]
    seen = set()
    for t in texts:
        if t not in seen:
            seen.add(t)
            with open(os.path.join(out, "expr-%04d" % len(seen)), "w") as f:
                f.write(t)


def json_tables(tree, out):
    for n, (arch, model, files) in enumerate(MODELS):
        mdir = os.path.join(tree, arch, model)
        metrics = [r for f in files for r in records(os.path.join(mdir, f)) if "MetricName" in r]
        std = {}
        for f in sorted(os.listdir(os.path.join(tree, arch))):
            if f.endswith(".json"):
                for r in records(os.path.join(tree, arch, f)):
                    std[r.get("EventName", r.get("MetricName", "")).upper()] = r
        events = {}
        if model:
            for f in sorted(os.listdir(mdir)):
                if f.endswith(".json") and f not in files:
                    for r in records(os.path.join(mdir, f)):
                        name = r.get("EventName", r.get("ArchStdEvent", ""))
                        events[name.upper()] = r
        # Some metrics, the ones they refer to, the events all of them name.
        by_name = {m["MetricName"]: m for m in metrics}
        chosen, todo = [], [m["MetricName"] for m in metrics[:6]]
        while todo and len(chosen) < 14:
            m = by_name.get(todo.pop(0))
            if m and m not in chosen:
                chosen.append(m)
                todo += sorted(names_in(m.get("MetricExpr")) & set(by_name))
        wanted = set()
        for m in chosen:
            wanted |= {w.upper() for w in names_in(m.get("MetricExpr")) | names_in(m.get("MetricThreshold"))}
        evs = [events[w] for w in sorted(wanted) if w in events][:14]
        evs += [r for k, r in sorted(events.items())[:4] if r not in evs]
        stds = [std[r["ArchStdEvent"].upper()] for r in evs
                if "ArchStdEvent" in r and r["ArchStdEvent"].upper() in std]
        stds += [std[w] for w in sorted(wanted) if w in std and std[w] not in stds][:10]
        with open(os.path.join(out, "model-%d" % n), "w") as f:
            f.write(SEP.join(json.dumps(x, indent=4) for x in (evs, chosen, stds)))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("metric_expr", "json_tables"):
        sys.exit(__doc__)
    globals()[sys.argv[1]](sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
