package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPairs feeds made-up ABBA pairs through run: the ratios are taken
// within each pair, whatever the drift between pairs, and a pair with a
// run missing is left out.
func TestPairs(t *testing.T) {
	dir := t.TempDir()
	var m strings.Builder
	m.WriteString("rep server client rps requests p50_us p99_us p999_us server_cpu_s wrong\n")
	for pair := 1; pair <= 9; pair++ {
		// The machine's speed drifts from pair to pair (×1 to ×3); within a
		// pair rpcedge has 0.9× the floor's requests/s and pays 1.1× its
		// CPU per request, except pair 5 (1.3×).
		slow := 1 + float64(pair%3)
		cpuRatio := 1.1
		if pair == 5 {
			cpuRatio = 1.3
		}
		order := []string{"rpcedge", "floor"}
		if pair%2 == 0 {
			order = []string{"floor", "rpcedge"}
		}
		for _, srv := range order {
			rps, cpuPerReq, p99 := 50000/slow, 10*slow, 1000*slow
			if srv == "rpcedge" {
				rps, cpuPerReq, p99 = rps*0.9, cpuPerReq*cpuRatio, p99*1.15
			}
			req := rps * 2
			fmt.Fprintf(&m, "%d %s loadgen %.1f %.0f 500 %.0f 3000 %.6f 0\n", pair, srv, rps, req, p99, cpuPerReq*req/1e6)
		}
	}
	// A pair with its floor run missing (a run cut by the budget).
	fmt.Fprintf(&m, "10 rpcedge loadgen 1000 2000 500 900 3000 0.1 0\n")
	if err := os.WriteFile(filepath.Join(dir, "paired-raw.tsv"), []byte(m.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	wantInSummary(t, dir,
		"## rpcedge and the floor in ABBA pairs",
		"| loadgen | 9 |",
		"≥ 95 % of the floor's requests/s (loadgen, ABBA pairs) | 0.90× (95 % interval 0.90–0.90; 0.90–0.90 over 9 pairs) | **missed**",
		"≤ 1.05× the floor's CPU per request (loadgen, ABBA pairs) | 1.10× (95 % interval 1.10–1.10; 1.10–1.30 over 9 pairs) | **missed**",
		"p99 within 1.2× of the floor's (loadgen, ABBA pairs) | 1.15× (95 % interval 1.15–1.15; 1.15–1.15 over 9 pairs) | met",
	)
}

// TestBootstrapMedian checks the interval's bounds on known samples and
// that it is the same on every call.
func TestBootstrapMedian(t *testing.T) {
	xs := []float64{1.00, 1.02, 1.04, 1.05, 1.06, 1.08, 1.10, 1.12, 1.30, 0.70, 1.07}
	a := bootstrapMedian(xs)
	if a.Med != 1.06 || a.N != len(xs) || a.Min != 0.70 || a.Max != 1.30 {
		t.Fatalf("median %v n %d range %v–%v, want 1.06, %d, 0.70–1.30", a.Med, a.N, a.Min, a.Max, len(xs))
	}
	if !(a.Lo <= a.Med && a.Med <= a.Hi) || a.Lo < 1.00 || a.Hi > 1.12 || a.Lo == a.Hi {
		t.Errorf("interval %v–%v around %v: want a proper interval within the middle samples", a.Lo, a.Hi, a.Med)
	}
	if b := bootstrapMedian(xs); b != a {
		t.Errorf("two summaries of the same samples differ: %+v, %+v", a, b)
	}
	if e := bootstrapMedian(nil); e.ok() {
		t.Errorf("no samples: %+v, want no median", e)
	}
}
