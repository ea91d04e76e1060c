#!/usr/bin/env bash
# test_deps (ctest label cpu): the stage folders include one another only
# along the arrows of docs/design.md ("Stages and their arrows"), and the
# system headers that tie kvx to a library (<cuda.h>, <sqlite3.h>, ...) appear
# only in the folders that block names.  The checker is first run on a made-up
# tree with an upward include planted, so that a checker that finds nothing
# cannot pass the real check.
#
#   tests/deps/test_deps.sh SOURCE_DIR
set -u
src=${1:?usage: test_deps.sh SOURCE_DIR}
d=$(mktemp -d /tmp/kvx-deps-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The arrows: "stage -> dep dep ..." and "<header.h> stage stage ..." lines of
# the ```deps block of design.md.
arrows() {
    awk '/^```deps$/ { on = 1; next } /^```$/ { on = 0 } on' "$1"
}

# check ROOT DESIGN_MD: print every include that breaks an arrow; exit 1 if any.
check() {
    local root=$1 rules=$2 bad=0 stage f line inc dep
    local -A allow=() hdr=()
    while read -r a arrow rest; do
        if [[ $arrow == "->" ]]; then allow[$a]=" $a $rest "
        else hdr[$a]=" $arrow $rest "
        fi
    done < <(arrows "$rules")
    [[ ${#allow[@]} -gt 0 ]] || { echo "$rules: no \`\`\`deps block"; return 1; }
    for stage in "${!allow[@]}"; do
        [[ -d $root/$stage ]] || { echo "$stage/: a stage with no folder"; bad=1; continue; }
        for f in "$root/$stage"/*.[ch]; do
            [[ -e $f ]] || continue
            while IFS= read -r line; do
                if [[ $line =~ ^#include\ \"([a-z_]+)/[^\"]+\" ]]; then
                    dep=${BASH_REMATCH[1]}
                    if [[ -n ${allow[$dep]+x} && ${allow[$stage]} != *" $dep "* ]]; then
                        echo "${f#$root/}: $line ($stage may not include $dep/)"; bad=1
                    fi
                elif [[ $line =~ ^#include\ \"\.\./ ]]; then
                    echo "${f#$root/}: $line (include a stage's header as \"stage/file.h\")"; bad=1
                elif [[ $line =~ ^#include\ (\<[^\>]+\>) ]]; then
                    inc=${BASH_REMATCH[1]}
                    if [[ -n ${hdr[$inc]+x} && ${hdr[$inc]} != *" $stage "* ]]; then
                        echo "${f#$root/}: $line ($inc only in${hdr[$inc]% })"; bad=1
                    fi
                fi
            done < <(grep '^#include' "$f")
        done
    done
    for f in "$root"/*/; do
        f=${f%/}; f=${f##*/}
        if compgen -G "$root/$f/*.c" >/dev/null && [[ -z ${allow[$f]+x} ]] &&
           [[ ! $f =~ ^(tests|bench|templates|build.*)$ ]]; then
            echo "$f/: C sources in a folder that is not a stage of the deps block"; bad=1
        fi
    done
    return $bad
}

# The checker on a made-up tree: two stages, one arrow, one header rule.
mkdir -p "$d/t/low" "$d/t/high"
printf '```deps\nlow ->\nhigh -> low\n<cuda.h> high\n```\n' > "$d/rules.md"
printf '#include "low/a.h"\n#include <cuda.h>\n' > "$d/t/high/b.c"
printf '#include "a.h"\n' > "$d/t/low/a.c"
check "$d/t" "$d/rules.md" > "$d/out" || fail "a tree that keeps the arrows failed: $(cat "$d/out")"
printf '#include "high/b.h"\n' > "$d/t/low/c.c"
if check "$d/t" "$d/rules.md" > "$d/out"; then fail "an upward include passed"; fi
grep -q 'low/c.c: #include "high/b.h" (low may not include high/)' "$d/out" || fail "not named: $(cat "$d/out")"
rm "$d/t/low/c.c"
printf '#include <cuda.h>\n' > "$d/t/low/c.c"
if check "$d/t" "$d/rules.md" > "$d/out"; then fail "<cuda.h> outside its stage passed"; fi
grep -q 'low/c.c: #include <cuda.h>' "$d/out" || fail "not named: $(cat "$d/out")"

check "$src" "$src/docs/design.md" || fail "includes against docs/design.md's arrows (above)"
echo "test_deps: ok"
