package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// The ABBA pairs (run.sh, section 1b): rpcedge and the floor in short
// runs next to each other. A pair's ratio cancels the load the machine's
// other tenants put on it, which drifts over seconds to minutes; the
// pairs' median ratio, with a bootstrap interval, is the comparison the
// targets are read from when the run has them.

// pairRatios returns metric(rpcedge)/metric(floor) for every pair of
// client's runs in r.paired (a pair is one rep number).
func (r *report) pairRatios(client string, metric func(sample) float64) []float64 {
	type two struct {
		a, b   float64
		oa, ob bool
	}
	pairs := map[int]*two{}
	var reps []int
	for _, s := range r.paired {
		if s.Client != client || (s.Server != rpcedge && s.Server != floor) {
			continue
		}
		p := pairs[s.Rep]
		if p == nil {
			p = &two{}
			pairs[s.Rep] = p
			reps = append(reps, s.Rep)
		}
		if s.Server == rpcedge {
			p.a, p.oa = metric(s), true
		} else {
			p.b, p.ob = metric(s), true
		}
	}
	slices.Sort(reps)
	var out []float64
	for _, rep := range reps {
		if p := pairs[rep]; p.oa && p.ob && p.b != 0 {
			out = append(out, p.a/p.b)
		}
	}
	return out
}

// pairIntervals returns, for client's pairs, the ratios rpcedge ÷ the
// floor of requests/s, CPU per request and p99 as medians with their
// bootstrap intervals: what the pairs' table and the targets both show.
func (r *report) pairIntervals(client string) (rps, cpu, p99 interval) {
	return bootstrapMedian(r.pairRatios(client, rpsOf)), bootstrapMedian(r.pairRatios(client, cpuOf)),
		bootstrapMedian(r.pairRatios(client, p99Of))
}

// pairClients returns the clients of r.paired in the order they were run.
func (r *report) pairClients() []string {
	return distinct(r.paired, func(s sample) string { return s.Client })
}

// interval is a median with a 95 % bootstrap interval and the range.
type interval struct {
	spread
	Lo, Hi float64
}

// bootstrapMedian returns the median of xs and the 2.5th and 97.5th
// percentiles of the medians of 4,000 resamples of xs (with replacement),
// drawn from a fixed seed so that a summary is the same every time it is
// made from the same samples.
func bootstrapMedian(xs []float64) interval {
	iv := interval{spread: spreadOf(xs)}
	if len(xs) == 0 {
		iv.Lo, iv.Hi = iv.Med, iv.Med
		return iv
	}
	const resamples = 4000
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, resamples)
	buf := make([]float64, len(xs))
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(len(xs))]
		}
		meds[i] = spreadOf(buf).Med
	}
	slices.Sort(meds)
	iv.Lo, iv.Hi = meds[resamples*25/1000], meds[resamples*975/1000-1]
	return iv
}

// fmtInterval formats an interval of ratios as
// "0.90× (95 % interval 0.89–0.91; 0.83–1.27 over 12 pairs)".
func fmtInterval(iv interval) string {
	if !iv.ok() {
		return "–"
	}
	return fmt.Sprintf("%s× (95 %% interval %s–%s; %s–%s over %d pairs)", ratioNum(iv.Med),
		ratioNum(iv.Lo), ratioNum(iv.Hi), ratioNum(iv.Min), ratioNum(iv.Max), iv.N)
}

// writePairs writes the pairs' section: per client, each server's median
// over its runs in the pairs and the ratios within pairs.
func (r *report) writePairs(w func(string, ...any)) {
	dur := 0.0
	for _, s := range r.paired {
		if s.RPS > 0 {
			dur = max(dur, s.Requests/s.RPS)
		}
	}
	w("## rpcedge and the floor in ABBA pairs\n\n")
	w("The comparison of the targets again, in runs of about %.0f s next to each other: rpcedge then the\n", dur)
	w("floor, then the floor then rpcedge, and so on. The machine's other load drifts over seconds to\n")
	w("minutes; a ratio taken within a pair cancels most of it, which the repetitions of the matrix\n")
	w("above, spread over tens of seconds, do not. Medians of the pairs' ratios, with a 95 %%\n")
	w("bootstrap interval of the median and the pairs' range.\n\n")
	w("| client | pairs | rpcedge CPU µs/request | floor CPU µs/request | requests/s | server CPU/request | p99 |\n")
	w("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, client := range r.pairClients() {
		var ca, cb []float64
		for _, s := range r.paired {
			if s.Client != client {
				continue
			}
			switch s.Server {
			case rpcedge:
				ca = append(ca, s.CPUPerRequest())
			case floor:
				cb = append(cb, s.CPUPerRequest())
			}
		}
		rf, cf, pf := r.pairIntervals(client)
		w("| %s | %d | %s | %s | %s | %s | %s |\n", client, rf.N, fmtSpread(spreadOf(ca), f1), fmtSpread(spreadOf(cb), f1),
			fmtInterval(rf), fmtInterval(cf), fmtInterval(pf))
	}
	w("\n")
}
