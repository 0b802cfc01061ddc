#!/usr/bin/python3
"""How a run's set-up grows with its devices: loading the scenario, the checks against the models and
LUTs, the platform, the servers and devices, the estimator and scheduler, the monitor and actors, each
phase's wall time (coinfer -v's phase lines) per device, from 1,000 devices up (1,000,000 with --sizes).

The population is bench/sim_speed.py's (Pi 4Bs running DGCNN pp(6) to GTX 1060 servers, one server per
100 devices) written in the compact form (one devices[] entry with `count` per server, so a million
devices are a 0.9 MB file), lock-step, 0.01 simulated seconds and a 0.01 s drain: the engine's part is
small and the set-up is most of the run. A phase is *linear* when its time per device at the largest
size is within 1.5x of its time per device at the size before (a phase under 0.05 s at both is too
short to judge, reported as such).

usage: /usr/bin/python3 bench/setup_scaling.py [--coinfer build/coinfer] [--sizes 1000,10000,100000]
       (from the repository root; SimGrid 4.0: scripts/debian13.sh run /usr/bin/python3
       bench/setup_scaling.py --coinfer build-debian13/coinfer --sizes 1000,10000,100000,1000000;
       the million needs ~10 GiB and a few minutes)"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sim_speed  # noqa: E402  the population

PHASE = re.compile(r"^\[run\] (.+?): ([0-9.]+) s \(peak RSS so far ([0-9]+) MiB\)$")
SETUP = ("loaded the scenario", "checked the scenario against the models and LUTs", "built the platform",
         "created the servers and devices", "set up the estimator and the scheduler",
         "created the monitor, the joins and the actors")
RATIO = 1.5
SHORT_S = 0.05


def measure(coinfer, root, devices, tmp):
    path = os.path.join(tmp, f"s{devices}.yaml")
    with open(path, "w") as f:
        f.write(sim_speed.scenario(devices, max(1, devices // 100), 0.01, sim_speed.ap_mbps(devices, None)))
    out = os.path.join(tmp, f"o{devices}")
    t0 = time.monotonic()
    p = subprocess.Popen([coinfer, "-v", "run", path, "--out", out, "--set", "drain_s=0.01"], cwd=root,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"setup_scaling: coinfer run at {devices} devices failed:\n{text[-3000:]}")
    phases = {}
    for line in text.splitlines():
        m = PHASE.match(line.strip())
        if m:
            phases[m.group(1)] = (float(m.group(2)), int(m.group(3)))
    missing = [p for p in SETUP if p not in phases]
    if missing:
        sys.exit(f"setup_scaling: coinfer -v printed no phase line for {missing} (a build before these phases?)")
    subprocess.run(["rm", "-rf", out])
    return {"devices": devices, "wall_s": wall, "peak_mib": usage.ru_maxrss / 1024, "phases": phases,
            "scenario_bytes": os.path.getsize(path)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--sizes", default="1000,10000,100000")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    coinfer = os.path.abspath(a.coinfer)
    sizes = [int(x) for x in a.sizes.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="coinfer-setup-") as tmp:
        for n in sizes:
            print(f"[setup_scaling] {n} devices ...", file=sys.stderr, flush=True)
            rows.append(measure(coinfer, root, n, tmp))
    print("| devices | scenario file | " + " | ".join(SETUP) + " | whole run | peak RSS |")
    print("|---" * (len(SETUP) + 4) + "|")
    for r in rows:
        cells = []
        for p in SETUP:
            s = r["phases"][p][0]
            cells.append(f"{s:.3f} s ({s / r['devices'] * 1e6:.1f} us)")
        print(f"| {r['devices']:,} | {r['scenario_bytes'] / 1e6:.2f} MB | " + " | ".join(cells) +
              f" | {r['wall_s']:.1f} s | {r['peak_mib']:.0f} MiB ({r['peak_mib'] * 1024 / r['devices']:.1f} KiB/device) |")
    print()
    superlinear = []
    for p in SETUP:
        verdicts = []
        for prev, cur in zip(rows, rows[1:]):
            sp, sc = prev["phases"][p][0], cur["phases"][p][0]
            if sp < SHORT_S and sc < SHORT_S:
                verdicts.append(f"{prev['devices']:,}->{cur['devices']:,}: too short")
                continue
            ratio = (sc / cur["devices"]) / max(sp / prev["devices"], 1e-12)
            ok = ratio <= RATIO or sp < SHORT_S and sc / cur["devices"] * 1e6 < 2
            verdicts.append(f"{prev['devices']:,}->{cur['devices']:,}: {ratio:.2f}x per device" + ("" if ok else " SUPERLINEAR"))
            if not ok:
                superlinear.append(p)
        print(f"- {p}: " + "; ".join(verdicts))
    print()
    print("every set-up phase linear" if not superlinear else "superlinear: " + ", ".join(sorted(set(superlinear))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
