#!/usr/bin/python3
"""status.py CMD [ARGS...]: runs CMD and frames its output for FileCheck.

Prints `$ CMD ARGS...` (CMD without its directory), then runs CMD with the
same standard output and error, then prints `exit status: N` (or
`killed by signal N`). Always exits 0, so that the test's FileCheck sees, and
checks, the status together with the output: a test whose CHECK lines cover
the first line to the last pins the entire output and the exit status.
"""

import os
import subprocess
import sys


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: status.py CMD [ARGS...]\n")
        return 2
    argv = sys.argv[1:]
    shown = [os.path.basename(argv[0])] + argv[1:]
    sys.stdout.write("$ " + " ".join(shown) + "\n")
    sys.stdout.flush()
    try:
        code = subprocess.call(argv)
    except OSError as e:
        sys.stdout.write("cannot run %s: %s\n" % (argv[0], e.strerror))
        return 0
    sys.stdout.flush()
    if code < 0:
        sys.stdout.write("killed by signal %d\n" % -code)
    else:
        sys.stdout.write("exit status: %d\n" % code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
