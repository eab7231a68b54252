#!/usr/bin/env python3
"""Pass stdin through to stdout unchanged, and write to TIMING_FILE when each read of it came.

record.sh's timing mode (PIECE_DELAY) runs a CLI's stdout through this: with the mock's
pieces that far apart, a CLI that prints its answer as it comes has lines whose times are
spread over the pieces, one that prints it whole has them all after the last piece.

Usage: CLI | stamp.py TIMING_FILE > stdout
Each line of TIMING_FILE: seconds since start, bytes read, the first 60 characters read.
The last line, `EOF`, is when stdout closed (the CLI exited).
"""

import os
import sys
import time


def main():
    t0 = time.monotonic()
    with open(sys.argv[1], "w") as timing:
        while True:
            data = os.read(0, 65536)
            if not data:
                break
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
            text = data.decode("utf-8", "replace")
            timing.write("%8.3f %6d %r\n" % (time.monotonic() - t0, len(data), text[:60]))
        timing.write("%8.3f EOF\n" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
