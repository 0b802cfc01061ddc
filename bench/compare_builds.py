#!/usr/bin/python3
"""Do two builds of coinfer simulate alike? Runs every shipped scenario (scenarios/quickstart.yaml,
scenarios/paper/*.yaml, scenarios/validate/*.yaml) under every listed scheduler, each once as written and
once with --set devices.0.strategy=data_parallel, with both binaries, and compares the results: the exit
status, and every dataset and attribute of results.h5 except /provenance (which names the build); datasets only
the new build writes are listed, not compared. A
refactoring of the simulator that must not change its results (issue 33: the device and server loops)
shows "differ 0".
usage: /usr/bin/python3 bench/compare_builds.py OLD_COINFER NEW_COINFER [--schedulers static,local,...]
       (from the repository root; about 10 minutes on 2 cores for the default 576 runs)"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

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


def same(a, b, added):
    """Equal on every dataset both have; the new build's extra datasets (a schema addition, e.g. issue 37's
    /servers/energy_j) are collected in `added` instead of counting as a difference. A dataset the new
    build lost is a difference."""
    if not a.keys() <= b.keys():
        return False
    added.update(b.keys() - a.keys())
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind == "f":
            if not np.array_equal(x, y, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--schedulers", default="static,local,offload,greedy,dp,hierarchical,gcode,oracle")
    a = ap.parse_args()
    scenarios = ["scenarios/quickstart.yaml"] + sorted(glob.glob("scenarios/paper/*.yaml")) + sorted(glob.glob("scenarios/validate/*.yaml"))
    runs = differ = 0
    added = set()
    with tempfile.TemporaryDirectory() as work:
        for scenario in scenarios:
            for sched in a.schedulers.split(","):
                for extra in ([], ["--set", "devices.0.strategy=data_parallel"]):
                    results = []
                    for i, binary in enumerate((a.old, a.new)):
                        out = os.path.join(work, f"{i}")
                        subprocess.run(["rm", "-rf", out])
                        rc = subprocess.run([binary, "run", "-q", scenario, "--out", out, "--set", f"scheduler.name={sched}"] + extra,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
                        results.append((rc, datasets(out + "/results.h5") if rc == 0 else None))
                    runs += 1
                    label = f"{scenario} x {sched}" + (" x data_parallel" if extra else "")
                    if results[0][0] != results[1][0]:
                        print(f"DIFFER {label}: exit {results[0][0]} vs {results[1][0]}", flush=True)
                        differ += 1
                    elif results[0][1] is not None and not same(results[0][1], results[1][1], added):
                        print(f"DIFFER {label}: results.h5", flush=True)
                        differ += 1
                    if runs % 50 == 0:
                        print(f"  {runs} runs, {differ} differ", file=sys.stderr, flush=True)
    if added:
        print("datasets only the new build writes (compared nowhere): " + ", ".join(sorted(added)))
    print(f"runs {runs} differ {differ}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
