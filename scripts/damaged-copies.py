#!/usr/bin/env python3
"""Damaged copies of .hbg files, for checking syntax errors across changes.

    scripts/damaged-copies.py DIR COUNT FILE...

Writes DIR/NAME.K.hbg for K = 0..COUNT-1: FILE with one to three tokens
deleted, duplicated or replaced by another token of the same file, chosen
by a generator seeded with NAME and K (the same copies on every run).
Run two builds' `hbgc check` and `hbgc run --emit ast` on them and
compare the outputs (docs/performance.md, "Parsing").
"""
import os
import random
import re
import sys

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"\n]*"?|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+'
                   r'|[A-Za-z_]\w*|->|<=|>=|\s+|.', re.S)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.strip())
    out, count = sys.argv[1], int(sys.argv[2])
    for path in sys.argv[3:]:
        tokens = TOKEN.findall(open(path).read())
        real = [i for i, t in enumerate(tokens)
                if not t.isspace() and not t.startswith(('//', '/*'))]
        name = os.path.basename(path)[:-len('.hbg')]
        for k in range(count):
            rng = random.Random(f'{name}:{k}')
            copy = list(tokens)
            for _ in range(rng.randint(1, 3)):
                i = rng.choice(real)
                edit = rng.randrange(3)
                if edit == 0:
                    copy[i] = ''
                elif edit == 1:
                    copy[i] = copy[i] + ' ' + copy[i]
                else:
                    copy[i] = tokens[rng.choice(real)]
            with open(os.path.join(out, f'{name}.{k}.hbg'), 'w') as f:
                f.write(''.join(copy))


if __name__ == '__main__':
    main()
