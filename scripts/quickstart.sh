#!/usr/bin/env bash
# The README's first command: install Debian packages, build, run the quickstart scenario, draw its figure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
./build/coinfer run scenarios/quickstart.yaml --out results/quickstart
/usr/bin/python3 plots/latency_timeline.py results/quickstart/results.h5 --pdf
echo "quickstart done: results/quickstart/{results.h5,summary.json,latency_timeline.png,latency_timeline.pdf}"
