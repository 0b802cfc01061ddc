#!/usr/bin/env bash
# coinfer medn (the MEDN paper's study) end to end: sample sets of the paper's modules measured
# on this CPU under real background load, with their features' classes and provenance; a resumed run
# keeps a finished module; evaluate's JSON holds every regressor's scores and both selections; the
# reproduce runner compares with the paper (medn/table6 --quick); bad options exit 2 naming the option.
set -u
coinfer="$1"; root="$2"
[ -x "$(dirname "$coinfer")/coinfer-medn" ] || { echo "SKIP: built without LibTorch"; exit 77; }
source "$root/tests/golden/lib.sh"
cd "$root"

"$coinfer" medn sample --out "$work/s" --modules linear,maxpool --samples 40 --max-mflop 5 --load-every 10 -q > "$work/s.out" 2>&1 \
  && /usr/bin/python3 - "$work/s" <<'PY' && ok || { bad "medn sample"; cat "$work/s.out"; }
import csv, sys, os
d = sys.argv[1]
assert sorted(os.listdir(d)) == ["linear.csv", "maxpool.csv"], os.listdir(d)
for name, features, classes in (("linear", ["N", "C_i", "C_o", "M", "U", "N_d", "N_m"], "sampling,sampling,sampling,measurable,measurable,inferable,inferable"),
                                ("maxpool", ["N", "C_i", "L", "K", "S", "M", "U", "N_d"], "sampling,sampling,sampling,sampling,sampling,measurable,measurable,inferable")):
    lines = open(os.path.join(d, name + ".csv")).read().splitlines()
    prov = {l[len("# provenance "):].split("=", 1)[0]: l.split("=", 1)[1] for l in lines if l.startswith("# provenance ")}
    assert "# feature-classes " + classes in lines, name
    for key in ("cpu", "libtorch", "command", "configurations", "background_load", "measurable", "setting_samples"):
        assert prov.get(key), (name, key)
    rows = list(csv.DictReader(l for l in lines if not l.startswith("#")))
    assert len(rows) == 40 and list(rows[0])[7:] == features, (name, len(rows), list(rows[0]))
    for r in rows:
        assert float(r["mean_s"]) > 0 and 0 <= float(r["U"]) <= 1 and float(r["M"]) > 0, r
        if name == "linear":  # N_d = N x C_i, N_m = C_i x C_o + C_o
            n, ci, co = int(r["N"]), int(r["C_i"]), int(r["C_o"])
            assert float(r["N_d"]) == n * ci and float(r["N_m"]) == ci * co + co, r
PY

# Resumed: both modules are kept (same settings), nothing is measured again.
before=$(stat -c %Y "$work/s/linear.csv")
"$coinfer" medn sample --out "$work/s" --modules linear,maxpool --samples 40 --max-mflop 5 --load-every 10 > "$work/r.out" 2>&1 \
  && grep -q "linear: kept" "$work/r.out" && [ "$(stat -c %Y "$work/s/linear.csv")" = "$before" ] && ok || { bad "resume keeps finished modules"; cat "$work/r.out"; }

"$coinfer" medn evaluate "$work/s" --modules linear,maxpool --epochs 20 -q > "$work/e.json" 2> "$work/e.err" \
  && /usr/bin/python3 - "$work/e.json" <<'PY' && ok || { bad "medn evaluate"; cat "$work/e.json" "$work/e.err"; }
import json, sys
j = json.load(open(sys.argv[1]))
kinds = ["lr", "rf", "mlp", "medn", "medn-d", "medn-xi", "medn-xm", "medn-r"]
for m in ("linear", "maxpool"):
    x = j["modules"][m]
    assert x["split"] == {"train": 28, "validation": 4, "test": 8}, x["split"]   # 7:1:2 of 40
    assert sorted(x["regressors"]) == sorted(kinds), x["regressors"].keys()
    for k in kinds:
        r = x["regressors"][k]
        assert 0 <= r["test"]["p20"] <= 1 and r["size_kb"] > 0 and r["tps_ms"] > 0, (m, k, r)
    assert x["space_efficient"] in kinds and x["time_efficient"] in kinds
assert sorted(j["auto_selection"]) == ["space", "time"] and set(j["means"]) == set(kinds)
PY

"$coinfer" reproduce medn/table6 --quick --out "$work/q" > "$work/q.out" 2>&1 \
  && /usr/bin/python3 - "$work/q/reproduce.json" <<'PY' && ok || { bad "reproduce medn/table6 --quick"; cat "$work/q.out"; }
import json, sys
j = json.load(open(sys.argv[1]))
it = j["papers"][0]["items"][0]
assert it["item"] == "table6" and it["measured_on"], it
rows = {(r["config"]["selection"], r["config"]["metric"], r["scheme"]): r for r in it["rows"]}
assert len(rows) == 8 and all(r["coinfer"] is not None for r in rows.values()), rows
assert rows[("time", "p20", "MEDN alone")]["coinfer"] == 1.0
PY

# Bad input: exit 2, the option named, nothing on stdout.
for case in "--modules sample --out $work/b --modules conv2d" "--samples sample --out $work/b --samples 3" \
            "--max-mflop sample --out $work/b --max-mflop 0" "--epochs evaluate $work/s --epochs 0" "DIR evaluate $work/nothing"; do
  opt=${case%% *}; args=${case#* }
  "$coinfer" medn $args > "$work/bad.out" 2> "$work/bad.err"; rc=$?
  [ $rc -eq 2 ] && [ ! -s "$work/bad.out" ] && grep -q -- "$opt" "$work/bad.err" && ok || { bad "medn $args: exit $rc"; cat "$work/bad.out" "$work/bad.err"; }
done
finish medn
