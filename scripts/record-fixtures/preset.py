#!/usr/bin/env python3
"""The command line agent-loop runs for a built-in CLI preset, read from backends.toml, so
that recordings follow the presets as they change.

  preset.py args CLI [MODEL]   the arguments, one per line: `args`, then `loop_args` (the
                               preset's tool mode is `loop` unless it says `own`), then
                               `model_args` with {model} filled in when MODEL (or the
                               preset's own `model`) is set. {prompt} and {prompt_file} are
                               left for the caller.
  preset.py env CLI            the preset's `env`, one KEY=VALUE per line
  preset.py stdin CLI          prints `yes` when the preset passes the prompt on stdin
"""

import os
import sys
import tomllib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    what, cli = sys.argv[1], sys.argv[2]
    model = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None
    with open(os.path.join(ROOT, "backends.toml"), "rb") as f:
        preset = tomllib.load(f)["backends"][cli]
    args = list(preset.get("args", []))
    if preset.get("tools", "loop") == "loop":
        args += preset.get("loop_args", [])
    model = model or preset.get("model")
    if model:
        args += [a.replace("{model}", model) for a in preset.get("model_args", [])]
    if what == "args":
        for a in args:
            if "\n" in a:
                sys.exit("preset.py: an argument with a newline cannot be listed")
            print(a)
    elif what == "env":
        for k, v in preset.get("env", {}).items():
            print("%s=%s" % (k, v))
    elif what == "stdin":
        print("no" if any("{prompt" in a for a in args) else "yes")
    else:
        sys.exit("preset.py: args, env or stdin")


main()
