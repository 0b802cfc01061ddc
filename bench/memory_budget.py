#!/usr/bin/python3
"""Memory per simulated request and per device, checked against a budget (CI's bench check).

Two measures, each a slope of the coinfer process's peak RSS (wait4's ru_maxrss) between runs that
differ in one quantity only, so the fixed cost (libraries, LUTs, the engine) cancels:

- per request: bench/bounds.py's closed loop (a Pi 4B running DGCNN locally on a LUT scaled to 10 us per
  request), 2 and 6 simulated seconds: the bytes each extra request costs (since requests are written out
  as they finish, sim/README.md "Results written as requests finish": its latency in the summaries' lists,
  ~30 bytes; it was ~282 when every record stayed until the run's end).
- per device: bench/sim_speed.py's population (DGCNN pp(6) from Pi 4Bs to GTX 1060 servers, one server
  per 100 devices, constant 40 Mbit/s links), 0.1 simulated seconds, at 3,000, 10,000 and 30,000
  devices: the bytes each extra device costs between 3,000 and 10,000 (the reference) and between 10,000
  and 30,000 (the allocator's steps, a few tens of MB wherever they fall, hid growth in shorter intervals
  once a device cost ~12 KiB). Servers grow with the devices, so a structure of devices x servers (or devices^2) makes
  the second slope larger than the first: the check fails when it is more than 20 % larger.

--check also compares both figures with bench/memory_budget.json (measured on this project's 2-core
Debian 12 machine, the command and commit written there) and fails when either exceeds its reference
by more than 20 %. A figure more than 20 % below its reference is reported (update the reference with
--update after a change that saves memory, so the gain is kept). Memory, not time: the figures are
stable from run to run (a few per cent), so no repetition is needed.

usage: /usr/bin/python3 bench/memory_budget.py [--coinfer build/coinfer] [--check] [--update]
       (from the repository root; ~20 s here)"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bounds  # noqa: E402  the closed-loop per-request runs
import sim_speed  # noqa: E402  the population's scenario

TOLERANCE = 0.20
SIZES = (3000, 10000, 30000)
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "memory_budget.json")


def peak_rss(coinfer, scenario_path, root):
    """Peak RSS in bytes of one `coinfer run` of the scenario (its results discarded)."""
    with tempfile.TemporaryDirectory(prefix="coinfer-membudget-") as out:
        p = subprocess.Popen([coinfer, "run", scenario_path, "--out", os.path.join(out, "o"), "-q"], cwd=root,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read().decode()
        _, status, usage = os.wait4(p.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"memory_budget: coinfer run {scenario_path} failed:\n{err}")
    return usage.ru_maxrss * 1024


def per_device(coinfer, root):
    """Peak RSS at each size, and the slopes (bytes per device) between consecutive sizes."""
    peaks = []
    with tempfile.TemporaryDirectory(prefix="coinfer-membudget-s-") as tmp:
        for n in SIZES:
            servers = n // 100
            path = os.path.join(tmp, f"s{n}.yaml")
            with open(path, "w") as f:
                f.write(sim_speed.scenario(n, servers, 0.1, sim_speed.ap_mbps(n, None)))
            peaks.append(peak_rss(coinfer, path, root))
    slopes = [(peaks[i + 1] - peaks[i]) / (SIZES[i + 1] - SIZES[i]) for i in range(len(SIZES) - 1)]
    return peaks, slopes


def per_request(coinfer, root):
    """bench/bounds.py's closed loop: (requests, peak MiB) at 2 and 6 simulated seconds, and the slope."""
    work = bounds.tiny_luts(root)
    try:
        base = bounds.closed_loop_args(work)
        rows = [bounds.run(coinfer, base + ["--set", f"duration_s={d}"], root) for d in (2, 6)]
    finally:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    (n1, m1, _), (n2, m2, _) = rows
    return rows, (m2 - m1) * 1024 * 1024 / (n2 - n1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coinfer", default="build/coinfer")
    ap.add_argument("--check", action="store_true", help="exit 1 when a figure exceeds its budget")
    ap.add_argument("--update", action="store_true", help=f"write the figures measured now to {os.path.relpath(REFERENCE)}")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    coinfer = os.path.abspath(a.coinfer)
    rows, req = per_request(coinfer, root)
    for n, m, w in rows:
        print(f"closed loop: {n} requests, peak {m:.0f} MiB")
    print(f"per request: {req:.0f} bytes")
    peaks, slopes = per_device(coinfer, root)
    for n, p in zip(SIZES, peaks):
        print(f"{n} devices / {n // 100} servers: peak {p / 2**20:.0f} MiB")
    print(f"per device: {slopes[0] / 1024:.1f} KiB ({SIZES[0]}-{SIZES[1]}), {slopes[1] / 1024:.1f} KiB ({SIZES[1]}-{SIZES[2]}): "
          f"growth {slopes[1] / slopes[0]:.2f}x")
    version = subprocess.run([coinfer, "version"], capture_output=True, text=True).stdout.splitlines()
    measured = {"bytes_per_request": round(req), "bytes_per_device": round(slopes[1]),
                "device_slope_growth": round(slopes[1] / slopes[0], 3)}
    if a.update:
        with open(REFERENCE, "w") as f:
            json.dump({**measured, "note": "peak-RSS slopes measured by bench/memory_budget.py on this project's 2-core Debian 12 "
                       "machine (SimGrid 3.32); the reference of its --check (+20 % fails)",
                       "command": "/usr/bin/python3 bench/memory_budget.py --update", "build": version[0] if version else ""},
                      f, indent=2)
            f.write("\n")
        print(f"wrote {os.path.relpath(REFERENCE, root)}")
    failures = []
    if slopes[1] > (1 + TOLERANCE) * slopes[0]:
        failures.append(f"memory per device grows with the population: {slopes[1] / 1024:.1f} KiB per device between "
                        f"{SIZES[1]} and {SIZES[2]} devices against {slopes[0] / 1024:.1f} KiB between {SIZES[0]} and {SIZES[1]} "
                        f"(> {TOLERANCE:.0%} more): a structure of devices x servers or devices^2?")
    if os.path.exists(REFERENCE) and not a.update:
        with open(REFERENCE) as f:
            ref = json.load(f)
        for key, label in (("bytes_per_request", "per request"), ("bytes_per_device", "per device")):
            if measured[key] > (1 + TOLERANCE) * ref[key]:
                failures.append(f"memory {label}: {measured[key]} bytes against the reference {ref[key]} "
                                f"(> {TOLERANCE:.0%} more; bench/memory_budget.json)")
            elif measured[key] < (1 - TOLERANCE) * ref[key]:
                print(f"note: memory {label} {measured[key]} bytes is > {TOLERANCE:.0%} below the reference {ref[key]}: "
                      f"keep the gain with --update")
    for f in failures:
        print(f"FAIL: {f}")
    if a.check and failures:
        return 1
    if a.check:
        print("memory budget: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
