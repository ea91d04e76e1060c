#!/usr/bin/env bash
# kt_install.sh [SITE]: Kernel Tuner 1.5.0 and what it needs from .whl/ (carried
# to a lent GPU machine; nothing can be downloaded there) into SITE (default
# /tmp/site), for `PYTHONPATH=SITE python3 ...`.  Kernel Tuner's cupy backend
# reads cupy's device uuid with uuid.UUID(bytes=...), which cupy 14's
# properties fail ("bytes is not a 16-char string") before any tuning: the
# installed copy keeps the value as text instead (the uuid is only recorded in
# its environment report).
set -euo pipefail
cd "$(dirname "$0")/.."
site=${1:-/tmp/site}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$site" .whl/*.whl
f=$site/kernel_tuner/backends/cupy.py
sed -i 's|str(uuid.UUID(bytes=props\["uuid"\]))|str(props["uuid"])|' "$f"
grep -q 'str(props\["uuid"\])' "$f" && echo "kt_install: kernel_tuner $(sed -n 's/^Version: //p' "$site"/kernel_tuner-*.dist-info/METADATA) in $site, its cupy uuid read patched"
