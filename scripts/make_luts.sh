#!/usr/bin/env bash
# Regenerates the shipped synthesised LUTs (traces/lut/*.h5) from traces/devices.yaml and models/.
set -euo pipefail
cd "$(dirname "$0")/.."
./build/coinfer lut synth --device all --out-dir traces/lut
