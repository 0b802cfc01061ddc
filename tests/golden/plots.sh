#!/usr/bin/env bash
# Every `coinfer plot` kind renders from a small sweep (or run), is a real, non-blank image with its
# PDF, and is byte-identical when drawn twice; a bad axis is a clear error with exit code 2.
set -u
coinfer="$1"; root="$2"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$root"
fails=0; passes=0
"$coinfer" sweep scenarios/paper/fig14_15_gpu.yaml --set duration_s=3 --set warmup_s=1 --grid bandwidth_mbps=5,40 \
  --grid scheduler=local,hierarchical --grid devices=1,2 --grid max_batch=1,5 --seeds 2 --out "$work/s" -q || { echo "FAIL sweep"; exit 1; }
"$coinfer" run scenarios/paper/fig10_network_deterioration_gpu.yaml -q --out "$work/r" --set duration_s=40 || { echo "FAIL run"; exit 1; }
check_image() {
  /usr/bin/python3 - "$1" <<'PY'
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])
assert img.shape[0] > 300 and img.shape[1] > 400, img.shape
flat = (img[:, :, :3] * 255).astype(int).reshape(-1, 3)
assert len({tuple(p) for p in flat[:: max(1, len(flat) // 20000)]}) > 10, "blank image"
PY
}
for kind in latency-vs-bandwidth throughput-vs-devices throughput-vs-batch energy timeline; do
  src="$work/s/sweep.h5"; [ $kind = timeline ] && src="$work/r/results.h5"
  "$coinfer" plot "$src" --kind $kind --out "$work/$kind.png" > /dev/null && check_image "$work/$kind.png" && test -s "$work/$kind.pdf" \
    && "$coinfer" plot "$src" --kind $kind --out "$work/again.png" > /dev/null && cmp -s "$work/$kind.png" "$work/again.png" \
    && passes=$((passes+1)) || { echo "FAIL $kind"; fails=$((fails+1)); }
done
"$coinfer" plot "$work/s/sweep.h5" --kind throughput-vs-devices --x colour > /dev/null 2> "$work/err"
[ $? -eq 2 ] && grep -q "no grid axis 'colour'" "$work/err" && passes=$((passes+1)) || { echo "FAIL bad axis"; cat "$work/err"; fails=$((fails+1)); }
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
