#!/usr/bin/env bash
# test_fnlen (ctest label unit): no function of the stage folders (core/ ... cli/) is longer than
# 60 lines (scripts/fnlen.sh; STYLE.md: a function on one screen).  The
# counter is checked first on made-up files, so that a counter that finds
# nothing cannot pass the real check.
#
#   tests/fnlen/test_fnlen.sh SOURCE_DIR
set -u
src=${1:?usage: test_fnlen.sh SOURCE_DIR}
fnlen=$src/scripts/fnlen.sh
d=$(mktemp -d /tmp/kvx-fnlen-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A function of `lines` lines, both braces counted.
make_fn() {
    printf 'static int %s(int x)\n{\n' "$1"
    for ((i = 0; i < $2 - 2; i++)); do printf '    x += %d;\n' "$i"; done
    printf '}\n\n'
}
mkdir -p "$d/ok" "$d/long"
make_fn short 60 > "$d/ok/a.c"
{ make_fn fine 30; make_fn too_long 61; } > "$d/long/b.c"
"$fnlen" -l 60 "$d/ok" > "$d/out" || fail "a 60-line function is over the limit: $(cat "$d/out")"
grep -q ' 1 *60 *60 *60 ' "$d/out" || fail "one function of 60 lines not counted: $(cat "$d/out")"
if "$fnlen" -l 60 "$d/long" > "$d/out"; then fail "a 61-line function passed"; fi
grep -q '^  61 .*/b.c too_long$' "$d/out" || fail "the long function is not named: $(cat "$d/out")"

cd "$src"
"$fnlen" -l 60 core gen host compile resolve gpu store run report cli || fail "functions over 60 lines (above); split them into stages"
echo "test_fnlen: ok"
