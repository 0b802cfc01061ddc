#!/usr/bin/env bash
# coinfer version names what a result was made with: the program, the commit it was built from, the
# wire protocol, the SimGrid it runs on (the one pkg-config names for this build), HDF5 and LibTorch.
set -u
coinfer="$1"; root="$2"
source "$(dirname "$0")/lib.sh"
"$coinfer" version --json > "$work/v.json" 2> "$work/err" && ok || bad "version --json failed: $(cat "$work/err")"
/usr/bin/python3 - "$work/v.json" "$(pkg-config --modversion simgrid 2>/dev/null)" <<'PY' && ok || bad "version --json content"
import json, sys
v = json.load(open(sys.argv[1]))
want = ["coinfer", "commit", "protocol", "simgrid", "simgrid_built_with", "hdf5", "libtorch"]
assert list(v) == want, f"keys {list(v)} != {want}"
assert isinstance(v["protocol"], int) and v["protocol"] >= 1, v["protocol"]
pc = sys.argv[2]
# pkg-config says "3.32" or "4.0"; the library "3.32.0" or "4.0.0".
assert pc and (v["simgrid"] + ".").startswith(pc + "."), f"simgrid {v['simgrid']} is not pkg-config's {pc}"
assert v["simgrid"] == v["simgrid_built_with"], v
assert v["hdf5"].count(".") == 2, v["hdf5"]
print("version:", v)
PY
# The commit is one of this checkout's history (the build may be older than HEAD, never foreign).
commit=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"].split("-")[0])' "$work/v.json")
if git -C "$root" rev-parse --git-dir > /dev/null 2>&1 && [ "$commit" != unknown ]; then
  git -C "$root" merge-base --is-ancestor "$commit" HEAD && ok || bad "commit $commit is not in this checkout's history"
fi
"$coinfer" version > "$work/v.txt" && grep -q "^SimGrid " "$work/v.txt" && grep -q "^wire protocol " "$work/v.txt" && ok || bad "version text: $(cat "$work/v.txt")"
"$coinfer" version --bogus > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "version --bogus did not exit 2"
finish version
