#!/usr/bin/env python3
"""One line per model request in a mock_provider.py log: the endpoint, the model asked for,
and the tools the CLI declared to the model (`tools=0` means it offered none of its own).
Lines are sorted: background requests (titles, memory) race the main one.

  requests.py LOG
"""

import json
import sys


def tool_names(body):
    names = []
    for t in body.get("tools") or []:
        if "functionDeclarations" in t:  # Gemini API
            names += [f.get("name", "?") for f in t["functionDeclarations"]]
        elif "function" in t:  # Chat Completions
            names.append(t["function"].get("name", "?"))
        else:  # Anthropic, Responses
            names.append(t.get("name") or t.get("type", "?"))
    return names


def main():
    path, lines = "", []
    for line in open(sys.argv[1], encoding="utf-8"):
        if line.startswith("=== "):
            parts = line.split()
            path = parts[3].split("?")[0] if len(parts) > 3 else ""
        elif line.startswith("body=") and not path.endswith(("/count_tokens", ":countTokens")):
            try:
                body = json.loads(line[5:])
            except ValueError:
                continue
            model = body.get("model") or path.rsplit("/", 1)[-1].split(":")[0]
            names = tool_names(body)
            lines.append("%s model=%s tools=%d %s" % (path, model, len(names), ",".join(names)))
    for line in sorted(lines):
        print(line.rstrip())


main()
