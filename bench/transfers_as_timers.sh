#!/usr/bin/env bash
# What computing a device's transfers outside SimGrid would give the simulator's speed: an upper bound for
# item 3 of the scale issue ("devices without SimGrid hosts"), measured, not a model.
#
# It applies bench/patches/transfers_as_timers.patch to a scratch clone of this repository's HEAD (never to
# this tree), builds coinfer there, and runs bench/sim_speed.py's 10,000-device scenarios (lock-step, 2
# simulated s; staggered, 4 s) with the patch's switch off and on, alternating. With the switch on every
# device upload and every transfer to a device is a kernel timer of one fixed formula (LV08's latency
# factor on the 2.1 ms route, 97 % of the 40 Mbit/s link): no SimGrid communication, no sharing, none of
# SimGrid's bounds. So the runs make different numbers of requests; the measure is requests per engine
# second (timing.json's engine_wall_s), and the results are not results.
#
# usage: bash bench/transfers_as_timers.sh [--debian13] [--reps N]
#   --debian13   build and run against SimGrid 4.0 in the Debian 13 root (scripts/debian13.sh; its root
#                as COINFER_DEBIAN13_ROOT says, made by `scripts/debian13.sh setup`)
# Takes ~5 min on the host with a warm ccache (the build), ~15 min in the Debian 13 root.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
d13=0
reps=2
while [ $# -gt 0 ]; do
  case "$1" in
    --debian13) d13=1 ;;
    --reps) reps="$2"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "transfers_as_timers.sh: unknown argument '$1' (--debian13, --reps N)" >&2; exit 2 ;;
  esac
  shift
done
work=$(mktemp -d /tmp/coinfer-timers-XXXXXX)
trap 'rm -rf "$work"' EXIT
git clone -q "$here" "$work/src"
cd "$work/src"
git apply bench/patches/transfers_as_timers.patch ||
  { echo "transfers_as_timers.sh: the patch no longer applies to sim/device.* at HEAD: remake it (bench/RESULTS.md \"Eighth pass\")" >&2; exit 1; }
/usr/bin/python3 bench/sim_speed.py --sizes 10000 --duration 2 --write-scenario lockstep.yaml
/usr/bin/python3 bench/sim_speed.py --sizes 10000 --stagger --duration 4 --write-scenario staggered.yaml
if [ $d13 = 1 ]; then
  DEBIAN13_TARGETS="coinfer" bash scripts/debian13.sh build -DCOINFER_BUILD_BENCH=OFF -DCOINFER_DEBUG_INFO=OFF -DCOINFER_UNITY_BUILD=ON > "$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log"; exit 1; }
  bin=build-debian13/coinfer
  run() { bash scripts/debian13.sh run env "$@"; }
else
  bash scripts/build.sh > "$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
  bin=build/coinfer
  run() { env "$@"; }
fi
echo "| scenario | transfers | requests | engine s | requests per engine s |"
echo "|---|---|---|---|---|"
for sc in lockstep staggered; do
  for r in $(seq "$reps"); do
    for mode in simgrid timers; do
      var=COINFER_TRANSFERS_AS_TIMERS_OFF=1
      [ $mode = timers ] && var=COINFER_TRANSFERS_AS_TIMERS=1
      line=$(run "$var" "$bin" -q run "$sc.yaml" --timing --set drain_s=0.5 --out "$work/out" 2>&1 | grep '^timing:')
      req=$(sed -n 's/.*requests=\([0-9]*\).*/\1/p' <<< "$line")
      eng=$(sed -n 's/.*engine_wall_s=\([0-9.]*\).*/\1/p' <<< "$line")
      echo "| $sc (run $r) | $mode | $req | $eng | $(/usr/bin/python3 -c "print(f'{$req / $eng:,.0f}')") |"
    done
  done
done
