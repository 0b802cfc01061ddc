# Sourced by the tests that start real coinfer-rt processes: skips without LibTorch, makes $work and
# the counters (lib.sh), $sim and strays, and on exit kills every pid the test appended to `pids` and removes $work.
# Expects $rt and $root set.
[ -x "$rt" ] || { echo "SKIP: built without LibTorch (no coinfer-rt)"; exit 77; }
source "$root/tests/golden/lib.sh"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$root"
sim="$(dirname "$rt")/coinfer"  # the simulator built beside coinfer-rt
strays() { pgrep -f "coinfer-rt (serve|device)" | wc -l; }  # coinfer-rt processes running now, anyone's
