# Shared by golden scripts: a scratch folder ($work, removed on exit), pass/fail counters, the summary.
# usage: set -u; coinfer="$1"; root="$2"; source "$(dirname "$0")/lib.sh"; ... ok / bad "why" ...; finish NAME
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fails=0; passes=0
ok() { passes=$((passes+1)); }
bad() { echo "FAIL $1"; fails=$((fails+1)); }
# Prints the counts; the script's exit status is 0 only when nothing failed.
finish() { echo "$1: $passes passed, $fails failed"; [ $fails -eq 0 ]; }
