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
  preset.py guard-file CLI DIR writes the file of the preset's guard into DIR and prints
                               its path (nothing when its guard has no file)

In `loop` mode `args` and `env` also have the guard's (`[backends.CLI.guard]`), as
agent-loop adds them: its file at $GUARD_FILE (see guard-file), `{mcp_servers}` a name no
server has. What the guard reads of the user's files (`replaces`, `keep_env`) is left out:
the recordings' HOME has none.
"""

import os
import sys
import tomllib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    what, cli = sys.argv[1], sys.argv[2]
    model = sys.argv[3] if what == "args" and len(sys.argv) > 3 and sys.argv[3] else None
    with open(os.path.join(ROOT, "backends.toml"), "rb") as f:
        preset = tomllib.load(f)["backends"][cli]
    args = list(preset.get("args", []))
    if preset.get("tools", "loop") == "loop":
        args += preset.get("loop_args", [])
    model = model or preset.get("model")
    if model:
        args += [a.replace("{model}", model) for a in preset.get("model_args", [])]
    guard = preset.get("guard", {}) if preset.get("tools", "loop") == "loop" else {}
    env = dict(preset.get("env", {}))

    def put(value):
        return value.replace("{file}", os.environ.get("GUARD_FILE", "")).replace(
            "{mcp_servers}", "agent-loop-none-recording")

    args += [put(a) for a in guard.get("args", [])]
    env.update((k, put(v)) for k, v in guard.get("env", {}).items())
    if what == "args":
        for a in args:
            if "\n" in a:
                sys.exit("preset.py: an argument with a newline cannot be listed")
            print(a)
    elif what == "env":
        for k, v in env.items():
            print("%s=%s" % (k, v))
    elif what == "guard-file":
        if "file" in guard:
            path = os.path.join(sys.argv[3], guard.get("file_name", "guard"))
            with open(path, "w") as f:
                f.write(guard["file"])
            print(path)
    elif what == "stdin":
        print("no" if any("{prompt" in a for a in args) else "yes")
    else:
        sys.exit("preset.py: args, env, stdin or guard-file")


main()
