package fastserver

// Header fields as an attacker writes them (contract §2 "Header fields,
// trailers and repeated lines"; issue #18 items 3, 4, 5, 9, 10): repeated
// singleton fields are judged combined, trailers take part in no check,
// the rate-limit key cannot be chosen with a forwarding line of one's own,
// refusals of registered methods are labelled by name, and connections
// draining after an early answer count against the connection cap.

import (
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRepeatedFields(t *testing.T) {
	_, addr := serve(t, Config{AllowedOrigins: []string{"*"}})
	cases := []struct {
		name string
		hdr  []string
		want want
	}{
		{"one allowed Origin", []string{"Origin: http://localhost"}, want{200, 0, "7", `{"a":1}`, ""}},
		{"two Origin lines that agree", []string{"Origin: http://localhost", "Origin: http://localhost"}, want{403, -32600, "null", "", ""}},
		{"two Origin lines, any origin allowed", []string{"Origin: http://a.example", "Origin: http://b.example"}, want{403, -32600, "null", "", ""}},
		{"two Content-Type lines that agree", []string{"Content-Type: application/json", "Content-Type: application/json"}, want{415, -32600, "null", "", ""}},
		{"Content-Type present and empty", []string{"Content-Type:  "}, want{415, -32600, "null", "", ""}},
		{"charset latin1", []string{"Content-Type: application/json; charset=latin1"}, want{415, -32600, "null", "", ""}},
		{"charset utf-16", []string{"Content-Type: application/json;charset=UTF-16"}, want{415, -32600, "null", "", ""}},
		{"charset \"UTF-8\"", []string{"Content-Type: application/json; charset=\"UTF-8\""}, want{200, 0, "7", `{"a":1}`, ""}},
		{"a parameter without a value", []string{"Content-Type: application/json; utf-8"}, want{415, -32600, "null", "", ""}},
		{"two version lines that agree", []string{"X-Version: 1", "X-Version: 1"}, want{400, codeVersion, "7", "", `{"supported":["1","2"],"requested":"1, 1"}`}},
		{"two method lines, the first matching", []string{"X-Method: echo", "X-Method: version"}, want{400, codeHeader, "7", "", ""}},
		{"two method lines that agree", []string{"X-Method: echo", "X-Method: echo"}, want{400, codeHeader, "7", "", ""}},
		{"two Content-Encoding lines", []string{"Content-Encoding: identity", "Content-Encoding: br"}, want{415, -32600, "null", "", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.hdr
			if !strings.HasPrefix(hdr[0], "Content-Type") {
				hdr = append(hdr, "Content-Type: application/json")
			}
			raw := rawPost(pathRPC, valid, hdr...)
			tc.want.check(t, roundTrip(t, addr, raw))
		})
	}
}

// rawPost writes a POST with exactly the given header lines (and Host and
// Content-Length), repeated names kept.
func rawPost(path, body string, hdr ...string) string {
	var b strings.Builder
	b.WriteString("POST " + path + " HTTP/1.1\r\nHost: test.example\r\n")
	for _, h := range hdr {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	return b.String()
}

// Trailer fields after a chunked body change no answer: fasthttp merges
// them into its request header, but the checks read the header section
// snapshot taken before the body.
func TestTrailersIgnored(t *testing.T) {
	_, addr := serve(t, Config{})
	body := `{"jsonrpc":"2.0","id":3,"method":"echo","params":{"t":1}}`
	for _, trailer := range []string{
		"X-Method: version",
		"X-Version: 9",
		"Origin: https://evil.example",
		"X-Method: version\r\nX-Version: 9\r\nOrigin: https://evil.example",
	} {
		raw := "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n" + trailer + "\r\n\r\n"
		want{200, 0, "3", `{"t":1}`, ""}.check(t, roundTrip(t, addr, raw))
	}
	// The version a handler sees comes from the header section too.
	v := `{"jsonrpc":"2.0","id":4,"method":"version"}`
	raw := "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nX-Version: 2\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		strconv.FormatInt(int64(len(v)), 16) + "\r\n" + v + "\r\n0\r\nX-Version: 1\r\n\r\n"
	want{200, 0, "4", "2", ""}.check(t, roundTrip(t, addr, raw))
	// Trailer fields RFC 9110 §6.5.1 says a sender must not send (framing,
	// content format, routing, authentication) change no answer either:
	// fasthttp refuses them once the last chunk is read, and the body is
	// whole by then; the connection closes after the answer, the trailer
	// section unread. net/http keeps them in Request.Trailer, read by
	// nothing.
	for i, trailer := range []string{
		"Content-Type: text/plain",
		"Content-Length: 3",
		"Content-Encoding: gzip",
		"Host: evil.example",
		"Authorization: Bearer t",
		"Connection: close",
		"Trailer: X-A",
		"X-Sum: 1\r\nContent-Type: text/plain\r\nX-Other: 2",
	} {
		id := strconv.Itoa(10 + i)
		b := `{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{"t":"` + strings.Repeat("x", i) + `"}}`
		raw := "POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
			strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b + "\r\n0\r\n" + trailer + "\r\n\r\n"
		want{200, 0, id, `{"t":"` + strings.Repeat("x", i) + `"}`, ""}.check(t, roundTrip(t, addr, raw))
		// The server serves on.
		want{200, 0, "3", `{"t":1}`, ""}.check(t, roundTrip(t, addr, rawPost(pathRPC, body, "Content-Type: application/json")))
	}
}

// Behind a trusted proxy, a client cannot pick its rate-limit key by
// sending an X-Forwarded-For line of its own: the proxy's line comes
// after it, and the key is the rightmost address that is not a proxy.
func TestForwardedForLines(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	for _, header := range []string{ProxyHeaderXForwardedFor, ProxyHeaderForwarded} {
		t.Run(header, func(t *testing.T) {
			_, addr := serve(t, Config{RateLimit: 0.001, RateBurst: 2, TrustedProxies: trusted, ProxyHeader: header, DrainTimeout: 50 * time.Millisecond})
			line := func(ip string) string {
				if header == ProxyHeaderForwarded {
					return "Forwarded: for=" + ip + ";proto=http"
				}
				return "X-Forwarded-For: " + ip
			}
			statuses := ""
			for i := range 6 {
				// The client's own line, fresh each time, then the proxy's.
				own := "203.0.113." + strconv.Itoa(10+i)
				r := roundTrip(t, addr, rawPost(pathRPC, valid, "Content-Type: application/json", line(own), line("198.51.100.7")))
				statuses += strconv.Itoa(r.Status) + " "
			}
			if statuses != "200 200 429 429 429 429 " {
				t.Errorf("one client behind the proxy, its own line varied: %s; want 2 then 429s", statuses)
			}
			// Another client behind the same proxy has its own bucket.
			want{200, 0, "7", `{"a":1}`, ""}.check(t, roundTrip(t, addr, rawPost(pathRPC, valid, "Content-Type: application/json", line("198.51.100.8"))))
			// Combined on one line it is the same list.
			r := roundTrip(t, addr, rawPost(pathRPC, valid, "Content-Type: application/json", line("203.0.113.99")+", "+strings.TrimPrefix(strings.TrimPrefix(line("198.51.100.7"), "X-Forwarded-For: "), "Forwarded: ")))
			if r.Status != 429 {
				t.Errorf("the same client on one combined line: %s, want 429", r.StatusLine)
			}
		})
	}
}

func TestForwardedParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for none
	}{
		{"for=192.0.2.60;proto=http;by=203.0.113.43", "192.0.2.60"},
		{`for="[2001:db8:cafe::17]:4711"`, "2001:db8:cafe::17"},
		{`For="192.0.2.60:80"`, "192.0.2.60"},
		{"proto=https; for=198.51.100.1", "198.51.100.1"},
		{"for=unknown", ""},
		{"for=_hidden", ""},
		{`for="[2001:db8::1"`, ""},
		{"for=[::1]", "::1"},
		{"by=1.2.3.4", ""},
		{"for=1.2.3.4.5", ""},
	} {
		a, ok := forwardedFor([]byte(tc.in))
		got := ""
		if ok {
			got = a.String()
		}
		if got != tc.want {
			t.Errorf("forwardedFor(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// A registered method refused at rows 11 to 13 is counted under its name.
func TestMetricsLabelRefused(t *testing.T) {
	_, addr := serve(t, Config{})
	roundTrip(t, addr, post(pathRPC, valid, "X-Method: version"))
	roundTrip(t, addr, post(pathRPC, `{"jsonrpc":"2.0","method":"echo"}`))
	roundTrip(t, addr, post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"made-up"}`, "X-Version: 9"))
	m := string(roundTrip(t, addr, request("GET", "/metrics", "")).Body)
	for _, series := range []string{
		`rpcedge_requests_total{endpoint="/rpc",method="echo",status="400",code="-32020"} 1`,
		`rpcedge_requests_total{endpoint="/rpc",method="echo",status="202",code="none"} 1`,
		`rpcedge_requests_total{endpoint="/rpc",method="other",status="400",code="-32022"} 1`,
	} {
		if !strings.Contains(m, series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
	if regexp.MustCompile(`method="made-up"`).MatchString(m) {
		t.Errorf("/metrics labels a method the client made up")
	}
}

// Connections draining after an early answer count against the cap: the
// answer is written and the connection half-closed, but until the drain
// ends it is open, and one more is refused.
func TestDrainingCountsAgainstCap(t *testing.T) {
	_, addr := serve(t, Config{MaxConns: 3, DrainTimeout: 1500 * time.Millisecond})
	body := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"` + strings.Repeat("d", 2000) + `"}}`
	for range 3 {
		c := dial(t, addr)
		raw := post(pathRPC, body, "Content-Type: text/plain")
		c.send(raw[:len(raw)-1000]) // the body still arriving: an early answer
		if r := c.read(); r.Status != 415 {
			t.Fatalf("early answer %s, want 415", r.StatusLine)
		}
		// Hold the connection open: the server drains it.
	}
	c := dial(t, addr)
	c.send(post(pathRPC, valid))
	r, err := c.tryRead()
	if err != nil || r.Status != 503 {
		t.Fatalf("a fourth connection while three drain: %v %v, want 503", r, err)
	}
	waitFor(t, "the drains to end and a connection to be served", func() bool {
		d := net.Dialer{Timeout: time.Second}
		cc, err := d.Dial("tcp", addr)
		if err != nil {
			return false
		}
		defer cc.Close()
		x := newConn(t, cc)
		x.send(post(pathRPC, valid))
		a, err := x.tryRead()
		return err == nil && a.Status == 200
	})
}

// The server's own routes move and switch off (Config.HealthPath,
// MetricsPath, NoHealth, NoMetrics), and the exposition can be served
// elsewhere (MetricsHandler).
func TestOwnRoutesMovable(t *testing.T) {
	_, addr := serve(t, Config{HealthPath: "/live", MetricsPath: "/internal/metrics"})
	for path, st := range map[string]int{"/live": 200, "/internal/metrics": 200, "/healthz": 404, "/metrics": 404} {
		if r := roundTrip(t, addr, request("GET", path, "")); r.Status != st {
			t.Errorf("GET %s: %d, want %d", path, r.Status, st)
		}
	}
	off, _ := New(Config{NoMetrics: true, NoHealth: true, Logger: quietLogger}, testEndpoints(nil)...)
	if err := off.HandleGET("/ops/metrics", off.MetricsHandler()); err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	go off.Serve(ln)
	t.Cleanup(func() { stopServer(t, off) })
	for path, st := range map[string]int{"/ops/metrics": 200, "/healthz": 404, "/metrics": 404} {
		if r := roundTrip(t, ln.Addr().String(), request("GET", path, "")); r.Status != st {
			t.Errorf("with NoMetrics, NoHealth: GET %s: %d, want %d", path, r.Status, st)
		}
	}
	if _, err := New(Config{HealthPath: "live"}, testEndpoints(nil)...); err == nil {
		t.Errorf("a HealthPath without / was accepted")
	}
	if _, err := New(Config{MetricsPath: pathRPC}, testEndpoints(nil)...); err == nil {
		t.Errorf("MetricsPath on an endpoint's path was accepted")
	}
}
