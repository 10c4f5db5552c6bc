package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Report is the outcome of a run. Its JSON form (the -json output) is one
// object whose field names are stable: fields may be added, never renamed
// or removed. Durations are in seconds (suffix _s), latencies in
// microseconds (suffix _us).
type Report struct {
	// Config is the run's configuration, defaults filled in.
	Config ReportConfig `json:"config"`
	// ElapsedS is the wall time from the first request to the last
	// answer: IssuingS + DrainS.
	ElapsedS float64 `json:"elapsed_s"`
	// Interrupted is set when the run was cut short (SIGINT).
	Interrupted bool `json:"interrupted"`
	// Aborted says why loadgen cut the run short on its own ("" when it
	// did not): no answer for Config.GiveUp while requests failed.
	Aborted string `json:"aborted"`
	// Sent counts requests whose outcome is known: sent and answered, or
	// failed in transport (a failed connect counts as one). Sent = OK +
	// Wrong; requests in flight when a run is interrupted are not counted.
	Sent uint64 `json:"sent"`
	// Answers counts complete HTTP answers, right or wrong.
	Answers uint64 `json:"answers"`
	// OK counts right answers; Wrong counts the others, transport
	// failures included.
	OK    uint64 `json:"ok"`
	Wrong uint64 `json:"wrong"`
	// IssuingS is the time requests were issued: from the start to the
	// end of Config.Duration, or, when Config.Requests ended the run
	// first, to when the last request was handed out (or to an
	// interruption). DrainS is the rest of ElapsedS: the wait for the
	// answers still in flight (bounded by Config.Drain after a duration),
	// and DrainAnswers the answers that came in it.
	IssuingS     float64 `json:"issuing_s"`
	DrainS       float64 `json:"drain_s"`
	DrainAnswers uint64  `json:"drain_answers"`
	// RPS is the answers that came while requests were issued (Answers
	// less DrainAnswers) per second of IssuingS: the drain, up to
	// Config.Drain of waiting for the last answers, would only dilute it.
	RPS float64 `json:"rps"`
	// Events counts the notifications of right streamed answers
	// (Config.Events); EventsPerSec is those of the answers that came
	// while requests were issued, per second of IssuingS.
	Events       uint64  `json:"events"`
	EventsPerSec float64 `json:"events_per_s"`
	// FirstEvent (streamed answers, Config.Events) is the time from each
	// right answer's send to the read that brought its first event.
	FirstEvent Latency `json:"first_event_us"`
	// MissedSlots (open loop) counts requests sent more than SlotTolerance
	// (1 ms) after their intended time.
	MissedSlots uint64 `json:"missed_slots"`
	// Unsent (open loop) counts slots due before issuing stopped that
	// were never sent: every connection was busy from their time on,
	// through the drain (Config.Drain; a slot that found every
	// connection busy goes out late when one comes free, after the
	// duration too, until the drain ends). A server that stalls holds
	// every connection, and the slots of the stall never go out. Each is
	// in Latency at the time it had waited by the end of the run, a lower
	// bound of what it would have taken; any at all fail the run
	// (ExitCode 1): the schedule was not kept and the percentiles are
	// lower bounds.
	Unsent uint64 `json:"unsent"`
	// Reconnects counts connections opened after the first ones.
	Reconnects uint64 `json:"reconnects"`
	// Waits counts a spinning epoll engine's waits (Config.Spin).
	Waits Waits `json:"waits"`
	// WrongByClass counts wrong answers by class; every class is present:
	// transport, status, header, body, id, code, result.
	WrongByClass map[string]uint64 `json:"wrong_by_class"`
	// Shapes counts requests and right answers by shape, for each shape
	// sent at least once.
	Shapes map[string]ShapeCount `json:"shapes"`
	// Latency is measured from each request's intended send time in an
	// open loop (coordinated omission corrected), from its actual send
	// time in a closed loop, to its outcome: every request counted in
	// Sent is in it, answers right or wrong at their answer, transport
	// failures at the time they waited (a timeout at Config.Timeout, a
	// refused connection at the time the refusal took, timed from the
	// connection attempt).
	Latency Latency `json:"latency_us"`
	// LatencyUncorrected is measured from the actual send time (or
	// connection attempt), for the same requests; in a closed loop it
	// equals Latency.
	LatencyUncorrected Latency `json:"latency_uncorrected_us"`
	// Examples are the first wrong answers, verbatim.
	Examples []Example `json:"wrong_examples"`
	// ExitCode is 0 when every answer was right, (open loop) no slot was
	// unsent and the run was not given up (Aborted), else 1.
	ExitCode int `json:"exit_code"`

	lat, raw *hdrhistogram.Histogram
}

