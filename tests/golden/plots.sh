#!/usr/bin/env bash
# Every `coinfer plot` kind renders from a small sweep (or run), is a real, non-blank image with its
# PDF, and is byte-identical when drawn twice; a bad axis is a clear error with exit code 2.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"
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
  pool=(--pool); [ $kind = timeline ] && pool=()
  "$coinfer" plot "$src" --kind $kind --out "$work/$kind.png" "${pool[@]}" > /dev/null && check_image "$work/$kind.png" && test -s "$work/$kind.pdf" \
    && test -s "$work/$kind.svg" \
    && "$coinfer" plot "$src" --kind $kind --out "$work/again.png" "${pool[@]}" > /dev/null && cmp -s "$work/$kind.png" "$work/again.png" \
    && cmp -s "$work/$kind.svg" "$work/again.svg" \
    && ok || { bad "$kind"; }
done
"$coinfer" plot "$work/s/sweep.h5" --kind throughput-vs-devices --x colour > /dev/null 2> "$work/err"
[ $? -eq 2 ] && grep -q "no grid axis 'colour'" "$work/err" && ok || { bad "bad axis"; cat "$work/err"; }
# What the figures say, read back from the saved PNG's metadata (not from the script): the aggregation
# names every pooled axis, --where fixes one and says so, ticks are the swept values without ".0",
# legends in numeric order, --style paper is one column wide.
"$coinfer" plot "$work/s/sweep.h5" --kind throughput-vs-devices --out "$work/tvd.png" --pool > /dev/null
"$coinfer" plot "$work/s/sweep.h5" --kind throughput-vs-devices --where bandwidth_mbps=40 --where max_batch=5 --style paper \
  --out "$work/tvd40.png" > /dev/null
"$coinfer" plot "$work/s/sweep.h5" --kind latency-vs-bandwidth --series max_batch --where scheduler=hierarchical --out "$work/lvb.png" --pool --logy --ylim 1,100000 > /dev/null
# Axis labels say what the axis varies: on the quickstart `devices` is the first of
# three entries' count, and pi0's bandwidth follows its trace whatever `bandwidth_mbps` says.
"$coinfer" sweep scenarios/quickstart.yaml --set duration_s=2 --set warmup_s=0.5 --grid devices=1,2 --grid bandwidth_mbps=5,40 \
  --out "$work/q" -q > /dev/null 2>&1 || { bad "quickstart sweep"; }
"$coinfer" plot "$work/q" --kind throughput-vs-devices --where bandwidth_mbps=40 --out "$work/q_tvd.png" > /dev/null
"$coinfer" plot "$work/q" --kind latency-vs-bandwidth --where devices=1 --out "$work/q_lvb.png" > /dev/null
# Timelines with mobility and several servers: a walker's handover at 25.1 s is marked; with four servers a panel shows where
# each request went.
"$coinfer" run scenarios/servers/walk_two_cells.yaml -q --out "$work/walk" --set duration_s=26 > /dev/null 2>&1 \
  && "$coinfer" plot "$work/walk/results.h5" --kind timeline --out "$work/walk.png" > /dev/null || { bad "walk timeline"; }
"$coinfer" run scenarios/servers/skewed_four_servers.yaml -q --out "$work/four" --set duration_s=2 --set warmup_s=0 > /dev/null 2>&1 \
  && "$coinfer" plot "$work/four/results.h5" --kind timeline --out "$work/four.png" > /dev/null || { bad "four-server timeline"; }
# A cloud tier: every request of pp(0,1) also marked on the cloud's row.
"$coinfer" run scenarios/cloud/edge_cloud.yaml -q --out "$work/cloud" --set duration_s=3 --set warmup_s=1 --set 'devices.*.strategy=pp(0,1)' > /dev/null 2>&1 \
  && "$coinfer" plot "$work/cloud/results.h5" --kind timeline --out "$work/cloud.png" > /dev/null || { bad "cloud timeline"; }
# Every kind at --style paper (one column), and the quickstart's timeline (pi2 leaves at 40 s).
for kind in latency-vs-bandwidth throughput-vs-devices throughput-vs-batch energy timeline; do
  src="$work/s/sweep.h5"; [ $kind = timeline ] && src="$work/r/results.h5"
  pool=(--pool); [ $kind = timeline ] && pool=()
  "$coinfer" plot "$src" --kind $kind --style paper --out "$work/paper-$kind.png" "${pool[@]}" > /dev/null 2>&1 || { bad "paper $kind"; }
done
"$coinfer" run scenarios/quickstart.yaml -q --out "$work/qrun" --set duration_s=45 > /dev/null 2>&1 \
  && "$coinfer" plot "$work/qrun/results.h5" --kind timeline --out "$work/q_timeline.png" > /dev/null || { bad "quickstart timeline"; }
# The clipping check itself finds text beyond the figure's edge (so the checks below can fail).
/usr/bin/python3 - "$root" <<'PY' && ok || { bad "clipping detector"; }
import sys
sys.path.insert(0, sys.argv[1] + "/plots")
import coinfer_plots as cp
fig, ax = cp.plt.subplots(figsize=(3.4, 2.4))
ax.set_title("a title far too long for one column of a two-column paper, which the old figures clipped at its ends")
assert any("title" in c for c in cp.clipped_texts(fig)), cp.clipped_texts(fig)
ax.set_title("short")
fig.tight_layout()
assert cp.clipped_texts(fig) == [], cp.clipped_texts(fig)
PY
/usr/bin/python3 - "$work" <<'PY' && ok || { bad "figure metadata"; }
import json, sys
from PIL import Image
w = sys.argv[1]
def meta(name):
    im = Image.open(f"{w}/{name}")
    return json.loads(im.info["Description"]), im.size
