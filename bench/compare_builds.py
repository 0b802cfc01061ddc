#!/usr/bin/python3
"""Do two builds of coinfer simulate alike? Runs every shipped scenario (scenarios/quickstart.yaml,
scenarios/paper/*.yaml, scenarios/validate/*.yaml) under every listed scheduler, each once as written and
once with --set devices.0.strategy=data_parallel, with both binaries, and compares the results: the exit
status, every dataset and attribute of results.h5 except /provenance (which names the build), and summary.json
in key order except made_by and data_files (the build and its paths), and for a run whose results differ says by
how much (the largest relative change of summary.json's `total` figures); datasets only
the new build writes are listed, not compared. A
refactoring of the simulator that must not change its results (the device and server loops)
shows "differ 0".
--ignore A,B leaves out datasets whose names contain A or B (e.g. devices/energy after a change of the
energy model alone), counted apart: a run whose only differences are there is "differs only in ignored".
--old-root DIR runs the old binary in DIR (a checkout of its commit: `git worktree add DIR COMMIT`) on the
same scenario names, so each build reads its own scenarios and data files (traces/devices.yaml, LUTs).
usage: /usr/bin/python3 bench/compare_builds.py OLD_COINFER NEW_COINFER [--schedulers static,local,...] [--ignore A,B] [--old-root DIR]
       (from the repository root; about 10 minutes on 2 cores for the default 576 runs)"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

import json

import h5py
import numpy as np


def datasets(path):
    """Every dataset (values) and attribute of results.h5 outside /provenance, by name."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if name.startswith("provenance"):
                return
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
            for k, v in obj.attrs.items():
                out[name + "@" + k] = v
        f.visititems(visit)
    return out


def summary(path):
    """summary.json as nested (key, value) lists in file order, without made_by and data_files."""
    def strip(pairs):
        return [(k, v) for k, v in pairs if k not in ("made_by", "data_files")]
    with open(path) as f:
        top = json.load(f, object_pairs_hook=list)
    return strip(top)


def same(a, b, added, ignored=(), hit=None):
    """Equal on every dataset both have; the new build's extra datasets (a schema addition, e.g.
    /servers/energy_j) are collected in `added` instead of counting as a difference. A dataset the new
    build lost is a difference."""
    if not a.keys() <= b.keys():
        return False
    added.update(b.keys() - a.keys())
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if any(p in k for p in ignored):
            if hit is not None and (x.shape != y.shape or not np.array_equal(x, y, equal_nan=x.dtype.kind == "f")):
                hit.add(k)
            continue
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def total_change(a, b):
    """The largest relative change between two summaries' `total` figures (throughput, latency mean and
    percentiles, energy, counts), as (fraction, name): how much a differing run differs."""
    def flat(pairs, prefix=""):
        out = {}
        for k, v in pairs:
            if isinstance(v, list) and v and isinstance(v[0], tuple):
                out.update(flat(v, prefix + k + "."))
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                out[prefix + k] = float(v)
        return out
    ta, tb = flat(dict(a).get("total", [])), flat(dict(b).get("total", []))
    worst = (0.0, "")
    for k in ta.keys() & tb.keys():
        x, y = ta[k], tb[k]
        change = abs(y - x) / abs(x) if x else (0.0 if y == 0 else float("inf"))
        if change > worst[0]:
            worst = (change, k)
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--schedulers", default="static,local,offload,greedy,dp,hierarchical,gcode,oracle")
    ap.add_argument("--ignore", default="", help="comma-separated substrings of dataset names left out of the comparison")
    ap.add_argument("--old-root", default="", help="run the old binary in this checkout (its own scenarios and data files)")
    a = ap.parse_args()
    ignored = tuple(x for x in a.ignore.split(",") if x)
    ignored_hits = set()
    only_ignored = 0
    scenarios = ["scenarios/quickstart.yaml"] + sorted(glob.glob("scenarios/paper/*.yaml")) + sorted(glob.glob("scenarios/validate/*.yaml"))
    runs = differ = 0
    worst_change = (0.0, "")
    added = set()
    with tempfile.TemporaryDirectory() as work:
        for scenario in scenarios:
            for sched in a.schedulers.split(","):
                for extra in ([], ["--set", "devices.0.strategy=data_parallel"]):
                    results = []
                    for i, binary in enumerate((a.old, a.new)):
                        out = os.path.join(work, f"{i}")
                        subprocess.run(["rm", "-rf", out])
                        cwd = a.old_root if i == 0 and a.old_root else None
                        rc = subprocess.run([os.path.abspath(binary), "run", "-q", scenario, "--out", out, "--set", f"scheduler.name={sched}"] + extra,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd).returncode
                        results.append((rc, datasets(out + "/results.h5") if rc == 0 else None,
                                        summary(out + "/summary.json") if rc == 0 else None))
                    runs += 1
                    label = f"{scenario} x {sched}" + (" x data_parallel" if extra else "")
                    if results[0][0] != results[1][0]:
                        print(f"DIFFER {label}: exit {results[0][0]} vs {results[1][0]}", flush=True)
                        differ += 1
                    elif results[0][1] is not None:
                        hit = set()
                        if not same(results[0][1], results[1][1], added, ignored, hit):
                            change, name = total_change(results[0][2], results[1][2])
                            worst_change = max(worst_change, (change, label + ": " + name))
                            print(f"DIFFER {label}: results.h5 (totals: at most {100 * change:.3g} % in {name or 'none'})", flush=True)
                            differ += 1
                        elif results[0][2] != results[1][2]:
                            print(f"DIFFER {label}: summary.json", flush=True)
                            differ += 1
                        elif hit:
                            only_ignored += 1
                            ignored_hits |= hit
                    if runs % 50 == 0:
                        print(f"  {runs} runs, {differ} differ", file=sys.stderr, flush=True)
    if added:
        print("datasets only the new build writes (compared nowhere): " + ", ".join(sorted(added)))
    if ignored:
        print(f"differ only in ignored datasets: {only_ignored} runs ({', '.join(sorted(ignored_hits)) or 'none'})")
    if differ:
        print(f"largest change of a `total` figure in a differing run: {100 * worst_change[0]:.3g} % ({worst_change[1]})")
    print(f"runs {runs} differ {differ}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
