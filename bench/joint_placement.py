#!/usr/bin/env python3
"""Placement inside boards jointly with the device-edge split: ACE-GNN's Fig. 20 nine devices
(3 Jetson TX2, 3 Jetson Nano, 3 Raspberry Pi 4B, DGCNN, one GTX 1060) at each link rate, each search
scheduler with the boards' default processors only ("split-only": traces/lut/, ACE-GNN's one-processor
device model) and with their other processors' tables ("joint": + traces/lut_processors/).

  /usr/bin/python3 bench/joint_placement.py [--coinfer build/coinfer] [--mbps 40,5]
"""
import argparse, json, os, subprocess, sys, tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--mbps", default="40,5")
    ap.add_argument("--schedulers", default="greedy,dp,hierarchical")
    a = ap.parse_args()
    print(f"{'Mbit/s':>6s} {'scheduler':12s} {'split-only req/s':>17s} {'(ms)':>7s} {'joint req/s':>12s} {'(ms)':>7s} {'gain':>7s}  joint scheme (first devices)")
    with tempfile.TemporaryDirectory() as tmp:
        for bw in a.mbps.split(","):
            for sch in a.schedulers.split(","):
                res = {}
                for name, luts in (("split", "[traces/lut/]"), ("joint", "[traces/lut/, traces/lut_processors/]")):
                    out = os.path.join(tmp, f"{bw}-{sch}-{name}")
                    subprocess.run([a.coinfer, "-q", "run", "scenarios/paper/fig20_nine_devices.yaml", "--set", f"scheduler.name={sch}",
                                    "--set", f"luts={luts}", "--set", f"devices.*.link.bandwidth_mbps={bw}", "--out", out],
                                   check=True, capture_output=True)
                    t = json.load(open(os.path.join(out, "summary.json")))["total"]
                    last = [json.loads(l) for l in open(os.path.join(out, "decisions.jsonl"))][-1]
                    res[name] = (t["throughput_rps"], t["latency_ms"]["mean"], last["scheme"])
                (s, sl, _), (j, jl, scheme) = res["split"], res["joint"]
                print(f"{bw:>6s} {sch:12s} {s:17.2f} {sl:7.1f} {j:12.2f} {jl:7.1f} {100 * (j / s - 1):+6.1f}%  {scheme[:120]}")


if __name__ == "__main__":
    sys.exit(main())
