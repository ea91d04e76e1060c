#!/usr/bin/env bash
# test_env_table (ctest labels unit, cpu): docs/cli.md's "Environment
# variables" table, the man page's ENVIRONMENT section (cli/cli_doc.c's
# MAN_ENV) and the source name the same variables: every getenv("NAME") or
# env_number("NAME") of kvx's folders is a row of both, and every row is read
# by the source (NVTX_INJECTION64_PATH through NVTX's headers, which
# gpu/nvtx.c includes).  The man page's EXIT STATUS section lists the statuses
# of docs/cli.md's table, 4 (no GPU) among them.  The checker is tried first on
# a made-up tree with a variable missing from the docs, so that one finding
# nothing cannot pass.
#
#   tests/docs/test_env_table.sh SOURCE_DIR KVX
set -u
src=${1:?usage: test_env_table.sh SOURCE_DIR KVX} kvx=${2:?usage: test_env_table.sh SOURCE_DIR KVX}
d=$(mktemp -d /tmp/kvx-envtable-XXXXXX)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# read_by ROOT: the variables the source under ROOT reads, one a line.
read_by() {
    grep -rhoE '(getenv|env_number)\("[A-Za-z_0-9]+"' --include='*.c' --include='*.h' \
        "$1"/core "$1"/gen "$1"/host "$1"/compile "$1"/resolve "$1"/run "$1"/gpu "$1"/store \
        "$1"/report "$1"/cli "$1"/bench 2>/dev/null | sed -E 's/.*\("//; s/"$//' | sort -u
}

# doc_rows DOC: the variables of the first cells of its "Environment variables" table.
doc_rows() {
    awk '/^## Environment variables/ {on = 1; next} /^## / {on = 0} on && /^\| `/' "$1" |
        cut -d'|' -f2 | grep -oE '`[A-Za-z_0-9]+`' | tr -d '`' | sort -u
}

# compare WHAT A B: the names of file A missing from file B, printed; status 1 if any.
compare() {
    local missing
    missing=$(comm -23 "$2" "$3")
    [ -z "$missing" ] && return 0
    echo "$1:" $missing
    return 1
}

# The checker on a made-up tree: a variable the table lacks is found.
mkdir -p "$d/fake/core" "$d/fake/docs"
printf 'int f(void) { return getenv("KVX_A") && getenv("KVX_B"); }\n' >"$d/fake/core/a.c"
printf '## Environment variables\n\n| variable | what |\n| --- | --- |\n| `KVX_A` | a |\n\n## Next\n| `KVX_B` | not the table |\n' \
    >"$d/fake/docs/cli.md"
read_by "$d/fake" >"$d/fake.read"
doc_rows "$d/fake/docs/cli.md" >"$d/fake.doc"
[ "$(cat "$d/fake.read" | tr '\n' ' ')" = "KVX_A KVX_B " ] || fail "the checker did not find the made-up tree's reads"
compare "made up" "$d/fake.read" "$d/fake.doc" >/dev/null && fail "the checker missed KVX_B, absent from the made-up table"

# The real tree.
read_by "$src" >"$d/read"
{ cat "$d/read"; grep -q 'nvtx3/nvToolsExt.h' "$src/gpu/nvtx.c" && echo NVTX_INJECTION64_PATH; } | sort -u >"$d/read_all"
[ "$(wc -l <"$d/read")" -ge 20 ] || fail "only $(wc -l <"$d/read") variables found in the source"
doc_rows "$src/docs/cli.md" >"$d/doc"
"$kvx" __man >"$d/kvx.1" || fail "kvx __man failed"
awk '/^\.SH ENVIRONMENT/ {on = 1; next} /^\.SH / {on = 0} on && /^\\fB/' "$d/kvx.1" |
    sed 's/\\fB//; s/\\fR//' | tr ',' '\n' | tr -d ' ' | grep -v '^$' | sort -u >"$d/man"
bad=0
compare "read by the source but not in docs/cli.md's table" "$d/read_all" "$d/doc" || bad=1
compare "in docs/cli.md's table but read nowhere" "$d/doc" "$d/read_all" || bad=1
compare "in docs/cli.md's table but not in the man page's ENVIRONMENT" "$d/doc" "$d/man" || bad=1
compare "in the man page's ENVIRONMENT but not in docs/cli.md's table" "$d/man" "$d/doc" || bad=1
[ "$bad" = 0 ] || fail "the environment tables disagree"

# The exit statuses: docs/cli.md's table and the man page's EXIT STATUS.
awk '/^\| status \| class/ {on = 1; next} on && !/^\|/ {on = 0} on && /^\| [0-9]/' "$src/docs/cli.md" |
    cut -d'|' -f2 | tr -d ' ' | sort >"$d/exit_doc"
awk '/^\.SH EXIT STATUS/ {on = 1; next} /^\.SH / {on = 0} on && /^\\fB/' "$d/kvx.1" |
    sed 's/\\fB//; s/\\fR//' | tr -d ' ' | sort >"$d/exit_man"
grep -qx 4 "$d/exit_man" || fail "the man page's EXIT STATUS has no 4"
cmp -s "$d/exit_doc" "$d/exit_man" ||
    fail "exit statuses: docs/cli.md $(tr '\n' ' ' <"$d/exit_doc")/ man page $(tr '\n' ' ' <"$d/exit_man")"
echo "test_env_table: ok ($(wc -l <"$d/doc") variables, statuses $(tr '\n' ' ' <"$d/exit_man"))"
