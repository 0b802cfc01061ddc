#!/usr/bin/env bash
# Configures and builds coinfer into build/ (Release with debug info, ccache when present, -j2).
#   scripts/build.sh [CMAKE OPTIONS]     everything (simulator, runtime, tests, benchmarks)
#   scripts/build.sh --quickstart        only the simulator `coinfer` into build/ (scripts/quickstart.sh); a later
#                                        scripts/build.sh builds the rest into the same folder
#   scripts/build.sh --runtime-only      a board's build into build-rt/: coinfer-rt and coinfer-profile,
#                                        no SimGrid, Slurm, plots or tests (hw/README.md "Building on the boards")
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${COINFER_JOBS:-2}"
dir=build
targets=()
if [ "${1:-}" = "--runtime-only" ]; then
  shift
  dir=build-rt
  set -- -DCOINFER_RUNTIME_ONLY=ON "$@"
elif [ "${1:-}" = "--quickstart" ]; then
  shift
  # Tests and benchmarks off (their packages are not installed by setup.sh --quickstart); only coinfer.
  set -- -DCOINFER_BUILD_TESTS=OFF -DCOINFER_BUILD_BENCH=OFF "$@"
  targets=(coinfer)
else
  # Explicitly on: a folder configured by --quickstart had them off (CMake keeps cached options).
  set -- -DCOINFER_BUILD_TESTS=ON -DCOINFER_BUILD_BENCH=ON "$@"
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C "$dir" -j"$jobs" "${targets[@]}"
