#!/usr/bin/env bash
# Testbed-measured predictor samples (item 3/4c): the emulated testbed (network namespaces,
# tc, real LibTorch processes; root) plays scenarios/validate/bw5_dev3.yaml under several static schemes;
# each run is appended to a copy of a sample set as a measured sample (coinfer predictor add), so
# `coinfer predictor eval OUT/measured.h5 --measured-only` compares the estimators with measurements.
# usage: sudo bash bench/predictor_testbed_samples.sh BASE_SAMPLES.h5 OUT_DIR   (from the repository root;
#        about 1 minute per scheme here)
set -euo pipefail
base=$1; out=$2
mkdir -p "$out"
cp "$base" "$out/measured.h5"
scen=scenarios/validate/bw5_dev3.yaml
i=0
for scheme in "offload offload offload" "local local local" "pp(3) pp(3) pp(3)" "data_parallel data_parallel data_parallel" \
              "offload local pp(3)" "data_parallel offload local" "pp(1) pp(5) pp(7)"; do
  read -r s0 s1 s2 <<< "$scheme"
  f="$out/scheme$i.yaml"
  /usr/bin/python3 - "$scen" "$f" "$s0" "$s1" "$s2" <<'PY'
import os, re, sys
src, dst, *st = sys.argv[1:]
text = open(src).read()
dev = re.search(r"  - \{id: dev, count: 3, (.*?)strategy: offload\}", text, re.S)
body = dev.group(1)
devices = "".join(f"  - {{id: dev{k}, {body}strategy: {s}}}\n" for k, s in enumerate(st))
text = text[:dev.start()] + devices + text[dev.end() + 1:]
text = text.replace("luts: [traces/lut_measured/]", "luts: [" + os.path.abspath("traces/lut_measured") + "]")
text = re.sub(r"scheduler: \{name: hierarchical\}", "scheduler: {name: static}", text)
open(dst, "w").write(text)
PY
  echo "[testbed_samples] scheme $i: $scheme" >&2
  rm -rf "$out/run$i"
  build/coinfer testbed "$f" --device-cpu 0.3 --out "$out/run$i" > "$out/run$i.log" 2>&1  # the LUT was measured at 0.3 cores
  build/coinfer predictor add "$out/measured.h5" --run "$out/run$i" --scenario "$f" --system 1000000
  i=$((i+1))
done
