#!/usr/bin/python3
"""Accuracy of `coinfer lut fill` (per-module MEDN-paper regressors) on this machine, on held-out
measurements. Prints Markdown for bench/RESULTS.md and writes everything under --out.

Steps (about 8 minutes here; needs root for the 0.3-core cap):
 1. module samples: `coinfer profile --modules` over every model and dataset, one thread (2 cores
    free, as the server LUT) at batch 1..4, and under the 0.3-core cap (as the device LUT) at batch 1;
 2. case "batches": the measured server table of traces/lut_measured/ cut to batch 1..4
    (bench/lut_holdout.py), a scenario needing 1..8 filled, the 36 filled entries compared with the
    measured ones;
 3. case "model": GCN on MR, never measured on either device type: both tables filled whole (every
    range a hierarchical scheduler may consult), then profiled here for real and compared.
Per op, the regressors' held-out test scores (P10/P20 = share within 10 %/20 %, MAPE) come from
fill_report.json. Errors are reported per entry (as the paper) and weighted by time (sum |est - meas| /
sum meas, which is what a run's timing feels).
usage: /usr/bin/python3 bench/lut_fill_accuracy.py [--out results/lut-fill] [--variants 65] [--capped-variants 26]
(from the repository root)"""
import argparse
import json
import os
import subprocess
import sys

import h5py
import numpy as np

COINFER = "build/coinfer"


def sh(cmd, **kw):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def compare(filled_file, ref_file, group):
    f = h5py.File(filled_file)[group]
    r = h5py.File(ref_file)[group]
    err = f["latency_estimate_error"][:]
    est = ~np.isnan(err)
    B = min(f["latency_mean_s"].shape[2], r["latency_mean_s"].shape[2])
    est = est[:, :, :B]
    a, m = f["latency_mean_s"][:, :, :B][est], r["latency_mean_s"][:, :, :B][est]
    ok = ~np.isnan(m)
    a, m = a[ok], m[ok]
    rel = np.abs(a - m) / m
    claimed = err[:, :, :B][est][ok]
    return {"entries": int(len(m)), "p10": float(np.mean(rel <= 0.1)), "p20": float(np.mean(rel <= 0.2)),
            "mape": float(np.mean(rel)), "time_weighted": float(np.sum(np.abs(a - m)) / np.sum(m)),
            "within_claimed_error": float(np.mean(rel <= claimed)), "median_claimed": float(np.median(claimed))}


