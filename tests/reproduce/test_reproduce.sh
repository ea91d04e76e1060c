#!/usr/bin/env bash
# test_reproduce (ctest label e2e): the "// Reproduce" line that every
# generated source carries, run as it says (from the folder of the spec it
# names, as a user copies it), writes that very source, byte for byte.  The
# sources are generated from the source tree's root with the spec's path, as a
# user runs kvx; for each spec the first and last source and the first that
# names an --arch are reproduced.
#
#   tests/reproduce/test_reproduce.sh KVX_BINARY SOURCE_DIR
set -u
kvx=${1:?usage: test_reproduce.sh KVX SOURCE_DIR}
src=${2:?usage: test_reproduce.sh KVX SOURCE_DIR}
d=$(mktemp -d /tmp/kvx-reproduce-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cd "$src" || fail "no $src"

re='^// Reproduce \(from the folder of ([^)]+)\): kvx gen (.*) --out DIR$'
n=0
for spec in specs/*.yaml tests/data/specs/count.yaml; do
    name=$(basename "$spec" .yaml)
    all=$d/all/$name
    "$kvx" gen "$spec" --out "$all" > "$d/log" 2>&1 || fail "kvx gen $spec: $(cat "$d/log")"
    files=("$all"/*.cu)
    [ -e "${files[0]}" ] || fail "kvx gen $spec wrote no source"
    picks=("${files[0]}" "${files[-1]}")
    arch=$(grep -l -m1 '^// Reproduce .* --arch ' "${files[@]}" | head -n 1)
    [ -n "$arch" ] && picks+=("$arch")
    for f in "${picks[@]}"; do
        line=$(grep -m1 '^// Reproduce' "$f")
        [[ $line =~ $re ]] || fail "$f: no Reproduce line of the expected form: $line"
        [ "${BASH_REMATCH[1]}" = "$(basename "$spec")" ] ||
            fail "$f names ${BASH_REMATCH[1]}, not the spec $(basename "$spec")"
        args=${BASH_REMATCH[2]}
        out=$d/again/$name/$(basename "$f" .cu)
        # The line's own words, with the binary under test for "kvx" and a
        # fresh folder for "DIR".
        (cd "$(dirname "$spec")" && eval "\"\$kvx\" gen $args --out \"\$out\"") > "$d/log" 2>&1 ||
            fail "$f: its Reproduce line fails from $(dirname "$spec"): $(cat "$d/log")"
        got=("$out"/*.cu)
        # A reference kernel's source comes with the variants it checks, and
        # one that reads no axis with every point: its line is the spec's
        # whole `kvx gen`.  Those extra sources aside, the line writes one.
        if [[ $(basename "$f") == reference__* ]]; then
            [[ $line != *" --where "* ]] && got=("$out/$(basename "$f")")
        else
            got=($(printf '%s\n' "${got[@]}" | grep -v '/reference__'))
        fi
        [ ${#got[@]} -eq 1 ] || fail "$f: its Reproduce line wrote ${#got[@]} sources (expected 1)"
        [ "$(basename "${got[0]}")" = "$(basename "$f")" ] ||
            fail "$f: its Reproduce line wrote $(basename "${got[0]}")"
        cmp -s "${got[0]}" "$f" || fail "$f: its Reproduce line wrote a different source"
        n=$((n + 1))
    done
done
echo "test_reproduce: $n sources reproduced from their Reproduce lines"
