#!/usr/bin/env bash
# Results say how they were made, and paths in a scenario mean the same files wherever it is run from
# (a result folder says how to re-make it):
#  1. summary.json "made_by" and results.h5 attributes record the program, commit, command, working
#     directory, every --set override and the scenario as run (after the overrides, paths absolute);
#     `coinfer report` shows that, not the file as it is now (the file is edited after the run here).
#  2. relative paths resolve against the scenario's folder first: the same scenario gives the same
#     LUT whatever the working directory, and a different file of that name in the working
#     directory is named in a warning, not used;
#  3. a scenario copied out of the project finds the LUTs of the project named by --root.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
py=/usr/bin/python3

# A small scenario of its own folder, with its own LUT folder beside it.
mkdir -p "$work/proj/s/mylut" "$work/cwd/mylut"
cp "$root/traces/lut/rpi4b.h5" "$root/traces/lut/gtx1060.h5" "$work/proj/s/mylut/"
cat > "$work/proj/s/small.yaml" <<'YAML'
name: small
seed: 2
duration_s: 4
luts: [mylut]
servers:
  - {id: edge, type: gtx1060, workers: 1, batch: {window_ms: 5, max_size: 2}}
devices:
  - {id: pi, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 20}, strategy: offload}
YAML

# 1. What the run records.
cd "$work/proj"
"$coinfer" run s/small.yaml --out "$work/r1" -q --set devices.0.link.bandwidth_mbps=7 --set 'seed=5' > "$work/r1.out" 2>&1 \
  && ok || { bad "run (rc $?)"; cat "$work/r1.out"; }
$py - "$work/r1" "$work/proj" <<'PY' && ok || bad "summary.json made_by / results.h5 provenance"
import json, sys, h5py, yaml
d, proj = sys.argv[1], sys.argv[2]
m = json.load(open(d + "/summary.json"))["made_by"]
assert m["program"].startswith("coinfer "), m
assert m["commit"], m
assert m["overrides"] == ["devices.0.link.bandwidth_mbps=7", "seed=5"], m["overrides"]
assert "--set devices.0.link.bandwidth_mbps=7" in m["command"] and " run s/small.yaml" in m["command"], m["command"]
assert m["working_directory"] == proj, m["working_directory"]
assert m["scenario_file"] == proj + "/s/small.yaml", m["scenario_file"]
sc = yaml.safe_load(m["scenario_as_run"])
assert sc["seed"] == 5 and sc["devices"][0]["link"]["bandwidth_mbps"] == 7, sc
assert sc["luts"] == [proj + "/s/mylut"], sc["luts"]          # resolved, absolute
f = h5py.File(d + "/results.h5")
a = f.attrs
assert a["command_line"] == m["command"] and a["commit"] == m["commit"] and a["program"] == m["program"]
assert a["scenario_yaml"] == m["scenario_as_run"]
assert [x.decode() for x in f["provenance/overrides"][:]] == m["overrides"]
PY
# The report shows the scenario as run even after the file changed.
sed -i 's/duration_s: 4/duration_s: 99/' "$work/proj/s/small.yaml"
if "$coinfer" report "$work/r1" --out "$work/r1.html" > "$work/rep.out" 2>&1; then
  $py - "$work/r1.html" <<'PY' && ok || bad "report shows the scenario as run"
import re, sys, html
t = open(sys.argv[1]).read()
m = re.search(r'<pre id="scenario">(.*?)</pre>', t, re.S)
assert m, "no scenario section"
text = html.unescape(m.group(1))
assert "duration_s: 4" in text and "bandwidth_mbps: 7" in text, text[:400]
assert "as the run read it" in t and "devices.0.link.bandwidth_mbps=7" in t
PY
else
  rc=$?; [ $rc -eq 77 ] && ok || { bad "report (rc $rc)"; cat "$work/rep.out"; }
fi
sed -i 's/duration_s: 99/duration_s: 4/' "$work/proj/s/small.yaml"

