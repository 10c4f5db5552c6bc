import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) < 7: continue
    rep, name = f[0], f[1]
    rows.setdefault(rep, {})[name] = (float(f[3]), float(f[4]), float(f[5]))
def med(xs):
    xs = sorted(xs); return "%.2f (%.2f–%.2f)" % (st.median(xs), xs[0], xs[-1])
for n in ("rpcedge-old", "rpcedge-new"):
    r = [rows[k][n][0]/rows[k]["floor"][0] for k in rows]
    c = [rows[k][n][1]/rows[k]["floor"][1] for k in rows]
    p = [rows[k][n][2]/rows[k]["floor"][2] for k in rows]
    print(f"{n} ÷ floor: rps {med(r)}  cpu {med(c)}  p99 {med(p)}")
c = [rows[k]["rpcedge-new"][1]/rows[k]["rpcedge-old"][1] for k in rows]
print("cpu new ÷ old:", "%.3f (%.3f–%.3f)" % (st.median(c), min(c), max(c)))
for n in ("floor", "rpcedge-old", "rpcedge-new"):
    print(n, "median cpu µs/req %.2f" % st.median([rows[k][n][1] for k in rows]), "rps %.0f" % st.median([rows[k][n][0] for k in rows]))
