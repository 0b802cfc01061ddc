#!/usr/bin/env bash
# coinfer reproduce: the published-number files parse and every number names
# its source and role; a malformed file is refused naming it; --quick runs every runnable ACE-GNN item;
# a planted wrong published value flips its verdict (the verdicts are computed from the files, the
# simulations are reused); a rerun resumes from the kept items.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"  # $work (removed on exit), ok, bad, finish
cd "$root"

"$coinfer" reproduce list > "$work/list" 2>&1 && for p in ace-gnn sparoa grannite feature-decomposition medn; do grep -q "^$p: " "$work/list" || exit 1; done \
  && ! grep "^  " "$work/list" | grep -vq " runs: \| lacks: " && grep -q "ace-gnn/table3   runs: 64 published numbers (16 inputs, 48 predictions)" "$work/list" \
  && ok || { bad "reproduce list"; cat "$work/list"; }
/usr/bin/python3 - reproduce/published <<'PY' && ok || bad "every published number names its source and role"
import os, sys, yaml
n = 0
for f in sorted(os.listdir(sys.argv[1])):
    d = yaml.safe_load(open(os.path.join(sys.argv[1], f)))
    for it in d["items"]:
        # An item says what coinfer lacks, or has published numbers, or reports measurements only (a grid).
        assert it.get("lacks") or it.get("published") or it.get("grid"), (f, it["id"])
        for p in it.get("published", []):
            assert p["role"] in ("input", "prediction") and len(p["source"]) > 10 and isinstance(p["value"], (int, float)), (f, it["id"], p)
            n += 1
assert n >= 72, n
PY
# A published number without its source: refused, naming the file and the item; nothing written.
cp -r reproduce/published "$work/bad"
sed -i '0,/, source: "Table II, row PP (KB), column ModelNet40 \/ DGCNN"/s///' "$work/bad/ace-gnn.yaml"
"$coinfer" reproduce ace-gnn --published "$work/bad" --out "$work/none" > "$work/bad.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "ace-gnn.yaml: items\[0\] (table2) published\[0\]: source must say where" "$work/bad.out" && [ ! -e "$work/none" ] \
  && ok || { bad "a published number without a source (rc $rc)"; cat "$work/bad.out"; }
# An unknown key in an entry (here an unquoted scheme name with a comma, which YAML splits): refused, naming it.
cp -r reproduce/published "$work/bad3"
sed -i '0,/scheme: "SAC over CPU-only, up to"/s//scheme: SAC over CPU-only, up to/' "$work/bad3/sparoa.yaml"
at=$(/usr/bin/python3 -c "import sys, yaml; print(next(i for i, p in enumerate(yaml.safe_load(open(sys.argv[1]))['items'][0]['published']) if p['scheme'] == 'SAC over CPU-only, up to'))" reproduce/published/sparoa.yaml)
"$coinfer" reproduce sparoa --published "$work/bad3" --out "$work/none" > "$work/bad3.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "sparoa.yaml: items\[0\] (fig5) published\[$at\]: unknown key 'up to'.*quote the name" "$work/bad3.out" && [ ! -e "$work/none" ] \
  && ok || { bad "an unknown key in a published entry (rc $rc)"; cat "$work/bad3.out"; }
# A least_of naming a scheme the item does not have: refused, naming the file and the item; nothing written.
cp -r reproduce/published "$work/bad6"
sed -i '0,/      CPU: \*fig23_forms/s//      DSP: *fig23_forms/' "$work/bad6/grannite.yaml"
"$coinfer" reproduce grannite --published "$work/bad6" --out "$work/none" > "$work/bad6.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "grannite.yaml: items\[[0-9]*\] (fig23_cpu): least_of (ratio runner only) maps schemes of the item" "$work/bad6.out" \
  && [ ! -e "$work/none" ] && ok || { bad "a least_of naming no scheme of its item (rc $rc)"; cat "$work/bad6.out"; }
