package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestGiveUp: a run bounded by count alone against a server that dies
// (connections refused) or hangs (every request times out) ends after
// Config.GiveUp without an answer, with a report that says why and exit
// code 1, rather than running on for n/(10·c) seconds of refused
// connections or n/c timeouts.
func TestGiveUp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		start   func(t *testing.T) string // the server's URL; it fails after 300 ms
		timeout time.Duration
	}{
		{"dies", func(t *testing.T) string {
			f := startFake(t, &fakeServer{})
			go func() {
				time.Sleep(300 * time.Millisecond)
				_ = f.srv.Shutdown()
			}()
			return f.url
		}, 5 * time.Second},
		{"hangs", func(t *testing.T) string {
			return startRaw(t, &rawFake{answer: stallFrom(300*time.Millisecond, time.Hour)}).url
		}, 200 * time.Millisecond},
	} {
		for _, eng := range Engines() {
			t.Run(tc.name+"/"+eng, func(t *testing.T) {
				url := tc.start(t)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				start := time.Now()
				rep, err := Run(ctx, Config{SharedProcess: true, URL: url, Connections: 2, Requests: 10_000_000, Engine: eng,
					Timeout: tc.timeout, GiveUp: time.Second}, nil)
				if err != nil {
					t.Fatal(err)
				}
				el := time.Since(start)
				t.Logf("%v: ok %d, wrong %v; aborted %q", el, rep.OK, rep.WrongByClass, rep.Aborted)
				if el > 3*time.Second {
					t.Errorf("the run took %v; want it given up about 1 s after the last answer", el)
				}
				if !strings.Contains(rep.Aborted, "no answer") || rep.Interrupted || rep.ExitCode != 1 || rep.OK == 0 {
					t.Errorf("aborted %q, interrupted %v, exit %d, ok %d", rep.Aborted, rep.Interrupted, rep.ExitCode, rep.OK)
				}
				var text strings.Builder
				if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), rep.Aborted) {
					t.Errorf("the text report does not say why the run ended (%v):\n%s", err, text.String())
				}
			})
		}
	}
}
