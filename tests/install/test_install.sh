#!/usr/bin/env bash
# cmake --install of the build into a temporary prefix gives a kvx that works
# without the source tree: --version, a plan of a spec copied elsewhere, its
# man page (man -l, and groff without warnings), `man kvx` through MANPATH,
# its bash completion, the example specs and templates (share/kvx: every
# installed spec plans from another folder, and histogram.yaml compiles), the
# man page's EXIT STATUS and ENVIRONMENT, and the PyPI nvdisasm looked up
# beside the binary (PREFIX/libexec/kvx/tools), where an installed kvx keeps
# its tools folder.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d /tmp/kvx_install_XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test_install: $*" >&2; exit 1; }

cmake --build "$build" --target kvx_docs >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "kvx_docs did not build"; }
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install failed"; }
kvx=$tmp/prefix/bin/kvx
for f in bin/kvx share/man/man1/kvx.1 share/bash-completion/completions/kvx share/doc/kvx/cli.md \
         share/doc/kvx/spec.md share/doc/kvx/README.md; do
    [ -e "$tmp/prefix/$f" ] || fail "PREFIX/$f was not installed"
done

"$kvx" --version | grep -Eq '^kvx [0-9]+\.[0-9]+\.[0-9]+' || fail "kvx --version: $("$kvx" --version)"

# A spec away from the source tree, planned for the H200 from a folder of its own.
mkdir "$tmp/work"
cp "$src/tests/data/specs/gb.yaml" "$src/tests/data/specs/gb.cu" "$tmp/work/"
(cd "$tmp/work" && "$kvx" plan gb.yaml --gpu H200-SXM-141GB --where 'bytes == 100000000000') >"$tmp/plan.log" 2>&1 ||
    { cat "$tmp/plan.log"; fail "the installed kvx did not plan gb.yaml"; }
grep -q '^target    sm_90 (H200-SXM-141GB named target)' "$tmp/plan.log" || fail "plan: no H200 target line"

# The example specs and their templates, installed side by side: each of
# specs/ is installed and plans (its templates found) from a folder of its own.
share=$tmp/prefix/share/kvx
for spec in "$src"/specs/*.yaml; do
    name=$(basename "$spec")
    [ -f "$share/specs/$name" ] || fail "PREFIX/share/kvx/specs/$name was not installed"
    (cd "$tmp/work" && "$kvx" plan "$share/specs/$name" >"$tmp/plan_$name.log" 2>&1) ||
        { cat "$tmp/plan_$name.log"; fail "the installed specs/$name did not plan"; }
done
for t in "$src"/templates/*.cu "$src"/templates/pieces/*.cuh; do
    [ -f "$share/templates/${t#"$src"/templates/}" ] || fail "PREFIX/share/kvx/templates/${t#"$src"/templates/} was not installed"
done
(cd "$tmp/work" && "$kvx" compile "$share/specs/histogram.yaml" --out "$tmp/work/out" --cache "$tmp/cache" \
    --where 'strategy == "global" && bins == 7') >"$tmp/compile.log" 2>&1 || { cat "$tmp/compile.log"; fail "the installed histogram.yaml did not compile"; }

man1=$tmp/prefix/share/man/man1/kvx.1
warnings=$(groff -man -ww -z "$man1" 2>&1) || fail "groff failed on kvx.1"
[ -z "$warnings" ] || fail "groff warns on kvx.1: $warnings"
if command -v man >/dev/null; then
    MANWIDTH=100 man -l "$man1" 2>/dev/null >"$tmp/man.txt" || fail "man -l kvx.1 failed"
    grep -q 'kvx plan SPEC' "$tmp/man.txt" || fail "man -l: no 'kvx plan SPEC'"
    grep -q -- '--gpu TARGET' "$tmp/man.txt" || fail "man -l: no '--gpu TARGET'"
    grep -q '^EXIT STATUS' "$tmp/man.txt" && grep -Eq '^ +4 +nothing +measured' "$tmp/man.txt" ||
        fail "man -l: no exit status 4"
    grep -q '^ENVIRONMENT' "$tmp/man.txt" && grep -Eq '^ +XDG_CACHE_HOME' "$tmp/man.txt" ||
        fail "man -l: no XDG_CACHE_HOME under ENVIRONMENT"
    MANPATH=$tmp/prefix/share/man MANWIDTH=100 man kvx 2>/dev/null | grep -q 'kvx run SPEC' ||
        fail "man kvx (MANPATH=PREFIX/share/man) did not show the page"
else
    groff -man -Tutf8 "$man1" | grep -q 'kvx plan SPEC' || fail "groff: no 'kvx plan SPEC'"
fi

complete_of() {
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kvx; echo "${COMPREPLY[*]}"' \
        _ "$tmp/prefix/share/bash-completion/completions/kvx" "$@"
}
[ "$(complete_of kvx pl)" = plan ] || fail "completion of 'kvx pl': $(complete_of kvx pl)"
[ "$(complete_of kvx plan --res)" = --resolve ] || fail "completion of 'kvx plan --res'"
[ "$(complete_of kvx plan x.yaml --gpu H2)" = H200-SXM-141GB ] || fail "completion of --gpu H2"

# The tools folder beside the prefix: a stand-in nvdisasm is what doctor finds
# (where no toolkit or PATH nvdisasm comes first).
if "$kvx" doctor 2>/dev/null | grep -q '^SASS  *no nvdisasm'; then
    fake=$tmp/prefix/libexec/kvx/tools/nvdisasm/nvidia/cu13/bin
    mkdir -p "$fake"
    printf '#!/bin/sh\necho "Cuda compilation tools, release 13.0, V13.0.48"\n' >"$fake/nvdisasm"
    chmod +x "$fake/nvdisasm"
    "$kvx" doctor 2>/dev/null | grep -q "^SASS .*/libexec/kvx/tools/nvdisasm/nvidia/cu13/bin/nvdisasm" ||
        fail "doctor did not find the nvdisasm in PREFIX/libexec/kvx/tools: $("$kvx" doctor 2>&1 | grep SASS)"
fi
echo "test_install: ok ($tmp/prefix)"
