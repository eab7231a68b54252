#!/usr/bin/env python3
"""Memory and CPU of `agent-loop telegram`: idle, and with 20 chats each running a turn at
once against a fake agent (fixtures/agents/sleepy.sh, 1 s a turn). A mock of the Bot API on
127.0.0.1 feeds the messages and counts the answers. Prints Markdown table rows.

Usage: benches/telegram/bench.py BINARY   (scripts/bench.sh runs it with the release build)
"""
import json, os, signal, subprocess, sys, tempfile, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN = "123456:BENCH-token"
CHATS = 20
IDLE_S = 10
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

cond = threading.Condition()
updates, answers, ready = [], set(), threading.Event()


class Api(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        method = self.path.rsplit("/", 1)[-1]
        result = True
        if method == "getUpdates":
            offset, deadline = body.get("offset", 0), time.time() + body.get("timeout", 0)
            with cond:
                updates[:] = [u for u in updates if u["update_id"] >= offset]
                while not updates and time.time() < deadline:
                    cond.wait(deadline - time.time())
                result = list(updates)
        elif method == "sendMessage":
            if "42" in body.get("text", ""):
                with cond:
                    answers.add(body["chat_id"])
                    cond.notify_all()
            result = {"message_id": 1, "date": 0, "chat": {"id": body["chat_id"]}}
        elif method == "setMyCommands":
            ready.set()
        data = json.dumps({"ok": True, "result": result}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def proc(pid):
    """(resident KiB, peak resident KiB, CPU seconds of the process itself)."""
    status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status") if ":" in l)
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return int(status["VmRSS"].split()[0]), int(status["VmHWM"].split()[0]), cpu


def main():
    binary = os.path.abspath(sys.argv[1])
    server = ThreadingHTTPServer(("127.0.0.1", 0), Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    work = tempfile.mkdtemp()
    config = os.path.join(work, "backends.toml")
    with open(config, "w") as f:
        f.write(f'[backends.sleepy]\ncommand = "{ROOT}/fixtures/agents/sleepy.sh"\n')
    env = dict(os.environ, TELEGRAM_BOT_TOKEN=TOKEN, SLEEPY_S="1",
               TELEGRAM_API_URL=f"http://127.0.0.1:{server.server_port}",
               XDG_CONFIG_HOME=os.path.join(work, "xdg"), XDG_DATA_HOME=os.path.join(work, "data"),
               AGENT_LOOP_TELEGRAM_USERS=",".join(str(i) for i in range(1, CHATS + 1)))
    bot = subprocess.Popen([binary, "--config", config, "telegram", "--backend", "sleepy",
                            "--max-concurrent", str(CHATS)], cwd=work, env=env,
                           stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not ready.wait(30):
            sys.exit("the bot did not start")
        _, _, cpu0 = proc(bot.pid)
        time.sleep(IDLE_S)
        idle_rss, _, cpu1 = proc(bot.pid)
        idle_cpu = (cpu1 - cpu0) / IDLE_S * 100
        start = time.time()
        with cond:
            for chat in range(1, CHATS + 1):
                updates.append({"update_id": chat, "message": {
                    "message_id": chat, "date": 0, "text": "what is the answer?",
                    "from": {"id": chat, "is_bot": False, "first_name": "B"},
                    "chat": {"id": chat, "type": "private"}}})
            cond.notify_all()
            while len(answers) < CHATS and time.time() - start < 120:
                cond.wait(1)
        elapsed = time.time() - start
        busy_rss, peak, cpu2 = proc(bot.pid)
        if len(answers) < CHATS:
            sys.exit(f"only {len(answers)} of {CHATS} chats answered")
        bot.send_signal(signal.SIGTERM)
        code = bot.wait(60)
    finally:
        if bot.poll() is None:
            bot.kill()
    print(f"| Telegram bot idle: resident memory, CPU | {idle_rss / 1024:.1f} MiB, {idle_cpu:.2f} % of a core over {IDLE_S} s | |")
    print(f"| Telegram bot, {CHATS} chats each running a 1 s turn at once: wall time, peak memory, the bot's own CPU | "
          f"{elapsed:.2f} s, {peak / 1024:.1f} MiB, {cpu2 - cpu1:.2f} s (exit {code} on SIGTERM) | |")


if __name__ == "__main__":
    main()
