#!/usr/bin/python3
"""C++ (LibTorch) models vs the same models in Debian's python3-torch 1.13 eager: forward time on the
same inputs, same thread count, in the same run (alternating, medians); plus peak tensor memory of
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


def run(cmd):
    # Both sides use Debian's pthread OpenBLAS, whose pool ignores torch.set_num_threads: pin it too.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(THREADS[0]), OMP_NUM_THREADS=str(THREADS[0]))
    return subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout.splitlines()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    THREADS[0] = args.threads
    cpp, py = collections.defaultdict(list), collections.defaultdict(list)
    memory = {}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(args.rounds):
            names = []
            for line in run(["build/bench_models", d, str(args.threads), str(args.repeats)]):
                f = line.split()
                if f[0] == "memory":
                    memory[(f[1], int(f[3]))] = (int(f[4]), float(f[5]))
                else:
                    cpp[(f[0], f[1])].append(float(f[2]))
                    names.append(f"{f[0]}_{f[1]}")
            for line in run(["/usr/bin/python3", "bench/models_ref.py", d, str(args.threads), str(args.repeats)] + names):
                f = line.split()
                py[(f[0], f[1])].append(float(f[2]))
    print(f"| model | dataset | C++ LibTorch (ms) | python3-torch eager (ms) | ratio C++/Python |")
    print("|---|---|---|---|---|")
    worst = 0
    for key in cpp:
        c, p = statistics.median(cpp[key]), statistics.median(py[key])
        worst = max(worst, c / p)
        print(f"| {key[0]} | {key[1]} | {c:.3f} | {p:.3f} | {c / p:.2f} |")
    print(f"\nthreads {args.threads}, {args.repeats} timed runs after 2 warm-up runs, median over {args.rounds} rounds; worst ratio {worst:.2f}\n")
    print("| Yelp-like model | feature chunks P | peak tensor memory (MiB) | forward (ms) |")
    print("|---|---|---|---|")
    for (name, p), (peak, ms) in sorted(memory.items()):
        print(f"| {name} | {p} | {peak / 2**20:.1f} | {ms:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
