#!/usr/bin/env bash
# test_names (ctest label cpu): one meaning per name (STYLE.md).
#  1. Every exported (non-static) function of the stage folders carries its
#     file's prefix: the file's stem, or the stem before its first '_' for a
#     split file (worker_sample.c: worker_).  tests/names/debt.txt lists the
#     ones not renamed yet; it may only shrink (a listed name that now passes
#     fails too, so the list stays true).
#  2. The first comment of each .c/.h names only files that exist and kvx
#     names (module_xxx) that are defined somewhere: a function, an array, a
#     macro, a file stem, or a name kvx looks up as a string (fake markers).
# Each check is first run on a made-up tree with a bad example planted, so
# that a checker that finds nothing cannot pass the real check.
#
#   tests/names/test_names.sh SOURCE_DIR
set -u
src=${1:?usage: test_names.sh SOURCE_DIR}
d=$(mktemp -d /tmp/kvx-names-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
STAGES="core gen host compile resolve gpu store report run cli"

# "FILE NAME" for each function defined at column 0 without static: the
# name line (and its indented parameter lines) is followed by a line holding
# only '{', or holds the '{' itself.
exported() {
    awk '
    FNR == 1 { prev = "" }
    {
        if (prev != "" && $0 ~ /^\{/) print FILENAME, prev
        if (prev != "" && $0 ~ /^[ \t]/ && $0 !~ /;[ \t]*$/) next   # the parameters go on
        prev = ""
        if ($0 ~ /^[A-Za-z_]/ && $0 !~ /(^|[ \t])static[ \t]/ && $0 ~ /\(/ && $0 !~ /;[ \t]*$/ &&
            $0 !~ /^(typedef|enum|union|extern|struct [A-Za-z_]+ *\{)/ && $0 !~ /=/) {
            s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/)
            if ($0 ~ /\{/) print FILENAME, w[n]; else prev = w[n]
        }
    }' "$@"
}

# check_prefixes ROOT DEBT: print "FILE NAME" for each exported function without
# its file's prefix that DEBT does not list, and each DEBT line that is no longer
# an offence; exit 1 if any.
check_prefixes() {
    local root=$1 debt=$2 bad=0 f name stem
    local -A found=()
    while read -r f name; do
        stem=${f##*/}; stem=${stem%.c}
        [[ $f == cli/main.c && $name == main ]] && continue
        [[ $name == "$stem"_* || $name == "${stem%%_*}"_* ]] && continue
        found["$f $name"]=1
        grep -qxF "$f $name" "$debt" || { echo "$f: $name (exported without the prefix ${stem%%_*}_)"; bad=1; }
    done < <(cd "$root" && for s in $STAGES; do [[ -d $s ]] && exported "$s"/*.c; done)
    while read -r f name; do
        [[ -z $f || $f == \#* ]] && continue
        [[ -n ${found["$f $name"]+x} ]] || { echo "$debt: '$f $name' is no longer an offence: remove the line"; bad=1; }
    done < "$debt"
    return $bad
}

# The first comment of FILE on one line.
head_comment() {
    awk '/\/\*/ && !on { on = 1 } on { printf "%s ", $0 } on && /\*\// { exit }' "$1"
}

# check_heads ROOT: print each file a head comment names that is not there,
# and each kvx name it gives that nothing defines; exit 1 if any.
check_heads() {
    local root=$1 bad=0 f s tok head stems code
    cd "$root" || return 1
    stems=" $(for s in $STAGES; do for f in "$s"/*.[ch]; do [[ -e $f ]] && { f=${f##*/}; echo "${f%.*}"; }; done; done | sort -u | tr '\n' ' ') "
    local prefixes=" $(for t in $stems; do echo "$t"; echo "${t%%_*}"; done | sort -u | tr '\n' ' ') "
    code=$(for s in $STAGES tests templates; do [[ -d $s ]] && echo "$s"; done)
    for s in $STAGES; do
        for f in "$s"/*.[ch]; do
            [[ -e $f ]] || continue
            head=$(head_comment "$f")
            for tok in $(grep -oE '[A-Za-z0-9_/.-]*[a-z0-9_]\.(c|h|cu|md|yaml|sh|py)\b' <<< "$head" | sort -u); do
                [[ -e $tok || -e $s/$tok ]] && continue
                [[ -n $(find $code docs scripts specs -name "${tok##*/}" -print -quit 2>/dev/null) ]] && continue
                grep -q "^#include <${tok}>" "$f" && continue
                grep -rqF "\"${tok##*/}\"" $code 2>/dev/null && continue
                echo "$f: its head comment names $tok, which is not there"; bad=1
            done
            for tok in $(grep -oE '\b[a-z][a-z0-9]*(_[a-z0-9]+)+\b' <<< "$head" | sort -u); do
                [[ $prefixes == *" ${tok%%_*} "* ]] || continue
                [[ $stems == *" $tok "* ]] && continue
                grep -rhE "\b$tok *(\(|\[)|#define +$tok\b" $code 2>/dev/null |
                    grep -qvE '^[[:space:]]*(/\*|\*|//)' && continue
                grep -rqF "\"$tok\"" $code 2>/dev/null && continue   # a name kvx looks up
                echo "$f: its head comment names $tok, which nothing defines"; bad=1
            done
        done
    done
    return $bad
}

# The checkers on a made-up tree: good files pass, each planted fault is named.
mkdir -p "$d/t/core" "$d/t/gpu"
cat > "$d/t/core/thing.c" <<'C'
/* thing: thing_make (see core/thing.c and thing_part.c). */
int thing_make(int x)
{
    return x;
}
C
cat > "$d/t/core/thing_part.c" <<'C'
/* thing_part: the rest of thing_make. */
static int helper(int x)
{
    return x;
}

int thing_more(int x) { return helper(x); }
C
cat > "$d/t/gpu/worker_a.c" <<'C'
/* worker_a: a worker's. */
int worker_go(void)
{
    return 0;
}
C
: > "$d/debt"
(check_prefixes "$d/t" "$d/debt") > "$d/out" || fail "good names refused: $(cat "$d/out")"
(check_heads "$d/t") > "$d/out" || fail "good head comments refused: $(cat "$d/out")"
printf 'int stray_fn(void)\n{\n    return 0;\n}\n' >> "$d/t/gpu/worker_a.c"
if (check_prefixes "$d/t" "$d/debt") > "$d/out"; then fail "a function without its prefix passed"; fi
grep -q '^gpu/worker_a.c: stray_fn ' "$d/out" || fail "the unprefixed function is not named: $(cat "$d/out")"
echo "gpu/worker_a.c stray_fn" > "$d/debt"
(check_prefixes "$d/t" "$d/debt") > "$d/out" || fail "a listed debt refused: $(cat "$d/out")"
echo "core/thing.c thing_make" >> "$d/debt"
if (check_prefixes "$d/t" "$d/debt") > "$d/out"; then fail "a debt line that is no offence passed"; fi
grep -q "'core/thing.c thing_make' is no longer an offence" "$d/out" || fail "the stale debt line is not named: $(cat "$d/out")"
sed -i 's|thing_part.c|thing_gone.c|' "$d/t/core/thing.c"
if (check_heads "$d/t") > "$d/out"; then fail "a head comment naming a missing file passed"; fi
grep -q '^core/thing.c: .* thing_gone.c, which is not there' "$d/out" || fail "the missing file is not named: $(cat "$d/out")"
sed -i 's|thing_gone.c|thing_part.c|; s|thing_make (|thing_old (|' "$d/t/core/thing.c"
if (check_heads "$d/t") > "$d/out"; then fail "a head comment naming a function that is gone passed"; fi
grep -q '^core/thing.c: .* thing_old, which nothing defines' "$d/out" || fail "the stale name is not named: $(cat "$d/out")"

(check_prefixes "$src" "$src/tests/names/debt.txt") || fail "exported functions without their file's prefix (above): rename them (a line in /work/notes/renames.sed style) or, for a known debt, list them"
(check_heads "$src") || fail "stale head comments (above)"
echo "test_names: ok"