// ReportConfig echoes the configuration of a run.
type ReportConfig struct {
	URL         string   `json:"url"`
	Mode        string   `json:"mode"` // "closed" or "open"
	Connections int      `json:"connections"`
	DurationS   float64  `json:"duration_s"` // 0: bounded by count only
	Requests    int64    `json:"requests"`   // 0: bounded by duration only
	Rate        float64  `json:"rate"`       // requests/s; 0 in a closed loop
	Mix         string   `json:"mix"`        // "" when body is set
	Body        string   `json:"body"`       // the -body file, if any
	Gzip        bool     `json:"gzip"`       // the body sent gzip-compressed
	Headers     []string `json:"headers"`
	MCPVersion  string   `json:"mcp_version"`
	TimeoutS    float64  `json:"timeout_s"`
	DrainS      float64  `json:"drain_s"` // Config.Drain: the bound of the drain after a duration
	Engine      string   `json:"engine"`
	SpinUS      float64  `json:"spin_us"` // Config.Spin as given (Report.Waits says whether loops polled)
}

// Waits counts a spinning epoll engine's waits for events (Config.Spin):
// Spins began by polling without blocking, Caught of them ended while
// polling, Blocked called epoll_wait with a timeout (and usually slept).
// All zero with the netconn engine and in runs that do not spin.
type Waits struct {
	Spins   uint64 `json:"spins"`
	Caught  uint64 `json:"caught"`
	Blocked uint64 `json:"blocked"`
}

// ShapeCount counts one shape's requests and right answers.
type ShapeCount struct {
	Sent uint64 `json:"sent"`
	OK   uint64 `json:"ok"`
}

// Latency holds percentiles of a latency histogram, in microseconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p99_9"`
	Max   int64   `json:"max"`
}

// Example is one wrong answer, kept verbatim (each side clipped to 2 KiB).
type Example struct {
	Class     string  `json:"class"`
	Shape     string  `json:"shape"`
	Detail    string  `json:"detail"`
	AtSeconds float64 `json:"at_s"`
	Request   string  `json:"request"`
	Answer    string  `json:"answer"`
}

func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Count: h.TotalCount(),
		Mean:  float64(int64(h.Mean()*10)) / 10,
		P50:   h.ValueAtQuantile(50),
		P90:   h.ValueAtQuantile(90),
		P99:   h.ValueAtQuantile(99),
		P999:  h.ValueAtQuantile(99.9),
		Max:   h.Max(),
	}
}