"$coinfer" reproduce ace-gnn/table9 --out "$work/none" > "$work/bad2.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "unknown item 'table9'" "$work/bad2.out" && ok || { bad "unknown item (rc $rc)"; cat "$work/bad2.out"; }

# --quick: every runnable item of ACE-GNN at small scale.
"$coinfer" reproduce ace-gnn --quick --out "$work/q" > "$work/q.out" 2>&1 || { bad "reproduce ace-gnn --quick"; cat "$work/q.out"; }
/usr/bin/python3 - "$work/q/reproduce.json" <<'PY' && ok || bad "reproduce.json"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["papers"][0]
assert p["paper"] == "ace-gnn" and p["items_run"] == 17 and p["items_lacking"] == 1, (p["items_run"], p["items_lacking"])
# Fig. 18 trains the GIN predictors (at --quick: 6 systems, width 16, 3 epochs) and reads the held-out 30 %.
f18 = next(i for i in p["items"] if i["item"] == "fig18")
assert all(0 <= x["coinfer"] <= 100 and "held-out samples" in x["detail"] for x in f18["rows"]), f18["rows"]
# Every item that runs gives every published number a value (none failed to run).
for it in p["items"]:
    for x in it.get("rows", []):
        assert x["coinfer"] is not None or x["verdict"].startswith("not expressible"), (it["item"], x)
t3 = next(i for i in p["items"] if i["item"] == "table3")
ran = [x for x in t3["rows"] if x["coinfer"] is not None]
assert len(ran) == 48 and all(x["scheme"] != "Brancy" for x in ran), len(ran)           # Branchy is not expressible: said so
assert all(x["verdict"].startswith("not expressible") for x in t3["rows"] if x["scheme"] == "Brancy")
hg = [x for x in ran if x["scheme"] == "HGNAS"]
assert all(x["role"] == "input" and x["within"] for x in hg), hg                           # the calibration inputs match by construction
assert t3["ordering"]["pairs"] == 48 and len(t3["headlines"]) == 3, t3["ordering"]
print(f"table3 --quick: orderings {t3['ordering']['held']}/48, predictions within {t3['predictions']['within']}/{t3['predictions']['compared']}")
PY
# SparOA's Figs. 5-7, 9-11 and Table 3 on its CNNs (--quick: each board's threshold predictor on 8
# sequences for 20 epochs, SAC trained 40 episodes per board and model): every published number gets a
# value except the ViT-B16 cell (no spec: said so), MobileNet-v3-small's included; the ratios are speed-ups of
# one placement over another on the same tables, so each is positive and finite; shares and accuracies are
# percentages; Fig. 11's are outcomes.
"$coinfer" reproduce sparoa --quick --out "$work/sp" > "$work/sp.out" 2>&1 || { bad "reproduce sparoa --quick"; cat "$work/sp.out"; }
/usr/bin/python3 - "$work/sp/reproduce.json" <<'PY' && ok || bad "reproduce sparoa: figs. 5-7, 9-12, table 3"
import json, math, sys
p = json.load(open(sys.argv[1]))["papers"][0]
assert p["paper"] == "sparoa" and p["items_run"] == 10, p["items_run"]
rows = {i["item"]: i["rows"] for i in p["items"] if i.get("rows")}
for item, rs in rows.items():
    for x in rs:
        if x["scheme"].startswith("SAC over the compilers"):                              # not baselines coinfer has
            assert x["coinfer"] is None and x["verdict"].startswith("not expressible"), x
        elif item == "fig7":                                  # % less copying than w/o RL's: at most 100, negative when more
            assert x["coinfer"] is not None and math.isfinite(x["coinfer"]) and x["coinfer"] <= 100, x
        else:
            assert x["coinfer"] is not None and math.isfinite(x["coinfer"]) and x["coinfer"] >= 0, (item, x)
