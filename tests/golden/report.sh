#!/usr/bin/env bash
# coinfer report: one self-contained HTML page for a run and for a sweep (the validation page is
# checked in validate.sh, which has a real validation to report on). Each page is opened in headless
# Chromium: every figure must decode (a script in the page counts them), every section's table must be
# in the DOM, and the numbers must be the files' numbers. Pages load nothing from elsewhere, are
# byte-identical for the same inputs, and bad folders are exit 2 with no page written.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"
cd "$root"
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "FAIL chromium is not installed (scripts/setup.sh installs it)"; exit 1; }

# Prints the page's DOM after loading (scripts run), as the browser sees it.
dom() { timeout 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$work/chrome" --dump-dom "file://$1" 2>/dev/null; }

# check_page NAME HTML IDS...: every figure decoded, at least one, and each id present.
check_page() {
  local name="$1" page="$2"; shift 2
  dom "$page" > "$work/$name.dom"
  /usr/bin/python3 - "$work/$name.dom" "$page" "$@" <<'PY' && ok || bad "$name page in the browser"
import re, sys
dom = open(sys.argv[1]).read()
page = open(sys.argv[2]).read()
body = re.search(r"<body([^>]*)>", dom)
assert body, "no body in the DOM (the browser did not load the page)"
attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body.group(1)))
assert "figures" in attrs, f"the page's self-check did not run: {body.group(0)}"
assert int(attrs["figures"]) >= 1 and attrs["figures"] == attrs["figures-decoded"], attrs
for ident in sys.argv[3:]:
    assert f'id="{ident}"' in dom, f"no element with id {ident}"
# Offline: nothing is fetched from elsewhere.
assert not re.search(r'(src|href)="(https?:)?//', page), "the page refers to another site"
assert "<link" not in page, "the page links a file"
PY
}

# --- a run ---
"$coinfer" run scenarios/quickstart.yaml --set duration_s=12 --set warmup_s=2 --out "$work/run" -q || { echo "FAIL run"; exit 1; }
"$coinfer" report "$work/run" > "$work/r.out" 2>&1 && [ -s "$work/run/report.html" ] && ok || { bad "report of a run"; cat "$work/r.out"; }
check_page run "$work/run/report.html" run-summary run-timeline run-decisions run-provenance run-data-files scenario
# The summary table holds the run's numbers (total completed, per device throughput as printed).
/usr/bin/python3 - "$work/run" <<'PY' && ok || bad "run page numbers"
import json, re, sys, html
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
page = open(d + "/report.html").read()
tab = page[page.index('id="run-summary"'):]
tab = tab[:tab.index("</table>")]
rows = [[html.unescape(re.sub("<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in re.findall(r"<tr>(.*?)</tr>", tab)]
by = {r[0]: r for r in rows if r}
assert set(by) == set(s["devices"]) | {"total"}, by.keys()
assert int(by["total"][2]) == s["total"]["completed"], (by["total"], s["total"])
for dev, m in s["devices"].items():
    assert abs(float(by[dev][4]) - m["throughput_rps"]) <= 1e-3 * m["throughput_rps"] + 1e-9, (dev, by[dev], m)
# the scenario as the run read it: the --set values, not the file's 60 s
assert "quickstart.yaml" in page and "duration_s: 12" in page and "warmup_s: 2" in page and "duration_s: 60" not in page, "the scenario as run is missing"
PY
# Same inputs, same bytes.
"$coinfer" report "$work/run" --out "$work/run2.html" > /dev/null 2>&1 && cmp -s "$work/run/report.html" "$work/run2.html" && ok || bad "deterministic page"

# --- a sweep ---
"$coinfer" sweep scenarios/paper/fig14_15_gpu.yaml --set duration_s=3 --set warmup_s=1 --grid bandwidth_mbps=5,40 \
  --grid scheduler=local,offload --grid devices=1,2 --out "$work/sw" -q || { echo "FAIL sweep"; exit 1; }
"$coinfer" report "$work/sw/sweep.h5" --out "$work/sweep.html" > "$work/s.out" 2>&1 && ok || { bad "report of a sweep"; cat "$work/s.out"; }
check_page sweep "$work/sweep.html" sweep-grid figure-latency-vs-bandwidth-0 figure-latency-vs-bandwidth-1 figure-throughput-vs-devices-0 \
  figure-throughput-vs-devices-1 figure-energy-3 sweep-points sweep-provenance
# Every point is a row; nothing is pooled (throughput over two bandwidths in one error
# bar): one figure per value of the axis a figure does not show, named under it, its caption once.
/usr/bin/python3 - "$work/sweep.html" <<'PY' && ok || bad "sweep page content"
import re, sys
page = open(sys.argv[1]).read()
tab = page[page.index('id="sweep-points"'):]
tab = tab[:tab.index("</table>")]
assert len(re.findall(r"<tr>", tab)) == 1 + 8, len(re.findall(r"<tr>", tab))  # header + 2 x 2 x 2 points
import base64, io, json
from PIL import Image
for ident, fixed in (("figure-latency-vs-bandwidth-0", "devices=1"), ("figure-latency-vs-bandwidth-1", "devices=2"),
                     ("figure-throughput-vs-devices-0", "bandwidth_mbps=5"), ("figure-throughput-vs-devices-1", "bandwidth_mbps=40")):
    fig = page[page.index(f'id="{ident}"'):]
    fig = fig[:fig.index("</figure>")]
    cap = fig[fig.index("<figcaption>"):]
    assert f"({fixed})" in cap and "mean over" not in cap, (ident, cap)     # named once, the caption is in the image
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', fig).group(1))
    d = json.loads(Image.open(io.BytesIO(png)).text["Description"])
    assert d["pooled"] == [] and fixed in d["where"] and d["clipped"] == [], (ident, d)
assert "figure-latency-vs-bandwidth-2" not in page
PY

# --- bad input: exit 2, a reason, no page ---
mkdir -p "$work/empty"
"$coinfer" report "$work/empty" > "$work/e.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "not a run (results.h5 + summary.json), sweep (sweep.h5) or validation" "$work/e.out" && [ ! -e "$work/empty/report.html" ] \
  && ok || { bad "empty folder: exit $rc"; cat "$work/e.out"; }
"$coinfer" report "$work/nope" > "$work/n.out" 2>&1; [ $? -eq 2 ] && grep -q "no such folder" "$work/n.out" && ok || { bad "missing folder"; cat "$work/n.out"; }
cp -r "$work/run" "$work/broken" && echo "not json" > "$work/broken/summary.json" && rm -f "$work/broken/report.html"
"$coinfer" report "$work/broken" > "$work/b.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "error:" "$work/b.out" && [ ! -e "$work/broken/report.html" ] && ok || { bad "corrupt summary: exit $rc"; cat "$work/b.out"; }
"$coinfer" report "$work/run" --out /nonexistent-dir/r.html > "$work/w.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "cannot write" "$work/w.out" && ok || { bad "unwritable output: exit $rc"; cat "$work/w.out"; }

finish report
