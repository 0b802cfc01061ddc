#!/usr/bin/python3
"""An external coinfer scheduler (protocol 1, sched/README.md "External schedulers"), in plain Python.

Rule: a device whose link is at least --offload-above Mbit/s offloads its whole model; one below
--local-below runs it locally; in between it splits in the middle (pp(stages // 2)). Devices that do
not generate inputs (idle helpers) are left out of the scheme, so they keep their strategy.

Use it from a scenario:
    scheduler: {name: external, command: "python3 threshold_scheduler.py --offload-above 20 --local-below 5"}
(the command runs in the scenario file's folder). --fail-after N, --hang-after N and --garbage-after N
make it misbehave after N decisions: the tests use them to check that coinfer reports each failure.
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--offload-above", type=float, default=20.0, help="Mbit/s at or above which a device offloads (default 20)")
    ap.add_argument("--local-below", type=float, default=5.0, help="Mbit/s below which a device runs locally (default 5)")
    ap.add_argument("--fail-after", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--hang-after", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--garbage-after", type=int, default=-1, help=argparse.SUPPRESS)
    args = ap.parse_args()

    stages = {}
    decided = 0
    for line in sys.stdin:  # one JSON object per line; stdin closes when coinfer is done
        msg = json.loads(line)
        if msg["type"] == "hello":
            if msg["protocol"] != 1:
                print(f"threshold_scheduler: protocol {msg['protocol']} is not 1", file=sys.stderr)
                return 1
            stages = {d["id"]: d["stages"] for d in msg["devices"]}
            print(json.dumps({"type": "ready", "name": "threshold"}), flush=True)
        elif msg["type"] == "decide":
            if decided == args.fail_after:
                return 3
            if decided == args.hang_after:
                time.sleep(3600)
            if decided == args.garbage_after:
                print("this is not json", flush=True)
                continue
            strategies = {}
            for d in msg["state"]["devices"]:
                if not d["connected"] or not d["generates"]:
                    continue
                bw = d["link_bandwidth_mbps"]
                if bw >= args.offload_above:
                    strategies[d["id"]] = "offload"
                elif bw < args.local_below:
                    strategies[d["id"]] = "local"
                else:
                    strategies[d["id"]] = f"pp({stages[d['id']] // 2})"
            print(json.dumps({"type": "scheme", "id": msg["id"], "scheme": {"strategies": strategies, "helpers": []}}), flush=True)
            decided += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
