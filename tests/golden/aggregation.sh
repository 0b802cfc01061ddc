#!/usr/bin/env bash
# coinfer aggregation (the feature decomposition paper's measurement) end to end: one JSON
# object with the phases, peak memory and the graph's statistics; the paper's OOM boundary under a 1 GiB
# cgroup (coinfer reproduce feature-decomposition/fig7 --quick: PyG's standard scheme is killed at hidden
# 1024 and runs at 512, feature decomposition runs at 1024); bad options exit 2 with the option named.
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-aggregation" ] || { echo "SKIP: built without LibTorch"; exit 77; }
source "$root/tests/golden/lib.sh"
cd "$root"

"$coinfer" aggregation --graph pubmed --model sage --scheme sliced --hidden 16 --repeats 1 --warmup 0 --counters > "$work/a.json" 2> "$work/a.err" \
  && /usr/bin/python3 - "$work/a.json" <<'PY' && ok || { bad "one measurement"; cat "$work/a.json" "$work/a.err"; }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "ok" and j["scheme"] == "sliced" and j["slice_width"] == 4, j   # GSC's granularity on Pubmed
g = j["graph"]
assert g["nodes"] == 19717 and g["directed_edges"] == 88676 and g["features"] == 500, g
assert j["total_s"] > 0 and j["phase_s"]["aggregation"] > 0 and j["phase_s"]["combination"] > 0
# The peak holds at least the input features (19,717 x 500 floats) and the edge list (2 x 88,676 int64).
assert j["peak_tensor_bytes"] >= 19717 * 500 * 4 + 2 * 88676 * 8, j["peak_tensor_bytes"]
c = j["counters"]
# Each event is either counted or said to be unavailable, never silently zero.
assert len(c["counts"]) + len(c["unavailable"]) == 8, c
assert (c["ipc"] is None) == ("instructions" in c["unavailable"] or "cycles" in c["unavailable"]), c
assert j["cpu"] and j["libtorch"]
PY

# Bad input: exit 2, the option named, nothing on stdout.
# Each case: the option the error must name, then the arguments.
for case in "hidden --hidden 0" "edge-scale --edge-scale 2" "scheme --model gat --scheme csr" "slice-width --slice-width 4" \
            "graph --graph cora" "repeats --repeats 0" "memory-limit --memory-limit 3"; do
  opt=${case%% *}; args=${case#* }
  "$coinfer" aggregation $args > "$work/bad.out" 2> "$work/bad.err"; rc=$?
  [ $rc -eq 2 ] && [ ! -s "$work/bad.out" ] && grep -q -- "$opt" "$work/bad.err" && ok || { bad "aggregation $args: exit $rc"; cat "$work/bad.out" "$work/bad.err"; }
done

# Fig. 7's OOM boundary under a 1 GiB cgroup (needs root and a cgroup memory controller).
if [ "$(id -u)" = 0 ] && [ -w /sys/fs/cgroup ]; then
  "$coinfer" reproduce feature-decomposition/fig7 --quick --out "$work/r" > "$work/r.out" 2>&1 \
    && /usr/bin/python3 - "$work/r/reproduce.json" <<'PY' && ok || { bad "fig7's OOM boundary"; cat "$work/r.out"; }
import json, sys
r = json.load(open(sys.argv[1]))
it = r["papers"][0]["items"][0]
assert it["item"] == "fig7"
for row in it["rows"]:
    assert row["verdict"] == "same outcome", row
PY
else
  echo "note: not root or no writable cgroup file system: the 1 GiB OOM boundary is not checked"
fi
finish aggregation