def scenario_text(name, luts, device_type, server_type, model, dataset, max_batch):
    return f"""name: {name}
duration_s: 10
luts: [{luts}]
servers:
  - {{id: edge, type: {server_type}, workers: 1, batch: {{window_ms: 10, max_size: {max_batch}}}}}
devices:
  - {{id: dev, type: {device_type}, model: {model}, dataset: {dataset}, link: {{bandwidth_mbps: 10}}, workload: {{arrival: closed_loop}}, strategy: local}}
scheduler: {{name: hierarchical}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="results/lut-fill")
    ap.add_argument("--variants", type=int, default=65)
    ap.add_argument("--capped-variants", type=int, default=26)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    free, capped = os.path.join(out, "samples-2vcpu.csv"), os.path.join(out, "samples-0.3cpu.csv")
    if not os.path.exists(free):
        sh([COINFER, "profile", "--modules", str(a.variants), "--batch", "1..4", "--repeats", "3", "--warmup", "1",
            "--device-type", "x86-epyc-2vcpu", "--out", free, "-q"])
    if not os.path.exists(capped):
        sh([COINFER, "profile", "--modules", str(a.capped_variants), "--batch", "1..1", "--repeats", "3", "--warmup", "1",
            "--cpu-quota", "0.3", "--device-type", "x86-epyc-0.3cpu", "--out", capped, "-q"])
    samples = ["--samples", free, "--samples", capped]
    results = {}

    # Case "batches": server table cut to 1..4, scenario needs 1..8.
    held = os.path.join(out, "held-batches")
    os.makedirs(held, exist_ok=True)
    sh(["/usr/bin/python3", "bench/lut_holdout.py", "traces/lut_measured/x86-epyc-2vcpu.h5", os.path.join(held, "x86-epyc-2vcpu.h5"), "--max-batch", "4"])
    sh(["cp", "traces/lut_measured/x86-epyc-0.3cpu.h5", held])
    fill_b = os.path.join(out, "fill-batches")
    sh(["rm", "-rf", fill_b])
    sh([COINFER, "lut", "fill", "scenarios/validate/bw5_dev1.yaml", "--set", "servers.0.batch.max_size=8", "--set", f"luts=[{held}]",
        "--out", fill_b, "--seed", str(a.seed), "-q"] + samples)
    results["batches"] = compare(os.path.join(fill_b, "x86-epyc-2vcpu.h5"), "traces/lut_measured/x86-epyc-2vcpu.h5", "dgcnn/modelnet40")

    # Case "model": GCN on MR on both device types, never measured; filled whole, then measured.
    scn = os.path.join(out, "gcn-mr.yaml")
    open(scn, "w").write(scenario_text("gcn-mr", os.path.abspath("traces/lut_measured"), "x86-epyc-0.3cpu", "x86-epyc-2vcpu", "gcn", "mr", 4))
    fill_m = os.path.join(out, "fill-model")
    sh(["rm", "-rf", fill_m])
    sh([COINFER, "lut", "fill", scn, "--out", fill_m, "--seed", str(a.seed), "-q"] + samples)
    ref = os.path.join(out, "ref")
    os.makedirs(ref, exist_ok=True)
    if not os.path.exists(os.path.join(ref, "x86-epyc-2vcpu.h5")):
        sh([COINFER, "profile", "--model", "gcn", "--dataset", "mr", "--batch", "1..4", "--repeats", "10", "--warmup", "2",
            "--device-type", "x86-epyc-2vcpu", "--out", os.path.join(ref, "x86-epyc-2vcpu.h5"), "-q"])
    if not os.path.exists(os.path.join(ref, "x86-epyc-0.3cpu.h5")):
        sh([COINFER, "profile", "--model", "gcn", "--dataset", "mr", "--batch", "1..1", "--repeats", "10", "--warmup", "2",
            "--cpu-quota", "0.3", "--device-type", "x86-epyc-0.3cpu", "--out", os.path.join(ref, "x86-epyc-0.3cpu.h5"), "-q"])
    for dt in ("x86-epyc-2vcpu", "x86-epyc-0.3cpu"):
        results["model " + dt] = compare(os.path.join(fill_m, dt + ".h5"), os.path.join(ref, dt + ".h5"), "gcn/mr")

    report = json.load(open(os.path.join(fill_m, "fill_report.json")))
    json.dump({"cases": results, "report_ops": report["ops"]}, open(os.path.join(out, "accuracy.json"), "w"), indent=2)
    pc = lambda v: f"{100 * v:.1f} %"
    print("Per-module regressors (held-out test split of the samples; P10 / P20 / MAPE):\n")
    print("| op | train | test | LR | MLP | MEDN | chosen (Algorithm 1) |")
    print("|---|---|---|---|---|---|---|")
    for o in report["ops"]:
        cols = [f"{pc(o['test_scores'][k]['p10'])} / {pc(o['test_scores'][k]['p20'])} / {pc(o['test_scores'][k]['mape'])}" for k in ("lr", "mlp", "medn")]
        print(f"| {o['op']} | {o['train']} | {o['test']} | " + " | ".join(cols) + f" | {o['chosen']} |")
    if report.get("skipped_ops"):
        print("\nSkipped (too few samples):", ", ".join(f"{k} ({v})" for k, v in report["skipped_ops"].items()))
    print("\nFilled entries against held-out measurements:\n")
    print("| case | entries | P10 | P20 | MAPE | time-weighted error | within its claimed error | median claimed error |")
    print("|---|---|---|---|---|---|---|---|")
    for k, r in results.items():
        print(f"| {k} | {r['entries']} | {pc(r['p10'])} | {pc(r['p20'])} | {pc(r['mape'])} | {pc(r['time_weighted'])} | "
              f"{pc(r['within_claimed_error'])} | {pc(r['median_claimed'])} |")


if __name__ == "__main__":
    main()
