#!/usr/bin/env bash
# deps.sh [--main]: install what building and testing kvx needs, or say how.
# --main (make run): what the main job needs alone, the libraries, the toolkit
# and a disassembler; the test suite's Python tools (cuda-bench, pandas,
# matplotlib, Kernel Tuner) are left to make test.
#
# As root, missing Debian/Ubuntu packages are installed with apt-get; otherwise
# the exact command is printed and the script fails.  The CUDA toolkit (NVRTC
# and headers) is not an apt package here: it is looked for and named if absent.
set -euo pipefail

need_pkgs=()
have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/include/x86_64-linux-gnu/$1" ] || [ -e "/usr/include/aarch64-linux-gnu/$1" ]; }
command -v cmake >/dev/null || need_pkgs+=(cmake)
command -v make >/dev/null || need_pkgs+=(make)
command -v cc >/dev/null || need_pkgs+=(gcc)
have_header yaml.h || need_pkgs+=(libyaml-dev)
have_header sqlite3.h || need_pkgs+=(libsqlite3-dev)
have_header cmocka.h || need_pkgs+=(libcmocka-dev)
# Optional: plots in reports, and the SQLite shell for poking at results.
optional=()
command -v gnuplot >/dev/null || optional+=(gnuplot-nox)
command -v sqlite3 >/dev/null || optional+=(sqlite3)

if [ ${#need_pkgs[@]} -gt 0 ] || [ ${#optional[@]} -gt 0 ]; then
    all=("${need_pkgs[@]}" "${optional[@]}")
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "deps: installing ${all[*]}"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        if ! apt-get install -y -qq "${all[@]}" >/dev/null; then
            # Optional packages must not block the build: retry with the required ones.
            [ ${#need_pkgs[@]} -eq 0 ] || apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
        fi
    elif [ ${#need_pkgs[@]} -gt 0 ]; then
        echo "deps: missing packages; run as root:" >&2
        echo "  apt-get update && apt-get install -y ${all[*]}" >&2
        exit 1
    else
        echo "deps: optional packages missing (reports without plots): apt-get install -y ${optional[*]}"
    fi
fi

cuda=""
for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /opt/cuda; do
    if [ -n "$d" ] && [ -e "$d/include/nvrtc.h" ]; then cuda=$d; break; fi
done
if [ -z "$cuda" ]; then
    echo "deps: the CUDA toolkit (NVRTC and headers) was not found in \$CUDA_HOME, /usr/local/cuda or" >&2
    echo "      /opt/cuda; install CUDA 12.8 or newer (NVIDIA's cuda-toolkit packages) and set CUDA_HOME" >&2
    exit 1
fi
# SASS: the toolkit's nvdisasm, or else NVIDIA's PyPI package of it, installed
# into kvx's own tools folder (no root needed; kvx looks there by itself).
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/.kvx/tools/nvdisasm
sass="no nvdisasm: inspect gives PTX facts only"
if [ -x "$cuda/bin/nvdisasm" ]; then
    sass="nvdisasm from the toolkit"
elif command -v nvdisasm >/dev/null; then
    sass="nvdisasm on PATH"
elif ls "$tools"/nvidia/cu*/bin/nvdisasm >/dev/null 2>&1; then
    sass="nvdisasm from PyPI in .kvx/tools"
elif command -v python3 >/dev/null; then
    # The toolkit's major version (NVRTC's), so that ptxas and the disassembler agree.
    major=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\)[0-9][0-9][0-9]$/\1/p' "$cuda/include/cuda.h" 2>/dev/null | head -n 1)
    spec="nvidia-cuda-nvdisasm${major:+==$major.*}"
    echo "deps: the toolkit has no nvdisasm; installing $spec from PyPI into .kvx/tools"
    if python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$tools" "$spec" \
        >/dev/null 2>&1 || python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$tools" nvidia-cuda-nvdisasm >/dev/null 2>&1; then
        sass="nvdisasm from PyPI in .kvx/tools"
    else
        echo "deps: could not install nvidia-cuda-nvdisasm (pip): inspect gives PTX facts only" >&2
    fi
fi
if [ "${1:-}" != --main ]; then
    # Optional: nvbench_compare (NVIDIA's cuda-bench, pure Python without a GPU)
    # and what it imports, for tests/test_nvbench.c to compare two `kvx export
    # --format nvbench` files as a user would; into kvx's tools folder too.
    nvb=$root/.kvx/tools/nvbench
    if [ ! -d "$nvb/cuda/bench" ] && command -v python3 >/dev/null; then
        python3 -m pip install --quiet --disable-pip-version-check --target "$nvb" cuda-bench tabulate colorama \
            jsondiff >/dev/null 2>&1 || echo "deps: could not install cuda-bench (pip): test_nvbench skips nvbench_compare" >&2
    fi
    # pandas, matplotlib and Kernel Tuner 1.5.0: the docs' pandas examples
    # (tests/test_doc_claims.c), the reports' matplotlib scripts
    # (tests/test_results_io.c) and Kernel Tuner's simulation mode on `kvx export
    # --format kerneltuner` (tests/test_run_search.c) run with them; where
    # python3 lacks them they go into kvx's tools folder too, which the tests put
    # on PYTHONPATH (in CI a test fails without them).
    py=$root/.kvx/tools/python
    if command -v python3 >/dev/null && ! PYTHONPATH="$py${PYTHONPATH:+:$PYTHONPATH}" \
        python3 -c 'import pandas, matplotlib, kernel_tuner' >/dev/null 2>&1; then
        echo "deps: installing pandas, matplotlib and kernel_tuner 1.5.0 from PyPI into .kvx/tools/python"
        python3 -m pip install --quiet --disable-pip-version-check --target "$py" pandas matplotlib \
            kernel_tuner==1.5.0 >/dev/null 2>&1 ||
            echo "deps: could not install pandas, matplotlib and kernel_tuner (pip): the tests that need them skip" >&2
    fi
fi
echo "deps: ok (CUDA toolkit at $cuda; $sass)"
