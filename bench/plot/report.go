package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// report is everything one run produced.
type report struct {
	matrix []sample
	paired []sample           // run.sh's ABBA pairs of rpcedge and the floor (paired.go)
	rss    map[string]float64 // KiB
	bench  *benchResults
	info   string
}

// The names the matrix and the benchmarks use (bench/servers, run.sh).
const (
	rpcedge = "rpcedge"
	floor   = "floor"
	sdk     = "mcp-go-sdk"
)

// servers returns the servers of the matrix in the order they were run.
func (r *report) servers() []string {
	return distinct(r.matrix, func(s sample) string { return s.Server })
}

// clients returns the clients of the matrix in the order they were run.
func (r *report) clients() []string {
	return distinct(r.matrix, func(s sample) string { return s.Client })
}

// distinct returns key of every sample, each once, in order of first
// appearance.
func distinct(ss []sample, key func(sample) string) []string {
	var out []string
	for _, s := range ss {
		if k := key(s); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// cell is the summary of one server under one client.
type cell struct {
	RPS, P50, P99, P999, CPU, Busy spread
	Wrong                          int64
	Requests                       float64
}

func (r *report) cell(server, client string) cell {
	var rps, p50, p99, p999, cpu, busy []float64
	var c cell
	for _, s := range r.matrix {
		if s.Server != server || s.Client != client {
			continue
		}
		rps = append(rps, s.RPS)
		p50 = append(p50, s.P50)
		p99 = append(p99, s.P99)
		p999 = append(p999, s.P999)
		cpu = append(cpu, s.CPUPerRequest())
		busy = append(busy, s.RPS*s.CPUPerRequest()/1e4) // % of one core
		c.Wrong += s.Wrong
		c.Requests += s.Requests
	}
	c.RPS, c.P50, c.P99, c.P999, c.CPU, c.Busy = spreadOf(rps), spreadOf(p50), spreadOf(p99), spreadOf(p999), spreadOf(cpu), spreadOf(busy)
	return c
}

// ratio returns metric(a)/metric(b) within each repetition: the runs of a
// and b in one pass of run.sh over the servers, whose order rotates from
// one repetition to the next, so that neither is always the earlier. They
// are not next to each other in time (the ABBA pairs of paired.go are).
func (r *report) ratio(a, b, client string, metric func(sample) float64) spread {
	byRep := map[int]map[string]float64{}
	for _, s := range r.matrix {
		if s.Client != client || (s.Server != a && s.Server != b) {
			continue
		}
		if byRep[s.Rep] == nil {
			byRep[s.Rep] = map[string]float64{}
		}
		byRep[s.Rep][s.Server] = metric(s)
	}
	var xs []float64
	for _, m := range byRep {
		va, oka := m[a]
		vb, okb := m[b]
		if oka && okb && vb != 0 {
			xs = append(xs, va/vb)
		}
	}
	return spreadOf(xs)
}

func rpsOf(s sample) float64 { return s.RPS }
func p99Of(s sample) float64 { return s.P99 }
func cpuOf(s sample) float64 { return s.CPUPerRequest() }

// Number formatting.

func thousands(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[0] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtSpread(s spread, f func(float64) string) string {
	if !s.ok() {
		return "–"
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Med), f(s.Min), f(s.Max))
}

func us(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 10000:
		return thousands(v)
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%.1f", v)
	}
}

func ns(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 1e6:
		return fmt.Sprintf("%.2f ms", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1f µs", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.2f µs", v/1e3)
	default:
		return fmt.Sprintf("%.0f ns", v)
	}
}

// ratio formats a ratio with about three significant digits.
func ratioNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// fmtRatio formats a spread of ratios as "0.93× (0.90–0.97)".
func fmtRatio(s spread) string {
	if !s.ok() {
		return "–"
	}
	return fmt.Sprintf("%s× (%s–%s)", ratioNum(s.Med), ratioNum(s.Min), ratioNum(s.Max))
}
func f0(v float64) string { return thousands(v) }
func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

