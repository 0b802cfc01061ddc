#!/usr/bin/env bash
# The README's first command: install the Debian packages the simulator needs, build the simulator
# `coinfer` only, run the quickstart scenario, draw its figure (bench/RESULTS.md "Quickstart": under 5
# minutes on a fresh Debian 12). scripts/test.sh installs and builds everything else.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --quickstart
bash scripts/build.sh --quickstart
./build/coinfer run scenarios/quickstart.yaml --out results/quickstart
/usr/bin/python3 plots/latency_timeline.py results/quickstart/results.h5 --pdf
echo "quickstart done: results/quickstart/{results.h5,summary.json,latency_timeline.png,latency_timeline.pdf}"