func (r *runner) report(end int64) *Report {
	t := r.totals(true)
	c := r.cfg
	rep := &Report{
		Config: ReportConfig{
			URL: c.URL, Mode: "closed", Connections: c.Connections,
			DurationS: c.Duration.Seconds(), Requests: c.Requests, Rate: c.Rate,
			MCPVersion: c.MCPVersion, TimeoutS: c.Timeout.Seconds(), DrainS: c.Drain.Seconds(), Engine: r.engine,
			SpinUS:  c.Spin.Seconds() * 1e6,
			Headers: []string{},
		},
		ElapsedS:     float64(end) / 1e9,
		Interrupted:  r.aborted.Load() && r.gaveUp == "",
		Aborted:      r.gaveUp,
		Sent:         t.sent,
		Answers:      t.answers,
		OK:           t.ok,
		MissedSlots:  t.late,
		Waits:        t.waits,
		Reconnects:   t.reconnects,
		WrongByClass: map[string]uint64{},
		Shapes:       map[string]ShapeCount{},
		Examples:     append([]Example{}, r.examples...),
		lat:          t.lat,
		raw:          t.raw,
	}
	if r.open {
		rep.Config.Mode = "open"
	}
	if c.Body != nil {
		rep.Config.Body, rep.Config.Gzip = c.BodyName, c.BodyGzip
	} else {
		rep.Config.Mix = c.Mix.String()
	}
	for _, h := range c.Headers {
		rep.Config.Headers = append(rep.Config.Headers, h.String())
	}
	for cl := ClassTransport; cl < numClasses; cl++ {
		rep.WrongByClass[cl.String()] = t.wrong[cl]
		rep.Wrong += t.wrong[cl]
	}
	for s := Shape(0); s < numShapes; s++ {
		if t.shapeSent[s] > 0 {
			rep.Shapes[s.String()] = ShapeCount{Sent: t.shapeSent[s], OK: t.shapeOK[s]}
		}
	}
	stopAt := r.stopNs.Load()
	if r.deadline > 0 && stopAt > r.deadline {
		stopAt = r.deadline
	}
	issuing := min(stopAt, end)
	rep.IssuingS, rep.DrainS = float64(issuing)/1e9, float64(end-issuing)/1e9
	rep.DrainAnswers = t.drainAnswers
	if issuing > 0 {
		rep.RPS = float64(int64(float64(t.answers-t.drainAnswers)/(float64(issuing)/1e9)*10)) / 10
		rep.EventsPerSec = float64(int64(float64(t.events-t.drainEvents)/(float64(issuing)/1e9)*10)) / 10
	}
	rep.Events = t.events
	rep.FirstEvent = latencyOf(t.first)
	if r.open {
		first, last := r.unsentSlots(stopAt)
		if last >= first {
			rep.Unsent = uint64(last - first + 1)
			r.recordUnsent(t.lat, end, first, last)
		}
		rep.LatencyUncorrected = latencyOf(t.raw)
	}
	rep.Latency = latencyOf(t.lat)
	if !r.open {
		rep.LatencyUncorrected = rep.Latency
	}
	if rep.Wrong > 0 || rep.Unsent > 0 || rep.Aborted != "" {
		rep.ExitCode = 1
	}
	return rep
}

// slotAt returns the intended time of open-loop slot n (1-based), in ns
// since the start, as claim computes it.
func (r *runner) slotAt(n int64) int64 { return int64(float64(n-1) * r.perSlot) }

// unsentSlots returns the open-loop slots (1-based, first to last; none
// when last < first) due before issuing stopped at stopAt that were never
// handed to a connection. Slots are handed out in order, so those are the
// ones after the last claimed.
func (r *runner) unsentSlots(stopAt int64) (first, last int64) {
	if stopAt <= 0 {
		return 1, 0
	}
	// Slot n is due before stopAt when (n-1)·perSlot < stopAt.
	due := int64(math.Ceil(float64(stopAt) / r.perSlot))
	if r.cfg.Requests > 0 && due > r.cfg.Requests {
		due = r.cfg.Requests
	}
	// claimed counts every claim past the stop checks, granted or not;
	// those not granted are past the schedule's end, beyond due.
	return min(r.claimed.Load(), due) + 1, due
}

