#!/usr/bin/env python3
"""Operator classes against the roofline, on a CPU coinfer can measure (this machine's).

1. `coinfer profile --operator-classes` measures this CPU's rate per operator class (micro-benchmarks:
   one operator per class at four sizes; traces/README.md "Operator classes").
2. `coinfer profile --ranges stages` measures every stage of every shipped model and dataset with the
   LibTorch models (the truth here).
3. Two synthesised LUTs predict those stages: the class model (the step 1 rates, nothing else), and
   the roofline of a single efficiency, calibrated so that DGCNN on ModelNet40 runs whole in its
   measured time (its peaks: the measured dense FLOP rate and element-wise bandwidth). The roofline's
   calibration model is an INPUT for it, every other model a prediction; the class model has no input
   from step 2.
4. Prints, stage by stage, measured and predicted times and their ratios, and a summary per model: the
   median |log2 ratio| and the share of stages within a factor of 1.25 and 2 (stages measured below
   20 us are listed but left out of the summary: timer resolution).

Usage: bench/operator_classes.py [--build build] [--threads 1] [--repeats 5] [--out DIR] [--only MODEL/DATASET,...]
Writes DIR/classes.yaml, DIR/measured.h5, DIR/profiles.yaml, DIR/classes.h5, DIR/roofline.h5, DIR/report.json.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = ["dgcnn/modelnet40", "gcode/modelnet40", "gcn/mr", "gcn/siot", "gcn/yelp", "gat/mr", "gat/siot", "gat/yelp",
         "sage/mr", "sage/siot", "sage/yelp", "gcn_wide/pubmed"]
CALIBRATION = "dgcnn/modelnet40"


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def stage_means(path, pair):
    """Seconds of each single stage [i, i+1) at batch 1."""
    with h5py.File(path, "r") as f:
        m = f[pair]["latency_mean_s"][()]
        return [float(m[i][i + 1][0]) for i in range(m.shape[0] - 1)]


def read_classes(path):
    """The entry written by coinfer profile: (rates per class, launch_us, source, stage_overhead_ms)."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    oc = doc["operator_classes"]
    launch, source = oc.pop("launch_us"), oc.pop("source")
    return oc, launch, source, doc.get("stage_overhead_ms", 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="")
    ap.add_argument("--only", default="", help="MODEL/DATASET,... (default: every shipped pair)")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="coinfer-opclasses-")
    os.makedirs(out, exist_ok=True)
    pairs = a.only.split(",") if a.only else PAIRS
    if CALIBRATION not in pairs:
        pairs = [CALIBRATION] + pairs
    profile = os.path.join(a.build, "coinfer-profile")
    coinfer = os.path.join(a.build, "coinfer")
    classes_yaml = os.path.join(out, "classes.yaml")
    print("measuring the operator classes ...", flush=True)
    run([profile, "--operator-classes", "--threads", str(a.threads), "--out", classes_yaml, "-q"])
    rates, launch, source, overhead_ms = read_classes(classes_yaml)
    measured = os.path.join(out, "measured.h5")
    for pair in pairs:
        model, dataset = pair.split("/")
        print("measuring the stages of %s ..." % pair, flush=True)
        run([profile, "--model", model, "--dataset", dataset, "--ranges", "stages", "--batch", "1..1", "--repeats", str(a.repeats),
             "--warmup", "2", "--threads", str(a.threads), "--device-type", "this-cpu", "--out", measured, "--replace", "-q"])
    cal_ms = sum(stage_means(measured, CALIBRATION)) * 1e3
    entry = "".join("        %s: %s\n" % (c, json.dumps(r)) for c, r in rates.items())
    peaks = "        peak_gflops: %r\n        mem_gbps: %r\n" % (rates["dense"]["gflops"], rates["elementwise"]["gbps"])
    profiles = os.path.join(out, "profiles.yaml")
    with open(profiles, "w") as f:
        f.write("# bench/operator_classes.py: this CPU as two processors, the class model and a calibrated roofline\nprofiles:\n")
        f.write("  this-cpu:\n    role: device\n    description: \"this machine's CPU (%s)\"\n    processors:\n" % source)
        f.write("      classes:\n        kind: cpu\n        description: \"operator classes measured here\"\n" + peaks +
                "        stage_overhead_ms: %r\n" % overhead_ms +
                "        operator_classes:\n          source: \"%s\"\n          launch_us: %r\n" % (source, launch) +
                entry.replace("        ", "          "))
        f.write("      roofline:\n        kind: cpu\n        description: \"peaks: the measured dense FLOP rate and element-wise bandwidth\"\n" + peaks +
                "        calibrate: {model: dgcnn, dataset: modelnet40, whole_model_ms: %r, source: \"its stages measured here (INPUT)\"}\n" % cal_ms)
    preds = {}
    for proc in ("classes", "roofline"):
        path = os.path.join(out, proc + ".h5")
        if os.path.exists(path):
            os.remove(path)
        tables = []
        for pair in pairs:
            model, dataset = pair.split("/")
            tmp = os.path.join(out, "synth-%s-%s-%s.h5" % (proc, model, dataset))
            run([coinfer, "lut", "synth", "--profiles", profiles, "--device", "this-cpu", "--processor", proc, "--model", model, "--dataset",
                 dataset, "--max-batch", "1", "--out", tmp, "-q"])
            preds[(proc, pair)] = stage_means(tmp, pair)
            os.remove(tmp)
    rows, summary = [], {}
    print("\n| model/dataset | stage | op | measured ms | classes ms (ratio) | roofline ms (ratio) |\n|---|---|---|---|---|---|")
    for pair in pairs:
        model, dataset = pair.split("/")
        ops = [st["op"] for st in json.loads(run([coinfer, "model", "show", model, "--dataset", dataset, "--json"]))[0]["stages"]]
        meas = stage_means(measured, pair)
        for i, t in enumerate(meas):
            c, r = preds[("classes", pair)][i], preds[("roofline", pair)][i]
            rows.append({"pair": pair, "stage": i, "op": ops[i], "measured_s": t, "classes_s": c, "roofline_s": r})
            print("| %s | %d | %s | %.3f | %.3f (%.2f) | %.3f (%.2f) |" % (pair, i, ops[i], t * 1e3, c * 1e3, c / t, r * 1e3, r / t))
    print("\nSummary (stages measured >= 20 us; %s is the roofline's INPUT):" % CALIBRATION)
    print("| model/dataset | stages | classes: median abs log2 | within 1.25x / 2x | roofline: median abs log2 | within 1.25x / 2x |")
    print("|---|---|---|---|---|---|")

    def stats(sel, key):
        e = sorted(abs(math.log2(x[key] / x["measured_s"])) for x in sel)
        if not e:
            return None
        return {"median_abs_log2": e[len(e) // 2], "within_1.25": sum(v <= math.log2(1.25) for v in e) / len(e),
                "within_2": sum(v <= 1 for v in e) / len(e)}

    for pair in pairs + ["all but the calibration"]:
        sel = [x for x in rows if x["measured_s"] >= 20e-6 and (x["pair"] == pair or (pair.startswith("all") and x["pair"] != CALIBRATION))]
        if not sel:
            continue
        sc, sr = stats(sel, "classes_s"), stats(sel, "roofline_s")
        summary[pair] = {"stages": len(sel), "classes": sc, "roofline": sr}
        print("| %s | %d | %.2f | %.0f %% / %.0f %% | %.2f | %.0f %% / %.0f %% |" % (
            pair, len(sel), sc["median_abs_log2"], 100 * sc["within_1.25"], 100 * sc["within_2"], sr["median_abs_log2"],
            100 * sr["within_1.25"], 100 * sr["within_2"]))
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump({"classes": rates, "launch_us": launch, "stage_overhead_ms": overhead_ms, "source": source, "calibration_ms": cal_ms, "stages": rows, "summary": summary}, f,
                  indent=1)
    print("\nwrote %s" % out)


if __name__ == "__main__":
    main()
