#!/usr/bin/env bash
# Configures and builds coinfer into build/ (Release with debug info, ccache when present, -j2).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${COINFER_JOBS:-2}"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C build -j"$jobs"
