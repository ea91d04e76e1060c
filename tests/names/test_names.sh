#!/usr/bin/env bash
# test_names (ctest label unit): one meaning per name (STYLE.md).
#  1. Every exported (non-static) function of the stage folders carries its
#     file's prefix: the file's full stem, or for a satellite its parent's
#     full stem, the parent being a file of the same folder whose stem
#     begins the satellite's (worker_time.c beside worker.c: worker_;
#     cmd_run.c beside cmd.h: cmd_).  tests/names/debt.txt lists the ones
#     not renamed yet; it may only shrink (a listed name that now passes
#     fails too, so the list stays true).
#  2. The first comment of each .c/.h names only files that exist and kvx
#     names (module_xxx) that are defined somewhere: a function, an array, a
#     macro, a file stem, or a name kvx looks up as a string (fake markers).
#  3. A head that names a function of its own prefix, or a static helper of
#     its own family, names one its file defines (a .h: declares, or its .c defines), or
#     names the file that does: a function moved to another file leaves no
#     head describing it where it was.
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

# parent_prefix ROOT FILE NAME: 0 when NAME begins with the stem of FILE's
# parent (a file of its folder, .c, .h or .cu, whose stem followed by '_'
# begins FILE's stem) and an '_'.
parent_prefix() {
    local root=$1 f=$2 name=$3 dir stem p
    dir=${f%/*}; stem=${f##*/}; stem=${stem%.*}; p=$stem
    while [[ $p == *_* ]]; do
        p=${p%_*}
        if [[ $name == "$p"_* ]] && compgen -G "$root/$dir/$p.[ch]" >/dev/null ||
           { [[ $name == "$p"_* ]] && [[ -e $root/$dir/$p.cu ]]; }; then
            return 0
        fi
    done
    return 1
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
        [[ $name == "$stem" || $name == "$stem"_* ]] && continue
        parent_prefix "$root" "$f" "$name" && continue
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

# "FILE NAME" for each static function defined at column 0.
statics() {
    awk '/^static [^=;(]*[ *][a-z_][a-z0-9_]*\(/ && !/;[ \t]*$/ {
        s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); print FILENAME, w[n] }' "$@"
}

# check_heads ROOT: print each file a head comment names that is not there,
# each kvx name it gives that nothing defines, and each function of its own
# prefix (or static helper) it names that it does not define, without the
# file that does; exit 1 if any.
check_heads() {
    local root=$1 bad=0 f s tok head stems code own defs
    local -A exp=() sta=()
    cd "$root" || return 1
    while read -r f tok; do exp[$tok]+=" $f"; done < <(for s in $STAGES; do compgen -G "$s/*.c" >/dev/null && exported "$s"/*.c; done)
    while read -r f tok; do sta[$tok]+=" $f"; done < <(for s in $STAGES; do compgen -G "$s/*.c" >/dev/null && statics "$s"/*.c; done)
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
            own=${f##*/}; own=${own%%_*}; own=${own%.*}
            for tok in $(grep -oE '\b[a-z][a-z0-9]*(_[a-z0-9]+)+\b' <<< "$head" | sort -u); do
                if [[ ${tok%%_*} == "$own" && -n ${exp[$tok]+x} ]]; then defs=${exp[$tok]}
                elif [[ -z ${exp[$tok]+x} && -n ${sta[$tok]+x} ]]; then
                    defs=""    # a static helper of its own family (worker_*.c and worker.c)
                    for s in ${sta[$tok]}; do b=${s##*/}; [[ ${b%%_*} == "$own" || ${b%%.*} == "$own" ]] && defs+=" $s"; done
                    [[ -n $defs ]] || continue
                else continue
                fi
                head_names_home "$f" "$tok" "$defs" "$head" && continue
                echo "$f: its head comment names $tok, which it does not define (${defs# } does: say so there)"; bad=1
            done
        done
    done
    return $bad
}

# head_names_home FILE NAME "DEFINERS" HEAD: 0 when FILE defines NAME (a .h:
# declares it, or its .c defines it) or HEAD names one of its DEFINERS.
head_names_home() {
    local f=$1 tok=$2 defs=$3 head=$4 d b
    for d in $defs; do
        [[ ${d%.*} == "${f%.*}" ]] && return 0
        b=${d##*/}
        grep -qF "${b%.*}." <<< "$head" && return 0    # its .c or its .h
    done
    [[ $f == *.h ]] && grep -qE "^[A-Za-z_][^;]*[ *]$tok\(" "$f" && return 0
    return 1
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
/* thing_part: the rest of thing.c's thing_make. */
static int helper(int x)
{
    return x;
}

int thing_more(int x) { return helper(x); }
C
: > "$d/t/gpu/worker.h"   # worker_a.c's parent
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
sed -i 's|thing_old (|thing_make (|' "$d/t/core/thing.c"
# A function moved to a satellite: thing.c's head still names it as its own.
printf '/* thing: thing_make and thing_more. */\nint thing_make(int x)\n{\n    return x;\n}\n' > "$d/t/core/thing.c"
if (check_heads "$d/t") > "$d/out"; then fail "a head naming a function its file no longer defines passed"; fi
grep -q "^core/thing.c: its head comment names thing_more, which it does not define (core/thing_part.c does" "$d/out" ||
    fail "the moved function is not named: $(cat "$d/out")"
sed -i 's|thing_make and thing_more|thing_make; thing_more is thing_part.c'"'"'s|' "$d/t/core/thing.c"
(check_heads "$d/t") > "$d/out" || fail "a head naming a moved function with its file refused: $(cat "$d/out")"
# A satellite's prefix is its parent's: worker_a.c has no worker.c beside it.
printf 'int worker_a_go(void)\n{\n    return 0;\n}\n' > "$d/t/gpu/worker_a.c"
: > "$d/debt"
(check_prefixes "$d/t" "$d/debt") > "$d/out" || fail "a full-stem prefix refused: $(cat "$d/out")"
printf '/* worker_a */\nint worker_go(void)\n{\n    return 0;\n}\n' > "$d/t/gpu/worker_a.c"
rm "$d/t/gpu/worker.h"
if (check_prefixes "$d/t" "$d/debt") > "$d/out"; then fail "a parent's prefix without the parent passed"; fi
grep -q '^gpu/worker_a.c: worker_go ' "$d/out" || fail "the orphan satellite is not named: $(cat "$d/out")"
: > "$d/t/gpu/worker.h"
(check_prefixes "$d/t" "$d/debt") > "$d/out" || fail "a satellite of worker.h refused: $(cat "$d/out")"

(check_prefixes "$src" "$src/tests/names/debt.txt") || fail "exported functions without their file's prefix (above): rename them (a line in /work/notes/renames.sed style) or, for a known debt, list them"
(check_heads "$src") || fail "stale head comments (above)"
echo "test_names: ok"
