#!/usr/bin/env bash
# Configures and builds coinfer into build/ (Release with debug info, ccache when present, -j2).
#   scripts/build.sh [CMAKE OPTIONS]     everything (simulator, runtime, tests, benchmarks)
#   scripts/build.sh --runtime-only      a board's build into build-rt/: coinfer-rt and coinfer-profile,
#                                        no SimGrid, Slurm, plots or tests (hw/README.md "Building on the boards")
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${COINFER_JOBS:-2}"
dir=build
if [ "${1:-}" = "--runtime-only" ]; then
  shift
  dir=build-rt
  set -- -DCOINFER_RUNTIME_ONLY=ON "$@"
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C "$dir" -j"$jobs"
