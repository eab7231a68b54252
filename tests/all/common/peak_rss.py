"""Runs a command as a child of this small process and writes its peak resident memory in KiB
(ru_maxrss from wait4) to a file; exits as the command did (128 + N for signal N).

usage: peak_rss.py OUT_FILE COMMAND [ARG...]

Why not wait4 in the test itself: a child's ru_maxrss counts the memory of the process it was
spawned from (exec records the old address space's high-water mark, and a vfork/posix_spawn
child's old address space is its parent's), so a child of the test harness reports at least
the harness's own peak, which depends on what other tests ran beside it. Forked from here,
the floor is this interpreter's few MiB.
"""
import os
import sys

out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{usage.ru_maxrss}\n")
code = os.waitstatus_to_exitcode(status)
sys.exit(128 - code if code < 0 else code)
