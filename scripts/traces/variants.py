"""Derived traces: "streams" (big buffers on stream 1, some middle ones on
stream 2, as FSDP all-gathers) or "small" (every size divided by 40).

Usage: variants.py TRACE streams|small OUT
"""
import gzip, sys
src, kind, out = sys.argv[1], sys.argv[2], sys.argv[3]
ev = [l.strip().split(',') for l in gzip.open(src, 'rt') if l[0] in 'af']
with gzip.open(out, 'wt') as f:
    for i, e in enumerate(ev):
        if e[0] == 'a':
            size, stream = int(e[2]), int(e[3])
            if kind == 'streams':
                # big buffers on stream 1, mid on stream 2, rest on 0
                stream = 1 if size >= 32 << 20 else (2 if size >= 4 << 20 and int(e[1]) % 3 == 0 else 0)
            elif kind == 'small':
                size = max(1, size // 40)
            f.write(f"a,{e[1]},{size},{stream}\n")
        else:
            f.write(','.join(e) + '\n')
