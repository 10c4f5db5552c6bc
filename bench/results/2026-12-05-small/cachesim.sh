#!/bin/bash
# cachesim.sh BIN SERVER D1 LL: cachegrind's simulated cache misses per
# request of BenchmarkPipeline (the bench test binary BIN, built with
# go test -c in bench/), as bench/instructions.sh counts instructions:
# 1,400 - 400 batches of 16 requests, GOMAXPROCS=1, the collector off.
# I1 is 32 KiB 8-way; D1 and LL as given (size,assoc,line), e.g.
#   cachesim.sh ./bench.test rpcedge 4096,4,64 65536,8,64
# The cachegrind outputs are left in $OUT (default: a new temporary
# directory, printed) for cg_annotate.
bin=$1 srv=$2 d1=$3 ll=$4
out=${OUT:-$(mktemp -d)}
for n in 400 1400; do
GOMAXPROCS=1 GOGC=off GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=yes --D1=$d1 --LL=$ll --I1=32768,8,64 --cachegrind-out-file=$out/cgs.$srv.$n $bin -test.run '^$' -test.bench "BenchmarkPipeline\$/server=$srv\$" -test.benchtime ${n}x > /dev/null 2>&1
done
python3 - "$out" "$srv" <<'PY'
import sys
out, srv = sys.argv[1], sys.argv[2]
def summ(f):
    ev = s = None
    for l in open(f):
        if l.startswith('events:'): ev = l.split()[1:]
        if l.startswith('summary:'): s = [int(x) for x in l.split()[1:]]
    return dict(zip(ev, s))
a = summ(f'{out}/cgs.{srv}.400'); b = summ(f'{out}/cgs.{srv}.1400')
print(srv, ' '.join(f"{k}={(b[k]-a[k])/16000:.1f}" for k in a), f"(outputs in {out})")
PY