func metOrMissed(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func (r *report) markdown() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Serving matrix and benchmarks\n\n")
	if r.info != "" {
		w("%s\n\n", strings.TrimSpace(r.info))
	}
	if len(r.matrix) > 0 {
		r.writeMatrix(w)
	}
	if len(r.paired) > 0 {
		r.writePairs(w)
	}
	r.writeTargets(w)
	if r.bench != nil {
		r.writeServe(w, "BenchmarkServe", "In-process, MCP 2025-11-25 (`BenchmarkServe`)")
		r.writeServe(w, "BenchmarkServe2026", "In-process, MCP 2026-07-28 with the Go SDK client's `_meta` (`BenchmarkServe2026`)")
		r.writeDecode(w)
	}
	return b.String()
}

func (r *report) writeMatrix(w func(string, ...any)) {
	reps := 0
	for _, s := range r.matrix {
		reps = max(reps, s.Rep)
	}
	w("## Load matrix (loopback, server on core 1, client on core 0, 64 connections)\n\n")
	w("Medians over %d repetitions (the servers' order rotating from one to the next), min–max in brackets. MCP 2025-11-25 headers\n", reps)
	w("(MCP-Protocol-Version, Mcp-Method, Mcp-Name) and Accept: application/json, text/event-stream\n")
	w("on every request. loadgen sends tools/call echo with a fresh id and text each time\n")
	w("(texts of run.sh's LG_TEXT_SIZE bytes, 176 = the small fixture's, unless the run's header says 0)\n")
	w("and checks every answer; wrk posts the small fixture's shape with the id and text varied per request (a Lua script) and checks only the status.\n")
	w("Server CPU is user+system from /proc/PID/stat over the run, divided by the answers;\n")
	w("core use is that CPU over the run's time: well below 100 %% means the server was not\n")
	w("the bottleneck (the client was, or other processes took its core). Peak RSS is VmHWM\n")
	w("after the whole matrix. Latencies in µs.\n\n")
	w("![requests/s](throughput.png) ![p99](p99.png) ![CPU per request](cpu-per-request.png)\n\n")
	for _, client := range r.clients() {
		w("### %s\n\n", client)
		wrongWhat := "wrong answers"
		if client == "wrk" {
			wrongWhat = "non-2xx + socket errors (wrk checks nothing else)"
		}
		w("| server | requests/s | p50 | p99 | p99.9 | server CPU µs/request | server core use %% | peak RSS MiB | %s |\n", wrongWhat)
		w("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, srv := range r.servers() {
			c := r.cell(srv, client)
			rss := "–"
			if v, ok := r.rss[srv]; ok {
				rss = fmt.Sprintf("%.1f", v/1024)
			}
			wrong := fmt.Sprintf("%d of %s", c.Wrong, thousands(c.Requests))
			name := srv
			if c.Wrong > 0 {
				wrong = "**" + wrong + " — FLAGGED**"
				name = "**" + srv + " (flagged)**"
			}
			w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
				fmtSpread(c.RPS, f0), fmtSpread(c.P50, us), fmtSpread(c.P99, us), fmtSpread(c.P999, us),
				fmtSpread(c.CPU, f1), fmtSpread(c.Busy, f0), rss, wrong)
		}
		w("\n")
		w("Ratios within each repetition (rpcedge ÷ peer), median and min–max: the two runs of a ratio come from one pass\n")
		w("over the servers, whose order rotates from one repetition to the next so that neither is always the earlier;\n")
		w("they are not next to each other in time (the ABBA pairs, when the run has them, are).\n\n")
		w("| rpcedge vs | requests/s | server CPU/request | p99 |\n|---|---:|---:|---:|\n")
		for _, peer := range r.servers() {
			if peer == rpcedge {
				continue
			}
			w("| %s | %s | %s | %s |\n", peer,
				fmtRatio(r.ratio(rpcedge, peer, client, rpsOf)),
				fmtRatio(r.ratio(rpcedge, peer, client, cpuOf)),
				fmtRatio(r.ratio(rpcedge, peer, client, p99Of)))
		}
		w("\n")
	}
}

