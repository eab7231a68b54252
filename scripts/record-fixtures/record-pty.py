#!/usr/bin/env python3
"""Record the raw pseudo-terminal byte stream of a real interactive agent TUI, one turn,
against the scripted mock provider (mock_provider.py, scenario `plain`), for the
`type = "pty"` presets (fixtures/pty/<cli>/).

    scripts/record-fixtures/record-pty.py qwen   /path/to/qwen
    scripts/record-fixtures/record-pty.py gemini /path/to/gemini

The CLI runs on a 120x40 pty with TERM=xterm-256color, in a fresh HOME and working folder
under $REC_TMP (default /var/tmp/agent-loop-rec-pty) whose settings turn self-update off.
This script plays the terminal: it answers the cursor-position, device-attribute and
colour queries a TUI sends (as agent-loop's virtual screen does), waits (by wall clock:
recording is done once, by hand) until the TUI shows its input box and has been quiet,
types the message with bracketed paste, then the Enter key (again if the TUI swallowed
it), waits until the answer is there and the screen is quiet, and quits.

Writes fixtures/pty/<cli>/: `before.out` (everything printed before the message was
typed), `after.out` (everything after, until the answer settled), `message` (what was
typed), `VERSION`, `COMMAND` (how it was run; the mock's port written PORT).
"""

import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import fcntl
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROWS, COLS = 40, 120
MESSAGE = "What is six times seven? Answer in one short sentence."
ANSWER = "The answer is 42."


def answer_queries(data, fd):
    """The terminal's answers to what the TUI asks."""
    for m in re.finditer(rb"\x1b\[(\??)(\d*)([nc])|\x1b\](1[01]);\?", data):
        if m.group(4):
            colour = b"c0c0/c0c0/c0c0" if m.group(4) == b"10" else b"0000/0000/0000"
            os.write(fd, b"\x1b]" + m.group(4) + b";rgb:" + colour + b"\x1b\\")
        elif m.group(3) == b"n" and m.group(2) == b"6":
            os.write(fd, b"\x1b[1;1R")
        elif m.group(3) == b"n" and m.group(2) == b"5":
            os.write(fd, b"\x1b[0n")
        elif m.group(3) == b"c" and not m.group(1):
            os.write(fd, b"\x1b[?62;22c")


class Recorder:
    def __init__(self, fd):
        self.fd = fd
        self.out = bytearray()
        self.last = time.time()

    def pump(self, seconds):
        end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([self.fd], [], [], max(0.0, end - time.time()))
            if not r:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            self.out += data
            self.last = time.time()
            answer_queries(data, self.fd)
        return True

    def wait(self, pattern, quiet, limit):
        """Until `pattern` is in the output and it has been quiet `quiet` seconds."""
        end = time.time() + limit
        while time.time() < end:
            if not self.pump(0.2):
                return False
            if re.search(pattern, self.out) and time.time() - self.last >= quiet:
                return True
        return False


def setup(cli, home, port):
    env = {
        "HOME": home,
        "PATH": os.environ["PATH"],
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        "COLUMNS": str(COLS),
        "LINES": str(ROWS),
    }
    if cli == "qwen":
        os.makedirs(os.path.join(home, ".qwen"), exist_ok=True)
        settings = {"general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
        with open(os.path.join(home, ".qwen", "settings.json"), "w") as f:
            json.dump(settings, f)
        env.update(OPENAI_BASE_URL="http://127.0.0.1:%d/v1" % port,
                   OPENAI_API_KEY="mock-key", OPENAI_MODEL="mock-model")
        return env, ["--approval-mode", "default"]
    os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
    with open(os.path.join(home, ".gemini", "settings.json"), "w") as f:
        json.dump(settings, f)
    env.update(GOOGLE_GEMINI_BASE_URL="http://127.0.0.1:%d" % port,
               GEMINI_API_KEY="mock-key", GEMINI_CLI_TRUST_WORKSPACE="true")
    return env, ["-m", "gemini-2.5-flash"]


def main():
    cli, program = sys.argv[1], sys.argv[2]
    rec_tmp = os.environ.get("REC_TMP", "/var/tmp/agent-loop-rec-pty")
    run = os.path.join(rec_tmp, cli)
    subprocess.run(["rm", "-rf", run], check=True)
    home, work = os.path.join(run, "home"), os.path.join(run, "work")
    os.makedirs(home)
    os.makedirs(work)
    port_file = os.path.join(run, "port")
    mock = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_provider.py"),
                             "--scenario", "plain", "--port", "0", "--port-file", port_file,
                             "--log", os.path.join(run, "mock.log")])
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.05)
    port = int(open(port_file).read())
    env, args = setup(cli, home, port)
    version = subprocess.run([program, "--version"], env=env, cwd=work, capture_output=True,
                             text=True, stdin=subprocess.DEVNULL).stdout.strip()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(work)
        os.execve(program, [program] + args, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    rec = Recorder(fd)
    try:
        if not rec.wait(rb"Type your message", 3.0, 90):
            sys.exit("%s never showed its input box:\n%r" % (cli, bytes(rec.out[-3000:])))
        before = bytes(rec.out)
        os.write(fd, b"\x1b[200~" + MESSAGE.encode() + b"\x1b[201~")
        rec.pump(1.0)
        os.write(fd, b"\r")
        ok = rec.wait(rb"42", 3.0, 60)
        if not ok:
            # The first Enter is sometimes swallowed (see shared notes): one more.
            os.write(fd, b"\r")
            ok = rec.wait(rb"42", 3.0, 60)
        if not ok:
            sys.exit("%s never answered:\n%r" % (cli, bytes(rec.out[-3000:])))
        after = bytes(rec.out[len(before):])
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        mock.kill()
        mock.wait()
    dest = os.path.join(ROOT, "fixtures", "pty", cli)
    os.makedirs(dest, exist_ok=True)
    for name, data in [("before.out", before), ("after.out", after),
                       ("message", MESSAGE.encode()), ("VERSION", (version + "\n").encode())]:
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
    shown = {k: v for k, v in env.items() if k not in ("PATH", "HOME")}
    with open(os.path.join(dest, "COMMAND"), "w") as f:
        f.write("HOME=<fresh> %s %s %s\n" % (
            " ".join("%s=%s" % (k, v.replace(str(port), "PORT")) for k, v in sorted(shown.items())),
            cli, " ".join(args)))
        f.write("pty %dx%d; the bracketed-paste message, then Enter (a second Enter if the first "
                "was swallowed); after.out ends once the answer showed and the screen was quiet "
                "3 s\n" % (COLS, ROWS))
        for rel in (".qwen/settings.json", ".gemini/settings.json"):
            path = os.path.join(home, rel)
            if os.path.exists(path):
                f.write("~/%s: %s\n" % (rel, open(path).read()))
    print("recorded %s (%s): %d + %d bytes" % (cli, version, len(before), len(after)))


if __name__ == "__main__":
    main()
