#!/usr/bin/python3
"""An external coinfer scheduler (protocol 1, sched/README.md "External schedulers"), in plain Python.

Rule: a device whose link is at least --offload-above Mbit/s offloads its whole model; one below
--local-below runs it locally; in between it splits in the middle (pp(stages // 2)). Devices that do
not generate inputs (idle helpers) are left out of the scheme, so they keep their strategy.

Use it from a scenario:
    scheduler: {name: external, command: "python3 threshold_scheduler.py --offload-above 20 --local-below 5"}
(the command runs in the scenario file's folder). --batching SERVER:AT_S:WINDOW_MS:SIZE (repeatable) also
sets that server's batch window and size in every decision taken at or after AT_S seconds (the latest
such entry wins; before the first, the server keeps its batching). --fail-after N, --hang-after N and --garbage-after N
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
    ap.add_argument("--batching", action="append", default=[], metavar="SERVER:AT_S:WINDOW_MS:SIZE",
                    help="set SERVER's batching from AT_S seconds on (repeatable)")
    ap.add_argument("--fail-after", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--hang-after", type=int, default=-1, help=argparse.SUPPRESS)
    ap.add_argument("--garbage-after", type=int, default=-1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    batching = []  # (at_s, server, window_ms, size), by time
    for b in args.batching:
        try:
            server, at_s, window_ms, size = b.rsplit(":", 3)
            batching.append((float(at_s), server, float(window_ms), int(size)))
        except ValueError:
            ap.error(f"--batching {b!r}: expected SERVER:AT_S:WINDOW_MS:SIZE")
    batching.sort(key=lambda x: x[0])

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
            scheme = {"strategies": strategies, "helpers": []}
            now = msg["state"]["time_s"]
            chosen = {}
            for at_s, server, window_ms, size in batching:
                if at_s <= now:
                    chosen[server] = {"window_ms": window_ms, "max_size": size}
            if chosen:
                scheme["batching"] = chosen
            print(json.dumps({"type": "scheme", "id": msg["id"], "scheme": scheme}), flush=True)
            decided += 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
