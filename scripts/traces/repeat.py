"""Repeat a trace's transient allocations REPS more times (a longer run).

Usage: repeat.py TRACE REPS OUT
"""
import gzip, sys
src, reps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ev = [l.strip().split(',') for l in gzip.open(src, 'rt') if l[0] in 'af']
freed = {e[1] for e in ev if e[0] == 'f'}
nid = 10**9
with gzip.open(out, 'wt') as f:
    for e in ev:
        f.write(','.join(e) + '\n')
    for r in range(reps):
        m = {}
        for e in ev:
            if e[0] == 'a' and e[1] in freed:
                nid += 1; m[e[1]] = nid
                f.write(f"a,{nid},{e[2]},{e[3]}\n")
            elif e[0] == 'f':
                f.write(f"f,{m[e[1]]}\n")
