#!/usr/bin/env python3
"""Compares two agent-loop binaries honestly: `scripts/bench.sh --compare A B` calls it.

A figure of one binary taken on one day says little on a shared machine: byte-identical
copies of a binary start up to a millisecond apart depending on how the file sits in the page
cache, and a busy spell of the machine moves every figure. So each binary is copied with
`cp` first, and every round runs a floor (what any program pays: `/bin/true`; the bare fake
agent of fixtures/agents/sleepy.sh) and the two binaries once each, in a random order. A
binary's own time is its run minus the floor's in the same round, and the change is the
difference of the two binaries in the same round. Each is reported as the median of the
rounds with a distribution-free 95 % interval (order statistics of the binomial), and, where
valgrind is installed, with the instructions agent-loop's own process runs (callgrind), the
figure to claim a change by. The CLI call's rounds also run coreutils' `timeout` around the
bare agent: what any supervising process costs on this machine, to read the figures by.

    scripts/bench-compare.py [--rounds N] A_BINARY B_BINARY [A_LABEL B_LABEL]
"""

import argparse
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AGENT = os.path.join(ROOT, "fixtures", "agents", "sleepy.sh")
PROMPT = "what is the answer?"


def interval(values):
    """The median of `values` and its distribution-free 95 % interval: the order statistics
    k and n-k+1 (1-based), k the largest with P(Binomial(n, 1/2) < k) <= 2.5 %."""
    xs = sorted(values)
    n = len(xs)
    median = (xs[(n - 1) // 2] + xs[n // 2]) / 2
    below, k = 0.0, 0
    for j in range(n + 1):
        below += math.comb(n, j) / 2**n
        if below > 0.025:
            k = j
            break
    if k == 0:
        return median, xs[0], xs[-1]
    return median, xs[k - 1], xs[n - k]


def run_ms(argv, env):
    """The wall time of one run in ms (stdin empty, output dropped); fails loudly."""
    start = time.perf_counter_ns()
    status = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    took = (time.perf_counter_ns() - start) / 1e6
    if status != 0:
        sys.exit(f"bench-compare: {' '.join(argv)} exited with {status}")
    return took


def paired(floor, a, b, rounds, env, reference=None):
    """Own times of A and B (run minus floor) and B minus A, per round, in a random order;
    with a `reference` program, its own time too, run in the same rounds (else [])."""
    runs = {"floor": floor, "a": a, "b": b}
    if reference:
        runs["reference"] = reference
    own_a, own_b, change, own_reference = [], [], [], []
    for r in range(rounds + 3):
        order = list(runs)
        random.shuffle(order)
        took = {name: run_ms(runs[name], env) for name in order}
        if r < 3:
            continue  # warm-up: the page cache and the branch predictors
        own_a.append(took["a"] - took["floor"])
        own_b.append(took["b"] - took["floor"])
        change.append(took["b"] - took["a"])
        if reference:
            own_reference.append(took["reference"] - took["floor"])
    return own_a, own_b, change, own_reference


def instructions(argv, env):
    """Instructions of the main process (children not traced) by callgrind; None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    with tempfile.NamedTemporaryFile() as out:
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}"] + argv,
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    return int(found.group(1)) if found else None


def fmt(triple):
    median, low, high = triple
    return f"{median:.2f} ms ({low:.2f} to {high:.2f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "150")))
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("labels", nargs="*")
    args = parser.parse_args()
    labels = args.labels[:2] if len(args.labels) >= 2 else ["A", "B"]
    work = tempfile.mkdtemp(prefix="bench-compare.")
    try:
        a, b = os.path.join(work, "a"), os.path.join(work, "b")
        for source, copy in ((args.a, a), (args.b, b)):
            subprocess.run(["cp", source, copy], check=True)
        env = {"PATH": "/usr/bin:/bin", "HOME": work, "XDG_CONFIG_HOME": os.path.join(work, "config"),
               "XDG_DATA_HOME": os.path.join(work, "data"), "TMPDIR": work, "LANG": "C.UTF-8"}
        config = os.path.join(work, "backends.toml")
        with open(os.path.join(ROOT, "benches", "whole", "backends.toml")) as f:
            text = f.read().replace("ROOT", ROOT)
        with open(config, "w") as f:
            f.write(text)
        cli = lambda binary: [binary, "--no-save", "--config", config, "--backend", "sleepy",
                              "--display", "plain", PROMPT]
        # What any supervising program pays on this machine: coreutils' `timeout`, a small C
        # program that only starts the agent and waits for it. Machines differ several-fold in
        # what a process costs; this line says how this one compares.
        timeout = shutil.which("timeout", path=env["PATH"])
        reference = [timeout, "600", AGENT] if timeout else None
        rows, notes = [], []
        for name, floor_name, floor, argv, ref in (
            ("`--version`", "`/bin/true`", ["/bin/true"], lambda binary: [binary, "--version"], None),
            ("a CLI call", "the bare agent", [AGENT], cli, reference),
        ):
            own_a, own_b, change, own_ref = paired(floor, argv(a), argv(b), args.rounds, env, ref)
            if own_ref:
                notes.append(f"In the same rounds, coreutils' `timeout` (a C program that only starts the agent "
                             f"and waits for it) took {fmt(interval(own_ref))} above the bare agent.")
            ins = [instructions(argv(binary), env) for binary in (a, b)]
            ins_text = "" if None in ins else \
                f"{ins[0] / 1e6:.2f} M | {ins[1] / 1e6:.2f} M ({(ins[1] - ins[0]) / ins[0] * 100:+.1f} %)"
            rows.append((f"{name} above {floor_name}", fmt(interval(own_a)), fmt(interval(own_b)),
                         fmt(interval(change)), ins_text))
        print(f"{args.rounds} paired rounds in random order, medians with 95 % intervals; "
              f"times are this machine's, today ({time.strftime('%Y-%m-%d')}, load {os.getloadavg()[0]:.1f}).")
        print()
        print(f"| measure | {labels[0]} | {labels[1]} | {labels[1]} − {labels[0]} (paired) | instructions {labels[0]} | {labels[1]} |")
        print("| --- | --- | --- | --- | --- | --- |")
        for row in rows:
            cells = list(row[:4]) + (row[4].split(" | ") if row[4] else ["no valgrind", ""])
            print("| " + " | ".join(cells) + " |")
        for note in notes:
            print()
            print(note)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
