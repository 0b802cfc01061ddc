#!/usr/bin/python3
"""C++ (LibTorch) models vs the same models in Debian's python3-torch 1.13 eager: forward time on the
same inputs, same thread count, in the same run (alternating, medians), under three malloc set-ups
(SETUPS below); plus peak tensor memory of
the Yelp-like GCN/GAT with and without feature decomposition.
usage: /usr/bin/python3 bench/model_speed.py [--threads 1] [--repeats 15] [--rounds 2]   (from the repository root)"""
import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile

THREADS = [1]


def run(cmd, extra_env=None):
    # Both sides use Debian's pthread OpenBLAS, whose pool ignores torch.set_num_threads: pin it too.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(THREADS[0]), OMP_NUM_THREADS=str(THREADS[0]))
    env.update(extra_env or {})
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout.splitlines()


# The three set-ups compared, each a (C++ environment, Python environment):
#   shipped:  C++ as coinfer runs it (keep_tensor_memory: glibc mmap/trim thresholds 1 GiB), Python default
#   defaults: both with glibc's default malloc behaviour
#   tuned:    both with the 1 GiB thresholds (Python through glibc's MALLOC_*_ environment variables)
TUNED = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}
SETUPS = {"shipped": ({}, {}), "defaults": ({"COINFER_MALLOC_DEFAULTS": "1"}, {}), "tuned": ({}, TUNED)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    THREADS[0] = args.threads
    cpp = {k: collections.defaultdict(list) for k in SETUPS}
    py = {k: collections.defaultdict(list) for k in SETUPS}
    memory = {}
    keys = []
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.rounds):
            for setup, (cpp_env, py_env) in SETUPS.items():
                names = []
                for line in run(["build/bench_models", d, str(args.threads), str(args.repeats)], cpp_env):
                    f = line.split()
                    if f[0] == "memory":
                        memory[(f[1], int(f[3]))] = (int(f[4]), float(f[5]))
                    else:
                        cpp[setup][(f[0], f[1])].append(float(f[2]))
                        names.append(f"{f[0]}_{f[1]}")
                        if (f[0], f[1]) not in keys:
                            keys.append((f[0], f[1]))
                for line in run(["/usr/bin/python3", "bench/models_ref.py", d, str(args.threads), str(args.repeats)] + names, py_env):
                    f = line.split()
                    py[setup][(f[0], f[1])].append(float(f[2]))
    print("| model | dataset | shipped: C++ (ms) | Python (ms) | ratio | glibc defaults: C++ | Python | ratio | both tuned: C++ | Python | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = {k: 0 for k in SETUPS}
    for key in keys:
        cells = []
        for setup in SETUPS:
            c, p = statistics.median(cpp[setup][key]), statistics.median(py[setup][key])
            worst[setup] = max(worst[setup], c / p)
            cells += [f"{c:.3f}", f"{p:.3f}", f"{c / p:.2f}"]
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + " |")
    print(f"\nthreads {args.threads}, {args.repeats} timed runs after 2 warm-up runs, median over {args.rounds} rounds; "
          f"worst ratio: shipped {worst['shipped']:.2f}, glibc defaults {worst['defaults']:.2f}, both tuned {worst['tuned']:.2f}\n")
    print("| Yelp-like model | feature chunks P | peak tensor memory (MiB) | forward (ms) |")
    print("|---|---|---|---|")
    for (name, p), (peak, ms) in sorted(memory.items()):
        print(f"| {name} | {p} | {peak / 2**20:.1f} | {ms:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
