#!/usr/bin/env bash
# The C++ sources stay as .clang-format has them (clang-format 14, Debian 12's): a file that does not is
# named, with the command that formats it. A misformatted copy of a source is caught (the check can fail).
set -u
root="$1"
cd "$root"
command -v clang-format > /dev/null || { echo "FAIL clang-format is not installed (scripts/setup.sh installs it)"; exit 1; }
if git rev-parse --git-dir > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp')
else
  mapfile -t files < <(find . -path ./build\* -prune -o \( -name '*.cpp' -o -name '*.hpp' \) -print | sed 's|^\./||')
fi
[ "${#files[@]}" -gt 100 ] || { echo "FAIL only ${#files[@]} C++ files found"; exit 1; }
bad=()
for f in "${files[@]}"; do
  clang-format --style=file "$f" | cmp -s - "$f" || bad+=("$f")
done
fails=0
if [ "${#bad[@]}" -gt 0 ]; then
  echo "FAIL not formatted as .clang-format says (clang-format -i FILE formats one): ${bad[*]}"
  fails=$((fails + 1))
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp .clang-format "$work/"
printf 'int  f( int x ){return x;}\n' > "$work/planted.cpp"
if (cd "$work" && clang-format --style=file planted.cpp | cmp -s - planted.cpp); then
  echo "FAIL a misformatted file was not caught"
  fails=$((fails + 1))
fi
echo "format: ${#files[@]} files checked, $fails failed"
[ $fails -eq 0 ]