func (r *report) writeTargets(w func(string, ...any)) {
	type row struct{ target, measured, verdict string }
	var rows []row
	for _, client := range r.clients() {
		if client != "loadgen" && client != "wrk" {
			continue
		}
		rf := r.ratio(rpcedge, floor, client, rpsOf)
		cf := r.ratio(rpcedge, floor, client, cpuOf)
		pf := r.ratio(rpcedge, floor, client, p99Of)
		rs := r.ratio(rpcedge, sdk, client, rpsOf)
		if rf.ok() {
			rows = append(rows,
				row{"≥ 95 % of the floor's requests/s (" + client + ")", fmtRatio(rf), metOrMissed(rf.Med >= 0.95)},
				row{"≤ 1.05× the floor's CPU per request (" + client + ")", fmtRatio(cf), metOrMissed(cf.Med <= 1.05)},
				row{"p99 within 1.2× of the floor's (" + client + ")", fmtRatio(pf), metOrMissed(pf.Med <= 1.2)})
		}
		if rs.ok() {
			rows = append(rows, row{"≥ 10× the MCP Go SDK's requests/s (" + client + ")", fmtRatio(rs), metOrMissed(rs.Med >= 10)})
		}
	}
	for _, client := range r.pairClients() {
		rf, cf, pf := r.pairIntervals(client)
		if !rf.ok() {
			continue
		}
		rows = append(rows,
			row{"≥ 95 % of the floor's requests/s (" + client + ", ABBA pairs)", fmtInterval(rf), metOrMissed(rf.Med >= 0.95)},
			row{"≤ 1.05× the floor's CPU per request (" + client + ", ABBA pairs)", fmtInterval(cf), metOrMissed(cf.Med <= 1.05)},
			row{"p99 within 1.2× of the floor's (" + client + ", ABBA pairs)", fmtInterval(pf), metOrMissed(pf.Med <= 1.2)})
	}
	if r.bench != nil {
		a := r.bench.get("BenchmarkServe/rpcedge", "allocs/op")
		fa := r.bench.get("BenchmarkServe/floor", "allocs/op")
		if a.ok() && fa.ok() {
			rows = append(rows, row{"0 heap allocations per request once warm (in-process, rpcedge − floor)",
				fmt.Sprintf("%.0f allocs/op (floor %.0f: the client allocates nothing)", a.Med, fa.Med), metOrMissed(a.Med-fa.Med <= 0)})
		}
		if s := r.bench.get("BenchmarkDecode/rpcedge/small", "cpu-ns/op"); s.ok() {
			rows = append(rows, row{"decode small ≤ 140 ns (CPU time)", fmtSpread(s, ns), metOrMissed(s.Med <= 140)})
		}
		// The relative targets are judged round by round when the rounds
		// pair up, and on the medians otherwise (versus).
		const dec = "BenchmarkDecode/"
		if s := r.bench.get(dec+"rpcedge/notification", "cpu-ns/op"); s.ok() {
			if q, by := r.bench.versus(dec+"rpcedge/notification", dec+"jsonparser/notification", "cpu-ns/op"); q.ok() {
				m := fmt.Sprintf("%s vs %s", fmtSpread(s, ns), fmtSpread(r.bench.get(dec+"jsonparser/notification", "cpu-ns/op"), ns))
				if by {
					m += "; rpcedge ÷ jsonparser by round " + fmtRatio(q)
				}
				rows = append(rows, row{"decode notification ahead of jsonparser (CPU time)", m, metOrMissed(q.Med < 1)})
			}
		}
		if s := r.bench.get(dec+"rpcedge/16k", "cpu-ns/op"); s.ok() {
			// The closest peer: the one rpcedge's time is the largest part of.
			cands, _ := r.decodeGrid()
			var (
				closest string
				cq      spread
				cby     bool
			)
			for _, c := range cands {
				if c == "rpcedge" || strings.HasPrefix(c, "floor") {
					continue
				}
				if q, by := r.bench.versus(dec+"rpcedge/16k", dec+c+"/16k", "cpu-ns/op"); q.ok() && (closest == "" || q.Med > cq.Med) {
					closest, cq, cby = c, q, by
				}
			}
			if closest != "" {
				m := fmt.Sprintf("%s vs %s %s", fmtSpread(s, ns), closest, fmtSpread(r.bench.get(dec+closest+"/16k", "cpu-ns/op"), ns))
				if cby {
					m += "; rpcedge ÷ it by round " + fmtRatio(cq)
				}
				rows = append(rows, row{"decode 16k ahead of every peer (CPU time)", m, metOrMissed(cq.Med < 1)})
			}
		}
		if s := r.bench.get(dec+"rpcedge/1m", "cpu-MB/s"); s.ok() {
			m := fmtSpread(s, f0) + " MB/s"
			ok := s.Med >= 1500
			if q, by := r.bench.versus(dec+"rpcedge/1m", dec+"sonic-valid-search/1m", "cpu-MB/s"); q.ok() {
				if by {
					m += ", " + fmtRatio(q) + " sonic Valid+search's, by round"
				} else {
					m += fmt.Sprintf(", %.2f× sonic Valid+search", q.Med)
				}
				ok = ok && q.Med >= 2
			}
			rows = append(rows, row{"decode 1m ≥ 1.5 GB/s and ≥ 2× sonic Valid+search (CPU time)", m, metOrMissed(ok)})
		}
	}
	if len(rows) == 0 {
		return
	}
	w("## Targets (TARGETS.md)\n\n| target | measured: median (min–max) | |\n|---|---|---|\n")
	for _, r := range rows {
		w("| %s | %s | %s |\n", r.target, r.measured, r.verdict)
	}
	w("\n")
}

