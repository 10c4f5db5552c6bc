//go:build !race

package loadgen

import (
	"bytes"
	"context"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawEcho is a hand-written HTTP/1.1 server for allocation tests: it
// allocates nothing per request, so every allocation counted is loadgen's.
// It answers echo calls by splicing the id and text into a template.
func rawEcho(t testing.TB) string {
	t.Helper()
	return listenRaw(t, rawEchoConn)
}

func rawEchoConn(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	out := make([]byte, 0, 4096)
	body := make([]byte, 0, 4096)
	n := 0
	for {
		m, err := c.Read(buf[n:])
		if err != nil {
			return
		}
		n += m
		for {
			h := bytes.Index(buf[:n], []byte("\r\n\r\n"))
			if h < 0 {
				break
			}
			cl := bytes.Index(buf[:h], []byte("Content-Length: "))
			l := 0
			for i := cl + 16; buf[i] >= '0' && buf[i] <= '9'; i++ {
				l = l*10 + int(buf[i]-'0')
			}
			end := h + 4 + l
			if n < end {
				break
			}
			req := buf[h+4 : end]
			id := req[bytes.Index(req, []byte(`"id":`))+5:]
			id = id[:bytes.IndexByte(id, ',')]
			text := req[bytes.Index(req, []byte(`"text":"`))+8:]
			e := 0
			for text[e] != '"' {
				if text[e] == '\\' {
					e++
				}
				e++
			}
			body = append(body[:0], `{"jsonrpc":"2.0","id":`...)
			body = append(body, id...)
			body = append(body, `,"result":{"resultType":"complete","content":[{"type":"text","text":"`...)
			body = append(body, text[:e]...)
			body = append(body, `"}]}}`...)
			out = append(out[:0], "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "...)
			out = strconv.AppendInt(out, int64(len(body)), 10)
			out = append(out, "\r\n\r\n"...)
			out = append(out, body...)
			if _, err := c.Write(out); err != nil {
				return
			}
			n = copy(buf, buf[end:n])
		}
	}
}

// TestAllocsPerRequest: building a request, writing it, reading the
// answer, checking it and recording it allocate nothing once warm.
func TestAllocsPerRequest(t *testing.T) {
	url := rawEcho(t)
	for _, tc := range []struct {
		v    string
		size int
	}{{"", 0}, {"2026-07-28", 0}, {"", SmallTextSize}, {"2026-07-28", 2000}} {
		v := tc.v
		cfg, err := Config{URL: url, MCPVersion: v, TextSize: tc.size}.normalized()
		if err != nil {
			t.Fatal(err)
		}
		p, err := newPlan(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := &runner{cfg: cfg, p: p, start: time.Now(), abortCh: make(chan struct{})}
		w := r.newWorker(0, 1)
		tgt, _ := parseTarget(url)
		conn, err := net.Dial("tcp", tgt.addr)
		if err != nil {
			t.Fatal(err)
		}
		x := newExchange()
		var failed error
		one := func() {
			w.prepare(x, -1)
			w.sent(x, r.now())
			if _, err := conn.Write(x.wire); err != nil {
				failed = err
				return
			}
			if err := readAnswer(conn, x, func() int64 { return 0 }); err != nil {
				failed = err
				return
			}
			w.answered(x, r.now())
		}
		for i := 0; i < 100; i++ {
			one()
		}
		allocs := testing.AllocsPerRun(2000, one)
		conn.Close()
		if failed != nil {
			t.Fatal(failed)
		}
		tot := r.totals(false)
		if tot.ok != tot.sent || tot.sent < 2000 {
			t.Fatalf("version %q, text size %d: ok %d of %d: %+v", v, tc.size, tot.ok, tot.sent, r.examples)
		}
		if allocs != 0 {
			t.Errorf("version %q, text size %d: %.2f allocations per request, want 0", v, tc.size, allocs)
		}
	}
}

// TestAllocsPerRun: whole runs through each engine allocate a fixed
// amount, not an amount per request.
func TestAllocsPerRun(t *testing.T) {
	url := rawEcho(t)
	for _, tc := range []struct {
		engine string
		shared bool
		conns  int
	}{
		{"epoll", true, 4},
		{"epoll", false, 1}, // one loop, blocking raw: needs a spare P for the server
		{"netconn", true, 4},
	} {
		if engineByName(tc.engine) == nil {
			continue
		}
		t.Run(tc.engine+"/shared="+strconv.FormatBool(tc.shared), func(t *testing.T) {
			if !tc.shared && runtime.GOMAXPROCS(0) < 2 {
				t.Skip("needs GOMAXPROCS ≥ 2")
			}
			mallocs := func(n int64) uint64 {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				rep, err := Run(context.Background(), Config{URL: url, Connections: tc.conns, Requests: n, Engine: tc.engine, SharedProcess: tc.shared}, nil)
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				if rep.OK != uint64(n) {
					t.Fatalf("ok %d of %d: %+v", rep.OK, n, rep.Examples)
				}
				return after.Mallocs - before.Mallocs
			}
			mallocs(1000) // warm up
			small, large := mallocs(1000), mallocs(21000)
			per := (float64(large) - float64(small)) / 20000
			t.Logf("%d allocations for 1000 requests, %d for 21000: %.4f per request", small, large, per)
			if per > 0.01 {
				t.Errorf("%.4f allocations per request, want 0", per)
			}
		})
	}
}

// TestAllocsBuildGzip: building a gzip custom request (Config.BodyGzip)
// allocates nothing once warm: the id goes between parts compressed once.
func TestAllocsBuildGzip(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("gz ", 3000) + `"}}}`
	g := newGenerator(testPlan(t, Config{Body: []byte(body), BodyGzip: true}), 0, 1, 1)
	var e expectation
	wire := g.build(nil, &e)
	if allocs := testing.AllocsPerRun(500, func() { wire = g.build(wire, &e) }); allocs != 0 {
		t.Errorf("%.2f allocations per gzip request, want 0", allocs)
	}
}
