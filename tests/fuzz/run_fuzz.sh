#!/usr/bin/env bash
# Builds libFuzzer targets with clang (AddressSanitizer + UBSan, leaks detected) and runs each for a
# bounded time from a seed corpus made of the shipped files:
#   frame        the middleware's frame parser and payload decoders (seeds: one valid frame per type, the
#                several-server messages included)
#   scenario     the scenario loader, YAML text + --set overrides + a side file (fuzz.csv: mobility and
#                bandwidth traces, or the hardware file), checked against models and LUTs (seeds: every
#                shipped scenario, some with overrides, two with traces, one with traces/devices.yaml)
#   lut_codec    the bytes the isolated LUT reader hands back (seeds: every shipped LUT, encoded)
#   lut_file     the LUT file reader on HDF5 bytes (seeds: every shipped LUT file)
#   module_samples  the module sample set reader, CSV (seed: a small hand-written set with quoted fields)
#   predictor_samples  the predictor sample set reader on HDF5 bytes (seed: a small simulated sample set)
#   inventory    the testbed inventory loader, YAML text, checked against a two-device scenario (seeds: a
#                full inventory and small variants)
#   journal      the real runtime's request journals (JSON lines; seeds: a journal with every kind of line)
#   h5_tree      the HDF5 readers (LUT tables, predictor samples, results.h5 requests) over an in-memory
#                tree of what libhdf5 could hand back (tests/fuzz/h5_tree.hpp; seeds: every shipped LUT
#                file, a tiny LUT with every optional dataset, a small sample set and a small
#                results.h5, as trees; inputs up to 16 KB)
#   model_spec   the model spec loader, YAML text as a spec file, every declared pair's costs derived and
#                checked finite (seeds: every shipped spec)
# usage: run_fuzz.sh SOURCE_DIR BUILD_DIR [TARGET...]   (default: all; FUZZ_SECONDS per target, default 20;
#        FUZZ_RUNS=N stops after N executions instead; FUZZ_JOBS objects compiled at once: default the
#        machine's cores for the whole set, 1 when targets are named, as ctest's fuzz tests, which run beside
#        each other)
set -euo pipefail
src=$(cd "$1" && pwd)
mkdir -p "$2/fuzz"
out=$(cd "$2/fuzz" && pwd)
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frame scenario lut_codec lut_file module_samples predictor_samples inventory journal h5_tree model_spec)
secs=${FUZZ_SECONDS:-20}
if [ $# -eq 0 ]; then jobs=${FUZZ_JOBS:-$(nproc)}; else jobs=${FUZZ_JOBS:-1}; fi
command -v clang++ >/dev/null || { echo "clang++ is missing (scripts/setup.sh installs clang)"; exit 77; }
mkdir -p "$out"
cxx=(clang++ -std=c++17 -O1 -gline-tables-only -fsanitize=address,undefined -fno-sanitize-recover=undefined -I"$src" -I/usr/include/hdf5/serial
     -DCOINFER_SOURCE_DIR="\"$src\"" -DSPDLOG_SHARED_LIB -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL
     -DCOINFER_READER_TIMEOUT_S=2)  # a file reader's child that hangs in libhdf5 is killed after 2 s, not 60 (plumbing/isolated_reader.cpp)
h5libs=(-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5)
loglibs=(-lspdlog -lfmt)  # core/log.cpp
core=("$src"/core/*.cpp)
io_scn=("$src"/io/yaml_util.cpp "$src"/io/scenario_loader.cpp "$src"/io/device_population.cpp "$src"/io/csv.cpp "$src"/io/input_file.cpp "$src"/io/model_spec_loader.cpp "$src"/io/data_root.cpp
        "$src"/io/lut_repository.cpp "$src"/io/lut_h5.cpp "$src"/plumbing/isolated_reader.cpp "$src"/io/lut_codec.cpp "$src"/io/h5_file.cpp "$src"/plumbing/atomic_dir.cpp
        "$src"/io/device_profile_loader.cpp)
io_lut=("$src"/io/lut_h5.cpp "$src"/plumbing/isolated_reader.cpp "$src"/io/lut_codec.cpp "$src"/io/h5_file.cpp "$src"/plumbing/atomic_dir.cpp "$src"/io/input_file.cpp)

# Every source is compiled once into $out/obj (instrumented for coverage, not linked), shared by every
# target and seeder that needs it: the targets link 24 core sources each, and ctest runs two fuzz tests
# at a time. A per-object lock makes concurrent runs share the work (each walks its list in a random
# order, so two builds compile different objects instead of queueing on the same one). An object is
# stale when its source or any header of core/, io/, plumbing/, sched/, hw/ or tests/fuzz/ is newer.
objdir="$out/obj"
mkdir -p "$objdir"
object_of() { local rel=${1#"$src"/}; echo "$objdir/${rel//\//_}.o"; }
compile_objects() {  # sources...   (up to $jobs at once; fails when any fails)
  local s o rc=0 pids=()
  for s in $(printf '%s\n' "$@" | sort -u | shuf); do
    o=$(object_of "$s")
    (
      flock 9
      if [ ! -f "$o" ] || [ -n "$(find "$s" "$src"/core "$src"/io "$src"/plumbing "$src"/sched "$src"/hw -newer "$o" -name '*.[ch]pp' 2>/dev/null | head -1)$(find "$src"/tests/fuzz -newer "$o" -name '*.hpp' | head -1)" ]; then
        "${cxx[@]}" -fsanitize=fuzzer-no-link -c "$s" -o "$o.tmp.$BASHPID" && mv "$o.tmp.$BASHPID" "$o"
      fi
    ) 9> "$o.lock" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then
      wait "${pids[0]}" || rc=1
      pids=("${pids[@]:1}")
    fi
  done
  for s in "${pids[@]}"; do wait "$s" || rc=1; done
  return $rc
}
link_program() {  # binary link-flag sources... -- libs...   (relinks when an object is newer)
  local bin=$1 flag=$2; shift 2
  local srcs=() libs=() objs=() s o relink=0
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do srcs+=("$1"); shift; done
  [ $# -gt 0 ] && shift && libs=("$@")
  compile_objects "${srcs[@]}"
  for s in $(printf '%s\n' "${srcs[@]}" | sort -u); do
    o=$(object_of "$s"); objs+=("$o")
    [ -x "$bin" ] && [ ! "$o" -nt "$bin" ] || relink=1
  done
  if [ $relink -eq 1 ]; then
    echo "[fuzz] linking $(basename "$bin")"
    "${cxx[@]}" "$flag" "${objs[@]}" "${libs[@]}" -o "$bin.tmp.$$" && mv "$bin.tmp.$$" "$bin"
  fi
}
build() {  # name sources... -- libs...
  local name=$1; shift
  link_program "$out/fuzz_$name" -fsanitize=fuzzer "$@"
}
run() {  # name extra-args...   (corpus: $out/NAME.corpus; seeds: $out/NAME.seed)
  local name=$1; shift
  local corpus="$out/$name.corpus"
  local limit=(-max_total_time="$secs")
  [ -n "${FUZZ_RUNS:-}" ] && limit=(-runs="$FUZZ_RUNS")
  if [ -n "${FUZZ_RUNS:-}" ]; then echo "[fuzz] $name: $FUZZ_RUNS runs"; else echo "[fuzz] $name: $secs s"; fi
  # Seeds stay in NAME.seed (read-only input); new finds go to NAME.corpus.
  mkdir -p "$corpus"
  (cd "$src" && "$out/fuzz_$name" "${limit[@]}" -rss_limit_mb=4096 -timeout=30 -print_final_stats=1 -artifact_prefix="$out/$name-" "$@" "$corpus" "$out/$name.seed") > "$out/$name.log" 2>&1
  local rc=$?
  grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|Done [0-9]+ runs" "$out/$name.log" | tr '\n' ' '; echo
  if [ $rc -ne 0 ]; then tail -40 "$out/$name.log"; echo "[fuzz] $name FAILED (log: $out/$name.log)"; return 1; fi
}

status=0
for t in "${targets[@]}"; do
  case $t in
    frame)
      build frame "$src/tests/fuzz/fuzz_frame.cpp" "$src/hw/frame.cpp" "$src/hw/protocol.cpp" "$src/core/random_stream.cpp" "$src/core/text_util.cpp" -- -lzstd
      mkdir -p "$out/frame.seed"
      /usr/bin/python3 - "$out/frame.seed" <<'PY'
import struct, sys, os
d = sys.argv[1]
payloads = {1: b'{"protocol":1,"nonce":"00"}', 2: b'{"device":"a","type":"t","model":"m","dataset":"d","generates":true,"hmac":"x"}',
            3: b'{"strategy":"local","helper":false}', 4: b'{"strategy":"pp(2)","helper":true}',
            5: struct.pack('<I', 2) + b'{}' + b'CIST', 6: struct.pack('<I', 2) + b'{}', 7: b'{"bandwidth_mbps":1,"queue":0,"unfinished":0,"busy":false}',
            8: b'{"error":"e"}', 9: b'{"bytes":10,"not_before":1.5}',
            10: b'{"server":"edge1","address":"127.0.0.1:7071","hmac":"x"}',
            11: b'{"events":[{"kind":"registered","device":0},{"kind":"bandwidth","device":1,"mbps":2.5}],"queue":1,"busy":0,'
                b'"devices":[{"device":0,"generates":true,"bandwidth_mbps":1,"queue":0,"unfinished":0,"busy":false}]}',
            12: b'{"strategies":["local","pp(2)"],"helpers":[false,true],"servers":[0,1],"server_helpers":[1],"batch_window_ms":5,'
                b'"batch_max_size":4,"addresses":{"edge0":"127.0.0.1:1","edge1":"127.0.0.1:2"}}',
            13: b'{"server":"edge1","address":"10.200.1.1:7070"}',
            14: b'{"server":"edge","address":"127.0.0.1:7071","hmac":"x"}'}
# A cloud tier: a task naming its cloud split, a result with the cloud's stamps.
cloud_task = b'{"split":1,"origin":"pi0","t_sent":1,"cloud_split":2}'
cloud_result = (b'{"ok":true,"error":"","batch_size":1,"helper":"","t_received":1,"t_queued":1,"t_batch_start":1,"t_batch_end":1,'
                b'"cloud":{"server":"cloud","t_queued":2,"t_batch_start":2,"t_batch_end":3,"batch_size":2,"bytes":100}}')
extra = {'5c': (5, struct.pack('<I', len(cloud_task)) + cloud_task + b'CIST'), '6c': (6, struct.pack('<I', len(cloud_result)) + cloud_result),
         # Escapes at the edge of the bounds: an index beyond an int, a fraction, a negative
         # bandwidth, a window past 10^6 ms, an address with a space, "any", a long host.
         '11big': (11, b'{"events":[{"kind":"leave","device":4294967296}],"queue":0,"busy":0,"devices":[]}'),
         '11frac': (11, b'{"events":[{"kind":"leave","device":2.9}],"queue":0,"busy":0,"devices":[]}'),
         '7neg': (7, b'{"bandwidth_mbps":-5,"queue":-7,"unfinished":0,"busy":false}'),
         '12win': (12, b'{"strategies":["local"],"helpers":[false],"servers":[0],"server_helpers":[],"batch_window_ms":1e308,'
                       b'"batch_max_size":4,"addresses":{"edge0":"a b:80"}}'),
         '13any': (13, b'{"server":"edge1","address":"0.0.0.0:1"}'),
         '13long': (13, b'{"server":"edge1","address":"' + b'h' * 300 + b':80"}')}
for t, p in list(payloads.items()) + list(extra.values()):
    name = next((k for k, v in extra.items() if v == (t, p)), t)
    frame = b'CIFR' + bytes([1, t, 0, 0]) + struct.pack('<QII', t, len(p), len(p)) + p
    open(os.path.join(d, f'seed{name}'), 'wb').write(bytes([t]) + frame)
PY
      run frame -max_len=4096 || status=1
      ;;
    scenario)
      build scenario "$src/tests/fuzz/fuzz_scenario.cpp" "${core[@]}" "${io_scn[@]}" -- -lyaml-cpp "${h5libs[@]}" "${loglibs[@]}"
      mkdir -p "$out/scenario.seed"
      i=0
      for f in $(find "$src/scenarios" -name '*.yaml' | sort); do
        i=$((i+1)); cp "$f" "$out/scenario.seed/s$i"
        { cat "$f"; printf '\n%%%%SET%%%%\nduration_s=3\ndevices.0.link.bandwidth_mbps=5\nscheduler.name=hierarchical\n'; } > "$out/scenario.seed/s${i}set"
      done
      # Batch candidates, objective and constraints, SparOA's batching policy, deadlines
      # and priorities, background load.
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n%s\n%s\n%s\n' \
          'scheduler={name: greedy, batch_windows_ms: [0, 5, 50], batch_sizes: [1, 4], objective: energy, max_p95_ms: 100, load_threshold: 0.2}' \
          'servers.0.batch={window_ms: 10, max_size: 5, policy: sparoa, real_time_ms: 40, memory_gb: 2, sparsity_threshold: 0.5}' \
          'devices.2.workload={arrival: poisson, rate_per_s: 20, deadline_ms: 50, drop_late: true, priority: 3}' \
          'events=[{at_s: 1, device: pi0, load: 0.5}, {at_s: 2, device: pi1, load: 0.2, processor: cpu}]'; } > "$out/scenario.seed/issue37set"
      # A device population: keys drawn per device (io/device_population.hpp).
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n%s\n%s\n' \
          'devices.2.count=50' \
          'devices.2.type={choice: [rpi4b, rpi3b], weights: [3, 1]}' \
          'devices.2.link={bandwidth_mbps: {uniform: [5, 40]}, latency_ms: {choice: [1, 2, 5]}}'; } > "$out/scenario.seed/population"
      # Server failures: events by hand, and a failure model.
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n' \
          'events=[{at_s: 1, server: edge0, fail: true}, {at_s: 2, server: edge0, recover: true}]'; } > "$out/scenario.seed/issue36set"
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n' 'servers.0.failures={mtbf_s: 2, mttr_s: 0.5}'; } > "$out/scenario.seed/issue36model"
      # Server choice and mobility: access points, a fixed and a wandering device.
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n%s\n%s\n' \
          'mobility={access_points: [{id: a, x_m: 0, y_m: 0, range_m: 150}, {id: b, x_m: 200, y_m: 0, range_m: 150, tx_power_dbm: 23}], association: strongest, handover_ms: 20, mid_transfer: resend, step_s: 0.5, radio: {exponent: 3.5}}' \
          'devices.2.movement={model: random_waypoint, area_m: [200, 50], speed_mps: [1, 20], pause_s: [0, 2]}' \
          'scheduler={name: greedy, choose_servers: true}'; } > "$out/scenario.seed/issue36mobility"
      # Mobility and bandwidth traces with fuzzed content (fuzz.csv beside the scenario: %%FILE%%).
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n%s\n' \
          'mobility={access_points: [{id: a, x_m: 0, y_m: 0, range_m: 150}, {id: b, x_m: 200, y_m: 0, range_m: 150}], hysteresis_db: 3, mid_transfer: fail}' \
          'devices.2.movement={trace: fuzz.csv}'; printf '\n%%%%FILE%%%%\n'; cat "$src/traces/mobility/walk_two_cells.csv"; } > "$out/scenario.seed/issue36trace"
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n' 'devices.2.link.trace=fuzz.csv'; printf '\n%%%%FILE%%%%\n'
        printf 'time_s,bandwidth_mbps\n0,20\n1.5,5\n3,40\n'; } > "$out/scenario.seed/bandwidth_trace"
      # The hardware file with fuzzed content (the shipped traces/devices.yaml as fuzz.csv: every profile
      # and radio; io/device_profile_loader.hpp).
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n' 'hardware=fuzz.csv'; printf '\n%%%%FILE%%%%\n'
        cat "$src/traces/devices.yaml"; } > "$out/scenario.seed/hardware_file"
      # ... and with a processor priced by operator classes (traces/README.md "Operator classes": every class,
      # a cost per row, a bandwidth by bytes).
      { cat "$src/scenarios/quickstart.yaml"; printf '\n%%%%SET%%%%\n%s\n' 'hardware=fuzz.csv'; printf '\n%%%%FILE%%%%\n'
        sed '/^profiles:$/a\  classy:\n    role: device\n    description: "x"\n    processors:\n      cpu:\n        kind: cpu\n        description: "y"\n        peak_gflops: 100\n        mem_gbps: 60\n        operator_classes:\n          source: "measured"\n          launch_us: 1.4\n          dense: {gflops: 100, gbps: 16}\n          irregular: {gbps: 6, ns_per_row: 2, gbps_by_bytes: [[933888, 7.7], [239075328, 2.4]]}\n          elementwise: {gbps: 60, gbps_by_bytes: [[786432, 75], [201326592, 16]]}\n          reduction: {gbps: 40}\n          select: {gbps: 0.45}\n          movement: {gbps: 42}' \
          "$src/traces/devices.yaml"; } > "$out/scenario.seed/hardware_classes"
      run scenario -max_len=16384 || status=1
      ;;
    lut_codec)
      build lut_codec "$src/tests/fuzz/fuzz_lut_codec.cpp" "${core[@]}" "${io_lut[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      seeder="$out/lut_codec_seeder"
      printf '#include "io/lut_codec.hpp"\n#include "io/lut_h5.hpp"\n#include <fstream>\nint main(int c, char** v) { for (int i = 2; i < c; ++i) std::ofstream(std::string(v[1]) + "/lut" + std::to_string(i), std::ios::binary) << coinfer::encode_lut_tables(coinfer::read_lut_file_in_process(v[i])); }\n' > "$out/seeder.cpp.new"
      cmp -s "$out/seeder.cpp.new" "$out/seeder.cpp" && rm "$out/seeder.cpp.new" || mv "$out/seeder.cpp.new" "$out/seeder.cpp"
      link_program "$seeder" -fsanitize=fuzzer-no-link "$out/seeder.cpp" "${core[@]}" "${io_lut[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      mkdir -p "$out/lut_codec.seed" && ASAN_OPTIONS=detect_leaks=0 "$seeder" "$out/lut_codec.seed" $(find "$src/traces" -name '*.h5' | sort)
      run lut_codec -max_len=1048576 || status=1
      ;;
    lut_file)
      build lut_file "$src/tests/fuzz/fuzz_lut_file.cpp" "${core[@]}" "${io_lut[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      mkdir -p "$out/lut_file.seed"
      for f in $(find "$src/traces" -name '*.h5' | sort); do cp "$f" "$out/lut_file.seed/$(basename "$(dirname "$f")")_$(basename "$f")"; done
      # A corrupt file can make libhdf5 loop: read_lut_file kills its reader after 2 s in this build
      # (COINFER_READER_TIMEOUT_S above; 60 s in coinfer) and reports exit 2; libFuzzer waits longer.
      run lut_file -max_len=1048576 -timeout=30 || status=1
      ;;
    journal)
      build journal "$src/tests/fuzz/fuzz_journal.cpp" "$src/hw/record_journal.cpp" "$src/hw/clock_sync.cpp" "$src/io/decisions_jsonl.cpp" "${core[@]}" -- "${loglibs[@]}"
      mkdir -p "$out/journal.seed"
      printf '%s\n' '{"ev":"note","device":"pi0"}' '{"ev":"epochs","device_unix_s":1700000000.5,"server_unix_s":1700000000.25}' \
        '{"ev":"created","id":1,"device":0,"t_created":0.1}' \
        '{"ev":"done","id":1,"device":0,"server":0,"strategy":"pp(2)","split":2,"bytes_up":100,"bytes_down":10,"t_created":0.1,"t_device_start":0.1,"t_device_end":0.2,"t_uplink_end":0.3,"t_queued":0.3,"t_batch_start":0.31,"t_batch_end":0.4,"batch_size":1,"helper":-1,"t_result":0.45,"status":"ok","failure":""}' \
        '{"ev":"created","id":2,"device":0,"t_created":0.5}' '{"ev":"power","t":0.5,"w":3.2}' \
        '{"ev":"clock","offset_s":0.001,"uncertainty_s":0.0002,"samples":12}' '{"ev":"note","cut":"board unreachable"}' > "$out/journal.seed/full"
      printf '%s\n' '{"t_s":0,"trigger":"start","scheme":"pi0=offload helpers=[]","predicted_throughput_rps":12.5,"predicted_latency_ms":80.2,"switched":0,"wall_s":0}' \
        '{"t_s":3,"trigger":"fail:edge","scheme":"pi0=local helpers=[]","predicted_throughput_rps":1.1,"predicted_latency_ms":900,"switched":1,"wall_s":0,"detail":{"constraints":{"met":true}}}' \
        > "$out/journal.seed/decisions"
      run journal -max_len=8192 || status=1
      ;;
    module_samples)
      io_samples=("$src"/io/module_samples.cpp "$src"/io/csv.cpp "$src"/plumbing/atomic_dir.cpp "$src"/io/input_file.cpp)
      build module_samples "$src/tests/fuzz/fuzz_module_samples.cpp" "${core[@]}" "${io_samples[@]}" -- "${loglibs[@]}"
      mkdir -p "$out/module_samples.seed"
      # Seeds: the measured single stages of the shipped measured LUTs as a sample set, and a tiny one.
      printf '%s\n' '# coinfer-module-samples schema 1' '# provenance kind=measured' '# provenance cpu=x, "y"' \
        'op,device_type,model,stage,mean_s,p50_s,count,batch,nodes,edges,in_width,out_width,k,heads,cpu_cores,threads,flops,weight_bytes,in_bytes,out_bytes,traffic_bytes,workspace_bytes' \
        'gcn,"a,b",gcn/mr,conv1,0.001,0.001,3,1,17,68,300,16,0,1,2,1,1e5,19264,20400,1088,40000,0' > "$out/module_samples.seed/tiny"
      run module_samples -max_len=65536 || status=1
      ;;
    predictor_samples)
      io_ps=("$src"/io/predictor_samples.cpp "$src"/plumbing/isolated_reader.cpp "$src"/io/h5_file.cpp "$src"/plumbing/atomic_dir.cpp "$src"/io/input_file.cpp)
      build predictor_samples "$src/tests/fuzz/fuzz_predictor_samples.cpp" "${core[@]}" "${io_ps[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      mkdir -p "$out/predictor_samples.seed"
      # Seed: a small sample set written by the writer (three systems x two schemes of a tiny sample run).
      seeder="$out/predictor_samples_seeder"
      printf '#include "io/predictor_samples.hpp"\nusing namespace coinfer;\nint main(int, char** v) { PredictorSampleSet s; s.provenance = "seed"; for (int i = 0; i < 6; ++i) { PredictorSample x; x.system = i / 2; x.scheme = "d0=local"; x.throughput_rps = 1 + i; x.mean_latency_ms = 5; x.p95_latency_ms = 9; x.analytic_throughput_rps = 2; x.analytic_mean_latency_ms = 4; x.node_type = {3, 0, 1, 2, 4}; x.node_latency_ms = {0, 1, 2, 3, 0}; x.node_settings.assign(15, 0); x.edges = {{1, 2}, {2, 3}, {3, 0}, {4, 4}}; s.samples.push_back(x); } write_predictor_samples(v[1], s); }\n' > "$out/ps_seeder.cpp.new"
      cmp -s "$out/ps_seeder.cpp.new" "$out/ps_seeder.cpp" && rm "$out/ps_seeder.cpp.new" || mv "$out/ps_seeder.cpp.new" "$out/ps_seeder.cpp"
      link_program "$seeder" -fsanitize=fuzzer-no-link "$out/ps_seeder.cpp" "${core[@]}" "${io_ps[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      ASAN_OPTIONS=detect_leaks=0 "$seeder" "$out/predictor_samples.seed/small.h5"
      run predictor_samples -max_len=262144 -timeout=30 || status=1
      ;;
    inventory)
      build inventory "$src/tests/fuzz/fuzz_inventory.cpp" "${core[@]}" "${io_scn[@]}" "$src/hw/inventory.cpp" -- -lyaml-cpp "${h5libs[@]}" "${loglibs[@]}"
      mkdir -p "$out/inventory.seed"
      cat > "$out/inventory.seed/full" <<'INV'
defaults:
  user: pi
  key: @KEY@
  known_hosts: /tmp/known_hosts
  ssh_port: 22
  coinfer: /opt/coinfer/bin/coinfer-rt
  workdir: /tmp
  arch: aarch64
  sudo: false
server:
  address: 192.168.1.10
  service_address: 10.0.0.1
  service_port: 7070
  arch: x86_64
boards:
  - device: pi0
    address: 192.168.1.21
    interface: eth0
    shape: true
    power_command: "sh -c 'echo 5'"
  - {device: pi1, address: 192.168.1.22, coinfer: coinfer-rt}
INV
      printf 'server: {address: a, coinfer: c, arch: x86_64}\nboards:\n  - {device: pi0, address: b, coinfer: c, arch: aarch64}\n  - {device: pi1, address: d, coinfer: c, arch: aarch64}\n' > "$out/inventory.seed/flow"
      printf 'server: {address: a, coinfer: c, arch: x86_64}\nboards:\n  - {device: pi0, address: b, coinfer: c, arch: aarch64}\n  - {device: pi0, address: d, coinfer: c, arch: aarch64}\n' > "$out/inventory.seed/twice"
      run inventory -max_len=8192 || status=1
      ;;
    h5_tree)
      io_h5=("${io_lut[@]}" "$src"/io/predictor_samples.cpp "$src"/io/results_h5.cpp)
      build h5_tree "$src/tests/fuzz/fuzz_h5_tree.cpp" "${core[@]}" "${io_h5[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      # Seeds: every shipped LUT file, a small sample set (as the predictor_samples seed) and a small
      # results.h5 (three requests), each written as a tree (H5Tree::encode).
      seeder="$out/h5_tree_seeder"
      cat > "$out/h5_tree_seeder.cpp.new" <<'CPP'
#include <fstream>
#include "io/h5_file.hpp"
#include "io/lut_h5.hpp"
#include "io/predictor_samples.hpp"
#include "io/results_h5.hpp"
#include "tests/fuzz/h5_tree.hpp"
#include "tests/fuzz/seed_lut.hpp"
using namespace coinfer;
int main(int argc, char** argv) {
  const std::string dir = argv[1];
  PredictorSampleSet s;
  s.provenance = "seed";
  for (int i = 0; i < 4; ++i) {
    PredictorSample x;
    x.system = i / 2; x.scheme = "d0=local"; x.throughput_rps = 1 + i; x.mean_latency_ms = 5; x.p95_latency_ms = 9;
    x.node_type = {3, 0, 1, 2, 4}; x.node_latency_ms = {0, 1, 2, 3, 0}; x.node_settings.assign(15, 0);
    x.edges = {{1, 2}, {2, 3}, {3, 0}, {4, 4}};
    s.samples.push_back(x);
  }
  write_predictor_samples(dir + "/samples.h5", s);
  RunResults r;
  for (int i = 0; i < 3; ++i) {
    RequestRecord q;
    q.id = i; q.device = i % 2; q.t_created = 0.1 * i; q.t_result = 0.1 * i + 0.05;
    r.requests.push_back(q);
  }
  write_results_h5(dir + "/results.h5", r);
  // A tiny LUT with every optional dataset: the whole reader within a few kilobytes.
  write_lut_file(dir + "/tiny_lut.h5", {fuzz::lut_with_every_dataset()});
  std::vector<std::string> files = {dir + "/samples.h5", dir + "/results.h5", dir + "/tiny_lut.h5"};
  for (int i = 2; i < argc; ++i) files.push_back(argv[i]);
  for (size_t i = 0; i < files.size(); ++i)
    std::ofstream(dir + "/tree" + std::to_string(i), std::ios::binary) << fuzz::H5Tree::encode(h5::File::open_read(files[i]));
}
CPP
      cmp -s "$out/h5_tree_seeder.cpp.new" "$out/h5_tree_seeder.cpp" && rm "$out/h5_tree_seeder.cpp.new" || mv "$out/h5_tree_seeder.cpp.new" "$out/h5_tree_seeder.cpp"
      link_program "$seeder" -fsanitize=fuzzer-no-link "$out/h5_tree_seeder.cpp" "${core[@]}" "${io_h5[@]}" -- "${h5libs[@]}" "${loglibs[@]}"
      rm -rf "$out/h5_tree.seed" "$out/h5_tree.files" && mkdir -p "$out/h5_tree.seed" "$out/h5_tree.files"
      ASAN_OPTIONS=detect_leaks=0 "$seeder" "$out/h5_tree.files" $(find "$src/traces" -name '*.h5' | sort)
      mv "$out"/h5_tree.files/tree* "$out/h5_tree.seed/"
      # Inputs up to 16 KB: the tiny trees whole, the shipped LUTs' first tables (the search stays fast).
      run h5_tree -max_len=16384 || status=1
      ;;
    model_spec)
      build model_spec "$src/tests/fuzz/fuzz_model_spec.cpp" "${core[@]}" "${io_scn[@]}" -- -lyaml-cpp "${h5libs[@]}" "${loglibs[@]}"
      mkdir -p "$out/model_spec.seed"
      for f in "$src"/models/specs/*.yaml; do cp "$f" "$out/model_spec.seed/$(basename "$f")"; done
      run model_spec -max_len=16384 || status=1
      ;;
    *) echo "unknown fuzz target '$t' (frame, scenario, lut_codec, lut_file, module_samples, predictor_samples, inventory, journal, h5_tree, model_spec)"; exit 2 ;;
  esac
done
exit $status
