#!/usr/bin/env python3
# pairstat.py FILE A B: the output of ab-pair.sh (lines "server answers
# cpu_ticks seconds", runs in ABBA pairs) as A ÷ B within each pair:
# median, a 95 % bootstrap interval of the median (fixed seed), range.
import random, statistics, sys
f, A, B = sys.argv[1:4]
runs = [l.split() for l in open(f) if l.strip()]
runs = [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in runs]
cpu = lambda r: r[2] * 10000 / r[1]  # µs per request (100 ticks/s)
rps = lambda r: r[1] / r[3]
pairs = []
for i in range(0, len(runs) - 1, 2):
    x = {r[0]: r for r in runs[i:i + 2]}
    pairs.append((rps(x[A]) / rps(x[B]), cpu(x[A]) / cpu(x[B]), cpu(x[A]), cpu(x[B])))
rng = random.Random(1)
for k, name in [(0, "requests/s"), (1, "server CPU/request")]:
    v = [p[k] for p in pairs]
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(4000))
    print(f"{A} / {B} {name}: {statistics.median(v):.3f} (95 % interval {meds[100]:.3f}-{meds[3899]:.3f}; "
          f"{min(v):.3f}-{max(v):.3f} over {len(v)} pairs)")
print(f"{A} CPU µs/request by pair:", " ".join(f"{p[2]:.1f}" for p in pairs))
print(f"{B} CPU µs/request by pair:", " ".join(f"{p[3]:.1f}" for p in pairs))
