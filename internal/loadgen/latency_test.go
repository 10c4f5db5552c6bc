package loadgen

import (
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
