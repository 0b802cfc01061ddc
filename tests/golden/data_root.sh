#!/usr/bin/env bash
# The program reads the user's project, not the tree it was built from (io/data_root.hpp): a model
# added to a copy of models/ is seen from inside that project, through --root and $COINFER_ROOT, and
# by a scenario of that project run from elsewhere; files the copy lacks (traces/, plots/) still come
# from the next candidate.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
check() { if eval "$2"; then ok; else bad "$1"; fi; }
proj="$work/myproject"
mkdir -p "$proj/models/specs" "$proj/luts" "$proj/scenarios"
cp "$root/models/datasets.yaml" "$proj/models/"
cp "$root"/models/specs/*.yaml "$proj/models/specs/"
sed 's/^name: gcn/name: mygcn/; s/hidden 64/hidden 32/; s/out: 64/out: 32/g' "$root/models/specs/gcn.yaml" > "$proj/models/specs/mygcn.yaml"

check "model list inside the project" '(cd "$proj/scenarios" && "$coinfer" model list) | grep -q "^mygcn"'
check "model list elsewhere does not see it" '! (cd "$work" && "$coinfer" model list) | grep -q "^mygcn"'
check "--root" '(cd "$work" && "$coinfer" --root "$proj" model list) | grep -q "^mygcn"'
check "COINFER_ROOT" '(cd "$work" && COINFER_ROOT="$proj" "$coinfer" model list) | grep -q "^mygcn"'
# lut synth inside the project: its model, the device profiles from the next candidate (no traces/ here).
(cd "$proj" && "$coinfer" lut synth --device rpi4b --model mygcn --out luts/rpi4b.h5 > /dev/null \
  && "$coinfer" lut synth --device gtx1060 --model mygcn --out luts/gtx1060.h5 > /dev/null)
check "lut synth of the project's model" '[ -s "$proj/luts/rpi4b.h5" ] && [ -s "$proj/luts/gtx1060.h5" ]'
cat > "$proj/scenarios/mine.yaml" <<YAML
name: mine
duration_s: 2
luts: [../luts]
servers:
  - {id: edge, type: gtx1060}
devices:
  - {id: d, type: rpi4b, model: mygcn, dataset: mr, link: {bandwidth_mbps: 10}, strategy: offload}
YAML
check "a scenario of the project run from elsewhere" '(cd / && "$coinfer" run "$proj/scenarios/mine.yaml" -q --out "$work/out") && [ -s "$work/out/results.h5" ]'
# The run says where its data came from: in its provenance (summary.json data_files, results.h5
# /provenance/data_files) and, with -v, on stderr as the files are resolved.
check "provenance names the project's models and LUTs" '/usr/bin/python3 - "$work/out" "$proj" <<PY
import json, sys, h5py
out, proj = sys.argv[1], sys.argv[2]
files = json.load(open(out + "/summary.json"))["data_files"]
roles = {f["role"]: f for f in files}
assert roles["scenario"]["path"] == proj + "/scenarios/mine.yaml", roles["scenario"]
assert roles["models"]["path"] == proj + "/models" and "the scenario" in roles["models"]["origin"], roles["models"]
luts = [f for f in files if f["role"] == "lut"]
assert sorted(f["path"] for f in luts) == [proj + "/scenarios/../luts/gtx1060.h5", proj + "/scenarios/../luts/rpi4b.h5"] or \
       sorted(f["path"] for f in luts) == [proj + "/luts/gtx1060.h5", proj + "/luts/rpi4b.h5"], luts
assert all("synthesised" in f["origin"] and "mygcn/mr" in f["origin"] for f in luts), luts
with h5py.File(out + "/results.h5") as h:
    assert [x.decode() if isinstance(x, bytes) else x for x in h["provenance/data_files/path"][()]] == [f["path"] for f in files]
PY'
check "-v prints where the models came from" '(cd / && "$coinfer" -v run "$proj/scenarios/mine.yaml" --out "$work/outv" 2>&1 >/dev/null) | grep -q "^\[data\] models: $proj/models from the scenario"'
# `cmake --install` makes a working installation: programs in PREFIX/bin read PREFIX/share/coinfer wherever
# PREFIX is (a model only the installation has is listed; the quickstart runs from outside any project).
build="$(dirname "$coinfer")"
if cmake --install "$build" --prefix "$work/inst" > "$work/install.log" 2>&1; then
  sed 's/^name: gcn/name: installedgcn/' "$root/models/specs/gcn.yaml" > "$work/inst/share/coinfer/models/specs/installedgcn.yaml"
  check "installed program reads the installed data" '(cd "$work" && "$work/inst/bin/coinfer" model list) | grep -q "^installedgcn"'
  check "installed plots, python package and scenarios" '[ -f "$work/inst/share/coinfer/plots/coinfer_plots.py" ] && [ -f "$work/inst/share/coinfer/python/coinfer/__init__.py" ] && [ -f "$work/inst/share/coinfer/scenarios/quickstart.yaml" ] && [ ! -e "$work/inst/share/coinfer/models/gnn_model.cpp" ]'
  check "installed quickstart runs" '(cd "$work" && "$work/inst/bin/coinfer" run "$work/inst/share/coinfer/scenarios/quickstart.yaml" --set duration_s=2 --set warmup_s=0 --out "$work/instrun" -q) && [ -s "$work/instrun/summary.json" ]'
else
  bad "cmake --install"; cat "$work/install.log"; 
fi
finish data_root
