#!/usr/bin/python3
"""Energy as an objective, with and without a tail-latency bound, in simulation.

For ACE-GNN's Table III scenarios (one device, four bandwidths, Pi 4B / TX2, CPU / GPU server) and the
Fig. 20 nine-device scenario (synthesised LUTs; the scenarios' power figures): the hierarchical
scheduler with objective throughput, with objective energy, and with objective energy under
max_p95_ms 100, each simulated; energy per inference
(summary.json: the devices' energy over completed requests), throughput and p95, and the strategies of
the first decision, with what the decision said of its constraint.
usage: /usr/bin/python3 bench/energy_objective.py [--coinfer build/coinfer]
Prints a Markdown table (pasted into bench/RESULTS.md)."""
import argparse
import glob
import json
import subprocess
import tempfile

VARIANTS = [("throughput", "{name: hierarchical, objective: throughput}"),
            ("energy", "{name: hierarchical, objective: energy}"),
            ("energy, p95 bound", "{name: hierarchical, objective: energy, max_p95_ms: BOUND}")]


def run(coinfer, scenario, out, scheduler):
    subprocess.run([coinfer, "run", scenario, "-q", "--out", out, "--set", f"scheduler={scheduler}", "--set", "duration_s=20",
                    "--set", "warmup_s=2"], check=True)
    s = json.load(open(f"{out}/summary.json"))["total"]
    d = json.loads(open(f"{out}/decisions.jsonl").readline())
    scheme = " ".join(w for w in d["scheme"].split() if not w.startswith(("helpers", "batching")))
    c = d.get("detail", {}).get("constraints")
    said = "" if c is None else ("met" if c["met"] else "missed: " + "; ".join(c["missed"]))
    return s, scheme, said


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coinfer", default="build/coinfer")
    a = ap.parse_args()
    scenarios = sorted(glob.glob("scenarios/paper/table3_*.yaml")) + ["scenarios/paper/fig20_nine_devices.yaml"]
    print("| scenario | objective | J / inference | req/s | p95 ms | first decision | its constraint |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for sc in scenarios:
            name = sc.split("/")[-1][:-5]
            bound = "100"
            for k, (label, sched) in enumerate(VARIANTS):
                s, scheme, said = run(a.coinfer, sc, f"{tmp}/{name}{k}", sched.replace("BOUND", bound))
                shown = scheme if len(scheme) < 60 else scheme[:57] + "..."
                lab = label.replace("p95 bound", f"p95 <= {bound} ms")
                print(f"| {name} | {lab} | {s['energy_j_per_inference']:.4f} | {s['throughput_rps']:.1f} | {s['latency_ms']['p95']:.1f} | {shown} | {said} |")


if __name__ == "__main__":
    main()
