#!/usr/bin/env bash
# devdeps.sh: make .devdeps/ in the repository root: the headers (include/) and
# libraries (lib/) of libyaml, SQLite and cmocka, for a machine that has CUDA
# and cmake but not these and no network to fetch them: a lent GPU machine,
# where scripts/device-session.sh builds with CMAKE_PREFIX_PATH=.devdeps.
#
# Run it here, where apt works; .devdeps/ is git-ignored, so it travels to the
# GPU machine only when carried along with the tree.  The files come from the
# Debian packages as they are (apt-get download, dpkg -x): nothing is
# installed.  Idempotent: each run builds the folder afresh beside the old one
# and swaps it in, so a failed run leaves the old one as it was.
set -euo pipefail

pkgs=(libyaml-dev libyaml-0-2 libsqlite3-dev libsqlite3-0 libcmocka-dev libcmocka0)
# What the build needs of them: kvx's CMakeLists.txt looks for these.
want=(include/yaml.h include/sqlite3.h include/cmocka.h lib/libyaml.so lib/libsqlite3.so lib/libcmocka.so)
# The lent machines are x86_64; the libraries must be theirs.
multiarch=x86_64-linux-gnu

die() { echo "devdeps: $*" >&2; exit 1; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
for tool in apt-get dpkg dpkg-deb; do
    command -v "$tool" >/dev/null || die "needs $tool: run it on a Debian or Ubuntu machine"
done
arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || die "this machine is $arch: the packages must be amd64 ($multiarch), as the GPU machines are"

work=$(mktemp -d "${TMPDIR:-/tmp}/kvx-devdeps-XXXXXX")
stage=$root/.devdeps.new.$$
trap 'rm -rf "$work" "$stage"' EXIT
# apt-get download as root fetches as the _apt user, who must be able to write here.
chmod 755 "$work"

download() { (cd "$work" && apt-get download "${pkgs[@]}") >"$work/apt.log" 2>&1; }
if ! download; then
    # An empty or stale package list knows no such package: update it once.
    echo "devdeps: apt-get download failed; running apt-get update first"
    if [ "$(id -u)" != 0 ]; then
        sed 's/^/  /' "$work/apt.log" >&2
        die "apt-get update needs root: run 'sudo apt-get update', then this script again"
    fi
    apt-get update -qq >>"$work/apt.log" 2>&1 || { sed 's/^/  /' "$work/apt.log" >&2; die "apt-get update failed"; }
    download || { sed 's/^/  /' "$work/apt.log" >&2; die "apt-get download ${pkgs[*]} failed"; }
fi

mkdir -p "$stage/include" "$stage/lib" "$work/x"
: >"$stage/PACKAGES"
for deb in "$work"/*.deb; do
    dpkg -x "$deb" "$work/x" || die "dpkg -x $deb failed"
    dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$stage/PACKAGES"
done
[ -d "$work/x/usr/include" ] || die "the packages hold no usr/include"
[ -d "$work/x/usr/lib/$multiarch" ] || die "the packages hold no usr/lib/$multiarch"
cp -a "$work/x/usr/include/." "$stage/include/"
cp -a "$work/x/usr/lib/$multiarch/." "$stage/lib/"
for f in "${want[@]}"; do
    # -e follows the .so link to the library it names, from the runtime package.
    [ -e "$stage/$f" ] || die "$f is missing from the packages (${pkgs[*]})"
done

rm -rf "$root/.devdeps.old"
[ ! -e "$root/.devdeps" ] || mv "$root/.devdeps" "$root/.devdeps.old"
mv "$stage" "$root/.devdeps"
rm -rf "$root/.devdeps.old"
echo "devdeps: $root/.devdeps: $(wc -l <"$root/.devdeps/PACKAGES") packages ($(paste -sd, "$root/.devdeps/PACKAGES" | sed 's/,/, /g'))"