assert all(0 <= x["coinfer"] <= 100 for item in ("fig6", "table3") for x in rows[item]), (rows["fig6"], rows["table3"])
assert all(x["coinfer"] in (0, 1) for x in rows["fig11"]), rows["fig11"]                 # outcomes
assert len(rows["fig12_order"]) == 15 and all(x["coinfer"] in (0, 1) for x in rows["fig12_order"]), rows["fig12_order"]
# Fig. 12: SAC shards a split stage's weights, so it holds at least GPU-only's memory (its working sets on both
# processors of a copying board on top), and CoDL, holding them whole on both, holds more than SAC.
assert len(rows["fig12"]) == 1 and 0 <= rows["fig12"][0]["coinfer"] < 100, rows["fig12"]
assert all(x["coinfer"] == 1 for x in rows["fig12_order"] if x["scheme"] == "SAC below CoDL"), rows["fig12_order"]
# CoDL splits every stage and holds each split stage's weights whole on both processors (and, on the copying
# Orin, its working set): exactly twice GPU-only's memory; one processor's placements hold the same.
import glob, os
runs = glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "sparoa-runs-quick", "jetson-agx-orin__*.json"))
assert len(runs) == 5, runs
for f in runs:
    r = json.load(open(f))["rules"]
    assert all(s.startswith("gpu*") for s in r["codl"]["placement"].strip("[]").split(",")), (f, r["codl"]["placement"])
    assert abs(r["codl"]["memory_mb"] / r["accelerator_only"]["memory_mb"] - 2) < 1e-9, (f, r["codl"], r["accelerator_only"])
    assert abs(r["cpu_only"]["memory_mb"] - r["accelerator_only"]["memory_mb"]) < 1e-9, (f, r["cpu_only"])
assert all(x["coinfer"] > 0 for item in ("fig5", "fig9", "fig10") for x in rows[item] if x["coinfer"] is not None)
assert all(x["role"] == "prediction" for rs in rows.values() for x in rs)
assert sorted(x["config"]["board"] for x in rows["fig7"]) == ["jetson-agx-orin", "jetson-orin-nano"], rows["fig7"]  # the Orins copy
v3 = [x for x in rows["fig5"] if x["config"].get("model") == "mobilenet_v3_small"]
assert len(v3) == 4 and all(x["coinfer"] > 0 for x in v3), v3                              # its spec runs: codl, greedy, dp, cpu_only
tf = [x for x in rows["fig5"] + rows["fig9"] if x["config"].get("model") in ("vit_b16", "swin_t")]
assert len(tf) == 8 and all(x["coinfer"] > 0 for x in tf), tf                              # the transformers run: fig5's 6, fig9's 2
PY
# GraNNite: the Series 2 NPU's shipped figures are the calibration's solution of Figs. 4-5, its CPU's and
# GPU's efficiencies the solution of Fig. 22's GCN column, their busy powers that of Fig. 23's Cora half; its
# runnable items (full scale, ~35 s) give
# every published number a value (Figs. 20-21 all predictions; Fig. 22's GCN entries and Fig. 23's Cora entries
# inputs, met by construction), and reproduce/README.md's generated GraNNite block matches them.
/usr/bin/python3 bench/grannite_npu_calibration.py --coinfer "$coinfer" --check > "$work/cal.out" 2>&1 && ok || { bad "NPU calibration"; cat "$work/cal.out"; }
/usr/bin/python3 bench/grannite_cpu_gpu_calibration.py --coinfer "$coinfer" --check > "$work/cal2.out" 2>&1 && ok || { bad "CPU and GPU calibration"; cat "$work/cal2.out"; }
/usr/bin/python3 bench/grannite_power_calibration.py --coinfer "$coinfer" --check > "$work/cal3.out" 2>&1 && ok || { bad "CPU and GPU power calibration"; cat "$work/cal3.out"; }
"$coinfer" reproduce grannite --out "$work/g" --docs reproduce/README.md --check-docs > "$work/g.out" 2>&1 && /usr/bin/python3 - "$work/g/reproduce.json" <<'PY' && ok || { bad "reproduce grannite (its block in reproduce/README.md stale? coinfer reproduce grannite --out DIR --docs reproduce/README.md)"; tail -5 "$work/g.out"; }
import json, sys
items = {i["item"]: i for i in json.load(open(sys.argv[1]))["papers"][0]["items"]}
for name, rows in (("fig20", 2), ("fig20_grad", 1), ("fig20_grasp", 1), ("fig20_quantgr", 1), ("fig20_gat_effop", 2), ("fig20_gat_grax2", 2),
                   ("fig21", 2)):
    it = items[name]
    assert len(it["rows"]) == rows and all(r["coinfer"] > 1 and r["role"] == "prediction" for r in it["rows"]), (name, it["rows"])
