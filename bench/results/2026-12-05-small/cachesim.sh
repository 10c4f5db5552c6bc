#!/bin/bash
# cgsim.sh BIN SERVER D1 LL: cachegrind misses per request (1400-400 batches)
bin=$1 srv=$2 d1=$3 ll=$4
for n in 400 1400; do
GOMAXPROCS=1 GOGC=off GODEBUG=cpu.rdtscp=off,asyncpreemptoff=1 valgrind --tool=cachegrind --cache-sim=yes --D1=$d1 --LL=$ll --I1=32768,8,64 --cachegrind-out-file=/tmp/st/cgs.$srv.$n $bin -test.run '^$' -test.bench "BenchmarkPipeline\$/server=$srv\$" -test.benchtime ${n}x > /dev/null 2>&1
done
python3 - "$srv" <<'PY'
import sys
srv=sys.argv[1]
def summ(f):
    ev=summ_=None
    for l in open(f):
        if l.startswith('events:'): ev=l.split()[1:]
        if l.startswith('summary:'): summ_=[int(x) for x in l.split()[1:]]
    return dict(zip(ev,summ_))
a=summ(f'/tmp/st/cgs.{srv}.400'); b=summ(f'/tmp/st/cgs.{srv}.1400')
print(srv, ' '.join(f"{k}={(b[k]-a[k])/16000:.1f}" for k in ['Ir','Dr','Dw','D1mr','D1mw','DLmr','DLmw']))
PY
