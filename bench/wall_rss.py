#!/usr/bin/python3
"""Runs a command and prints its wall time and peak resident memory (the child's ru_maxrss, from wait4)
on stderr, after the command's own output: `wall_s=... peak_rss_mib=... exit=...`. For the scale runs
of bench/RESULTS.md (no /usr/bin/time needed, inside or outside the Debian 13 root).
usage: /usr/bin/python3 bench/wall_rss.py CMD [ARGS...]"""
import os
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    t0 = time.monotonic()
    p = subprocess.Popen(sys.argv[1:])
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    rc = os.waitstatus_to_exitcode(status)
    print(f"wall_s={wall:.1f} peak_rss_mib={usage.ru_maxrss / 1024:.0f} exit={rc}", file=sys.stderr)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main())
