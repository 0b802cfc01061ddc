#!/usr/bin/env bash
# coinfer on SimGrid 4.0: makes the Debian 13 root (scripts/debian13.sh), builds coinfer in it, runs
# the unit, scheduler and simulator tests there (the simulator's only with DEBIAN13_UNIT=0), and checks that both engines give the same results
# on every shipped scenario (tests/engines/identity.sh, against the host's build/ on SimGrid 3.32,
# which scripts/test.sh builds). CI (.ci/run) runs it after scripts/test.sh. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/debian13.sh setup
# Only what the tests below run (coinfer, the unit and simulator tests): not the benchmarks, the
# middleware's and the conformance tests (the host's suite runs those), to keep CI under 40 minutes.
# DEBIAN13_UNIT=0 (CI) leaves out the unit tests too: they do not touch the engine (core, io and sched
# only; the host's suite runs them), and building them with GCC 14 is ~40 % of this part's compiling.
if [ "${DEBIAN13_UNIT:-1}" = 0 ]; then targets="coinfer sim_tests"; labels="sim"; else targets="coinfer unit_tests sim_tests"; labels="unit|sim"; fi
DEBIAN13_TARGETS="$targets" bash scripts/debian13.sh build -DCOINFER_BUILD_BENCH=OFF
bash scripts/debian13.sh run build-debian13/coinfer version
bash scripts/debian13.sh run ctest --test-dir build-debian13 -L "$labels" --output-on-failure \
  -j"${COINFER_JOBS:-2}" --timeout 300
# 600 s: in CI these run at nice 19 beside the host's suite, and cli_bad_input (~65 s of a core alone)
# once took longer than 300 s there (stop 92's CI); a hang is still caught.
bash scripts/debian13.sh run ctest --test-dir build-debian13 -R '^(cli_bad_input|cli_determinism|version)$' --output-on-failure --timeout 600
[ -x build/coinfer ] || bash scripts/build.sh
build/coinfer version
bash tests/engines/identity.sh build/coinfer build-debian13/coinfer bash scripts/debian13.sh run
echo "test_debian13: passed in $(( $(date +%s) - start )) s"
