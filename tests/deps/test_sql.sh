#!/usr/bin/env bash
# test_sql (ctest label unit): the store owns SQL (issue 35 item 5).  No source
# outside store/ (and tests/) holds SQL text (`SELECT`, `INSERT`), and no
# SQLite handle or call (`sqlite3`) reaches report/, cli/ or run/: they ask
# the store by its typed queries.  The checker is first run on a made-up tree
# with each kind of violation planted, so that a checker that finds nothing
# cannot pass the real check.
#
# report/results_nvbench.c is the one exception, until issue 39 moves its
# queries (nvbench JSON read through SQLite's JSON functions) into store/.
#
#   tests/deps/test_sql.sh SOURCE_DIR
set -u
src=${1:?usage: test_sql.sh SOURCE_DIR}
d=$(mktemp -d /tmp/kvx-sql-XXXXXX)
trap 'rm -rf "$d"' EXIT
except=report/results_nvbench.c

# check ROOT: print each file that breaks a rule; exit 1 if any.
check() {
    local root=$1 bad=0 f rel
    while IFS= read -r f; do
        rel=${f#$root/}
        [[ $rel == store/* || $rel == tests/* || $rel == build* || $rel == "$except" ]] && continue
        if grep -q 'SELECT\|INSERT' "$f"; then
            echo "$rel: SQL text outside store/"; bad=1
        fi
        if [[ $rel =~ ^(report|cli|run)/ ]] && grep -q 'sqlite3' "$f"; then
            echo "$rel: SQLite reaches ${rel%%/*}/"; bad=1
        fi
    done < <(find "$root" -path "$root/.*" -prune -o \( -name '*.[ch]' -o -name '*.cu' \) -print | sort)
    return $bad
}

mkdir -p "$d/store" "$d/report" "$d/cli"
echo 'const char *q = "SELECT 1";' > "$d/store/ok.c"
echo 'int f(void);' > "$d/report/ok.c"
check "$d" >/dev/null || { echo "FAIL: the checker refuses a clean tree"; exit 1; }
echo 'const char *q = "SELECT 1";' > "$d/report/bad.c"
out=$(check "$d") && { echo "FAIL: the checker missed planted SQL"; exit 1; }
[[ $out == *"report/bad.c: SQL text"* ]] || { echo "FAIL: $out"; exit 1; }
rm "$d/report/bad.c"
echo 'struct sqlite3 *db;' > "$d/cli/bad.c"
out=$(check "$d") && { echo "FAIL: the checker missed a planted sqlite3"; exit 1; }
[[ $out == *"cli/bad.c: SQLite reaches cli/"* ]] || { echo "FAIL: $out"; exit 1; }

check "$src" || { echo "FAIL: SQL outside store/ (docs/design.md, store/)"; exit 1; }
echo "ok: SQL only in store/, no sqlite3 in report/, cli/, run/"
