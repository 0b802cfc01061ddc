#!/usr/bin/env bash
# The README's second command: install Debian packages, build, run the whole test suite (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
cd build
# COINFER_CTEST_ARGS: more ctest arguments, e.g. "-L hw" or "-LE fuzz" (unset: the whole suite).
ctest --output-on-failure -j"${COINFER_JOBS:-2}" --timeout 300 ${COINFER_CTEST_ARGS:-}
