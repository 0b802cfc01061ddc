#!/usr/bin/python3
"""Scale of server choice and mobility: 1,000 Raspberry Pi 4B running DGCNN
pp(6) in a closed loop on 10 GTX 1060 servers (bench/sim_speed.py's workload), simulated 5 s.
1. hierarchical with scheduler.choose_servers: true, devices bound 100 per server ("balanced") or 800
   on edge0 and the rest spread ("skewed"): the first decision's wall time (timing.json), against
   hierarchical without server choice on the skewed binding.
2. The same devices (static scheduler, 20 s) wandering between two access points
   (scenarios/servers/walk_two_cells.yaml's mobility and random waypoint) against standing still:
   wall time and peak RSS of `coinfer run`, handovers and decisions.
usage: /usr/bin/python3 bench/scale_choice_mobility.py [--coinfer build/coinfer] (from the repository root; ~2 min)"""
import argparse
import json
import os
import resource
import subprocess
import tempfile
import time

COMMON = ("type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: {bw}, latency_ms: 2}}, strategy: pp(6), "
          "workload: {{arrival: closed_loop, in_flight: 1}}, power: {{idle_w: 2.7, busy_w: 6.4}}")
MOBILITY = ("mobility: {access_points: [{id: ap0, x_m: 0, y_m: 0, range_m: 150}, {id: ap1, x_m: 200, y_m: 0, range_m: 150}], "
            "association: nearest, handover_ms: 50, step_s: 0.1}\n")
WANDER = ", movement: {model: random_waypoint, area_m: [200, 60], speed_mps: [1, 10], pause_s: [0, 5]}"


def scenario(counts, scheduler, duration, mobile=False, bw=40):
    s = [f"name: scale\nseed: 1\nduration_s: {duration}\nwarmup_s: 1\nluts: [{os.path.abspath('traces/lut')}]\nservers:\n"]
    for k in range(len(counts)):
        s.append(f"  - {{id: edge{k}, type: gtx1060, workers: 2, batch: {{window_ms: 10, max_size: 5}}}}\n")
    s.append(f"access_point: {{bandwidth_mbps: 40000}}\nscheduler: {scheduler}\n")
    if mobile:
        s.append(MOBILITY)
    s.append("devices:\n")
    for k, c in enumerate(counts):
        if c:
            s.append(f"  - {{id: d{k}_, count: {c}, server: edge{k}, {COMMON.format(bw=bw)}{WANDER if mobile else ''}}}\n")
    return "".join(s)


def run(coinfer, tmp, name, text):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(tmp, name)
    t0 = time.time()
    p = subprocess.Popen([coinfer, "run", path, "--out", out, "-q"])
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.time() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{name}: coinfer run failed")
    with open(os.path.join(out, "timing.json")) as f:
        decisions = json.load(f)["decisions"]
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return wall, usage.ru_maxrss / 1024, decisions, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    a = ap.parse_args()
    balanced = [100] * 10
    skewed = [800] + [23] * 8 + [16]
    with tempfile.TemporaryDirectory(prefix="coinfer-scale-") as tmp:
        print("| binding | scheduler | first decision wall s | run wall s |")
        print("|---|---|---|---|")
        for name, counts, sched in [("balanced", balanced, "{name: hierarchical, choose_servers: true}"),
                                    ("skewed", skewed, "{name: hierarchical, choose_servers: true}"),
                                    ("skewed", skewed, "{name: hierarchical}")]:
            wall, _, dec, _ = run(a.coinfer, tmp, f"{name}-{len(sched)}", scenario(counts, sched, 5))
            print(f"| {name} | {sched} | {dec[0]['wall_s']:.3f} | {wall:.1f} |", flush=True)
        print()
        print("| devices | run wall s | peak RSS MB | handovers | decisions |")
        print("|---|---|---|---|---|")
        for label, mobile in (("standing still", False), ("wandering", True)):
            wall, rss, dec, summary = run(a.coinfer, tmp, label.replace(" ", "_"), scenario(balanced, "{name: static}", 20, mobile, bw=100))
            print(f"| {label} | {wall:.1f} | {rss:.0f} | {summary.get('handovers', {}).get('count', 0)} | {len(dec)} |", flush=True)


if __name__ == "__main__":
    main()
