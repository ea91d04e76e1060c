#!/usr/bin/env bash
# cli-md.sh [KVX]: rewrite each "## kvx VERB" section's ```text block of
# docs/cli.md with what `kvx VERB --help` prints now (tests/test_cli.c's
# test_cli_md holds the two equal); the prose around the blocks is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
kvx=${1:-build/kvx}
python3 - "$kvx" <<'PY'
import re, subprocess, sys
kvx = sys.argv[1]
path = "docs/cli.md"
text = open(path).read()
def block(m):
    verb = m.group(1)
    out = subprocess.run([kvx, verb, "--help"], capture_output=True, text=True).stdout
    return "## kvx %s\n\n```text\n%s```" % (verb, out)
text = re.sub(r"## kvx (\S+)\n\n```text\n.*?```", block, text, flags=re.S)
open(path, "w").write(text)
PY