func (r *report) writeServe(w func(string, ...any), prefix, title string) {
	var names []string
	for _, n := range r.bench.Names {
		if strings.HasPrefix(n, prefix+"/") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return
	}
	floorCPU := r.bench.get(prefix+"/floor", "cpu-ns/op")
	w("## %s\n\n", title)
	w("Client (fasthttp) and server in one process over an in-memory listener, `b.RunParallel`,\n")
	w("8 goroutines on 2 Ps. ns/op is wall time, cpu-ns/op the process's CPU time (client,\n")
	w("server and GC), B/op and allocs/op both sides (the client's share is the floor's).\n")
	w("Medians of %d samples, min–max in brackets.\n\n", r.bench.get(names[0], "ns/op").N)
	w("| candidate | ns/op | cpu-ns/op | CPU above the floor | B/op | allocs/op |\n|---|---:|---:|---:|---:|---:|\n")
	for _, n := range names {
		c := r.bench.get(n, "cpu-ns/op")
		above := "–"
		if c.ok() && floorCPU.ok() {
			above = ns(c.Med - floorCPU.Med)
		}
		w("| %s | %s | %s | %s | %s | %s |\n", strings.TrimPrefix(n, prefix+"/"),
			fmtSpread(r.bench.get(n, "ns/op"), ns), fmtSpread(c, ns), above,
			fmtSpread(r.bench.get(n, "B/op"), f0), fmtSpread(r.bench.get(n, "allocs/op"), f0))
	}
	w("\n")
}

// decodeGrid returns the candidates and fixtures of BenchmarkDecode.
func (r *report) decodeGrid() (cands, fixtures []string) {
	if r.bench == nil {
		return nil, nil
	}
	for _, n := range r.bench.Names {
		parts := strings.Split(n, "/")
		if len(parts) != 3 || parts[0] != "BenchmarkDecode" {
			continue
		}
		if !slices.Contains(cands, parts[1]) {
			cands = append(cands, parts[1])
		}
		if !slices.Contains(fixtures, parts[2]) {
			fixtures = append(fixtures, parts[2])
		}
	}
	return cands, fixtures
}

func (r *report) writeDecode(w func(string, ...any)) {
	cands, fixtures := r.decodeGrid()
	if len(cands) == 0 {
		return
	}
	w("## Decoding (`BenchmarkDecode`, -cpu 1)\n\n![decode ns/op](decode-ns.png) ![decode MB/s](decode-mbs.png)\n\n")
	for _, t := range []struct {
		title, unit string
		f           func(float64) string
		spread      bool
	}{
		{"CPU time per op, median (min–max)", "cpu-ns/op", ns, true},
		{"MB/s of CPU time, median", "cpu-MB/s", f0, false},
		{"wall ns/op, median", "ns/op", ns, false},
		{"allocs/op, median", "allocs/op", f0, false},
	} {
		w("**%s**\n\n| candidate | %s |\n|---|%s\n", t.title, strings.Join(fixtures, " | "), strings.Repeat("---:|", len(fixtures)))
		for _, c := range cands {
			cells := make([]string, len(fixtures))
			for i, f := range fixtures {
				s := r.bench.get("BenchmarkDecode/"+c+"/"+f, t.unit)
				if t.spread {
					cells[i] = fmtSpread(s, t.f)
				} else if s.ok() {
					cells[i] = t.f(s.Med)
				} else {
					cells[i] = "–"
				}
			}
			w("| %s | %s |\n", c, strings.Join(cells, " | "))
		}
		w("\n")
	}
}
