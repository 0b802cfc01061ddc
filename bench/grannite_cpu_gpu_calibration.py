#!/usr/bin/env python3
"""Calibrates the Series 2 AI PC's CPU and GPU (traces/devices.yaml, core-ultra-256v.cpu and .gpu) on one column
of GraNNite's Fig. 22, GCN's, and predicts its other two, GAT's and SAGE's.

Until now both processors were ASSUMED fractions of their peaks citing Fig. 22 as a whole, so comparing
with Fig. 22 was circular. Here the figure is split into a calibration input and predictions (the issue's
hold-out rule; reproduce/published/grannite.yaml, item fig22):

CALIBRATION INPUTS (GraNNite Sec. VI on Fig. 22, Series 2, GNNs "with GraNNite optimisations" on the NPU):
  GCN: the NPU 3.3x the CPU's throughput, 2.9x the GPU's.
PREDICTIONS (nothing fitted to them):
  GAT: 3.8x the CPU, 2.3x the GPU;  SAGE (mean aggregation): 10.8x the CPU, 6.7x the GPU.

THE MODELS: each processor stays a roofline whose one unknown is its efficiency (the fraction of its peak FLOP
rate and memory bandwidth it reaches on these models), solved by bisection so that GCN's ratio is met exactly.
The CPU and GPU run the models as PyG does (sparse gather and scatter: coinfer's default variants); the NPU runs
each with the GraNNite techniques that keep it on the NPU (the paper does not list Fig. 22's): GCN with StaGr
(gcn@dense_mask), GAT with EffOp and GrAx2 (gat@dense_mask+grax2), SAGE with StaGr's precomputed row-mean
matrix (sage@dense_mask), priced by the NPU's operator classes (bench/grannite_npu_calibration.py). The dataset
is Cora (Fig. 22 does not state it; Sec. V's first). Times are the synthesised whole model at batch 1.

  /usr/bin/python3 bench/grannite_cpu_gpu_calibration.py [--coinfer build/coinfer] [--write | --check]

--write puts the solved efficiencies into traces/devices.yaml; --check exits 1 unless the file holds them (to
0.5 %; the test suite runs it). The Series 1's CPU and GPU (core-ultra-165h) copy them (efficiency_from): DERIVED.
Results: bench/RESULTS.md "GraNNite's Fig. 22 split: the AI PC's CPU and GPU calibrated on GCN".
"""
import argparse, math, os, re, subprocess, sys, tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TYPE = "core-ultra-256v"
DATASET = "cora"
NPU_MODEL = {"gcn": "gcn@dense_mask", "gat": "gat@dense_mask+grax2", "sage": "sage@dense_mask"}
PUBLISHED = {"cpu": {"gcn": 3.3, "gat": 3.8, "sage": 10.8}, "gpu": {"gcn": 2.9, "gat": 2.3, "sage": 6.7}}
CALIBRATION_MODEL = "gcn"