d, size = meta("tvd.png")
assert d["xticks"] == ["1", "2"], d["xticks"]                     # counts: integers, the swept values
assert d["legend"] == ["hierarchical", "local"] and d["legend_title"] == "scheduler", d
assert "1 seed " in d["aggregation"] and "bandwidth_mbps in {5, 40}" in d["aggregation"] and "max_batch in {1, 5}" in d["aggregation"], d["aggregation"]
d, size_paper = meta("tvd40.png")
assert "bandwidth_mbps" not in d["aggregation"] and "max_batch" not in d["aggregation"], d["aggregation"]
assert d["where"] == "bandwidth_mbps=40, max_batch=5" and "link bandwidth (Mbit/s): 40, maximum batch size: 5" in d["title"], d
assert d["title"].startswith("System throughput (req/s) vs devices"), d["title"]    # words, not the file name and a kind slug
assert d["style"] == "paper" and size_paper[0] < size[0] * 0.6, (size_paper, size)   # 3.4 in at 150 dpi
d, _ = meta("lvb.png")
assert d["legend"] == ["1", "5"] and d["xticks"] == ["5", "40"], d                 # numeric order, no ".0"
assert "devices in {1, 2}" in d["aggregation"], d["aggregation"]
assert d["yscale"] == "log" and d["ylim"] == [1, 100000], d                      # --logy, --ylim
assert "mean over" not in d["title"] and d["caption"] == d["aggregation"], d       # the caption once, at the bottom
assert all("\\times" not in t and "$" not in t for t in d["ytick_labels"][0]), d["ytick_labels"]   # log ticks as plain numbers
assert "10" in d["ytick_labels"][0] and "100" in d["ytick_labels"][0], d["ytick_labels"]
assert d["xlabel"] == "link bandwidth (Mbit/s)", d["xlabel"]                       # every device's link follows it
d, _ = meta("tvd.png")
assert d["xlabel"] == "devices", d["xlabel"]                                       # one device entry: its count is the system's
d, _ = meta("q_tvd.png")
assert d["xlabel"] == "devices of the first device entry (2 other devices fixed)", d["xlabel"]
d, _ = meta("q_lvb.png")
assert d["xlabel"] == "link bandwidth (Mbit/s) of 2 of 3 devices (pi0: trace or event)", d["xlabel"]
# Nothing is cut off by the figure's edges, on screen or at --style paper (clipped subtitles).
import glob, os
for png in sorted(glob.glob(f"{w}/*.png")):
    d, _ = meta(os.path.basename(png))
    assert d["clipped"] == [], (png, d["clipped"])
for kind in ("latency-vs-bandwidth", "throughput-vs-devices", "throughput-vs-batch", "energy", "timeline"):
    d, _ = meta(f"paper-{kind}.png")
    assert d["style"] == "paper" and d["clipped"] == [], (kind, d["clipped"])
d, _ = meta("paper-throughput-vs-devices.png")
assert d["legend_title"] == "scheduler", d                                           # words, never a raw key path
d, _ = meta("q_timeline.png")
# The timeline: a legend for the bandwidth lines, pi2's ends where it leaves (40 s), whole-number splits.
assert d["bandwidth_legend"] == ["pi0", "pi1", "pi2"] and abs(d["left_at"]["pi2"] - 40) < 1e-9, d
assert all(t == str(int(float(t))) for t in d["ytick_labels"][2]), d["ytick_labels"]
d, _ = meta("timeline.png")
assert d["xlabel"] == "simulated time (s)" and d["warmup_s"] >= 0 and len(d["legend"]) >= 1, d
assert d["handovers"] == 0 and not d["servers_panel"], d                         # one server, nobody moves
d, _ = meta("walk.png")
assert d["handovers"] >= 1 and not d["servers_panel"], d
d, _ = meta("four.png")
assert d["servers_panel"] and d["cloud_requests"] == 0, d
d, _ = meta("cloud.png")
assert d["servers_panel"] and d["cloud_requests"] > 20, d                        # 8 Pi at 3 req/s for 3 s, all through the cloud
PY
"$coinfer" plot "$work/s/sweep.h5" --kind throughput-vs-devices --where bandwidth_mbps=7 > /dev/null 2> "$work/err"
[ $? -eq 2 ] && grep -q "'7' is not a value of bandwidth_mbps (values: 5, 40)" "$work/err" && ok || { bad "bad --where"; cat "$work/err"; }
# Pooling an axis the figure does not show is refused unless asked for, naming the
# axes and the ways out; a folder is accepted for its sweep.h5.
"$coinfer" plot "$work/s/sweep.h5" --kind throughput-vs-devices > /dev/null 2> "$work/err"
[ $? -eq 2 ] && grep -q "varies bandwidth_mbps (5, 40); max_batch (1, 5), which this figure neither plots nor fixes" "$work/err" \
  && grep -q -- "--pool" "$work/err" && ok || { bad "pooling refused"; cat "$work/err"; }
"$coinfer" plot "$work/s" --kind throughput-vs-devices --where bandwidth_mbps=40 --where max_batch=5 --out "$work/folder.png" > /dev/null 2> "$work/err" \
  && check_image "$work/folder.png" && ok || { bad "plot a sweep folder"; cat "$work/err"; }
"$coinfer" plot "$work/s" --kind throughput-vs-devices --where bandwidth_mbps=40 --where max_batch=5 --ylim 5,1 > /dev/null 2> "$work/err"
[ $? -eq 2 ] && grep -q "expected LO,HI" "$work/err" && ok || { bad "bad --ylim"; cat "$work/err"; }
finish plots
