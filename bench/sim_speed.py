#!/usr/bin/python3
"""Simulator speed: simulated requests per wall-clock second, closed loop, coinfer vs a bare SimGrid
program doing the same transfers and executions (bench/bare_simgrid.cpp), in the same run.
Configurations: 9 devices on 1 server; 1000 devices across 10 servers. Each measurement is a fresh
process; REPS alternating repetitions, medians reported. Also peak RSS per simulated device.
With --compare DIR (a build folder of another commit: only its `coinfer` is used), that build's coinfer
runs in the same loop, alternating, and a second row gives its figures: an A/B test of a change on
the same machine at the same time. Set-up (loading, checks, building the platform, writing results:
the process's wall time minus the engine's) is reported separately, with its share of the run.
--sizes N,N,... replaces the two configurations with N devices on max(1, N/100) servers each (the scale
workload), simulated for max(1, min(60, 20000/N)) s. The shared access point has 80 Mbit/s per
device, the sum of its link's 40 up and 40 down (so it can never be the bottleneck, and the simulator
leaves it out of the routes: sim/platform_builder.hpp), or --ap-mbps. Identical devices in a closed loop
run in lock-step from time 0 (every upload of a wave in flight at once); --stagger makes them join in 16
groups spread over one device stage, in both programs (16 join decisions; one join per device would make the
run about its decisions).
--write-scenario PATH writes the scenario of the first size (with --duration S, --stagger) and exits: the
scale runs of bench/RESULTS.md run it with `coinfer -v run PATH --timing` under /usr/bin/time.
On SimGrid 4.0 from a Debian 12 host: scripts/debian13.sh run /usr/bin/python3 bench/sim_speed.py --build build-debian13
usage: /usr/bin/python3 bench/sim_speed.py [--reps 3] [--build build] [--compare OTHER_BUILD] [--sizes 9,1000,10000] [--ap-mbps M] [--stagger]
                                           [--duration S] [--write-scenario PATH]
       (from the repository root)"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import h5py

CONFIGS = [("9 devices / 1 server", 9, 1, 60.0), ("1000 devices / 10 servers", 1000, 10, 20.0)]
SPLIT = 6  # dgcnn pp(6): 8 KB cross (after pooling)
STAGGER_GROUPS = 16  # --stagger: devices join in this many groups spread over one device stage


def run(cmd):
    """Runs cmd, returns (stdout+stderr, peak RSS in bytes of that process)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out}")
    return out, usage.ru_maxrss * 1024


# The scenario loader's bound on the access point (core/limits.hpp kMaxAccessPointMbps: every device link
# at its 1 Tbit/s bound, up and down, for a million devices).
MAX_MBPS = 2e12


def ap_mbps(devices, given):
    """The access point: 80 Mbit/s per device (its link's peak up and down: never the bottleneck), within
    the loader's bound on an access point at every size it allows; a --ap-mbps above it is capped, and
    the script says so."""
    want = given if given else 80.0 * devices
    if want > MAX_MBPS:
        print(f"note: access point {want:g} Mbit/s capped at the loader's bound {MAX_MBPS:g} Mbit/s "
              f"({MAX_MBPS / devices:g} Mbit/s per device)", file=sys.stderr)
    return min(want, MAX_MBPS)


