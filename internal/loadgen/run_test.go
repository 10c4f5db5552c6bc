package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// runOrFatal runs cfg against a server in this process (SharedProcess).
func runOrFatal(t *testing.T, cfg Config) *Report {
	t.Helper()
	cfg.SharedProcess = true
	rep, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRunRightServer runs every shape against a server that follows the
// contract: nothing may be flagged.
func TestRunRightServer(t *testing.T) {
	f := startFake(t, &fakeServer{})
	for _, eng := range Engines() {
		for _, version := range []string{"", "2025-11-25", "2026-07-28"} {
			t.Run(eng+"/"+version, func(t *testing.T) {
				rep := runOrFatal(t, Config{
					URL: f.url, Connections: 4, Requests: 3000, Engine: eng, MCPVersion: version,
					Mix: Mix{ShapeCall: 50, ShapeNotify: 10, ShapeUnknown: 10, ShapeBadParams: 10, ShapeParse: 10, ShapeBatch: 10},
				})
				if rep.Wrong != 0 || rep.ExitCode != 0 {
					t.Fatalf("wrong %d (%v), examples %+v", rep.Wrong, rep.WrongByClass, rep.Examples)
				}
				if rep.Sent != 3000 || rep.OK != 3000 || rep.Answers != 3000 {
					t.Fatalf("sent %d ok %d answers %d, want 3000 each", rep.Sent, rep.OK, rep.Answers)
				}
				for s := ShapeCall; s < ShapeCustom; s++ {
					if rep.Shapes[s.String()].Sent == 0 {
						t.Errorf("shape %s never sent: %v", s, rep.Shapes)
					}
				}
				// Parse and batch answers make loadgen reconnect.
				if rep.Reconnects == 0 {
					t.Errorf("no reconnects after parse and batch requests")
				}
			})
		}
	}
}

// TestRunWrongIDs: a server that answers a wrong id exactly once in 100
// is reported exactly that often, and the run's exit code is 1.
func TestRunWrongIDs(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startFake(t, &fakeServer{wrongIDEvery: 100})
			rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 8, Requests: 5000, Engine: eng})
			if got := rep.WrongByClass["id"]; got != 50 {
				t.Errorf("wrong ids: %d, want 50 (%v)", got, rep.WrongByClass)
			}
			if rep.Wrong != 50 || rep.OK != 4950 {
				t.Errorf("wrong %d ok %d, want 50 and 4950", rep.Wrong, rep.OK)
			}
			if rep.ExitCode != 1 {
				t.Errorf("exit code %d, want 1", rep.ExitCode)
			}
			if len(rep.Examples) != DefaultMaxExamples {
				t.Fatalf("%d examples, want %d", len(rep.Examples), DefaultMaxExamples)
			}
			ex := rep.Examples[0]
			if ex.Class != "id" || !strings.Contains(ex.Answer, `"not-`) || !strings.HasPrefix(ex.Request, "POST /mcp HTTP/1.1\r\n") {
				t.Errorf("example not verbatim: %+v", ex)
			}
		})
	}
}

// TestRunNotifyWithBody: a 202 that carries a body is flagged.
func TestRunNotifyWithBody(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startFake(t, &fakeServer{notifyBody: true})
			rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 2, Requests: 200, Engine: eng, Mix: Mix{ShapeNotify: 1}})
			if rep.WrongByClass["body"] != 200 || rep.OK != 0 {
				t.Errorf("wrong by class %v, ok %d; want 200 body", rep.WrongByClass, rep.OK)
			}
			if rep.ExitCode != 1 {
				t.Errorf("exit code %d", rep.ExitCode)
			}
		})
	}
}

// TestRunConnectionClose: answers with Connection: close are followed
// by a new connection, not by transport errors.
func TestRunConnectionClose(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startFake(t, &fakeServer{closeAfter: 7})
			rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 3, Requests: 700, Engine: eng})
			if rep.Wrong != 0 || rep.Reconnects < 90 {
				t.Errorf("wrong %d (%v), reconnects %d", rep.Wrong, rep.Examples, rep.Reconnects)
			}
		})
	}
}

