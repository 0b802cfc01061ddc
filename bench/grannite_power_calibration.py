#!/usr/bin/env python3
"""Calibrates the power of the Series 2 AI PC's CPU and GPU (traces/devices.yaml, core-ultra-256v.cpu.power and
.gpu.power) on Cora's half of GraNNite's Fig. 23, and predicts its Citeseer half.

CALIBRATION INPUTS (GraNNite Sec. VI on Fig. 23, GCN on the Series 2): on Cora, the NPU is 8.5x more energy-efficient
  than the most efficient CPU implementation and 4.1x than the most efficient GPU one.
PREDICTIONS (nothing fitted to them): on Citeseer, 8.6x the CPU and 4.4x the GPU.

THE MODEL: a processor computing alone adds its busy power to the board's for as long as it computes, so one
inference costs busy_w x its time (idle_w 0: the board's idle power is the same whichever processor computes and
cancels in Fig. 23's ratios). Each processor's "most efficient implementation" is the GCN form it runs fastest of
the forms coinfer has (FORMS: PyG's sparse layers as they are and with QuantGr's INT8, the out-of-the-box dense
form, StaGr's precomputed mask, and StaGr with QuantGr), priced by the calibrated processors
(bench/grannite_npu_calibration.py, bench/grannite_cpu_gpu_calibration.py). The NPU's busy power is ASSUMED in
traces/devices.yaml (Intel publishes none); the ratios do not depend on it, the CPU's and GPU's are solved
relative to it:  busy_w(P) = ratio(P, Cora) x busy_w(NPU) x t_NPU(Cora) / t_P(Cora).

  /usr/bin/python3 bench/grannite_power_calibration.py [--coinfer build/coinfer] [--write | --check]

--write puts the solved powers into traces/devices.yaml; --check exits 1 unless the file holds them (to 0.5 %;
the test suite runs it). `coinfer reproduce grannite` runs the same comparison as whole simulations (items
fig23_cpu and fig23_gpu). Results: bench/RESULTS.md "GraNNite's Fig. 23: the AI PC's power calibrated on Cora".
"""
import os, sys, tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grannite_cpu_gpu_calibration import ROOT, TYPE, calibration_args, model_ms, rewrite_processor_lines  # noqa: E402

FORMS = ["gcn", "gcn@int8", "gcn@dense_mask+uncached", "gcn@dense_mask", "gcn@dense_mask+int8"]
PUBLISHED = {"cora": {"cpu": 8.5, "gpu": 4.1}, "citeseer": {"cpu": 8.6, "gpu": 4.4}}
CALIBRATION_DATASET = "cora"


def least_ms(coinfer, tmp, processor, dataset):
    """(ms, form) of the fastest of FORMS on TYPE.processor."""
    shipped = os.path.join(ROOT, "traces", "devices.yaml")
    return min((model_ms(coinfer, tmp, shipped, processor, f, dataset), f) for f in FORMS)


def write_powers(watts, source):
    """Replaces the power lines of TYPE's cpu and gpu in traces/devices.yaml."""
    rewrite_processor_lines("power", {p: f"        power: {{idle_w: 0, busy_w: {watts[p]:.4g}, source: \"{source[p]}\"}}\n"
                                      for p in ("gpu", "cpu")}, "powers")


def main():
    a = calibration_args(__doc__, "powers")
    coinfer = a.coinfer
    with open(os.path.join(ROOT, "traces", "devices.yaml")) as f:
        procs = yaml.safe_load(f)["profiles"][TYPE]["processors"]
    npu_w = (procs["npu"].get("power") or {}).get("busy_w")
    if not npu_w:
        sys.exit(f"traces/devices.yaml: {TYPE}.npu states no power.busy_w (the one ASSUMED power the others are solved against)")
    with tempfile.TemporaryDirectory() as tmp:
        least = {ds: {p: least_ms(coinfer, tmp, p, ds) for p in ("npu", "cpu", "gpu")} for ds in PUBLISHED}
    cal = least[CALIBRATION_DATASET]
    watts = {p: PUBLISHED[CALIBRATION_DATASET][p] * npu_w * cal["npu"][0] / cal[p][0] for p in ("cpu", "gpu")}
    watts["npu"] = npu_w
    print(f"NPU busy power {npu_w:g} W (ASSUMED); CALIBRATED on {CALIBRATION_DATASET}: CPU {watts['cpu']:.4g} W, GPU {watts['gpu']:.4g} W")
    print("dataset   processor  least ms (form)                    mJ per inference  NPU's efficiency over it (published)  role")
    for ds, rows in least.items():
        e_npu = npu_w * rows["npu"][0]
        for p in ("npu", "cpu", "gpu"):
            ms, form = rows[p]
            e = watts[p] * ms
            ratio = "" if p == "npu" else f"{e / e_npu:6.2f}x ({PUBLISHED[ds][p]}x)"
            role = "" if p == "npu" else ("input" if ds == CALIBRATION_DATASET else "prediction")
            print(f"{ds:9s} {p:10s} {ms:8.3f} ({form:24s}) {e:12.3f}       {ratio:36s}  {role}")
    if a.check:
        held = {p: (procs[p].get("power") or {}).get("busy_w") for p in ("cpu", "gpu")}
        if any(held[p] is None or abs(held[p] / watts[p] - 1) > 5e-3 for p in held):
            sys.exit(f"traces/devices.yaml {TYPE} holds busy powers {held}, the calibration solves "
                     f"{ {p: round(watts[p], 4) for p in held} }: run this with --write")
        print("traces/devices.yaml holds the solved powers")
    if a.write:
        src = {p: f"CALIBRATED on GraNNite Fig. 23's Cora half (the NPU {PUBLISHED[CALIBRATION_DATASET][p]}x as energy-efficient as this "
                  f"{p.upper()}'s most efficient GCN form) against the NPU's ASSUMED busy power by bench/grannite_power_calibration.py; "
                  "idle_w 0: the power computing adds; Citeseer's half is a prediction" for p in ("cpu", "gpu")}
        write_powers(watts, src)


if __name__ == "__main__":
    main()
