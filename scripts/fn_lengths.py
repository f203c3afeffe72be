#!/usr/bin/env python3
"""List Rust functions longer than a limit (default 80 lines).

Usage: scripts/fn_lengths.py [LIMIT] FILE...   (exit 1 if any is longer)
A function runs from its `fn` line to the line of its closing brace;
braces inside string and char literals and comments are ignored.
"""
import re
import sys

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+"C")\s+)*fn\s+(\w+)')


def code_only(line):
    """The line without string/char literals and // comments."""
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split('//', 1)[0]


def long_functions(path, limit):
    lines = open(path, encoding='utf-8').read().split('\n')
    out = []
    for i, line in enumerate(lines):
        m = FN.match(line)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(lines)):
            c = code_only(lines[j])
            if not opened and ';' in c and '{' not in c:
                break  # a declaration without a body
            depth += c.count('{') - c.count('}')
            opened = opened or '{' in c
            if opened and depth <= 0:
                n = j - i + 1
                if n > limit:
                    out.append((path, i + 1, m.group(5), n))
                break
    return out


def main():
    args = sys.argv[1:]
    limit = 80
    if args and args[0].isdigit():
        limit = int(args.pop(0))
    found = [f for p in args for f in long_functions(p, limit)]
    for path, line, name, n in found:
        print(f'{path}:{line}: fn {name} is {n} lines')
    sys.exit(1 if found else 0)


if __name__ == '__main__':
    main()
