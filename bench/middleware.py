#!/usr/bin/python3
"""Middleware benchmark: (1) round trip of 1 KB and 1 MB payloads through the middleware against a bare
TCP ping-pong, same run, alternating, medians over --reps runs (target: ratio <= 1.2); (2) goodput of
the middleware through a tc-shaped 40 Mbit/s veth link between two network namespaces, against bare TCP
through the same link in the same run (target: >= 90 % of the shaped rate). Part (2) needs root.
usage: /usr/bin/python3 bench/middleware.py [--reps 3] [--mib 20] [--mbps 40]   (from the repository root)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

B = "build/bench_middleware"


def sh(*cmd, check=True):
    return subprocess.run(cmd, check=check, capture_output=True, text=True)


def goodput(mib, mbps):
    a, b = f"cfbench{os.getpid() % 1000}a", f"cfbench{os.getpid() % 1000}b"
    va, vb = f"cfbv{os.getpid() % 1000}a", f"cfbv{os.getpid() % 1000}b"
    results = {}
    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        sh("ip", "link", "add", va, "type", "veth", "peer", "name", vb)
        sh("ip", "link", "set", va, "netns", a)
        sh("ip", "link", "set", vb, "netns", b)
        sh("ip", "-n", a, "addr", "add", "10.202.0.1/24", "dev", va)
        sh("ip", "-n", b, "addr", "add", "10.202.0.2/24", "dev", vb)
        for ns, dev in ((a, va), (b, vb)):
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            # The testbed's shaping: netem if the kernel has it, else tbf with a 1 ms bucket.
            r = sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "netem", "rate", f"{mbps}mbit",
                   "limit", "100000", check=False)
            qdisc = "netem"
            if r.returncode != 0:
                burst = max(3028, int(mbps * 1e6 / 8 * 0.001))
                sh("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", f"{mbps}mbit",
                   "burst", str(burst), "latency", "1000ms")
                qdisc = "tbf"
        for mode in ("bare", "frame", "bare", "frame"):
            sink = subprocess.Popen(["ip", "netns", "exec", b, B, "sink", "7171", mode])
            time.sleep(0.3)
            out = sh("ip", "netns", "exec", a, B, "source", "10.202.0.2", "7171", mode, str(mib)).stdout
            sink.wait(timeout=60)
            results.setdefault(mode, []).append(json.loads(out)["mbps"])
        return qdisc, {m: statistics.median(v) for m, v in results.items()}
    finally:
        sh("ip", "netns", "del", a, check=False)
        sh("ip", "netns", "del", b, check=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mib", type=int, default=20)
    ap.add_argument("--mbps", type=float, default=40)
    args = ap.parse_args()
    rtt = {}
    for _ in range(args.reps):
        for line in sh(B, "rtt", "1000").stdout.splitlines():
            j = json.loads(line)
            rtt.setdefault(j["payload_bytes"], []).append(j)
    print("| payload | middleware round trip (us) | bare TCP (us) | ratio (median of runs) |")
    print("|---:|---:|---:|---:|")
    for size, runs in sorted(rtt.items()):
        print(f"| {size} B | {statistics.median(r['middleware_us'] for r in runs):.1f} | "
              f"{statistics.median(r['bare_us'] for r in runs):.1f} | {statistics.median(r['ratio'] for r in runs):.3f} |")
    if os.geteuid() != 0:
        print("\ngoodput: skipped (needs root for network namespaces)")
        return
    qdisc, g = goodput(args.mib, args.mbps)
    print(f"\ngoodput through a {args.mbps:g} Mbit/s tc {qdisc} veth link, {args.mib} MiB in 1 MiB frames (median of 2):")
    print(f"middleware {g['frame']:.2f} Mbit/s ({g['frame'] / args.mbps * 100:.1f} % of the shaped rate), "
          f"bare TCP {g['bare']:.2f} Mbit/s ({g['bare'] / args.mbps * 100:.1f} %), middleware / bare {g['frame'] / g['bare']:.3f}")


if __name__ == "__main__":
    main()
