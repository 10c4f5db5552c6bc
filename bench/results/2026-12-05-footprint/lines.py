#!/usr/bin/env python3
# lines.py A B OBJDUMP: the code a request runs through, from two
# callgrind profiles of BenchmarkPipeline (valgrind --tool=callgrind
# --dump-instr=yes --compress-pos=no --compress-strings=no, 400 and 1,400
# batches of 16 requests: A and B) and `go tool objdump` of the binary.
# An instruction is on the request's path when it ran at least half a time
# a request (B − A over 16,000 requests); per package: those instructions,
# their bytes, the 64-byte lines they touch, and the lines they would fill
# packed (each function's bytes / 64, rounded up).
import collections, math, re, sys

def load(f):
    cnt, fnof, fn, skip = collections.Counter(), {}, None, False
    for l in open(f):
        if skip:
            skip = False
            continue
        if l.startswith('calls='):
            skip = True  # the next line is the call's inclusive cost
        elif l.startswith('fn='):
            fn = l[3:].strip()
        elif l.startswith('0x'):
            p = l.split()
            if len(p) > 2:
                a = int(p[0], 16)
                cnt[a] += int(p[2])
                fnof[a] = fn
    return cnt, fnof

a, _ = load(sys.argv[1])
b, fnof = load(sys.argv[2])
size = {}
for l in open(sys.argv[3]):
    m = re.match(r'\s+\S+:\d+\s+0x([0-9a-f]+)\s+([0-9a-f]+)\s', l)
    if m:
        size[int(m.group(1), 16)] = len(m.group(2)) // 2
PKGS = ['rpcedge/decode', 'rpcedge/fastserver', 'rpcedge/mcp', 'valyala/fasthttp', 'runtime']
pkg = lambda fn: next((p.split('/')[-1] for p in PKGS if p in (fn or '')), 'other')
per = collections.defaultdict(lambda: [0, 0, set(), 0.0])
fnbytes = collections.Counter()
for addr, c in b.items():
    d = (c - a.get(addr, 0)) / 16000
    if d < 0.5:
        continue
    s = size.get(addr, 4)
    fnbytes[fnof[addr]] += s
    for k in (pkg(fnof[addr]), 'all'):
        v = per[k]
        v[0] += 1; v[1] += s; v[3] += d
        v[2].update(range(addr >> 6, ((addr + s - 1) >> 6) + 1))
packed = collections.Counter()
for fn, n in fnbytes.items():
    packed[pkg(fn)] += math.ceil(n / 64)
    packed['all'] += math.ceil(n / 64)
print(f"{'package':11} {'instructions':>12} {'executed':>9} {'bytes':>7} {'lines':>6} {'packed':>7}")
for k, v in sorted(per.items(), key=lambda x: -len(x[1][2])):
    print(f"{k:11} {v[0]:12d} {v[3]:9.0f} {v[1]:7d} {len(v[2]):6d} {packed[k]:7d}")
