#!/usr/bin/env python3
"""The pipeline's stages in instructions per request.

    stages.py CALLGRIND_OUT_400 CALLGRIND_OUT_1400

The two files are callgrind's profiles of BenchmarkPipeline/server=rpcedge at
400 and 1,400 batches (bench/instructions.sh's runs, kept with
--callgrind-out-file). Each stage is the inclusive count of the calls that
make it, taken from callgrind_annotate's call tree, 1,400 − 400 batches of
16 requests apart: per request, steady state.
"""
import re
import subprocess
import sys

FS = 'github.com/rpcedge/rpcedge/fastserver.'
MCP = 'github.com/rpcedge/rpcedge/mcp.'


def tree(path):
    out = subprocess.run(['callgrind_annotate', '--tree=calling', '--inclusive=yes', '--threshold=100', path],
                         capture_output=True, text=True, check=True).stdout
    calls, cur = {}, None
    for line in out.splitlines():
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+([*>])\s+\S+?:(\S+)', line)
        if not m:
            continue
        n = int(m.group(1).replace(',', ''))
        if m.group(2) == '*':
            cur = m.group(3)
            calls[(cur, None)] = n
        elif cur:
            calls[(cur, m.group(3))] = calls.get((cur, m.group(3)), 0) + n
    return calls


a, b = tree(sys.argv[1]), tree(sys.argv[2])


def call(caller, callee=None):
    k = (caller, callee)
    return (b.get(k, 0) - a.get(k, 0)) / 16000


handler = call('github.com/valyala/fasthttp.(*Server).serveConnCounted', FS + '(*Server).serveTimed-fm')
stages = [
    ('decoding the body (DecodeReader and reading it from fasthttp)', call(FS + '(*Server).runBody', FS + '(*Server).readBody')),
    ('MCP header rules, the walk over params, the schema check', call(FS + '(*Server).dispatch', MCP + '(*Server).check-fm')),
    ('  of it: the walk over params with the schema check', call(MCP + 'checkHeaders', MCP + '(*Call).walk')),
    ('  of that: the schema check of the arguments', call(MCP + 'walkTarget', MCP + '(*argsCheck).try')),
    ('header snapshot', call(FS + '(*Server).runRPC', FS + '(*fields).snapshot')),
    ('the tool, its answer, the deadline and clock', call(FS + '(*Server).dispatch', FS + '(*Server).invoke')),
    ('metrics and releasing the call', call(FS + '(*Server).serveRPC', FS + '(*Server).finishRPC')),
]
named = sum(v for name, v in stages if not name.startswith('  '))
print(f'{"the handler (everything rpcedge adds to fasthttp)":62} {handler:7.0f}')
for name, v in stages:
    print(f'{name:62} {v:7.0f}')
print(f'{"the rest: rows 1-6, budget, routing, watchdog, writing":62} {handler - named:7.0f}')
total = (int(re.search(r'^summary: (\d+)', open(sys.argv[2]).read(), re.M).group(1)) -
         int(re.search(r'^summary: (\d+)', open(sys.argv[1]).read(), re.M).group(1))) / 16000
print(f'{"the request, fasthttp included":62} {total:7.0f}')
