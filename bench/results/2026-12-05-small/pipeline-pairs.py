# pipeline-pairs.py NAME: summarises NAME-old.txt and NAME-new.txt (beside
# this script), BenchmarkPipeline lines of interleaved rounds, in ns per
# request: medians per build and server, the pipeline above fasthttp
# (rpcedge - floor-stream, per round), and rpcedge after / before paired
# per round.
import os, statistics as st, sys

here = os.path.dirname(os.path.abspath(__file__))
d = {}
for v in ['old', 'new']:
    for l in open(os.path.join(here, f'{sys.argv[1]}-{v}.txt')):
        f = l.split()
        d.setdefault((v, f[1].split('server=')[1]), []).append(float(f[3]) / 16)
for k, x in sorted(d.items()):
    print(k, f"median {st.median(x):.0f} min {min(x):.0f} max {max(x):.0f}")
o = [a - b for a, b in zip(d[('old', 'rpcedge')], d[('old', 'floor-stream')])]
n = [a - b for a, b in zip(d[('new', 'rpcedge')], d[('new', 'floor-stream')])]
print("above fasthttp old", f"{st.median(o):.0f}", "new", f"{st.median(n):.0f}")
r = [b / a for a, b in zip(d[('old', 'rpcedge')], d[('new', 'rpcedge')])]
print("rpcedge new/old paired median", f"{st.median(r):.3f}", "faster in", sum(1 for x in r if x < 1), "of", len(r))
