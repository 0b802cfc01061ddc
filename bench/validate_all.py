#!/usr/bin/python3
"""Runs `coinfer validate` on every scenario of scenarios/validate/ (three schedulers each) and prints a
Markdown table of the simulated vs testbed figures (mean latency, throughput, their errors) and whether
the simulated ranking of schedulers held. Needs root for the namespace testbed.
usage: /usr/bin/python3 bench/validate_all.py [--out results/validate-all] [--schedulers offload,local,hierarchical]
(from the repository root; about 2 minutes per scenario)"""
import argparse
import glob
import json
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="results/validate-all")
    ap.add_argument("--schedulers", default="offload,local,hierarchical")
    ap.add_argument("--set", action="append", default=[])
    args = ap.parse_args()
    rows = []
    files = sorted(glob.glob("scenarios/validate/bw*_dev*.yaml"), key=lambda f: (int(f.split("bw")[1].split("_")[0]), f))
    for f in files:
        name = os.path.basename(f)[:-5]
        out = os.path.join(args.out, name)
        cmd = ["build/coinfer", "validate", f, "--schedulers", args.schedulers, "--out", out]
        for s in args.set:
            cmd += ["--set", s]
        print("running", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        rep = json.load(open(os.path.join(out, "validate.json")))
        for sched, metrics in rep["schedulers"].items():
            m = {(r["scope"], r["metric"]): r for r in metrics}
            lat, thr = m[("total", "latency_mean_ms")], m[("total", "throughput_rps")]
            rows.append((name, sched, lat["sim"], lat["testbed"], lat["error_pct"], thr["sim"], thr["testbed"], thr["error_pct"],
                         rep.get("ranking", {}).get("held")))
    print("| scenario | scheduler | latency sim (ms) | latency testbed (ms) | error | throughput sim (req/s) | throughput testbed | error | ranking held |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    within = 0
    for r in rows:
        ok = abs(r[4]) <= 10 and abs(r[7]) <= 10
        within += ok
        print(f"| {r[0]} | {r[1]} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:+.1f} % | {r[5]:.2f} | {r[6]:.2f} | {r[7]:+.1f} % | {'yes' if r[8] else 'no'} |")
    print(f"\n{within} of {len(rows)} (scenario, scheduler) pairs have both mean latency and throughput within 10 %.")


if __name__ == "__main__":
    main()
