package main

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// palette is one color per series (per client, per fixture).
var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff},
	color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xd6, 0x27, 0x28, 0xff},
}

func (r *report) charts(dir string) error {
	if len(r.matrix) > 0 {
		for _, c := range []struct {
			file, title, ylabel string
			metric              func(sample) float64
			log                 bool
		}{
			{"throughput.png", "Requests/s (median, min–max)", "requests/s", rpsOf, false},
			{"p99.png", "p99 latency (median, min–max)", "µs (log scale)", p99Of, true},
			{"cpu-per-request.png", "Server CPU per request (median, min–max)", "µs (log scale)", cpuOf, true},
		} {
			if err := r.matrixChart(filepath.Join(dir, c.file), c.title, c.ylabel, c.metric, c.log); err != nil {
				return fmt.Errorf("%s: %w", c.file, err)
			}
		}
	}
	cands, fixtures := r.decodeGrid()
	if len(cands) > 0 {
		if err := r.decodeChart(filepath.Join(dir, "decode-ns.png"), cands, fixtures, "cpu-ns/op", "ns of CPU per message"); err != nil {
			return err
		}
		if err := r.decodeChart(filepath.Join(dir, "decode-mbs.png"), cands, fixtures, "cpu-MB/s", "MB/s of CPU time"); err != nil {
			return err
		}
	}
	return nil
}

// errBars are points with an asymmetric error: the median and its range.
type errBars struct {
	plotter.XYs
	plotter.YErrors
}

// matrixChart draws metric per server, one series per client: bars on a
// linear axis, points on a log axis; error bars span min–max.
func (r *report) matrixChart(file, title, ylabel string, metric func(sample) float64, logY bool) error {
	servers, clients := r.servers(), r.clients()
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.NominalX(servers...)
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	lo, hi := math.Inf(1), math.Inf(-1)
	w := 0.8 / float64(len(clients))
	for ci, client := range clients {
		vals := make(plotter.Values, len(servers))
		eb := errBars{XYs: make(plotter.XYs, len(servers)), YErrors: make(plotter.YErrors, len(servers))}
		off := -0.4 + w*(float64(ci)+0.5)
		for si, srv := range servers {
			var xs []float64
			for _, s := range r.matrix {
				if s.Server == srv && s.Client == client {
					xs = append(xs, metric(s))
				}
			}
			sp := spreadOf(xs)
			if !sp.ok() || (logY && sp.Min <= 0) {
				sp = spread{Med: 1, Min: 1, Max: 1, N: 1}
			}
			lo, hi = min(lo, sp.Min), max(hi, sp.Max)
			vals[si] = sp.Med
			eb.XYs[si] = plotter.XY{X: float64(si) + off, Y: sp.Med}
			eb.YErrors[si] = struct{ Low, High float64 }{sp.Med - sp.Min, sp.Max - sp.Med}
		}
		col := palette[ci%len(palette)]
		if logY {
			sc, err := plotter.NewScatter(eb.XYs)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = col
			sc.GlyphStyle.Radius = vg.Points(3.5)
			sc.GlyphStyle.Shape = draw.CircleGlyph{}
			p.Add(sc)
			p.Legend.Add(client, sc)
		} else {
			bc, err := plotter.NewBarChart(vals, vg.Points(22))
			if err != nil {
				return err
			}
			bc.Color = col
			bc.LineStyle.Width = 0
			bc.XMin = off
			p.Add(bc)
			p.Legend.Add(client, bc)
		}
		e, err := plotter.NewYErrorBars(eb)
		if err != nil {
			return err
		}
		e.LineStyle.Width = vg.Points(1)
		p.Add(e)
	}
	p.X.Min, p.X.Max = -0.6, float64(len(servers))-0.4
	if logY {
		p.Y.Min, p.Y.Max = lo/2, hi*4 // room for the legend
	} else {
		p.Y.Min, p.Y.Max = 0, hi*1.2
		p.Y.Tick.Marker = thousandsTicks{}
	}
	p.Add(plotter.NewGrid())
	return p.Save(vg.Length(110*len(servers))+vg.Points(80), 9*vg.Centimeter, file)
}

// decodeChart draws unit per candidate, one tile per fixture, bars with
// min–max error bars.
func (r *report) decodeChart(file string, cands, fixtures []string, unit, ylabel string) error {
	const cols = 2
	rows := (len(fixtures) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for fi, f := range fixtures {
		p := plot.New()
		p.Title.Text = f
		p.Y.Label.Text = ylabel
		p.NominalX(cands...)
		p.X.Min, p.X.Max = -0.7, float64(len(cands))-0.3
		p.X.Tick.Label.Rotation = 0.9
		p.X.Tick.Label.XAlign = draw.XRight
		p.X.Tick.Label.YAlign = draw.YCenter
		vals := make(plotter.Values, len(cands))
		eb := errBars{XYs: make(plotter.XYs, len(cands)), YErrors: make(plotter.YErrors, len(cands))}
		for ci, c := range cands {
			sp := r.bench.get("BenchmarkDecode/"+c+"/"+f, unit)
			if !sp.ok() {
				sp = spread{N: 1}
			}
			vals[ci] = sp.Med
			eb.XYs[ci] = plotter.XY{X: float64(ci), Y: sp.Med}
			eb.YErrors[ci] = struct{ Low, High float64 }{sp.Med - sp.Min, sp.Max - sp.Med}
		}
		bc, err := plotter.NewBarChart(vals, vg.Points(14))
		if err != nil {
			return err
		}
		bc.Color = palette[fi%len(palette)]
		bc.LineStyle.Width = 0
		e, err := plotter.NewYErrorBars(eb)
		if err != nil {
			return err
		}
		p.Y.Min = 0
		p.Y.Tick.Marker = thousandsTicks{}
		p.Add(plotter.NewGrid(), bc, e)
		plots[fi/cols][fi%cols] = p
	}
	for i := range plots {
		for j := range plots[i] {
			if plots[i][j] == nil {
				plots[i][j] = plot.New()
				plots[i][j].HideAxes()
			}
		}
	}
	img := vgimg.New(26*vg.Centimeter, vg.Length(rows)*11*vg.Centimeter)
	dc := draw.New(img)
	t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(plots, t, dc)
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(canvases[i][j])
		}
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// thousandsTicks are plot.DefaultTicks labelled as whole numbers with
// thousands separators.
type thousandsTicks struct{}

func (thousandsTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = thousands(ts[i].Value)
		}
	}
	return ts
}
