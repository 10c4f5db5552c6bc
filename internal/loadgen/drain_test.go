package loadgen

import (
	"strings"
	"testing"
	"time"
)

// holdFrom returns a rawFake answer that holds every request that comes
// at or after from (measured from the call) for hold, then answers it
// right.
func holdFrom(from, hold time.Duration) func(*rawRequest) []byte {
	start := time.Now()
	return func(r *rawRequest) []byte {
		if time.Since(start) >= from {
			time.Sleep(hold)
		}
		return rightAnswer(r)
	}
}

// TestRPSIssuingWindow: requests/s is over the time requests were issued,
// not over the wait for the last answers after it: a 1 s run whose last
// answers take 1.2 s more reports the rate of its 1 s, and the drain
// apart.
func TestRPSIssuingWindow(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startRaw(t, &rawFake{answer: holdFrom(950*time.Millisecond, 1200*time.Millisecond)})
			rep := runOrFatal(t, Config{URL: f.url, Connections: 2, Duration: time.Second, Engine: eng})
			t.Logf("elapsed %.2fs, answers %d, rps %.0f", rep.ElapsedS, rep.Answers, rep.RPS)
			if rep.Wrong != 0 || rep.ElapsedS < 2 {
				t.Fatalf("wrong %d, elapsed %.2fs: want every answer right, the last after about 2.1 s", rep.Wrong, rep.ElapsedS)
			}
			// Nearly every answer came within the first second.
			if rep.RPS < 0.8*float64(rep.Answers) {
				t.Errorf("%.0f answers/s for %d answers of which all but two came within 1 s", rep.RPS, rep.Answers)
			}
			if rep.IssuingS != 1 || rep.DrainS < 1 || rep.DrainAnswers != 2 {
				t.Errorf("issuing %.3fs, drain %.3fs with %d answers; want 1 s, over 1 s with 2", rep.IssuingS, rep.DrainS, rep.DrainAnswers)
			}
			var text strings.Builder
			if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "s issuing + ") {
				t.Errorf("the text report does not show the drain apart (%v):\n%s", err, text.String())
			}
		})
	}
}

// TestDrainBounded: after a run's duration, requests still in flight get
// Config.Drain (default 2 s) to complete, not the whole timeout; those
// still unanswered then fail, and say why.
func TestDrainBounded(t *testing.T) {
	for _, drain := range []time.Duration{0, 300 * time.Millisecond} {
		for _, eng := range Engines() {
			t.Run(eng+"/"+drain.String(), func(t *testing.T) {
				f := startRaw(t, &rawFake{answer: holdFrom(500*time.Millisecond, time.Minute)})
				start := time.Now()
				rep := runOrFatal(t, Config{URL: f.url, Connections: 2, Duration: time.Second, Engine: eng, Drain: drain, Timeout: 20 * time.Second})
				el := time.Since(start)
				want := drain
				if want == 0 {
					want = DefaultDrain
				}
				if el < time.Second+want || el > time.Second+want+time.Second {
					t.Errorf("the run took %v, want 1 s and the drain, %v", el, want)
				}
				if rep.WrongByClass["transport"] != 2 || len(rep.Examples) == 0 || !strings.Contains(rep.Examples[0].Detail, "drain") {
					t.Errorf("by class %v, examples %+v; want the two held requests failed at the end of the drain", rep.WrongByClass, rep.Examples)
				}
			})
		}
	}
}

// TestOpenLoopLateAtEnd: in an open loop, slots due before the end that
// found every connection busy go out late as connections come free after
// it, within the drain: a 60 ms hold-up just before the end leaves none
// unsent (it shows in the corrected latency instead).
func TestOpenLoopLateAtEnd(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startRaw(t, &rawFake{answer: stallFrom(900*time.Millisecond, 960*time.Millisecond)})
			rep := runOrFatal(t, Config{URL: f.url, Connections: 2, Rate: 1000, Duration: 920 * time.Millisecond, Engine: eng})
			t.Logf("sent %d, unsent %d, missed %d, corrected %+v", rep.Sent, rep.Unsent, rep.MissedSlots, rep.Latency)
			if rep.Unsent != 0 || rep.ExitCode != 0 || rep.Wrong != 0 {
				t.Errorf("unsent %d, wrong %d, exit %d; want every slot sent, late", rep.Unsent, rep.Wrong, rep.ExitCode)
			}
			if rep.Sent != 920 || rep.Latency.Max < 40_000 {
				t.Errorf("sent %d, corrected max %dµs; want 920 and the hold-up", rep.Sent, rep.Latency.Max)
			}
		})
	}
}