for name in ("fig22_cpu", "fig22_gpu"):
    got = {r["config"]["model"]: r for r in items[name]["rows"]}
    assert sorted(got) == ["gat", "gcn", "sage"], (name, got)
    assert got["gcn"]["role"] == "input" and abs(got["gcn"]["coinfer"] / got["gcn"]["published"] - 1) < 0.01, (name, got["gcn"])
    assert all(got[m]["role"] == "prediction" and got[m]["coinfer"] > 0 for m in ("gat", "sage")), (name, got)
# Fig. 23: energy per inference, each processor's least over its forms (least_of), the one chosen named; Cora's
# ratios are the power calibration's inputs, met to 1 % by whole simulations; Citeseer's are predictions.
for name, proc in (("fig23_cpu", "CPU"), ("fig23_gpu", "GPU")):
    got = {r["config"]["dataset"]: r for r in items[name]["rows"]}
    assert sorted(got) == ["citeseer", "cora"], (name, got)
    assert got["cora"]["role"] == "input" and abs(got["cora"]["coinfer"] / got["cora"]["published"] - 1) < 0.01, (name, got["cora"])
    assert got["citeseer"]["role"] == "prediction" and got["citeseer"]["coinfer"] > 1, (name, got["citeseer"])
    assert all(f"{proc} " in r["detail"] and "NPU " in r["detail"] and "(devices.0.variant=" in r["detail"] for r in got.values()), (name, got)
PY
grep -q 'id="reproduce-summary"' "$work/q/report.html" && grep -q 'id="ace-gnn-table3-table"' "$work/q/report.html" && ok || bad "report.html"
# Each item with numbers is redrawn with the published points overlaid (an embedded PNG, also kept in figures/).
grep -q 'id="ace-gnn-table3-figure"><img alt=[^>]*src="data:image/png;base64,' "$work/q/report.html" && [ -s "$work/q/figures/ace-gnn__table3.png" ] \
  && [ ! -e "$work/q/figures/ace-gnn__fig21.png" ] && ok || { bad "the items' figures"; ls "$work/q/figures"; }
# The measured reasons coinfer differs are in the report, under their item.
grep -q 'id="ace-gnn-table3-disagreements"' "$work/q/report.html" && grep -q "using GCoDE&#x27;s model\|using GCoDE's model" "$work/q/report.html" \
  && ok || bad "table3's disagreements in report.html"
# A disagreement without its evidence: refused, naming the file, the item and the entry.
cp -r reproduce/published "$work/bad3"
/usr/bin/python3 - "$work/bad3/ace-gnn.yaml" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
del next(i for i in d["items"] if i["id"] == "table3")["disagreements"][0]["evidence"]
yaml.safe_dump(d, open(sys.argv[1], "w"), sort_keys=False)
PY
"$coinfer" reproduce ace-gnn/table3 --published "$work/bad3" --out "$work/none" > "$work/bad3.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "ace-gnn.yaml: items\[1\] (table3) disagreements\[0\]: needs about" "$work/bad3.out" && [ ! -e "$work/none" ] \
  && ok || { bad "a disagreement without evidence (rc $rc)"; cat "$work/bad3.out"; }

