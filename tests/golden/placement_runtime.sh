#!/usr/bin/env bash
# Stages on several processors on the real device (hw/README.md "Stages on several processors"): a
# Jetson TX2's local[cpu:0-1,gpu:1-9] runs its two segments on two compute threads, the TX2's GPU
# computed by this machine's CPU (--processor-device gpu=cpu: no GPU here); every request completes,
# locally and when the server runs the rest (pp). What cannot run here is refused before anything
# starts, exit 2, naming the processor or the option, no journal written: a GPU placement without a
# device for it, a processor the board lacks, a malformed or repeated mapping, a device LibTorch does
# not know, CUDA without a GPU, a stage split between two processors, the default processor unmapped.
set -u
rt="$1"; root="$2"
source "$root/tests/golden/lib.sh"
cd "$root"
secret="$work/secret"; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$secret"; chmod 600 "$secret"
cp tests/golden/tx2_cpu_gpu.yaml "$work/tx.yaml"

# refused NAME "WHAT TO FIND" ARGS...: `coinfer-rt device` stops before connecting.
refused() {
  local name="$1" want="$2"; shift 2
  "$rt" device "$work/tx.yaml" --id tx --port 9 --secret-file "$secret" --records "$work/$name.jsonl" "$@" > "$work/$name.log" 2>&1
  local rc=$?
  [ $rc -eq 2 ] && grep -q -- "$want" "$work/$name.log" && [ ! -s "$work/$name.jsonl" ] && ok || bad "$name: exit $rc, wanted '$want': $(cat "$work/$name.log")"
}
refused unmapped "no LibTorch device for processor 'gpu'.*--processor-device gpu=cpu"
refused no_such "has no processor 'npu' (its processors: cpu, gpu)" --processor-device npu=cpu
refused malformed "expected NAME=DEVICE" --processor-device gpu
refused twice "processor 'gpu' is given twice" --processor-device gpu=cpu --processor-device gpu=cpu
refused unknown_device "'tpu' is not a LibTorch device" --processor-device gpu=tpu
refused default_unmapped "processor 'cpu' of device tx is its default processor" --processor-device cpu=none --processor-device gpu=cpu
refused split_stage "a stage split between two processors (\[gpu\*0.5+cpu\]) runs in the simulator only" \
  --processor-device gpu=cpu --set 'devices.0.strategy=local[gpu*0.5+cpu]'
# CUDA where LibTorch sees no GPU (a machine with one starts instead: stopped, not checked there).
timeout 20 "$rt" device "$work/tx.yaml" --id tx --port 9 --secret-file "$secret" --records "$work/cuda.jsonl" --processor-device gpu=cuda:0 \
  > "$work/cuda.log" 2>&1; rc=$?
if grep -q "is_available() is false" "$work/cuda.log"; then
  [ $rc -eq 2 ] && grep -q "processor 'gpu' of device tx: cuda:0 needs a CUDA LibTorch with a visible GPU" "$work/cuda.log" && ok || bad "cuda without a GPU: exit $rc: $(cat "$work/cuda.log")"
else
  echo "note: this LibTorch sees a GPU: the refusal of cuda without one is not checked here"
fi

# check --plan: the device's segments with their LUT times and their sum (the simulator's time for one
# request alone); the parts add up to the total (each printed to the microsecond).
"$rt" check "$work/tx.yaml" --plan > "$work/plan.txt" 2>&1; rc=$?
/usr/bin/python3 - "$work/plan.txt" <<'PY' && [ $rc -eq 0 ] && ok || bad "check --plan: exit $rc: $(cat "$work/plan.txt")"
import re, sys
line = [l for l in open(sys.argv[1]) if l.startswith("plan tx: ")][0]
m = re.fullmatch(r"plan tx: local\[cpu:0-1,gpu:1-9\]: cpu \[0,1\) ([0-9.]+) ms, gpu \[1,9\) ([0-9.]+) ms = ([0-9.]+) ms per request alone\n", line)
assert m, line
a, b, total = map(float, m.groups())
assert a > 0 and b > 0 and abs(a + b - total) <= 0.0015, line
PY
# coinfer profile --as-processor names what it measured only together with --processor.
"$(dirname "$rt")/coinfer-profile" --as-processor gpu --model gcn --out "$work/x.h5" > "$work/as.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "needs --processor" "$work/as.txt" && [ ! -e "$work/x.h5" ] && ok || bad "--as-processor alone: exit $rc: $(cat "$work/as.txt")"

# The testbed passes the mapping to its devices; without one it stops with the device's reason, exit 2,
# and leaves no output folder.
"$rt" testbed "$work/tx.yaml" --loopback --out "$work/none" > "$work/none.log" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "device tx refused to start:.*processor 'gpu'" "$work/none.log" && [ ! -e "$work/none" ] && [ ! -e "$work/none.work" ] \
  && ok || bad "testbed without a mapping: exit $rc: $(tail -3 "$work/none.log")"

# run NAME STRATEGY: a loopback testbed run with the TX2's GPU on this CPU; every request completes.
run() {
  local name="$1" strategy="$2"
  "$rt" testbed "$work/tx.yaml" --loopback --out "$work/$name" --processor-device gpu=cpu --set "devices.0.strategy=$strategy" \
    > "$work/$name.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { bad "$name ($strategy): exit $rc: $(tail -5 "$work/$name.log")"; return; }
  /usr/bin/python3 - "$work/$name/summary.json" <<'PY' && ok || bad "$name ($strategy): $(tail -3 "$work/$name.log")"
import json, sys
t = json.load(open(sys.argv[1]))["total"]
assert t["completed"] > 0 and t["failed"] == 0 and t["completed"] == t["created"], t
PY
  grep -q "tx: cpu on cpu, gpu on cpu" "$work/$name/logs/device-tx.log" && ok || bad "$name: the device log does not say where its processors run"
}
run local 'local[cpu:0-1,gpu:1-9]'
run pp 'pp(3)[cpu:0-1,gpu:1-3]'
finish placement_runtime
