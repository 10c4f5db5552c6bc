import sys, statistics as st, re
def rounds(f):
    out=[]; cur={}
    for l in open(f):
        m = re.match(r'BenchmarkPipeline/server=(\S+?)(-\d+)?\s', l)
        if not m or 'cpu-ns/request' not in l: continue
        cur[m.group(1)] = float(l.split()[4])
        if m.group(1) == 'rpcedge': out.append(cur); cur={}
    return out
a, b = rounds(sys.argv[1]), rounds(sys.argv[2])
for name, r in (("before", a), ("after", b)):
    g = [x['rpcedge']-x['floor-stream'] for x in r]
    q = [x['rpcedge']/x['floor'] for x in r]
    print(f"{name}: rpcedge {st.median([x['rpcedge'] for x in r]):.0f}  floor-stream {st.median([x['floor-stream'] for x in r]):.0f}  floor {st.median([x['floor'] for x in r]):.0f}  gap(rpcedge-floor-stream) median {st.median(g):.0f} ({min(g):.0f}-{max(g):.0f})  rpcedge/floor {st.median(q):.2f}")
p = sorted(y['rpcedge']/x['rpcedge'] for x, y in zip(a, b))
print("rpcedge after/before paired median %.3f (%.3f-%.3f), faster in %d of %d" % (st.median(p), p[0], p[-1], sum(v<1 for v in p), len(p)))