// TestRunServerGone: once the server is gone, requests fail as transport
// errors, and the run still ends on time.
func TestRunServerGone(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startFake(t, &fakeServer{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				time.Sleep(300 * time.Millisecond)
				_ = f.srv.Shutdown()
			}()
			start := time.Now()
			rep, err := Run(ctx, Config{SharedProcess: true, URL: f.url, Connections: 2, Duration: time.Second, Engine: eng, Timeout: time.Second}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el > 4*time.Second {
				t.Errorf("run took %v", el)
			}
			if rep.WrongByClass["transport"] == 0 || rep.ExitCode != 1 {
				t.Errorf("by class %v exit %d", rep.WrongByClass, rep.ExitCode)
			}
		})
	}
}

func TestRunUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Run(context.Background(), Config{SharedProcess: true, URL: "http://" + addr + "/mcp", Requests: 1}, nil)
	if !errors.Is(err, ErrConnect) {
		t.Fatalf("err %v, want ErrConnect", err)
	}
}

// TestRunInterrupt: canceling the context ends the run early with a
// report marked interrupted. The context is canceled once the server has
// answered some requests of the run (not after a fixed time, which a
// loaded machine under -race could spend before the first answer).
func TestRunInterrupt(t *testing.T) {
	f := startFake(t, &fakeServer{})
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n0 := f.n.Load()
			go func() {
				deadline := time.Now().Add(10 * time.Second)
				for f.n.Load()-n0 < 20 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
				cancel()
			}()
			start := time.Now()
			rep, err := Run(ctx, Config{SharedProcess: true, URL: f.url, Connections: 4, Duration: time.Minute, Engine: eng}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if time.Since(start) > 15*time.Second || !rep.Interrupted || rep.OK == 0 || rep.Wrong != 0 {
				t.Errorf("elapsed %v interrupted %v ok %d wrong %d %v", time.Since(start), rep.Interrupted, rep.OK, rep.Wrong, rep.Examples)
			}
		})
	}
}

// TestRunOpenLoopCorrected: an open loop at 2,000 requests/s on 4
// connections for 5 s against a server that holds all answers once for
// 200 ms. Measured from the intended send times, p99 shows the stall;
// measured from the actual send times (what a closed-loop tool reports),
// it hides it.
func TestRunOpenLoopCorrected(t *testing.T) {
	if testing.Short() {
		t.Skip("5 s open loop; skipped with -short")
	}
	f := startFake(t, &fakeServer{pauseAfter: 2 * time.Second, pauseFor: 200 * time.Millisecond})
	rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 4, Rate: 2000, Duration: 5 * time.Second})
	t.Logf("corrected %+v", rep.Latency)
	t.Logf("uncorrected %+v", rep.LatencyUncorrected)
	t.Logf("sent %d missed %d unsent %d", rep.Sent, rep.MissedSlots, rep.Unsent)
	if rep.Wrong != 0 {
		t.Fatalf("wrong answers: %v", rep.Examples)
	}
	if rep.Latency.P99 < 100_000 {
		t.Errorf("corrected p99 %dµs, want ≥ 100ms", rep.Latency.P99)
	}
	if rep.LatencyUncorrected.P99 >= 20_000 {
		t.Errorf("uncorrected p99 %dµs, want < 20ms", rep.LatencyUncorrected.P99)
	}
	if rep.MissedSlots < 200 {
		t.Errorf("missed slots %d, want the ~400 of the stall", rep.MissedSlots)
	}
	if rep.Sent < 9000 || rep.Sent > 10001 {
		t.Errorf("sent %d, want about 10000", rep.Sent)
	}
}

