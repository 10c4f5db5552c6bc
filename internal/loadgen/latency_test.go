package loadgen

import (
	"strings"
	"testing"
	"time"
)

// TestLatencyOfFailures: requests that time out, and requests whose
// connection closes unanswered, are in the latency histograms at the time
// they waited, in both loops and through every engine: every request of a
// run counts, and a timeout shows at least the timeout.
func TestLatencyOfFailures(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		answer []byte // to every 10th request: nil holds it, empty closes
		min    int64  // µs the failures waited at least
	}{
		{"timeout", nil, timeout.Microseconds()},
		{"closed", []byte{}, 0},
	} {
		for _, rate := range []float64{0, 200} {
			for _, eng := range Engines() {
				name := tc.name + "/closed loop/" + eng
				if rate > 0 {
					name = tc.name + "/open loop/" + eng
				}
				t.Run(name, func(t *testing.T) {
					f := startRaw(t, &rawFake{answer: func(r *rawRequest) []byte {
						if r.k%10 == 0 {
							return tc.answer
						}
						return rightAnswer(r)
					}})
					rep := runOrFatal(t, Config{URL: f.url, Connections: 2, Requests: 40, Rate: rate, Engine: eng, Timeout: timeout})
					if rep.WrongByClass["transport"] != 4 || rep.Sent != 40 {
						t.Fatalf("sent %d, transport failures %d; want 40, 4: %+v", rep.Sent, rep.WrongByClass["transport"], rep.Examples)
					}
					for _, l := range []struct {
						name string
						l    Latency
					}{{"latency", rep.Latency}, {"uncorrected latency", rep.LatencyUncorrected}} {
						if l.l.Count != 40 {
							t.Errorf("%s counts %d requests of 40", l.name, l.l.Count)
						}
						if l.l.Max < tc.min {
							t.Errorf("%s max %dµs, want at least %dµs", l.name, l.l.Max, tc.min)
						}
					}
				})
			}
		}
	}
}

// stallFrom returns a rawFake answer that holds every request that comes
// between from and until (measured from the call) until until, then
// answers it right.
func stallFrom(from, until time.Duration) func(*rawRequest) []byte {
	start := time.Now()
	return func(r *rawRequest) []byte {
		if d := time.Since(start); d >= from && d < until {
			time.Sleep(until - d)
		}
		return rightAnswer(r)
	}
}

// TestUnsentSlots: an open loop whose server stalls from 0.3 s until
// after the run's 1 s and its 0.3 s drain: the slots of the stall never go
// out, all connections being held, and the two requests held fail when
// the drain ends. The slots are counted as unsent, in the corrected
// latency at the time they had waited by the end of the run (a lower
// bound), and they fail the run.
func TestUnsentSlots(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startRaw(t, &rawFake{answer: stallFrom(300*time.Millisecond, 1600*time.Millisecond)})
			rep := runOrFatal(t, Config{URL: f.url, Connections: 2, Rate: 1000, Duration: time.Second, Drain: 300 * time.Millisecond, Engine: eng, Timeout: 5 * time.Second})
			t.Logf("sent %d, unsent %d, corrected %+v, raw %+v", rep.Sent, rep.Unsent, rep.Latency, rep.LatencyUncorrected)
			if rep.Wrong != 2 || rep.WrongByClass["transport"] != 2 {
				t.Fatalf("wrong %v, want the two held requests cut at the end of the drain: %+v", rep.WrongByClass, rep.Examples)
			}
			// About 700 slots, from 0.3 s to the end at 1 s, less the two
			// sent into the stall (more when this machine is so busy
			// that the run falls behind before the stall).
			if rep.Unsent < 500 || rep.Unsent >= 1000 {
				t.Errorf("unsent %d, want about 700", rep.Unsent)
			}
			if rep.Latency.Count != int64(rep.Sent+rep.Unsent) || rep.LatencyUncorrected.Count != int64(rep.Sent) {
				t.Errorf("corrected latency counts %d, raw %d; want sent+unsent %d, sent %d",
					rep.Latency.Count, rep.LatencyUncorrected.Count, rep.Sent+rep.Unsent, rep.Sent)
			}
			// Most slots waited through the stall: the median is at least
			// a quarter of a second.
			if rep.Latency.P50 < 250_000 {
				t.Errorf("corrected p50 %dµs, want at least 250ms", rep.Latency.P50)
			}
			if rep.ExitCode != 1 {
				t.Errorf("exit code %d, want 1", rep.ExitCode)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "FLAGGED") {
				t.Errorf("the text report does not flag the unsent slots (%v):\n%s", err, text.String())
			}
		})
	}
}

// TestRecordUnsent: recording the unsent slots bucket by bucket gives the
// histogram that recording each slot alone gives.
func TestRecordUnsent(t *testing.T) {
	for _, tc := range []struct {
		rate        float64
		first, last int64
		end         time.Duration
	}{
		{1000, 301, 1000, 1600 * time.Millisecond},
		{3333, 1, 3333, time.Second},
		{77_777, 5000, 700_000, 9 * time.Second},
		{1e6, 10, 10, 20 * time.Microsecond},
	} {
		r := &runner{perSlot: 1e9 / tc.rate}
		end := int64(tc.end)
		one, grouped := newHist(), newHist()
		for n := tc.first; n <= tc.last; n++ {
			_ = one.RecordValue(usec(end - r.slotAt(n)))
		}
		r.recordUnsent(grouped, end, tc.first, tc.last)
		if !one.Equals(grouped) {
			t.Errorf("rate %v, slots %d–%d: grouped %+v, one by one %+v", tc.rate, tc.first, tc.last, latencyOf(grouped), latencyOf(one))
		}
	}
}
