#!/usr/bin/python3
"""Robustness matrix: every shipped scenario x every scheduler x a set of overrides.

Every run must end in exit 0 (results.h5, summary.json and timing.json written, the summary parses)
or a clean exit 2 (a message starting with "error:", nothing written). An abort, a crash, an exit 1, a
hang (per-run timeout) or a run over the memory bound is a failure. New scenarios (any *.yaml under
scenarios/) and new schedulers (`coinfer scheduler list`) join the matrix by themselves.

Coverage: the full cross of scenarios x schedulers with the base overrides (short run, drain 0.001 s),
and every other override on every scenario with --per-override schedulers (default 1) rotating over
the scenarios, so that every override meets every scheduler on some scenarios; --full crosses
everything (9,500 runs at 42 scenarios, ~18 min on 2 cores; CI runs --per-override 1: ~1,400 runs at 45
scenarios, ~2.5 min, every scenario x every scheduler and every override with every scheduler on some scenario).

usage: matrix.py COINFER SOURCE_DIR [--full | --per-override N [--override-share N]] [--jobs N] [--duration S] [--only TEXT] [--schedulers A,B]
                 [--overrides NAME,...]
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

MEMORY_BOUND_KB = 2 * 1024 * 1024  # max resident set of one short run (a 100-device scenario uses ~100 MB)


def device_ids(scenario_path):
    """Expanded device ids of a scenario (count: N gives id0..idN-1)."""
    with open(scenario_path) as f:
        doc = yaml.safe_load(f)
    ids = []
    for d in doc.get("devices", []):
        if "count" in d:
            ids += [f"{d['id']}{c}" for c in range(int(d["count"]))]
        else:
            ids.append(d["id"])
    return ids


def first_server(scenario_path):
    with open(scenario_path) as f:
        return yaml.safe_load(f)["servers"][0]["id"]


def overrides_for(scenario_path):
    """Named override sets (lists of --set assignments) for one scenario."""
    ids = device_ids(scenario_path)
    first = ids[0]
    server = first_server(scenario_path)
    mobility = ("mobility={{access_points: [{{id: a, x_m: 0, y_m: 0, range_m: 150}}, {{id: b, x_m: 200, y_m: 0, range_m: 150}}], "
                "step_s: 0.05, mid_transfer: {rule}{extra}}}")
    wander = "devices.*.movement={model: random_waypoint, area_m: [200, 50], speed_mps: [50, 200], pause_s: [0, 0.2]}"
    return {
        "leave": [f"events=[{{at_s: 0.6, device: {first}, leave: true}}]"],
        "join": ["devices.0.join_at_s=0.4"],
        "bw1": ["devices.*.link={bandwidth_mbps: 1, latency_ms: 5}"],
        "poisson": ["devices.*.workload={arrival: poisson, rate_per_s: 40}"],
        "batch1": ["servers.*.batch={window_ms: 10, max_size: 1}"],
        "batch8": ["servers.*.batch={window_ms: 10, max_size: 8}"],
        "workers1": ["servers.*.workers=1"],
        "workers4": ["servers.*.workers=4"],
        "helpers": ["devices.0.workload={arrival: none}"],
        "period": ["scheduler.period_s=0.25", "scheduler.charge_decision_time=true"],
        # Deadlines with late requests dropped and a priority.
        "deadline": ["devices.*.workload.deadline_ms=40", "devices.*.workload.drop_late=true", "devices.0.workload.priority=5"],
        # Background load: half the first device's processors taken from 0.5 s.
        "load": [f"events=[{{at_s: 0.5, device: {first}, load: 0.5}}]"],
        # Radio power states: every device's radio is the LTE of traces/devices.yaml.
        "radio": ["devices.*.power={radio: lte}"],
        # Batching as a decision: windows and sizes chosen at every decision.
        "batching": ["servers.*.batch={window_ms: 10, max_size: 4}", "scheduler.batch_windows_ms=[0, 5, 50]",
                     "scheduler.batch_sizes=[1, 4]", "scheduler.period_s=0.25"],
        # Server failure: the first server down over [0.3, 0.6) s; every server failing
        # by the failure model (mean 0.3 s up, 0.1 s down).
        "server_fail": [f"events=[{{at_s: 0.3, server: {server}, fail: true}}, {{at_s: 0.6, server: {server}, recover: true}}]"],
        "mtbf": ["servers.*.failures={mtbf_s: 0.3, mttr_s: 0.1}"],
        # Server choice: devices moved among the servers at every decision, also
        # while the first server fails and recovers.
        "servers": ["scheduler.choose_servers=true", "scheduler.period_s=0.25"],
        # Mobility: two access points, every device wandering between them; what a
        # handover catches on the link resent (the default, waiting, is what walk_two_cells.yaml runs), or
        # failed with a 2 dB hysteresis in the association.
        "mobility": [mobility.format(rule="resend", extra=""), wander],
        "mobility_fail": [mobility.format(rule="fail", extra=", hysteresis_db: 2"), wander],
        "servers_fail": ["scheduler.choose_servers=true",
                         f"events=[{{at_s: 0.3, server: {server}, fail: true}}, {{at_s: 0.6, server: {server}, recover: true}}]"],
    }


# Schedulers that cannot run without parameters of their own: the external one runs the shipped
# example (a Python process per run), so every scenario's states and schemes cross the protocol.
SCHEDULER_PARAMS = {"external": 'command: "python3 {root}/sched/examples/threshold_scheduler.py"',
                    # With the shipped batching policy (its candidates: the "batching" variant's), so every
                    # SAC run also has its servers' batching chosen by a learned policy.
                    "sac": "policy: {root}/sched/policies/sac_paper.pt, batching_policy: {root}/sched/policies/sac_batching.pt.batching"}


def run_one(coinfer, root, scenario, scheduler, name, sets, duration, timeout_s):
    work = tempfile.mkdtemp(prefix="coinfer-matrix-")
    out = os.path.join(work, "out")
    # The whole scheduler entry is replaced: a scenario's parameters for its own scheduler (objective,
    # helpers) are not parameters of every other scheduler.
    extra = SCHEDULER_PARAMS.get(scheduler, "").format(root=root)
    base = [f"duration_s={duration}", "warmup_s=0", "drain_s=0.001", f"scheduler={{name: {scheduler}{', ' + extra if extra else ''}}}"]
    cmd = [coinfer, "run", scenario, "--out", out, "-q"]
    for s in base + sets:
        cmd += ["--set", s]
    label = f"{os.path.relpath(scenario, root)} x {scheduler} x {name}"
    t0 = time.time()
    try:
        errpath = os.path.join(work, "stderr")
        with open(errpath, "w") as errf:
            p = subprocess.Popen(cmd, cwd=root, stdout=subprocess.DEVNULL, stderr=errf)
        # wait4 gives this run's own peak resident memory (ru_maxrss, KiB).
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid != 0:
                break
            if time.time() - t0 > timeout_s:
                p.kill()
                os.wait4(p.pid, 0)
                return label, "fail", f"hang: no exit within {timeout_s} s", 0, time.time() - t0
            time.sleep(0.005)
        p.returncode = os.waitstatus_to_exitcode(status)
        with open(errpath, errors="replace") as f:
            err = f.read()
        if usage.ru_maxrss > MEMORY_BOUND_KB:
            return label, "fail", f"peak memory {usage.ru_maxrss // 1024} MiB over the bound {MEMORY_BOUND_KB // 1024} MiB", 0, time.time() - t0
        rc = p.returncode
        problem = None
        if rc == 0:
            for f in ("results.h5", "summary.json", "timing.json"):
                if not os.path.exists(os.path.join(out, f)):
                    problem = f"exit 0 without {f}"
            if problem is None:
                try:
                    with open(os.path.join(out, "summary.json")) as f:
                        json.load(f)
                except Exception as e:  # noqa: BLE001
                    problem = f"summary.json does not parse: {e}"
            status = "ok" if problem is None else "fail"
        elif rc == 2:
            if os.path.exists(out):
                problem = "exit 2 left an output folder behind"
            elif not err.lstrip().startswith("error:"):
                problem = "exit 2 without an 'error:' message"
            status = "rejected" if problem is None else "fail"
            if problem is None:
                problem = err.strip().splitlines()[0][:200] if err.strip() else ""
        else:
            status = "fail"
            problem = f"exit {rc}: " + " | ".join(err.strip().splitlines()[-3:])[:400]
        return label, status, problem, rc, time.time() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("coinfer")
    ap.add_argument("root")
    ap.add_argument("--full", action="store_true", help="cross every override with every scheduler")
    ap.add_argument("--per-override", type=int, default=1, help="schedulers per override and scenario (rotating)")
    ap.add_argument("--override-share", type=int, default=1,
                    help="each override on one scenario in N (rotating, so every scenario meets 1/N of the overrides; CI: 2)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("COINFER_JOBS", "2")))
    ap.add_argument("--duration", type=float, default=1.5, help="simulated seconds per run")
    ap.add_argument("--timeout", type=float, default=120, help="seconds before a run counts as a hang")
    ap.add_argument("--only", default="", help="only the scenarios whose path (under scenarios/) contains this text")
    ap.add_argument("--overrides", default="", help="only these overrides (comma-separated names; the base runs are then left out)")
    ap.add_argument("--schedulers", default="", help="only these schedulers (comma-separated names)")
    a = ap.parse_args()
    coinfer = os.path.abspath(a.coinfer)
    root = os.path.abspath(a.root)
    scenarios = sorted(glob.glob(os.path.join(root, "scenarios", "**", "*.yaml"), recursive=True))
    scenarios = [sc for sc in scenarios if a.only in os.path.relpath(sc, os.path.join(root, "scenarios"))]
    schedulers = subprocess.run([coinfer, "scheduler", "list", "--names"], check=True, capture_output=True, text=True).stdout.split()
    if a.schedulers:
        unknown = set(a.schedulers.split(",")) - set(schedulers)
        if unknown:
            print(f"FAIL: no scheduler named {', '.join(sorted(unknown))} (known: {', '.join(schedulers)})")
            return 1
        schedulers = [x for x in schedulers if x in a.schedulers.split(",")]
    if not scenarios or not schedulers:
        print("FAIL: no scenarios or no schedulers found")
        return 1
    jobs = []
    for i, sc in enumerate(scenarios):
        ov = overrides_for(sc)
        wanted = set(a.overrides.split(",")) if a.overrides else None
        if wanted is not None and not wanted <= set(ov):
            print(f"FAIL: no override named {', '.join(sorted(wanted - set(ov)))} (known: {', '.join(ov)})")
            return 1
        for j, sched in enumerate(schedulers):
            if wanted is None:
                jobs.append((sc, sched, "base", []))
        for k, (name, sets) in enumerate(ov.items()):
            if wanted is not None and name not in wanted:
                continue
            if not a.full and (i + k) % max(1, a.override_share) != 0:
                continue
            n = len(schedulers) if a.full else max(1, min(a.per_override, len(schedulers)))
            # n schedulers spread over the list, shifted by scenario and override: each scheduler
            # meets each override on about len(scenarios) * n / len(schedulers) scenarios.
            chosen = [schedulers[(i + k + m * len(schedulers) // n) % len(schedulers)] for m in range(n)]
            for sched in chosen:
                jobs.append((sc, sched, name, sets))
    print(f"matrix: {len(scenarios)} scenarios x {len(schedulers)} schedulers ({', '.join(schedulers)}), "
          f"{len(jobs)} runs, {a.jobs} at a time", flush=True)
    counts = {"ok": 0, "rejected": 0, "fail": 0}
    rejections = {}
    failures = []
    slowest = (0, "")
    t0 = time.time()
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futs = [pool.submit(run_one, coinfer, root, sc, sched, name, sets, a.duration, a.timeout) for sc, sched, name, sets in jobs]
        for n, fut in enumerate(cf.as_completed(futs), 1):
            label, status, problem, rc, secs = fut.result()
            counts[status] += 1
            slowest = max(slowest, (secs, label))
            if status == "fail":
                failures.append((label, problem))
                print(f"FAIL {label}: {problem}", flush=True)
            elif status == "rejected":
                rejections.setdefault(problem.split(":", 3)[-1].strip()[:120], []).append(label)
            if n % 50 == 0 or n == len(futs):
                print(f"  {n}/{len(futs)} done, {time.time() - t0:.0f} s", flush=True)
    print(f"matrix: {counts['ok']} ran, {counts['rejected']} rejected with exit 2, {counts['fail']} failed; "
          f"slowest run {slowest[0]:.1f} s ({slowest[1]})")
    for why, labels in sorted(rejections.items(), key=lambda kv: -len(kv[1])):
        print(f"  exit 2 x{len(labels)}: {why}  (e.g. {labels[0]})")
    # A matrix where (almost) everything is rejected tests nothing: most runs must simulate.
    if counts["ok"] < 0.5 * len(jobs):
        print(f"FAIL: only {counts['ok']} of {len(jobs)} runs simulated")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
