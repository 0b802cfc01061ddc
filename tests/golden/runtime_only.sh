#!/usr/bin/env bash
# The board build (-DCOINFER_RUNTIME_ONLY=ON, scripts/build.sh --runtime-only) configures without
# SimGrid (pkg-config is pointed at an empty folder, so a SimGrid lookup would fail) and plans exactly
# the runtime: coinfer-rt, coinfer-profile, coinfer-aggregation and coinfer-medn, no simulator, no tests, no benchmarks; without LibTorch it
# stops with a message naming the package. Configure only: building it is what scripts/build.sh does.
set -u
root="$1"
source "$root/tests/golden/lib.sh"
PKG_CONFIG_LIBDIR="$work/empty" cmake -S "$root" -B "$work/rt" -G Ninja -DCOINFER_RUNTIME_ONLY=ON > "$work/cfg.txt" 2>&1; rc=$?
if [ $rc -ne 0 ] && grep -q "Torch" "$work/cfg.txt" && ! grep -q "simgrid" "$work/cfg.txt"; then
  echo "SKIP: LibTorch is not installed (the runtime-only build needs it)"; exit 77
fi
[ $rc -eq 0 ] && ok || { bad "configure without SimGrid: exit $rc"; tail -20 "$work/cfg.txt"; }
targets=$(ninja -C "$work/rt" -t targets all 2>/dev/null | sed 's/:.*//')
for t in coinfer-rt coinfer-profile coinfer-aggregation coinfer-medn; do
  grep -qx "$t" <<< "$targets" && ok || bad "the runtime-only build does not build $t"
done
for t in coinfer unit_tests sim_tests libcoinfer_sim.a bench_decisions coinfer-sac coinfer-predictor coinfer-lutfill; do
  grep -qx "$t" <<< "$targets" && bad "the runtime-only build builds $t" || ok
done
# With the runtime's own tests (scripts/board.sh's arm64 build): those that need no SimGrid, no others.
PKG_CONFIG_LIBDIR="$work/empty" cmake -S "$root" -B "$work/rtt" -G Ninja -DCOINFER_RUNTIME_ONLY=ON -DCOINFER_RUNTIME_TESTS=ON > "$work/cfgt.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && ok || { bad "configure with COINFER_RUNTIME_TESTS: exit $rc"; tail -20 "$work/cfgt.txt"; }
targets=$(ninja -C "$work/rtt" -t targets all 2>/dev/null | sed 's/:.*//')
for t in unit_tests hw_torchfree_tests hw_tests models_tests learned_tests coinfer-rt; do
  grep -qx "tests/$t\|$t" <<< "$targets" && ok || bad "COINFER_RUNTIME_TESTS does not build $t"
done
for t in sim_tests conformance_tests coinfer; do
  grep -qx "tests/$t\|$t" <<< "$targets" && bad "COINFER_RUNTIME_TESTS builds $t" || ok
done
PKG_CONFIG_LIBDIR="$work/empty" cmake -S "$root" -B "$work/rt2" -G Ninja -DCOINFER_RUNTIME_ONLY=ON -DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON > "$work/cfg2.txt" 2>&1; rc=$?
[ $rc -ne 0 ] && grep -q "COINFER_RUNTIME_ONLY needs LibTorch (libtorch-dev" "$work/cfg2.txt" && ok || bad "without LibTorch: exit $rc: $(tail -3 "$work/cfg2.txt")"
finish runtime_only
