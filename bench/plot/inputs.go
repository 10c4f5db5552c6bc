package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// sample is one load run: one client against one server for a few
// seconds.
type sample struct {
	Rep            int
	Server, Client string
	RPS            float64
	Requests       float64
	P50, P99, P999 float64 // µs
	ServerCPU      float64 // s of user+system CPU over the run
	Wrong          int64   // wrong answers (loadgen) or non-2xx and socket errors (wrk)
}

// CPUPerRequest is the server's CPU time per request, in µs.
func (s sample) CPUPerRequest() float64 {
	if s.Requests == 0 {
		return 0
	}
	return s.ServerCPU * 1e6 / s.Requests
}

// readMatrix reads matrix-raw.tsv: a header line, then
// rep server client rps requests p50_us p99_us p999_us server_cpu_s wrong.
func readMatrix(name string) ([]sample, error) {
	rows, err := readTSV(name, 10)
	if err != nil {
		return nil, err
	}
	var out []sample
	for i, f := range rows {
		var s sample
		var errs [9]error
		s.Rep, errs[0] = strconv.Atoi(f[0])
		s.Server, s.Client = f[1], f[2]
		s.RPS, errs[1] = strconv.ParseFloat(f[3], 64)
		s.Requests, errs[2] = strconv.ParseFloat(f[4], 64)
		s.P50, errs[3] = strconv.ParseFloat(f[5], 64)
		s.P99, errs[4] = strconv.ParseFloat(f[6], 64)
		s.P999, errs[5] = strconv.ParseFloat(f[7], 64)
		s.ServerCPU, errs[6] = strconv.ParseFloat(f[8], 64)
		s.Wrong, errs[7] = strconv.ParseInt(f[9], 10, 64)
		for _, e := range errs {
			if e != nil {
				return nil, fmt.Errorf("%s: line %d: %v", name, i+2, e)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// readRSS reads rss.tsv: a header line, then server vmhwm_kib.
func readRSS(name string) (map[string]float64, error) {
	rows, err := readTSV(name, 2)
	if err != nil {
		return nil, err
	}
	m := map[string]float64{}
	for i, f := range rows {
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %v", name, i+2, err)
		}
		m[f[0]] = v
	}
	return m, nil
}

// readTSV returns the lines after the header, split on white space, each
// with n fields.
func readTSV(name string, n int) ([][]string, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for line := 0; sc.Scan(); line++ {
		if line == 0 || strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) != n {
			return nil, fmt.Errorf("%s: line %d: %d fields, want %d", name, line+1, len(fields), n)
		}
		rows = append(rows, fields)
	}
	return rows, sc.Err()
}

// benchResults holds every sample of every benchmark metric, by
// benchmark name (without the -GOMAXPROCS suffix) and unit.
type benchResults struct {
	Names []string // in order of first appearance
	Vals  map[string]map[string][]float64
}

func (b *benchResults) get(name, unit string) spread {
	if b == nil {
		return spreadOf(nil)
	}
	return spreadOf(b.Vals[name][unit])
}

// ratioByRound returns a's samples of unit over b's, taken in order:
// run.sh runs every benchmark once a round, so the i-th samples of two
// benchmarks were taken close together, under the same load from the
// machine's other tenants, which a ratio of the two medians would not
// cancel. With a different number of samples (a round cut short) the
// samples cannot be paired, and the result has none.
func (b *benchResults) ratioByRound(a, other, unit string) spread {
	if b == nil {
		return spreadOf(nil)
	}
	xa, xb := b.Vals[a][unit], b.Vals[other][unit]
	if len(xa) != len(xb) {
		return spreadOf(nil)
	}
	var rs []float64
	for i := range xa {
		if xb[i] != 0 {
			rs = append(rs, xa[i]/xb[i])
		}
	}
	return spreadOf(rs)
}

// versus returns a's samples of unit over other's: round by round
// (ratioByRound) when the rounds pair up, byRound then true, else the
// ratio of the two medians. It has no samples when either has none.
func (b *benchResults) versus(a, other, unit string) (q spread, byRound bool) {
	if q = b.ratioByRound(a, other, unit); q.ok() {
		return q, true
	}
	x, y := b.get(a, unit), b.get(other, unit)
	if !x.ok() || !y.ok() || y.Med == 0 {
		return spreadOf(nil), false
	}
	return spreadOf([]float64{x.Med / y.Med}), false
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// readBench parses go test -bench output: lines "BenchmarkX/… N v unit v unit …".
func readBench(name string) (*benchResults, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := &benchResults{Vals: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue
		}
		n := procSuffix.ReplaceAllString(f[0], "")
		if b.Vals[n] == nil {
			b.Vals[n] = map[string][]float64{}
			b.Names = append(b.Names, n)
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			b.Vals[n][f[i+1]] = append(b.Vals[n][f[i+1]], v)
		}
	}
	return b, sc.Err()
}