// recordUnsent records in h the latency of the never-sent open-loop slots
// first to last: the time from each one's intended start to end. The
// slots are recorded by histogram bucket (RecordValues), the same value
// for all the slots that fall into one, so that the cost is bounded by
// the buckets and not by the slots (a long outage at a high rate leaves
// billions).
func (r *runner) recordUnsent(h *hdrhistogram.Histogram, end, first, last int64) {
	wait := func(n int64) int64 { return usec(end - r.slotAt(n)) } // nonincreasing in n
	for n := last; n >= first; {
		v := wait(n)
		// The earliest slot whose wait falls into v's bucket.
		lo, hi := first, n
		for lo < hi {
			mid := lo + (hi-lo)/2
			if h.ValuesAreEquivalent(wait(mid), v) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		_ = h.RecordValues(v, n-lo+1)
		n = lo - 1
	}
}

// WriteJSON writes the report as one JSON object and a newline.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteHistogram writes the latency distribution (Latency: corrected in an
// open loop) in HdrHistogram's .hgrm percentile format, values in
// milliseconds, as wrk2 does; plot it with HdrHistogram's plotter.
func (r *Report) WriteHistogram(w io.Writer) error {
	if r.lat == nil {
		return fmt.Errorf("loadgen: the report has no histogram")
	}
	_, err := r.lat.PercentilesPrint(w, 5, 1000.0)
	return err
}

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "loadgen: %s, %s loop, %d connections, engine %s\n", c.URL, c.Mode, c.Connections, c.Engine)
	if c.Body != "" {
		fmt.Fprintf(&b, "  body %s", c.Body)
		if c.Gzip {
			b.WriteString(" (gzip)")
		}
	} else {
		fmt.Fprintf(&b, "  mix %s", c.Mix)
	}
	if c.MCPVersion != "" {
		fmt.Fprintf(&b, ", MCP %s", c.MCPVersion)
	}
	if c.Rate > 0 {
		fmt.Fprintf(&b, ", %g requests/s scheduled", c.Rate)
	}
	b.WriteString("\n")
	if r.Interrupted {
		b.WriteString("  interrupted: the report covers the run so far\n")
	}
	if r.Aborted != "" {
		fmt.Fprintf(&b, "  ABORTED — %s; the report covers the run so far\n", r.Aborted)
	}
	fmt.Fprintf(&b, "\n  %.2fs (%.2fs issuing + %.2fs drain), %d sent, %d answers (%d in the drain), %.1f answers/s while issuing\n",
		r.ElapsedS, r.IssuingS, r.DrainS, r.Sent, r.Answers, r.DrainAnswers, r.RPS)
	fmt.Fprintf(&b, "  right %d, wrong %d\n", r.OK, r.Wrong)
	if r.Events > 0 {
		fmt.Fprintf(&b, "  streamed events %d (%.1f/s)\n", r.Events, r.EventsPerSec)
		if f := r.FirstEvent; f.Count > 0 {
			fmt.Fprintf(&b, "  first event (µs) p50 %d, p99 %d, max %d\n", f.P50, f.P99, f.Max)
		}
	}
	if r.Wrong > 0 {
		b.WriteString("  wrong by class:")
		for cl := ClassTransport; cl < numClasses; cl++ {
			if n := r.WrongByClass[cl.String()]; n > 0 {
				fmt.Fprintf(&b, " %s %d", cl, n)
			}
		}
		b.WriteString("\n")
	}
	if len(r.Shapes) > 1 || c.Body != "" {
		b.WriteString("  by shape:")
		for s := Shape(0); s < numShapes; s++ {
			if sc, ok := r.Shapes[s.String()]; ok {
				fmt.Fprintf(&b, " %s %d/%d", s, sc.OK, sc.Sent)
			}
		}
		b.WriteString(" (right/sent)\n")
	}
	if c.Mode == "open" {
		fmt.Fprintf(&b, "  missed slots %d (sent over %v late), unsent %d\n", r.MissedSlots, SlotTolerance, r.Unsent)
		if r.Unsent > 0 {
			fmt.Fprintf(&b, "  UNSENT — FLAGGED: %d slots came and went with every connection busy (the server held them, or -c is too low for -rate);\n"+
				"  the corrected latency counts them at the time they had waited by the end, so its percentiles are lower bounds\n", r.Unsent)
		}
	}
	if w := r.Waits; w != (Waits{}) {
		fmt.Fprintf(&b, "  waits: %d polled for up to %gµs (%d caught an answer), %d blocked\n", w.Spins, c.SpinUS, w.Caught, w.Blocked)
	}
	if r.Reconnects > 0 {
		fmt.Fprintf(&b, "  reconnects %d\n", r.Reconnects)
	}
	b.WriteString("\n  latency      p50       p90       p99     p99.9       max\n")
	row := func(name string, l Latency) {
		fmt.Fprintf(&b, "  %-9s %9s %9s %9s %9s %9s\n", name, fmtUsec(l.P50), fmtUsec(l.P90), fmtUsec(l.P99), fmtUsec(l.P999), fmtUsec(l.Max))
	}
	if c.Mode == "open" {
		row("corrected", r.Latency)
		row("raw", r.LatencyUncorrected)
	} else {
		row("", r.Latency)
	}
	for i, e := range r.Examples {
		fmt.Fprintf(&b, "\n  wrong answer %d (%s, %s request, at %.3fs): %s\n", i+1, e.Class, e.Shape, e.AtSeconds, e.Detail)
		fmt.Fprintf(&b, "  request:\n%s\n  answer:\n%s\n", indent(e.Request), indent(e.Answer))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)"
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
