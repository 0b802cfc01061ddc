#!/usr/bin/env bash
# Soak of the real edge server: `coinfer-rt serve` under a 256-descriptor limit,
# with DEVICES devices registering, running real GCN tasks, disconnecting (1 in 5 with a task in flight)
# and reconnecting for SECONDS, plus garbage from unauthenticated peers (tests/soak/serve_soak.cpp
# says what is checked). Samples every SAMPLE_EVERY s go to OUT/soak.csv when OUT is given.
#   bash tests/soak/serve_soak.sh COINFER_RT SERVE_SOAK SOURCE_DIR [SECONDS=60] [OUT] [DEVICES=50] [SAMPLE_EVERY=10]
# e.g. bash tests/soak/serve_soak.sh build/coinfer-rt build/tests/serve_soak . 600 /tmp/soak
# The CI runs 60 s (ctest serve_soak); bench/RESULTS.md records a 600 s run.
set -u
rt="$1"; soak="$2"; root="$(cd "$3" && pwd)"; seconds="${4:-60}"; out="${5:-}"; devices="${6:-50}"; every="${7:-10}"
case "$out" in ""|/*) ;; *) out="$PWD/$out" ;; esac
source "$(dirname "$0")/../golden/rt_processes.sh"
[ -x "$soak" ] || { echo "SKIP: serve_soak not built"; exit 77; }
echo "soak-secret" > "$work/secret"
cat > "$work/soak.yaml" <<YAML
# Soak: $devices devices offload GCN/MR to one server; the run never ends during the soak.
name: soak
seed: 1
duration_s: 100000
luts: [$root/traces/lut]
servers:
  - {id: edge, type: gtx1060, workers: 2, batch: {window_ms: 5, max_size: 4}}
devices:
  - {id: dev, count: $devices, type: rpi4b, model: gcn, dataset: mr, link: {bandwidth_mbps: 50}, strategy: offload}
YAML
(ulimit -n 256; exec "$rt" serve "$work/soak.yaml" --bind 127.0.0.1 --port 0 --port-file "$work/port" \
   --secret-file "$work/secret" > "$work/server.log" 2>&1) &
server=$!; pids+=($server)
for _ in $(seq 300); do [ -s "$work/port" ] && break; kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
[ -s "$work/port" ] || { echo "FAIL: the server did not start"; cat "$work/server.log"; exit 1; }
csv="$work/soak.csv"; [ -n "$out" ] && { mkdir -p "$out"; csv="$out/soak.csv"; }
"$soak" --port "$(cat "$work/port")" --secret-file "$work/secret" --server-pid "$server" --root "$root" \
  --devices "$devices" --seconds "$seconds" --sample-every "$every" --csv "$csv"
rc=$?
if ! kill -0 "$server" 2>/dev/null; then
  echo "FAIL: the server died during the soak"; tail -20 "$work/server.log"; exit 1
fi
registrations=$(grep -c " registered from " "$work/server.log")
echo "serve_soak: the server logged $registrations registrations, $(grep -c '^.*rejected' "$work/server.log") rejections"
[ -n "$out" ] && cp "$work/server.log" "$out/server.log"
if [ $rc -ne 0 ]; then echo "server log (last 20 lines):"; tail -20 "$work/server.log"; fi
exit $rc
