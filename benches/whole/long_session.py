#!/usr/bin/env python3
"""A long session for scripts/bench.sh: the session file of a one-turn run (a tool call and its
result) repeated TURNS times, each tool result BYTES long, saved as session NAME beside it.

    long_session.py SESSIONS_DIR SEED TURNS BYTES NAME

SEED is the session folder the run left; its turn's messages become every turn's. The file is
what agent-loop writes (its own format, read back by the run that continues it), only longer.
"""

import copy
import json
import os
import sys

sessions, seed, turns, size, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
session = json.load(open(os.path.join(sessions, seed, "session.json")))
conversation = session["conversation"]
turn = list(zip(conversation["messages"], conversation["sizes"]))
messages, sizes = [], []
for n in range(turns):
    for message, sized in turn:
        message, sized = copy.deepcopy(message), dict(sized)
        for call in message.get("tool_calls", []):
            call["id"] = f"call_{n}"
        if message["role"] == "tool_result":
            message["call_id"] = f"call_{n}"
            line = f"line {n} of the tool's output\n"
            message["output"] = line * (size // len(line))
            sized["bytes"] = len(message["output"])
        messages.append(message)
        sizes.append(sized)
conversation.update(messages=messages, sizes=sizes, next_call_id=turns)
session.update(name=name, turns=turns)
folder = os.path.join(sessions, name)
os.makedirs(folder)
with open(os.path.join(folder, "session.json"), "w") as f:
    json.dump(session, f)