# A planted wrong published value flips its verdict; the simulations are not run again (kept items).
cp -r reproduce/published "$work/planted"
sed -i 's/{config: {pair: tx2-gpu, bandwidth_mbps: 100}, scheme: HGNAS, value: 52.1,/{config: {pair: tx2-gpu, bandwidth_mbps: 100}, scheme: HGNAS, value: 152.1,/' "$work/planted/ace-gnn.yaml"
before=$(stat -c %Y "$work/q/items/ace-gnn__table3.json")
"$coinfer" reproduce ace-gnn/table3 --quick --published "$work/planted" --out "$work/q" > "$work/p.out" 2>&1 || { bad "reproduce with a planted value"; cat "$work/p.out"; }
/usr/bin/python3 - "$work/q/reproduce.json" <<'PY' && ok || bad "the planted value's verdict"
import json, sys
t3 = json.load(open(sys.argv[1]))["papers"][0]["items"][0]
row = next(x for x in t3["rows"] if x["scheme"] == "HGNAS" and x["config"] == {"pair": "tx2-gpu", "bandwidth_mbps": 100})
assert row["published"] == 152.1 and row["verdict"].startswith("outside"), row
PY
[ "$(stat -c %Y "$work/q/items/ace-gnn__table3.json")" = "$before" ] && ! grep -q "runs, " "$work/p.out" && ok || { bad "the rerun did not resume"; cat "$work/p.out"; }

# Outcomes the text states (runner outcome): each is 1 or 0 and its verdict is the same outcome or not; a
# planted opposite outcome flips the verdict without running again. Fig. 21 (a)'s rise-then-drop holds at
# --quick scale: max_size 1 gives batches of one (~208 req/s for five Pi 4B offloading DGCNN), 3-5 fill
# the GPU's batches, 16 waits out the 10 ms window with five closed-loop devices (less than 16 can queue).
"$coinfer" reproduce ace-gnn --quick --out "$work/q" > "$work/q2.out" 2>&1 && ! grep -q "runs, " "$work/q2.out" || { bad "the whole rerun (every item kept)"; cat "$work/q2.out"; }
/usr/bin/python3 - "$work/q/reproduce.json" <<'PY' && ok || bad "the outcome items"
import json, sys
p = json.load(open(sys.argv[1]))["papers"][0]
items = {i["item"]: i for i in p["items"]}
for name in ("fig3", "fig10", "fig13_schemes", "fig21"):
    for x in items[name]["rows"]:
        assert x["coinfer"] in (0, 1) and x["verdict"] in ("same outcome", "different outcome"), (name, x)
        assert x["within"] == (x["coinfer"] == x["published"]), (name, x)
f21 = items["fig21"]["rows"][0]
assert f21["coinfer"] == 1 and "servers.0.batch.max_size=1:" in f21["detail"], f21
f10 = {x["config"]["outcome"]: x for x in items["fig10"]["rows"]}
assert "tx2=" not in f10["PP then DP"]["detail"] and " s local" in f10["PP then DP"]["detail"], f10   # the TX2's strategy per decision
PY
cp -r reproduce/published "$work/planted2"
sed -i 's/{config: {outcome: rises then drops}, scheme: batch inference, value: 1,/{config: {outcome: rises then drops}, scheme: batch inference, value: 0,/' "$work/planted2/ace-gnn.yaml"
before=$(stat -c %Y "$work/q/items/ace-gnn__fig21.json")
"$coinfer" reproduce ace-gnn/fig21 --quick --published "$work/planted2" --out "$work/q" > "$work/p2.out" 2>&1 || { bad "reproduce with a planted outcome"; cat "$work/p2.out"; }
/usr/bin/python3 - "$work/q/reproduce.json" <<'PY' && ok || bad "the planted outcome's verdict"
import json, sys
row = json.load(open(sys.argv[1]))["papers"][0]["items"][0]["rows"][0]
assert row["published"] == 0 and row["coinfer"] == 1 and row["verdict"] == "different outcome", row
PY
[ "$(stat -c %Y "$work/q/items/ace-gnn__fig21.json")" = "$before" ] && ok || bad "the planted outcome ran again"
# A malformed claim: refused naming the file, the item and the entry.
cp -r reproduce/published "$work/bad4"
sed -i 's/claim: {peak_inside: servers.0.batch.max_size, values: \[1, 2, 3, 5, 8, 12, 16\], scheme: batch inference}/claim: {peak_inside: servers.0.batch.max_size, values: [1, 16], scheme: no such scheme}/' "$work/bad4/ace-gnn.yaml"
"$coinfer" reproduce ace-gnn/fig21 --published "$work/bad4" --out "$work/none" > "$work/bad4.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "ace-gnn.yaml: items\[[0-9]*\] (fig21) published\[0\]: the claim names a scheme that is not in the item's schemes" "$work/bad4.out" && [ ! -e "$work/none" ] \
  && ok || { bad "a claim naming an unknown scheme (rc $rc)"; cat "$work/bad4.out"; }
