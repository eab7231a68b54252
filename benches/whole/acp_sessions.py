#!/usr/bin/env python3
"""For scripts/bench.sh: an editor's day against `agent-loop acp` in one process. It opens N
sessions, prompting each once (as an editor opens a thread per task and may never close
one), then prompts the first again, which the agent has closed to make room and must open
again. Prints the agent's resident memory (MiB) and open descriptors after 16 sessions and at
the end, which should be the same but for noise: sessions beyond those held open cost nothing.

Usage: acp_sessions.py AGENT_LOOP BACKENDS_TOML BACKEND N (XDG_* and the key in the env)."""
import json
import os
import subprocess
import sys
import tempfile

binary, config, backend, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
work = tempfile.mkdtemp()
agent = subprocess.Popen(
    [binary, "--config", config, "--backend", backend, "--no-stream", "acp"],
    cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
)
next_id = 0


def call(method, params):
    global next_id
    next_id += 1
    agent.stdin.write(json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n")
    agent.stdin.flush()
    while True:
        message = json.loads(agent.stdout.readline())
        if message.get("id") == next_id and "method" not in message:
            if "error" in message:
                sys.exit(f"acp_sessions.py: {method}: {message['error']}")
            return message["result"]


def held():
    rss = next(line for line in open(f"/proc/{agent.pid}/status") if line.startswith("VmRSS"))
    return int(rss.split()[1]) / 1024, len(os.listdir(f"/proc/{agent.pid}/fd"))


call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
first = None
for n in range(1, count + 1):
    session = call("session/new", {"cwd": work, "mcpServers": []})["sessionId"]
    first = first or session
    call("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hello"}]})
    if n == 16:
        early = held()
call("session/prompt", {"sessionId": first, "prompt": [{"type": "text", "text": "again"}]})
late = held()
agent.stdin.close()
agent.wait()
print("%.1f %d %.1f %d" % (early + late))
