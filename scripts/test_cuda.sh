#!/usr/bin/env bash
# The slow path of the test script (not run by CI: hw/README.md "The CUDA build" says why): the whole
# tree built against Debian 13's CUDA LibTorch (scripts/debian13.sh --cuda) and its CPU tests run
# there, without a GPU: the unit, simulator, conformance, models, learned and middleware tests (the
# namespace testbeds need the host's tools and are the host suite's). Then that the GPU paths refuse
# cleanly. Needs root. COINFER_JOBS: build and test jobs (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
d13() { bash scripts/debian13.sh --cuda "$@"; }
d13 setup
t0=$(date +%s)
d13 build -DCOINFER_BUILD_BENCH=OFF
echo "test_cuda: built in $(( $(date +%s) - t0 )) s"
d13 run build-debian13-cuda/coinfer version
d13 run build-debian13-cuda/coinfer-rt version
# The CUDA libraries are linked in (not a CPU LibTorch by mistake).
d13 run bash -c 'ldd build-debian13-cuda/coinfer-rt | grep -E "libtorch_cuda|libcudart"'
d13 run ctest --test-dir build-debian13-cuda -L 'unit|sim|conformance|models|learned|hw' \
  -E '^(runtime_faults|testbed.*|validate|arrival_replay|ssh_testbed|serve_soak|board_.*)$' \
  --output-on-failure -j"${COINFER_JOBS:-2}" --timeout 600
# No GPU here: the GPU paths are compiled in and refuse with exit 2, naming what is missing.
set +e
d13 run build-debian13-cuda/coinfer-profile --processor cuda --model gcn --dataset mr --out /tmp/coinfer-cuda-refused.h5 > /tmp/coinfer-cuda-refused.txt 2>&1
rc=$?
set -e
cat /tmp/coinfer-cuda-refused.txt
[ $rc -eq 2 ] && grep -q "is_available() is false" /tmp/coinfer-cuda-refused.txt && [ ! -e /tmp/coinfer-cuda-refused.h5 ] ||
  { echo "test_cuda: coinfer-profile --processor cuda without a GPU: exit $rc (expected 2, nothing written)"; exit 1; }
echo "test_cuda: passed in $(( $(date +%s) - start )) s"
