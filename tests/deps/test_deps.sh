#!/usr/bin/env bash
# test_deps (ctest label unit): the stage folders include one another only
# along the arrows of docs/design.md ("Stages and their folders"); the
# system headers that tie kvx to a library (<cuda.h>, <sqlite3.h>, ...) appear
# only in the folders that block names; a stage's *_internal.h is included
# only from its own folder, and a stage with a face line ("run: run.h") is
# included from other folders only through the headers it names; and no
# header of a folder declares a function that another folder defines; and
# the table beside the block names every source file of its folder.  The
# checker is first run on a made-up tree with a violation of each rule
# planted, so that a checker that finds nothing cannot pass the real check.
#
#   tests/deps/test_deps.sh SOURCE_DIR
set -u
src=${1:?usage: test_deps.sh SOURCE_DIR}
d=$(mktemp -d /tmp/kvx-deps-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# The arrows: "stage -> dep dep ...", "<header.h> stage stage ..." and
# "stage: header.h ..." (the stage's public face) lines of the ```deps block
# of design.md.
arrows() {
    awk '/^```deps$/ { on = 1; next } /^```$/ { on = 0 } on' "$1"
}

# check ROOT DESIGN_MD: print every include that breaks an arrow; exit 1 if any.
check() {
    local root=$1 rules=$2 bad=0 stage f line inc dep file
    local -A allow=() hdr=() face=()
    while read -r a arrow rest; do
        if [[ $arrow == "->" ]]; then allow[$a]=" $a $rest "
        elif [[ $a == *: ]]; then face[${a%:}]=" $arrow $rest "
        else hdr[$a]=" $arrow $rest "
        fi
    done < <(arrows "$rules")
    [[ ${#allow[@]} -gt 0 ]] || { echo "$rules: no \`\`\`deps block"; return 1; }
    for stage in "${!allow[@]}"; do
        [[ -d $root/$stage ]] || { echo "$stage/: a stage with no folder"; bad=1; continue; }
        for f in "$root/$stage"/*.[ch]; do
            [[ -e $f ]] || continue
            while IFS= read -r line; do
                if [[ $line =~ ^#include\ \"([a-z_]+)/([^\"]+)\" ]]; then
                    dep=${BASH_REMATCH[1]} file=${BASH_REMATCH[2]}
                    if [[ -n ${allow[$dep]+x} && ${allow[$stage]} != *" $dep "* ]]; then
                        echo "${f#$root/}: $line ($stage may not include $dep/)"; bad=1
                    elif [[ $dep != "$stage" && $file == *_internal.h ]]; then
                        echo "${f#$root/}: $line ($dep/'s interior, for $dep/ alone)"; bad=1
                    elif [[ $dep != "$stage" && -n ${face[$dep]+x} && ${face[$dep]} != *" $file "* ]]; then
                        echo "${f#$root/}: $line (outside $dep/ only$(printf " $dep/%s" ${face[$dep]}))"; bad=1
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
    declared_elsewhere "$root" "${!allow[@]}" || bad=1
    return $bad
}

# "FILE NAME" for each function defined at column 0 without static in the
# .c files given (test_names.sh reads them the same way).
defined() {
    awk '
    FNR == 1 { prev = "" }
    {
        if (prev != "" && $0 ~ /^\{/) print FILENAME, prev
        if (prev != "" && $0 ~ /^[ \t]/ && $0 !~ /;[ \t]*$/) next
        prev = ""
        if ($0 ~ /^[A-Za-z_]/ && $0 !~ /(^|[ \t])static[ \t]/ && $0 ~ /\(/ && $0 !~ /;[ \t]*$/ &&
            $0 !~ /^(typedef|enum|union|extern|struct [A-Za-z_]+ *\{)/ && $0 !~ /=/) {
            s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/)
            if ($0 ~ /\{/) print FILENAME, w[n]; else prev = w[n]
        }
    }' "$@"
}

# "FILE NAME" for each function a header declares: a line at column 0 that is
# no macro, typedef, static (inline) function or comment, whose first '(' ends
# the name.
declared() {
    awk '/^[A-Za-z_][A-Za-z0-9_ *]*[ *][a-z_][a-z0-9_]*\(/ && !/^(static|typedef|extern "C"|#)/ {
        s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); print FILENAME, w[n] }' "$@"
}

# declared_elsewhere ROOT STAGE...: print each function a stage's header
# declares that another stage's .c defines (the header belongs beside the
# definition: a header of cli/ declares cli/'s functions); exit 1 if any.
declared_elsewhere() {
    local root=$1 bad=0 f name
    shift
    local -A home=()
    while read -r f name; do home[$name]=${f%%/*}; done < <(cd "$root" && for s in "$@"; do
        compgen -G "$s/*.c" >/dev/null && defined "$s"/*.c; done)
    while read -r f name; do
        if [[ -n ${home[$name]+x} && ${home[$name]} != "${f%%/*}" ]]; then
            echo "$f: declares $name, which ${home[$name]}/ defines (declare it in a header of ${home[$name]}/)"
            bad=1
        fi
    done < <(cd "$root" && for s in "$@"; do compgen -G "$s/*.h" >/dev/null && declared "$s"/*.h; done)
    return $bad
}

# table ROOT DESIGN_MD: print each source file of a stage folder (or bench/)
# that the folder's row of design.md's table ("| stage/ | ...") does not name:
# every .c and .cu, and every .h that has no .c or .cu of its stem and is no
# *_internal.h; exit 1 if any.  The table is what a reader finds files by.
table() {
    local root=$1 rules=$2 bad=0 s f b row
    for s in $(arrows "$rules" | awk '$2 == "->" { print $1 }') bench; do
        [[ -d $root/$s ]] || continue
        row=$(grep -E "^\| $s/ \|" "$rules")
        [[ -n $row ]] || { echo "$rules: no row for $s/ in the table"; bad=1; continue; }
        for f in "$root/$s"/*.c "$root/$s"/*.cu "$root/$s"/*.h; do
            [[ -e $f ]] || continue
            b=${f##*/}
            [[ $b == *_internal.h ]] && continue
            [[ $b == *.h && ( -e $root/$s/${b%.h}.c || -e $root/$s/${b%.h}.cu ) ]] && continue
            grep -qE "(^|[^A-Za-z0-9_.])(\`)?($s/)?${b//./\\.}([^A-Za-z0-9_]|$)" <<< "$row" && continue
            echo "$rules: $s/$b is not named in the table's $s/ row"; bad=1
        done
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
rm "$d/t/low/c.c"
# A face: outside high/, only high/face.h; and no stage's _internal.h from another.
mkdir -p "$d/t/top"
printf '```deps\nlow ->\nhigh -> low\ntop -> low high\nhigh: face.h\n<cuda.h> high\n```\n' > "$d/rules.md"
printf '#include "high/face.h"\n' > "$d/t/top/t.c"
check "$d/t" "$d/rules.md" > "$d/out" || fail "a tree that keeps its faces failed: $(cat "$d/out")"
printf '#include "high/inner.h"\n' > "$d/t/top/u.c"
if check "$d/t" "$d/rules.md" > "$d/out"; then fail "a header behind a face passed"; fi
grep -q 'top/u.c: #include "high/inner.h" (outside high/ only high/face.h)' "$d/out" ||
    fail "not named: $(cat "$d/out")"
printf '#include "low/low_internal.h"\n' > "$d/t/top/u.c"
if check "$d/t" "$d/rules.md" > "$d/out"; then fail "another folder's _internal.h passed"; fi
grep -q "top/u.c: #include \"low/low_internal.h\" (low/'s interior" "$d/out" || fail "not named: $(cat "$d/out")"
rm "$d/t/top/u.c"
# A header of one folder declaring a function another folder defines (a call
# upward that no include shows): high/b.h declares top_run, top/t.c defines it.
printf 'int top_run(int argc, char **argv)\n{\n    return argc;\n}\n' >> "$d/t/top/t.c"
printf '/* b */\nint high_go(void);\n' > "$d/t/high/b.h"
check "$d/t" "$d/rules.md" > "$d/out" || fail "a header declaring its own folder's functions failed: $(cat "$d/out")"
printf 'int top_run(int argc,\n            char **argv);\n' >> "$d/t/high/b.h"
if check "$d/t" "$d/rules.md" > "$d/out"; then fail "a header declaring another folder's function passed"; fi
grep -q 'high/b.h: declares top_run, which top/ defines' "$d/out" || fail "not named: $(cat "$d/out")"

# The table: a file its folder's row does not name is found.
printf '```deps\nlow ->\nhigh -> low\n```\n| low/ | low | low/a.c (its part) | x |\n| high/ | high | b.c | y |\n' > "$d/rules.md"
table "$d/t" "$d/rules.md" > "$d/out" || fail "a table naming every file failed: $(cat "$d/out")"
printf '/* c */\n' > "$d/t/low/c.c"
: > "$d/t/low/low_internal.h"
if table "$d/t" "$d/rules.md" > "$d/out"; then fail "a file the table does not name passed"; fi
grep -q 'low/c.c is not named in the table' "$d/out" || fail "not named: $(cat "$d/out")"
[[ $(wc -l < "$d/out") == 1 ]] || fail "more than low/c.c named: $(cat "$d/out")"

check "$src" "$src/docs/design.md" || fail "includes against docs/design.md's arrows (above)"
table "$src" "$src/docs/design.md" || fail "files docs/design.md's table does not name (above): add each to its folder's row"
echo "test_deps: ok"