# 2. The same scenario from another working directory that has its own, different mylut/: the
# scenario's folder wins and the warning names both.
cp "$root/traces/lut/rpi3b.h5" "$work/cwd/mylut/"
cd "$work/cwd"
"$coinfer" run "$work/proj/s/small.yaml" --out "$work/r2" -q > "$work/r2.out" 2>&1 && ok || { bad "run from elsewhere"; cat "$work/r2.out"; }
grep -q "resolves to $work/proj/s/mylut" "$work/r2.out" && grep -q "working directory also has $work/cwd/mylut" "$work/r2.out" \
  && ok || { bad "ambiguity warning"; cat "$work/r2.out"; }
cd "$work/proj"
"$coinfer" run s/small.yaml --out "$work/r3" -q > "$work/r3.out" 2>&1
cmp -s <(cd "$work/r2" && $py -c "import json; j=json.load(open('summary.json')); print(j['total'])") \
       <(cd "$work/r3" && $py -c "import json; j=json.load(open('summary.json')); print(j['total'])") \
  && ok || bad "same scenario, different working directory, different results"

# 3. A scenario copied out of the project: --root names the project whose traces/ it uses.
mkdir -p "$work/alone" "$work/myproject/traces/lut" "$work/myproject/models"
cp "$root"/models/*.yaml "$work/myproject/models/"; cp -r "$root/models/specs" "$work/myproject/models/"
cp "$root/traces/lut/rpi4b.h5" "$root/traces/lut/gtx1060.h5" "$work/myproject/traces/lut/"
sed 's#luts: \[mylut\]#luts: [traces/lut/]#' "$work/proj/s/small.yaml" > "$work/alone/copy.yaml"
cd "$work/alone"
"$coinfer" --root "$work/myproject" run copy.yaml --out "$work/r4" -q > "$work/r4.out" 2>&1 && \
  $py -c "
import json,sys; j=json.load(open('$work/r4/summary.json'))
luts=[f['path'] for f in j['data_files'] if f['role']=='lut']
assert luts and all(p.startswith('$work/myproject/traces/lut') for p in luts), luts" && ok || { bad "--root for LUTs"; cat "$work/r4.out"; }

# 4. A re-run into an earlier output replaces the files that output's marker lists and
# keeps, and names, what the user added beside them (a figure, a report); a file the earlier output
# listed as its own (a stale output) goes; a folder of the user's own files is refused untouched.
cd "$work/proj"
touch "$work/r1/latency_timeline.png"
echo "my notes" > "$work/r1/report.html"
grep -qx "summary.json" "$work/r1/.coinfer-output" && grep -qx "results.h5" "$work/r1/.coinfer-output" && ok || { bad "the marker lists the output's files"; cat "$work/r1/.coinfer-output"; }
echo "old_output.png" >> "$work/r1/.coinfer-output"; touch "$work/r1/old_output.png"   # as if the earlier output had written it
"$coinfer" run s/small.yaml --out "$work/r1" --set duration_s=2 > "$work/r5.out" 2>&1 \
  && [ -e "$work/r1/latency_timeline.png" ] && [ "$(cat "$work/r1/report.html")" = "my notes" ] && [ ! -e "$work/r1/old_output.png" ] \
  && [ -f "$work/r1/.coinfer-output" ] && [ -f "$work/r1/summary.json" ] && grep -q "kept 2 files.*latency_timeline.png.*report.html" "$work/r5.out" \
  && ! grep -qx "report.html" "$work/r1/.coinfer-output" \
  && ! ls -a "$work" | grep -q "replaced\|staging" && ok || { bad "rerun into a result folder keeps the user's files"; cat "$work/r5.out"; ls -a "$work" "$work/r1"; }
mkdir -p "$work/mine" && echo "precious" > "$work/mine/notes.txt"
"$coinfer" run s/small.yaml --out "$work/mine" -q > "$work/r6.out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "not an earlier coinfer output" "$work/r6.out" && [ "$(cat "$work/mine/notes.txt")" = precious ] \
  && [ "$(ls -A "$work/mine")" = notes.txt ] && ok || { bad "run into a folder of other files (rc $rc)"; cat "$work/r6.out"; }

finish provenance
