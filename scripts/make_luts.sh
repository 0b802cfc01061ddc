#!/usr/bin/env bash
# Regenerates the shipped synthesised LUTs from traces/devices.yaml and models/: traces/lut/*.h5 (each
# type's default processor) and traces/lut_processors/TYPE-PROCESSOR.h5 (the other processors of the
# boards that have several, for placements: scenarios/README.md "Placement").
set -euo pipefail
cd "$(dirname "$0")/.."
./build/coinfer lut synth --device all --out-dir traces/lut
mkdir -p traces/lut_processors
for pair in jetson-tx2:cpu jetson-nano:cpu jetson-orin-nano:cpu jetson-agx-orin:cpu core-ultra-165h:gpu core-ultra-165h:cpu; do
  ./build/coinfer lut synth --device "${pair%%:*}" --processor "${pair##*:}" --out "traces/lut_processors/${pair%%:*}-${pair##*:}.h5"
done