// TestRunOpenLoopRate: the open loop keeps its rate.
func TestRunOpenLoopRate(t *testing.T) {
	f := startFake(t, &fakeServer{})
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 4, Rate: 1000, Requests: 500, Engine: eng})
			if rep.Sent != 500 || rep.Wrong != 0 {
				t.Fatalf("sent %d wrong %d", rep.Sent, rep.Wrong)
			}
			// 500 slots 1 ms apart take about 0.5 s.
			if rep.ElapsedS < 0.45 || rep.ElapsedS > 3 {
				t.Errorf("elapsed %.3fs, want about 0.5s", rep.ElapsedS)
			}
		})
	}
}

func TestRunCustomBody(t *testing.T) {
	f := startFake(t, &fakeServer{wrongIDEvery: 10})
	body := []byte(` {"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"fixed"}}} `)
	rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 2, Requests: 100, Body: body, BodyName: "x.json"})
	if rep.Shapes["custom"].Sent != 100 || rep.WrongByClass["id"] != 10 || rep.OK != 90 {
		t.Errorf("shapes %v by class %v ok %d", rep.Shapes, rep.WrongByClass, rep.OK)
	}
	if rep.Config.Body != "x.json" || rep.Config.Mix != "" {
		t.Errorf("config %+v", rep.Config)
	}
}

// TestReportJSON pins the JSON report's field names.
func TestReportJSON(t *testing.T) {
	f := startFake(t, &fakeServer{wrongIDEvery: 10})
	rep := runOrFatal(t, Config{SharedProcess: true, URL: f.url, Connections: 2, Requests: 100, Headers: []Header{{"X-Test", "1"}}, MCPVersion: "2025-06-18"})
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"config", "elapsed_s", "interrupted", "sent", "answers", "ok", "wrong", "rps",
		"missed_slots", "unsent", "reconnects", "wrong_by_class", "shapes", "latency_us",
		"latency_uncorrected_us", "wrong_examples", "exit_code", "events", "events_per_s", "first_event_us", "waits",
		"issuing_s", "drain_s", "drain_answers", "aborted"} {
		if _, ok := m[k]; !ok {
			t.Errorf("report lacks %q", k)
		}
	}
	if len(m) != 25 {
		t.Errorf("report has %d fields, want 25: %v", len(m), m)
	}
	cfg := m["config"].(map[string]any)
	for _, k := range []string{"url", "mode", "connections", "duration_s", "requests", "rate", "mix", "body", "headers", "mcp_version", "timeout_s", "drain_s", "engine", "spin_us"} {
		if _, ok := cfg[k]; !ok {
			t.Errorf("config lacks %q", k)
		}
	}
	for _, k := range []string{"spins", "caught", "blocked"} {
		if _, ok := m["waits"].(map[string]any)[k]; !ok {
			t.Errorf("waits lacks %q", k)
		}
	}
	lat := m["latency_us"].(map[string]any)
	for _, k := range []string{"count", "mean", "p50", "p90", "p99", "p99_9", "max"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency_us lacks %q", k)
		}
	}
	byClass := m["wrong_by_class"].(map[string]any)
	for _, k := range []string{"transport", "status", "header", "body", "id", "code", "result"} {
		if _, ok := byClass[k]; !ok {
			t.Errorf("wrong_by_class lacks %q", k)
		}
	}
	if byClass["id"].(float64) != 10 || m["exit_code"].(float64) != 1 || cfg["mode"] != "closed" || cfg["mcp_version"] != "2025-06-18" {
		t.Errorf("values: %s", buf.Bytes())
	}
	ex := m["wrong_examples"].([]any)[0].(map[string]any)
	for _, k := range []string{"class", "shape", "detail", "at_s", "request", "answer"} {
		if _, ok := ex[k]; !ok {
			t.Errorf("example lacks %q", k)
		}
	}
	var text, hist bytes.Buffer
	if err := rep.WriteText(&text); err != nil || !strings.Contains(text.String(), "wrong by class: id 10") {
		t.Errorf("text report: %v\n%s", err, text.String())
	}
	if err := rep.WriteHistogram(&hist); err != nil || !strings.Contains(hist.String(), "Percentile") {
		t.Errorf("hgrm: %v\n%s", err, hist.String())
	}
}
