import sys,statistics as st,re
for f in sys.argv[1:]:
    rows=[l.split() for l in open(f) if l.strip()]
    data={}
    for r in rows:
        name=r[0]; ans=int(r[1]); ticks=int(r[2]); ev=dict(x.split('=') for x in r[4:] if '=' in x)
        data.setdefault(name,[]).append((ans,ticks,{k:int(v) for k,v in ev.items()}))
    print("==",f)
    for name,v in data.items():
        cpu=[t*10000/a for a,t,e in v]  # us per request (ticks 10ms)
        sysr=[e['sys_enter']/e['sys_enter_write'] for a,t,e in v]
        rd=[e['sys_enter_read']/e['sys_enter_write'] for a,t,e in v]
        cs=[e['context-switches']/e['sys_enter_write']*1000 for a,t,e in v]
        ep=[e['sys_enter_epoll_pwait']/e['sys_enter_write']*1000 for a,t,e in v]
        print("%-11s req/s %7.0f  cpu us/req %.2f  syscalls/write %.3f reads/write %.3f ctxsw/1000w %.2f epoll/1000w %.1f"%(name, st.median([a/3 for a,t,e in v]), st.median(cpu), st.median(sysr), st.median(rd), st.median(cs), st.median(ep)))
    # paired ratio (rows in order: pairs of consecutive A,B)
    A=[r for r in rows if r[0]=='rpcedge']; B=[r for r in rows if r[0]!='rpcedge']
    ratios=[(int(a[2])/int(a[1]))/(int(b[2])/int(b[1])) for a,b in zip(A,B)]
    rq=[int(a[1])/int(b[1]) for a,b in zip(A,B)]
    print("  rpcedge/floor-wide CPU per request: median %.3f  (%s)  req/s %.3f"%(st.median(ratios), " ".join("%.3f"%x for x in sorted(ratios)), st.median(rq)))
