#!/usr/bin/env bash
# Builds the frame-parser fuzz target with clang's libFuzzer + AddressSanitizer + UBSan and runs it for
# a bounded time (default 20 s; FUZZ_SECONDS overrides) from a small seed corpus of valid frames.
# usage: run_fuzz.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
out=$2/fuzz
secs=${FUZZ_SECONDS:-20}
command -v clang++ >/dev/null || { echo "clang++ is missing (scripts/setup.sh installs clang)"; exit 77; }
mkdir -p "$out/corpus"
if [ ! -x "$out/fuzz_frame" ] || [ -n "$(find "$src/hw/frame.cpp" "$src/hw/protocol.cpp" "$src/hw/frame.hpp" "$src/hw/protocol.hpp" "$src/tests/fuzz/fuzz_frame.cpp" -newer "$out/fuzz_frame")" ]; then
  clang++ -std=c++17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I"$src" \
    "$src/tests/fuzz/fuzz_frame.cpp" "$src/hw/frame.cpp" "$src/hw/protocol.cpp" -lzstd -o "$out/fuzz_frame"
fi
# Seeds: one valid frame of each type (chunk byte first), written by python from the documented layout.
/usr/bin/python3 - "$out/corpus" <<'PY'
import struct, sys, os
d = sys.argv[1]
payloads = {1: b'{"protocol":1,"nonce":"00"}', 2: b'{"device":"a","type":"t","model":"m","dataset":"d","generates":true,"hmac":"x"}',
            3: b'{"strategy":"local","helper":false}', 4: b'{"strategy":"pp(2)","helper":true}',
            5: struct.pack('<I', 2) + b'{}' + b'CIST', 6: struct.pack('<I', 2) + b'{}', 7: b'{"bandwidth_mbps":1,"queue":0,"unfinished":0,"busy":false}',
            8: b'{"error":"e"}'}
for t, p in payloads.items():
    frame = b'CIFR' + bytes([1, t, 0, 0]) + struct.pack('<QII', t, len(p), len(p)) + p
    open(os.path.join(d, f'seed{t}'), 'wb').write(bytes([t]) + frame)
PY
"$out/fuzz_frame" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 "$out/corpus" 2>&1 | tail -8