def scenario(devices, servers, duration, ap=300.0, stagger=0.0, compact=False):
    per = devices // servers
    s = [f"name: speed\nseed: 1\nduration_s: {duration}\nwarmup_s: {min(1.0, duration / 4):g}\nluts: [traces/lut/]\nservers:\n"]
    for k in range(servers):
        s.append(f"  - {{id: edge{k}, type: gtx1060, workers: 2, batch: {{window_ms: 10, max_size: 5}}}}\n")
    s.append(f"access_point: {{bandwidth_mbps: {ap!r}}}\ndevices:\n")
    common = (f"type: rpi4b, model: dgcnn, dataset: modelnet40, link: {{bandwidth_mbps: 40, latency_ms: 2}}, "
              f"strategy: pp({SPLIT}), workload: {{arrival: closed_loop, in_flight: 1}}, power: {{idle_w: 2.7, busy_w: 6.4}}")
    for k in range(servers):
        if stagger <= 0:
            s.append(f"  - {{id: d{k}_, count: {per}, server: edge{k}, {common}}}\n")
        elif compact:  # one entry per server: each device draws its wave (scenarios/README.md "Device populations")
            waves = ", ".join(repr(stagger * g / STAGGER_GROUPS) for g in range(STAGGER_GROUPS))
            s.append(f"  - {{id: d{k}_, count: {per}, server: edge{k}, join_at_s: {{choice: [{waves}]}}, {common}}}\n")
        else:  # device i of each server joins at ((i mod G) / G) x stagger: G waves instead of one lock-step
            for g in range(STAGGER_GROUPS):
                n = len(range(g, per, STAGGER_GROUPS))
                if n:
                    s.append(f"  - {{id: d{k}_{g}_, count: {n}, server: edge{k}, join_at_s: {stagger * g / STAGGER_GROUPS!r}, {common}}}\n")
    return "".join(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--build", default="build")
    ap.add_argument("--compare", default=None, help="another build folder whose coinfer runs alternately as a reference")
    ap.add_argument("--sizes", default=None, help="device counts, e.g. 9,1000,10000 (one server per 100 devices)")
    ap.add_argument("--ap-mbps", type=float, default=None, help="the shared access point (default: 80 Mbit/s per device, up to 1 Tbit/s)")
    ap.add_argument("--bare-without-ap", action="store_true",
                    help="the bare SimGrid program without its access point link, as coinfer runs one that cannot bind")
    ap.add_argument("--stagger", action="store_true",
                    help="device i of each server joins at ((i mod 16) / 16) x its device stage time (both programs), "
                         "instead of all devices in lock-step from time 0")
    ap.add_argument("--duration", type=float, default=None, help="simulated seconds of every size (default: max(1, min(60, 20000/N)))")
    ap.add_argument("--write-scenario", default=None, help="write the scenario of the first size to this file and exit")
    ap.add_argument("--compact", action="store_true",
                    help="with --stagger --write-scenario: one entry per server whose devices draw their wave at random "
                         "(a device population) instead of 16 entries per server, each wave exactly 1/16 of the devices")
    args = ap.parse_args()
    configs = CONFIGS
    if args.sizes:
        configs = []
        for n in (int(x) for x in args.sizes.split(",")):
            servers = max(1, n // 100)
            configs.append((f"{n} devices / {servers} servers", n - n % servers, servers, max(1.0, min(60.0, 20000.0 / n))))
    if args.duration:
        configs = [(label, devices, servers, args.duration) for label, devices, servers, _ in configs]
    with h5py.File("traces/lut/rpi4b.h5") as f:
        dev_s = float(f["dgcnn/modelnet40/latency_mean_s"][0, SPLIT, 0])
        up = float(f["dgcnn/modelnet40/bytes_per_split"][SPLIT])
        down = float(f["dgcnn/modelnet40/bytes_per_split"][9])
    with h5py.File("traces/lut/gtx1060.h5") as f:
        srv_s = float(f["dgcnn/modelnet40/latency_mean_s"][SPLIT, 9, 0])
    if args.write_scenario:
        _, devices, servers, duration = configs[0]
        with open(args.write_scenario, "w") as f:
            f.write(scenario(devices, servers, duration, ap_mbps(devices, args.ap_mbps), dev_s if args.stagger else 0.0, args.compact))
        return 0
    print(f"workload: dgcnn pp({SPLIT}) on rpi4b -> gtx1060, device {dev_s*1e3:.2f} ms, server {srv_s*1e3:.3f} ms, "
          f"{up:.0f} B up, {down:.0f} B down, 40 Mbit/s links, access point {args.ap_mbps or 80} Mbit/s"
          f"{'' if args.ap_mbps else ' per device'}, closed loop in_flight 1")
    print("| configuration | coinfer req/wall-s (engine) | coinfer req/wall-s (whole process) | set-up s (share) | bare SimGrid req/wall-s | ratio coinfer/bare | peak RSS coinfer | per device |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for label, devices, servers, duration in configs:
            path = f"{tmp}/s{devices}.yaml"
            with open(path, "w") as f:
                f.write(scenario(devices, servers, duration, ap_mbps(devices, args.ap_mbps), dev_s if args.stagger else 0.0, args.compact))
            builds = [args.build] + ([args.compare] if args.compare else [])
            eng, whole, rss, setup = {b: [] for b in builds}, {b: [] for b in builds}, {b: [] for b in builds}, {b: [] for b in builds}
            bare = []
            for _ in range(args.reps):
                import time
                for build in builds:
                    t0 = time.monotonic()
                    out, mem = run([f"{build}/coinfer", "run", path, "-q", "--timing", "--out", f"{tmp}/o{devices}"])
                    t1 = time.monotonic()
                    m = re.search(r"requests=(\d+) engine_wall_s=([\d.]+)", out)
                    n, w = int(m.group(1)), float(m.group(2))
                    eng[build].append(n / w)
                    whole[build].append(n / (t1 - t0))
                    setup[build].append((t1 - t0 - w, (t1 - t0 - w) / (t1 - t0)))
                    rss[build].append(mem)
                out, _ = run([f"{args.build}/bare_simgrid", str(devices), str(servers), str(duration), repr(dev_s),
                              repr(srv_s), repr(up), repr(down), "40", "0" if args.bare_without_ap else repr(ap_mbps(devices, args.ap_mbps)),
                              repr(dev_s if args.stagger else 0.0)])
                m = re.search(r"requests=(\d+) wall_s=([\d.]+)", out)
                bare.append(int(m.group(1)) / float(m.group(2)))
            b = statistics.median(bare)
            for build in builds:
                e, r = statistics.median(eng[build]), statistics.median(rss[build])
                name = label if build == args.build else f"{label} ({build})"
                su = statistics.median(x[0] for x in setup[build])
                share = statistics.median(x[1] for x in setup[build])
                print(f"| {name} | {e:,.0f} | {statistics.median(whole[build]):,.0f} | {su:.2f} ({100 * share:.0f} %) | {b:,.0f} | {e / b:.2f} | "
                      f"{r / 2**20:.0f} MiB | {r / devices / 1024:.0f} KiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
