#!/usr/bin/env python3
"""Record the raw pseudo-terminal byte stream of a real interactive agent TUI, one turn,
against the scripted mock provider (mock_provider.py), for the `type = "pty"` presets.

    scripts/record-fixtures/record-pty.py [--case answer|allow|deny|wrap|tall|write] [--measure] CLI PROGRAM
    scripts/record-fixtures/record-pty.py --case allow qwen /path/to/qwen

CLI is `qwen` or `gemini`. Cases: `answer` (scenario `plain`: "The answer is 42."), `allow`
and `deny` (scenario `shell`: the model calls the TUI's shell tool to run `touch made.txt`;
the TUI asks for approval, which is answered with Enter (its first option, allow once) or
Escape (no); allowed, the model then answers "DONE touched"), `wrap` (as `allow`, with a
command longer than the TUI's approval box is wide, mock_tools.LONG_COMMAND, which it wraps
over rows), `tall` (the same with mock_tools.TALL_COMMAND, taller than the screen), and
`write` (scenario `write`: the TUI's write tool writes made.txt, asked about and allowed;
"DONE written").

The CLI runs on a 120x40 pty with TERM=xterm-256color, in a fresh HOME and working folder
under $REC_TMP (default /var/tmp/agent-loop-rec-pty) whose settings turn self-update off.
This script plays the terminal: it answers the cursor-position, device-attribute and
colour queries a TUI sends (as agent-loop's virtual screen does), waits (by wall clock:
recording is done once, by hand) until the TUI shows its input box and has been quiet,
types the message with bracketed paste, then, a second later, the Enter key (again if the
TUI swallowed it); for an approval, waits until the question shows and the screen is quiet,
types the answer; and stops once the turn's last text showed and the screen was quiet.

It prints the TUI's own answer time: from the typed Enter to the chunk that drew the
answer's last row (for `deny`, the TUI's last row). With --measure it only prints that;
otherwise it writes fixtures/pty/<cli>[-allow|-deny]/: `before.out` (everything printed
before the message was typed), `after.out` (everything after, until the answer settled or
the approval question showed), for an approval `keys` (what was typed to answer) and
`answered.out` (everything after that), `message` (what was typed), `VERSION`, `COMMAND`
(how it was run; the mock's port written PORT).
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

from mock_tools import LONG_COMMAND, TALL_COMMAND

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROWS, COLS = 40, 120
CASES = {
    # case: (mock scenario, message, answer keys, the text that ends the turn)
    "answer": ("plain", "What is six times seven? Answer in one short sentence.", None,
               "The answer is 42."),
    "allow": ("shell", "Create the file made.txt with touch.", b"\r", "DONE touched"),
    "deny": ("shell", "Create the file made.txt with touch.", b"\x1b", None),
    "wrap": ("shell", "Create the file made.txt with touch.", b"\r", "DONE touched"),
    "write": ("write", "Write the file made.txt.", b"\r", "DONE written"),
    "tall": ("shell", "Create the file made.txt with touch.", b"\r", "DONE touched"),
}
# What each case gives the mock besides its scenario ({work}: the working folder; qwen's
# write tool takes only an absolute path).
MOCK_ARGS = {"wrap": ["--shell-command", LONG_COMMAND],
             "tall": ["--shell-command", TALL_COMMAND],
             "write": ["--write-path", "{work}/made.txt"]}
APPROVAL = rb"Allow execution of|Apply this change\?"
ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-B]|\x1b[=>78]")


def plain(data):
    """What the bytes show, escape sequences left out (rows run together)."""
    return ANSI.sub(b"", data)


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
        # When each chunk came: (time, length of the output after it).
        self.chunks = []

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
            self.chunks.append((self.last, len(self.out)))
            answer_queries(data, self.fd)
        return True

    def wait(self, pattern, quiet, limit, since=0):
        """Until `pattern` shows in the output after byte `since` and it has been quiet
        `quiet` seconds."""
        end = time.time() + limit
        while time.time() < end:
            if not self.pump(0.2):
                return False
            if re.search(pattern, plain(bytes(self.out[since:]))) and \
                    time.time() - self.last >= quiet:
                return True
        return False

    def drawn(self, text, since):
        """When the chunk came that first showed `text` after byte `since`."""
        for at, end in self.chunks:
            if end > since and text in plain(bytes(self.out[since:end])):
                return at
        return None


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
        # qwen 0.15.10 reads enableAutoUpdate; without it, it updates itself with npm -g.
        settings = {"general": {"enableAutoUpdate": False, "disableAutoUpdate": True,
                                "disableUpdateNag": True}}
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
    args = sys.argv[1:]
    case, measure = "answer", False
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--case":
            case = args.pop(0)
        elif flag == "--measure":
            measure = True
        else:
            sys.exit("unknown option " + flag)
    cli, program = args
    scenario, message, keys, answer = CASES[case]
    name = cli if case == "answer" else "%s-%s" % (cli, case)
    rec_tmp = os.environ.get("REC_TMP", "/var/tmp/agent-loop-rec-pty")
    run = os.path.join(rec_tmp, name)
    subprocess.run(["rm", "-rf", run], check=True)
    home, work = os.path.join(run, "home"), os.path.join(run, "work")
    os.makedirs(home)
    os.makedirs(work)
    port_file = os.path.join(run, "port")
    mock = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_provider.py"),
                             "--scenario", scenario, "--port", "0", "--port-file", port_file,
                             "--log", os.path.join(run, "mock.log")]
                            + [a.format(work=work) for a in MOCK_ARGS.get(case, [])],
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        if os.path.exists(port_file) and open(port_file).read().strip():
            break
        time.sleep(0.05)
    port = int(open(port_file).read())
    env, cli_args = setup(cli, home, port)
    version = subprocess.run([program, "--version"], env=env, cwd=work, capture_output=True,
                             text=True, stdin=subprocess.DEVNULL).stdout.strip()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(work)
        os.execve(program, [program] + cli_args, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    os.kill(pid, signal.SIGWINCH)
    rec = Recorder(fd)
    answered = None
    try:
        if not rec.wait(rb"Type your message", 3.0, 90):
            sys.exit("%s never showed its input box:\n%r" % (cli, bytes(rec.out[-3000:])))
        before = bytes(rec.out)
        os.write(fd, b"\x1b[200~" + message.encode() + b"\x1b[201~")
        rec.pump(1.0)
        os.write(fd, b"\r")
        entered = time.time()
        # The turn goes on until the answer, or for an approval, the question.
        until = APPROVAL if keys else re.escape(answer.encode())
        ok = rec.wait(until, 3.0, 60, len(before))
        if not ok:
            # The first Enter is sometimes swallowed (see shared notes): one more.
            os.write(fd, b"\r")
            entered = time.time()
            ok = rec.wait(until, 3.0, 60, len(before))
        if not ok:
            sys.exit("%s never showed %r:\n%r" % (cli, until, bytes(rec.out[-3000:])))
        after = bytes(rec.out[len(before):])
        if keys:
            os.write(fd, keys)
            if answer:
                ok = rec.wait(re.escape(answer.encode()), 3.0, 60, len(before) + len(after))
            else:
                ok = rec.wait(rb"Type your message", 3.0, 60, len(before) + len(after))
            if not ok:
                sys.exit("%s never ended its turn after %r:\n%r" % (
                    cli, keys, bytes(rec.out[-3000:])))
            answered = bytes(rec.out[len(before) + len(after):])
        shown = rec.drawn(answer.encode(), len(before)) if answer else rec.chunks[-1][0]
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        mock.kill()
        mock.wait()
    what = "answer" if answer else "last row"
    print("%s %s (%s): Enter to the %s drawn: %.2f s%s" % (
        cli, case, version, what, shown - entered,
        " (the approval question answered by the script in between)" if keys else ""))
    if measure:
        return
    dest = os.path.join(ROOT, "fixtures", "pty", name)
    subprocess.run(["rm", "-rf", dest], check=True)
    os.makedirs(dest)
    files = [("before.out", before), ("after.out", after), ("message", message.encode()),
             ("VERSION", (version + "\n").encode())]
    if keys:
        files += [("keys", keys), ("answered.out", answered)]
    for file, data in files:
        with open(os.path.join(dest, file), "wb") as f:
            f.write(data)
    shown = {k: v for k, v in env.items() if k not in ("PATH", "HOME")}
    with open(os.path.join(dest, "COMMAND"), "w") as f:
        f.write("HOME=<fresh> %s %s %s\n" % (
            " ".join("%s=%s" % (k, v.replace(str(port), "PORT")) for k, v in sorted(shown.items())),
            cli, " ".join(cli_args)))
        f.write("pty %dx%d; mock scenario %s; the bracketed-paste message, then Enter a second "
                "later (again if the first was swallowed)" % (
                    COLS, ROWS, " ".join([scenario] + [repr(a) for a in MOCK_ARGS.get(case, [])])))
        if keys:
            f.write("; once the approval question showed and the screen was quiet 3 s, %r "
                    "(after.out ends there, answered.out follows)" % keys)
        f.write("; the recording ends once the turn's end showed and the screen was quiet "
                "3 s\n")
        for rel in (".qwen/settings.json", ".gemini/settings.json"):
            path = os.path.join(home, rel)
            if os.path.exists(path):
                f.write("~/%s: %s\n" % (rel, open(path).read()))
    print("recorded %s: %d + %d + %d bytes" % (
        name, len(before), len(after), len(answered or b"")))


if __name__ == "__main__":
    main()