def model_ms(coinfer, tmp, profiles, processor, model, dataset=DATASET):
    """The synthesised whole model at batch 1 on TYPE.processor, in ms (bench/grannite_power_calibration.py uses it too)."""
    out = os.path.join(tmp, "t.h5")
    r = subprocess.run([coinfer, "-q", "lut", "synth", "--device", TYPE, "--processor", processor, "--model", model, "--dataset", dataset,
                        "--max-batch", "1", "--profiles", profiles, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"coinfer lut synth {model} on {TYPE}.{processor}: {r.stderr.strip()}")
    r = subprocess.run([coinfer, "lut", "show", out], capture_output=True, text=True)
    m = re.search(r"whole model \[0,\d+\):\s+b=1 ([0-9.]+) ms", r.stdout)
    if r.returncode != 0 or not m:
        sys.exit(f"coinfer lut show {out}: no whole-model time\n{r.stdout}{r.stderr}")
    return float(m.group(1))


def profiles_with(tmp, eff):
    """The shipped profiles with TYPE's cpu and gpu at the given efficiencies ({processor: efficiency})."""
    with open(os.path.join(ROOT, "traces", "devices.yaml")) as f:
        doc = yaml.safe_load(f)
    for proc, e in eff.items():
        p = doc["profiles"][TYPE]["processors"][proc]
        p.pop("efficiency_from", None)
        p.pop("efficiency_note", None)
        p["efficiency"] = e
    path = os.path.join(tmp, "profiles.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f)
    return path


def solve(coinfer, tmp, proc, npu_ms):
    """The efficiency at which GCN on `proc` takes PUBLISHED ratio x the NPU's time (bisection in log)."""
    target = PUBLISHED[proc][CALIBRATION_MODEL] * npu_ms[CALIBRATION_MODEL]
    lo, hi = math.log(1e-5), math.log(1.0)
    t_hi = model_ms(coinfer, tmp, profiles_with(tmp, {proc: 1.0}), proc, CALIBRATION_MODEL)
    if t_hi > target:
        sys.exit(f"{proc}: even at its peak GCN takes {t_hi:.3f} ms, above {target:.3f} ms: the ratio cannot be met")
    for _ in range(60):
        mid = (lo + hi) / 2
        t = model_ms(coinfer, tmp, profiles_with(tmp, {proc: math.exp(mid)}), proc, CALIBRATION_MODEL)
        if t > target:
            lo = mid  # too slow: more efficiency
        else:
            hi = mid
        if hi - lo < 1e-4:  # 0.01 % of the efficiency: the check allows 0.5 %
            break
    return math.exp((lo + hi) / 2)


def rewrite_processor_lines(drop, lines, what):
    """Rewrites TYPE's profile in traces/devices.yaml, the rest of the file as it is: in each processor named in
    `lines` ({processor: lines to append, each ending in a newline}), the lines whose key matches `drop` (a regular
    expression) are removed and the given lines appended (bench/grannite_power_calibration.py uses it too)."""
    p = os.path.join(ROOT, "traces", "devices.yaml")
    with open(p) as f:
        text = f.read()
    m = re.search(rf"^  {re.escape(TYPE)}:\n(?:(?:    |\n)[^\n]*\n)*", text, flags=re.M)  # the profile: its indented lines
    block = m.group(0)
    for proc, add in lines.items():
        # The processor: its line and the lines indented deeper, without the dropped ones.
        pm = re.search(rf"^      {proc}:\n(?:        [^\n]*\n)*", block, flags=re.M)
        body = re.sub(rf"^        (?:{drop}): [^\n]*\n", "", pm.group(0), flags=re.M) + add
        block = block[:pm.start()] + body + block[pm.end():]
    with open(p, "w") as f:
        f.write(text[:m.start()] + block + text[m.end():])
    print(f"wrote the {what} into {p}")


def write_profile(eff):
    """Replaces the efficiency lines of TYPE's cpu and gpu in traces/devices.yaml."""
    lines = {}
    for proc in ("gpu", "cpu"):
        note = (f"CALIBRATED on GraNNite Fig. 22's GCN column (the NPU {PUBLISHED[proc]['gcn']}x this {proc.upper()}) by "
                "bench/grannite_cpu_gpu_calibration.py; its GAT and SAGE columns are predictions")
        lines[proc] = f"        efficiency: {eff[proc]:.4g}\n        efficiency_note: \"{note}\"\n"
    rewrite_processor_lines("efficiency|efficiency_from|efficiency_note", lines, "efficiencies")


def calibration_args(doc, what):
    """The command line of this calibration and bench/grannite_power_calibration.py: --coinfer (made absolute),
    --write and --check of the solved `what`."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default=os.path.join(ROOT, "build", "coinfer"))
    ap.add_argument("--write", action="store_true", help=f"put the solved {what} into traces/devices.yaml")
    ap.add_argument("--check", action="store_true", help="exit 1 unless traces/devices.yaml holds them (to 0.5 %%)")
    a = ap.parse_args()
    a.coinfer = os.path.abspath(a.coinfer)
    return a


def main():
    a = calibration_args(__doc__, "efficiencies")
    coinfer = a.coinfer
    with tempfile.TemporaryDirectory() as tmp:
        shipped = os.path.join(ROOT, "traces", "devices.yaml")
        npu_ms = {m: model_ms(coinfer, tmp, shipped, "npu", v) for m, v in NPU_MODEL.items()}
        eff = {proc: solve(coinfer, tmp, proc, npu_ms) for proc in ("cpu", "gpu")}
        prof = profiles_with(tmp, eff)
        print(f"CALIBRATED on GCN (Cora): CPU efficiency {eff['cpu']:.4g}, GPU efficiency {eff['gpu']:.4g}")
        print("model  NPU ms (variant)                   CPU ms   NPU/CPU (published)   GPU ms   NPU/GPU (published)")
        for m, v in NPU_MODEL.items():
            c, g = model_ms(coinfer, tmp, prof, "cpu", m), model_ms(coinfer, tmp, prof, "gpu", m)
            role = "input" if m == CALIBRATION_MODEL else "prediction"
            print(f"{m:5s} {npu_ms[m]:8.3f} ({v:22s}) {c:9.3f}  {c / npu_ms[m]:6.2f}x ({PUBLISHED['cpu'][m]}x) {g:9.3f}  "
                  f"{g / npu_ms[m]:6.2f}x ({PUBLISHED['gpu'][m]}x)  {role}")
    if a.check:
        with open(shipped) as f:
            procs = yaml.safe_load(f)["profiles"][TYPE]["processors"]
        held = {p: procs[p].get("efficiency") for p in ("cpu", "gpu")}
        if any(held[p] is None or abs(held[p] / eff[p] - 1) > 5e-3 for p in held):
            sys.exit(f"traces/devices.yaml {TYPE} holds efficiencies {held}, the calibration solves {eff}: run this with --write")
        print("traces/devices.yaml holds the solved efficiencies")
    if a.write:
        write_profile(eff)


if __name__ == "__main__":
    main()
