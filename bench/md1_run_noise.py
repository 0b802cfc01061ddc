#!/usr/bin/python3
"""How much one finite run of an open-loop queue can say about its expected wait: an M/D/1 queue (Poisson
arrivals at LAMBDA a second, a fixed service time S s; what the simulator's open-loop device radio is)
started empty and run for --duration s, its waits counted for the requests created after --warmup s, as
bench/estimator_accuracy.py's runs do. Over --runs independent runs (Lindley's recursion, seeded
random.Random(f"{seed}/{i}")), the mean and the spread of each run's mean wait and p95 wait, against the
steady state's mean rho S / (2 (1 - rho)).

The default queues are radios of the estimator study's schemes that miss by 10-40 % (bench/RESULTS.md,
"The simulator against itself"): s9_5 (a Pi 3B's radio at 3.31 req/s, 260.5 ms), s9_7 (231.6 ms) and s4_5
(a Pi 4B's at 1.03 req/s, 771.1 ms).

usage: /usr/bin/python3 bench/md1_run_noise.py [--runs 400] [--duration 300] [--warmup 5] [--seed 1] [LAMBDA:S ...]
(a few seconds)."""
import argparse
import random
import statistics


def one_run(lam, s, duration, warmup, rng):
    t = work = 0.0
    waits = []
    while True:
        gap = rng.expovariate(lam)
        t += gap
        if t > duration:
            break
        work = max(0.0, work - gap)  # what this arrival finds ahead of it: its wait
        if t >= warmup:
            waits.append(work)
        work += s
    waits.sort()
    return sum(waits) / len(waits), waits[int(0.95 * len(waits))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--duration", type=float, default=300)
    ap.add_argument("--warmup", type=float, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("queues", nargs="*", default=["3.31:0.2605", "3.31:0.2316", "1.03:0.7711"])
    a = ap.parse_args()
    print(f"M/D/1 from empty, {a.runs} runs of {a.duration:g} s, waits of the requests created after {a.warmup:g} s:\n")
    print("| lambda (1/s) | S (s) | rho | steady mean wait (s) | runs' mean of mean waits | its SD | median run | runs' mean p95 | its SD | median run |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for q in a.queues:
        lam, s = (float(x) for x in q.split(":"))
        rho = lam * s
        if not 0 < rho < 1:
            raise SystemExit(f"md1_run_noise: {q}: utilisation {rho:.3f} is not in (0, 1)")
        runs = [one_run(lam, s, a.duration, a.warmup, random.Random(f"{a.seed}/{q}/{i}")) for i in range(a.runs)]
        means, p95s = [r[0] for r in runs], [r[1] for r in runs]
        mm, mp = statistics.mean(means), statistics.mean(p95s)
        print(f"| {lam:g} | {s:g} | {rho:.3f} | {rho * s / (2 * (1 - rho)):.3f} | {mm:.3f} | {statistics.stdev(means):.3f} "
              f"({100 * statistics.stdev(means) / mm:.0f} %) | {statistics.median(means):.3f} | {mp:.3f} | "
              f"{statistics.stdev(p95s):.3f} ({100 * statistics.stdev(p95s) / mp:.0f} %) | {statistics.median(p95s):.3f} |")


if __name__ == "__main__":
    main()