cp -r reproduce/published "$work/bad5"
sed -i 's/{config: {outcome: rises then drops}, scheme: batch inference, value: 1,/{config: {outcome: rises then drops}, scheme: batch inference, value: 0.5,/' "$work/bad5/ace-gnn.yaml"
"$coinfer" reproduce ace-gnn/fig21 --published "$work/bad5" --out "$work/none" > "$work/bad5.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "(fig21) published\[0\]: an outcome's value is 1 (holds) or 0 (does not)" "$work/bad5.out" && ok || { bad "an outcome of 0.5 (rc $rc)"; cat "$work/bad5.out"; }

# No stale figures: the generated blocks of reproduce/README.md and bench/RESULTS.md are this build's
# full-scale ACE-GNN run (~15 s); a planted edit in a block is found; --docs refuses --quick.
"$coinfer" reproduce ace-gnn --skip ace-gnn/fig18 --out "$work/full" --docs reproduce/README.md --docs bench/RESULTS.md --check-docs > "$work/docs.out" 2>&1 \
  && grep -q "checked reproduce/README.md, bench/RESULTS.md" "$work/docs.out" && ok \
  || { bad "the documents' generated ACE-GNN blocks are stale: run coinfer reproduce ace-gnn --out DIR --docs reproduce/README.md --docs bench/RESULTS.md"; tail -5 "$work/docs.out"; }
cp reproduce/README.md "$work/doc.md"
sed -i '0,/| 45 \/ 48 |/s//| 44 \/ 48 |/; 0,/^| table3: .* | \([0-9]*\) \/ 48 |/s//| table3: planted | \1 \/ 48 |/' "$work/doc.md"
"$coinfer" reproduce ace-gnn --skip ace-gnn/fig18 --out "$work/full" --docs "$work/doc.md" --check-docs > "$work/docs2.out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "doc.md: ace-gnn summary" "$work/docs2.out" && ! cmp -s "$work/doc.md" reproduce/README.md && ok || { bad "a planted edit in a generated block (rc $rc)"; cat "$work/docs2.out"; }
"$coinfer" reproduce ace-gnn --skip ace-gnn/fig18 --out "$work/full" --docs "$work/doc.md" > /dev/null 2>&1 && cmp -s "$work/doc.md" reproduce/README.md && ok || bad "--docs regenerates the block"
# A block needs every item but the trained ones: skipping another is refused.
"$coinfer" reproduce ace-gnn --skip ace-gnn/fig18 --skip ace-gnn/fig3 --out "$work/full" --docs "$work/doc.md" --check-docs > "$work/docs4.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "need every item run (not run: fig3)" "$work/docs4.out" && ok || { bad "a block with an item skipped (rc $rc)"; cat "$work/docs4.out"; }
"$coinfer" reproduce ace-gnn --quick --out "$work/q" --docs "$work/doc.md" > "$work/docs3.out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "full-scale figures" "$work/docs3.out" && ok || { bad "--docs with --quick (rc $rc)"; cat "$work/docs3.out"; }

finish reproduce
