#!/usr/bin/env bash
# The quickstart figure is produced, is a real PNG, and is not blank.
set -eu
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
"$coinfer" run scenarios/quickstart.yaml --out "$work/q" -q --set duration_s=20
/usr/bin/python3 plots/latency_timeline.py "$work/q/results.h5" --out "$work/t.png" --pdf > /dev/null
/usr/bin/python3 - "$work/t.png" <<'PY'
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])
assert img.shape[0] > 300 and img.shape[1] > 500, img.shape
# Not blank: many distinct colours.
flat = (img[:, :, :3] * 255).astype(int).reshape(-1, 3)
distinct = len({tuple(p) for p in flat[:: max(1, len(flat) // 20000)]})
assert distinct > 20, distinct
PY
test -s "$work/t.pdf"
echo "1 passed, 0 failed"
