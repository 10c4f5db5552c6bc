package main

// The size sweep (sweep.sh): server CPU per request, and per KiB of body,
// against the body size, log-log, one line per server, the floor dashed;
// sweep.md with the medians, each server's slope and rpcedge's ratio to
// the floor at every size.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// sweepSample is one load run of the sweep.
type sweepSample struct {
	Size     float64 // text bytes (the last size: the whole body)
	Server   string
	RPS      float64
	Requests float64
	CPU      float64 // server CPU seconds over the run
	Wrong    float64
}

// cpuUS is the server's CPU µs per request.
func (s sweepSample) cpuUS() float64 {
	if s.Requests == 0 {
		return math.NaN()
	}
	return s.CPU * 1e6 / s.Requests
}

func readSweep(name string) ([]sweepSample, error) {
	rows, err := readTSV(name, 7)
	if err != nil {
		return nil, err
	}
	var out []sweepSample
	for _, r := range rows {
		var v [5]float64
		for i, j := range []int{0, 3, 4, 5, 6} {
			if v[i], err = strconv.ParseFloat(r[j], 64); err != nil {
				return nil, fmt.Errorf("%s: %q: %v", name, r[j], err)
			}
		}
		out = append(out, sweepSample{Size: v[0], Server: r[1], RPS: v[1], Requests: v[2], CPU: v[3], Wrong: v[4]})
	}
	return out, nil
}

// sweepCell is the median CPU per request of one server at one size.
type sweepCell struct {
	cpu   spread
	rps   spread
	wrong float64
}

type sweep struct {
	samples []sweepSample
	servers []string
	sizes   []float64
	cells   map[string]map[float64]sweepCell
}

func newSweep(samples []sweepSample) *sweep {
	w := &sweep{samples: samples, cells: map[string]map[float64]sweepCell{}}
	for _, s := range samples {
		if !slices.Contains(w.servers, s.Server) {
			w.servers = append(w.servers, s.Server)
		}
		if !slices.Contains(w.sizes, s.Size) {
			w.sizes = append(w.sizes, s.Size)
		}
	}
	slices.Sort(w.sizes)
	for _, srv := range w.servers {
		w.cells[srv] = map[float64]sweepCell{}
		for _, size := range w.sizes {
			var cpu, rps []float64
			wrong := 0.0
			for _, s := range samples {
				if s.Server == srv && s.Size == size && s.Requests > 0 {
					cpu = append(cpu, s.cpuUS())
					rps = append(rps, s.RPS)
					wrong += s.Wrong
				}
			}
			w.cells[srv][size] = sweepCell{cpu: spreadOf(cpu), rps: spreadOf(rps), wrong: wrong}
		}
	}
	return w
}

// slope is the least-squares slope of log(CPU per request) against
// log(size) over the sizes from min up: 1 means cost proportional to the
// body, 0 a constant cost.
func (w *sweep) slope(srv string, from float64) float64 {
	var xs, ys []float64
	for _, size := range w.sizes {
		if c := w.cells[srv][size]; size >= from && c.cpu.ok() && c.cpu.Med > 0 {
			xs = append(xs, math.Log(size))
			ys = append(ys, math.Log(c.cpu.Med))
		}
	}
	if len(xs) < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	return num / den
}

func sizeName(size float64) string {
	switch {
	case size >= 1<<20:
		return "1 MiB body"
	case size >= 1<<10:
		return fmt.Sprintf("%.0f KiB", size/1024)
	}
	return fmt.Sprintf("%.0f B", size)
}

func (w *sweep) chart(file, title, ylabel string, perKiB bool) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "text bytes (log)"
	p.Y.Label.Text = ylabel
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	for i, srv := range w.servers {
		var xys plotter.XYs
		for _, size := range w.sizes {
			c := w.cells[srv][size]
			if !c.cpu.ok() || c.cpu.Med <= 0 {
				continue
			}
			y := c.cpu.Med
			if perKiB {
				y /= size / 1024
			}
			xys = append(xys, plotter.XY{X: size, Y: y})
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return err
		}
		col := palette[i%len(palette)]
		l.Color, pts.Color = col, col
		l.Width = vg.Points(1.5)
		if srv == "floor" {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		p.Add(l, pts)
		p.Legend.Add(srv, l, pts)
	}
	p.Add(plotter.NewGrid())
	return p.Save(16*vg.Centimeter, 11*vg.Centimeter, file)
}

func (w *sweep) markdown(info string) string {
	var b strings.Builder
	f := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	enc := "identity"
	if strings.Contains(info, "GZIP=1") {
		enc = "gzip"
	}
	f("# Size sweep: tools/call echo, %s\n\n", enc)
	if info != "" {
		f("%s\n", info)
	}
	f("Server CPU µs per request, median (min–max) of the repetitions; requests/s median.\n\n")
	f("| server |")
	for _, size := range w.sizes {
		f(" %s |", sizeName(size))
	}
	f(" slope (all) | slope (16 KiB up) |\n|---|")
	for range w.sizes {
		f("---:|")
	}
	f("---:|---:|\n")
	for _, srv := range w.servers {
		f("| %s |", srv)
		for _, size := range w.sizes {
			c := w.cells[srv][size]
			f(" %s (%s–%s), %s/s |", f1(c.cpu.Med), f1(c.cpu.Min), f1(c.cpu.Max), thousands(c.rps.Med))
		}
		f(" %.2f | %.2f |\n", w.slope(srv, 0), w.slope(srv, 16384))
	}
	if slices.Contains(w.servers, "floor") {
		f("\nCPU per request against the floor's (medians):\n\n| server |")
		for _, size := range w.sizes {
			f(" %s |", sizeName(size))
		}
		f("\n|---|")
		for range w.sizes {
			f("---:|")
		}
		f("\n")
		for _, srv := range w.servers {
			if srv == "floor" {
				continue
			}
			f("| %s |", srv)
			for _, size := range w.sizes {
				f(" %.2f× |", w.cells[srv][size].cpu.Med/w.cells["floor"][size].cpu.Med)
			}
			f("\n")
		}
	}
	var wrong []string
	for _, srv := range w.servers {
		for _, size := range w.sizes {
			if c := w.cells[srv][size]; c.wrong > 0 {
				wrong = append(wrong, fmt.Sprintf("%s at %s: %.0f", srv, sizeName(size), c.wrong))
			}
		}
	}
	if len(wrong) > 0 {
		f("\nWrong answers or failed runs: %s.\n", strings.Join(wrong, "; "))
	} else {
		f("\nNo wrong answers.\n")
	}
	f("\n![CPU per request](sweep-cpu.png) ![CPU per KiB](sweep-cpu-per-kib.png)\n")
	return b.String()
}

// runSweep writes sweep.md and the sweep charts in dir.
func runSweep(dir string) error {
	samples, err := readSweep(filepath.Join(dir, "sweep-raw.tsv"))
	if err != nil {
		return err
	}
	w := newSweep(samples)
	if err := w.chart(filepath.Join(dir, "sweep-cpu.png"), "Server CPU per request by body size", "CPU µs per request (log)", false); err != nil {
		return err
	}
	if err := w.chart(filepath.Join(dir, "sweep-cpu-per-kib.png"), "Server CPU per KiB of text by body size", "CPU µs per KiB (log)", true); err != nil {
		return err
	}
	info := ""
	if b, err := os.ReadFile(filepath.Join(dir, "sweep-info.md")); err == nil {
		info = string(b)
	}
	return os.WriteFile(filepath.Join(dir, "sweep.md"), []byte(w.markdown(info)), 0o644)
}
