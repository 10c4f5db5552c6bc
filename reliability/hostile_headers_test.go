package reliability

// Header fields as an attacker writes them, against the built cmd/rpcedge
// binary (issue #18 items 3, 4, 5, 9, 10): repeated singleton fields,
// trailers, forwarding lines of the client's own, the labels of refused
// methods, Content-Type edge cases and connections draining after an early
// answer. Each was reproduced live before the fix; a crash or a hang of
// the binary fails the test.

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawReq writes a POST to path with exactly the given header lines (Host
// and Content-Length added), repeated names kept.
func rawReq(path, body string, hdr ...string) string {
	var b strings.Builder
	b.WriteString("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	for _, h := range hdr {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	return b.String()
}

// chunkedReq writes a chunked POST of body followed by trailer lines.
func chunkedReq(path, body string, hdr []string, trailers ...string) string {
	var b strings.Builder
	b.WriteString("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n")
	for _, h := range hdr {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n" + strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n")
	for _, t := range trailers {
		b.WriteString(t + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

func TestHostileHeadersAgainstBinary(t *testing.T) {
	b := startBinary(t, "-rate", "0.01", "-burst", "3", "-trusted-proxies", "127.0.0.0/8", "-max-conns", "40", "-read-timeout", "3s")
	const json = "Content-Type: application/json"
	call26 := `{"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hostile"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	call25 := `{"jsonrpc":"2.0","id":"h2","method":"tools/call","params":{"name":"echo","arguments":{"text":"hostile"}}}`
	list25 := `{"jsonrpc":"2.0","id":"h3","method":"tools/list"}`
	send := `{"jsonrpc":"2.0","id":"h4","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hostile"}]}}}`
	v26 := []string{json, "MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: echo"}
	v25 := []string{json, "MCP-Protocol-Version: 2025-11-25"}
	// Every client key below is its own: the binary trusts 127.0.0.0/8 as
	// proxies, so each request names its client in X-Forwarded-For.
	n := 0
	client := func() string { n++; return "X-Forwarded-For: 198.51.100." + strconv.Itoa(n) }
	type tc struct {
		name   string
		raw    string
		status int
		code   int
	}
	cases := []tc{
		{"baseline 2026-07-28 call", rawReq("/mcp", call26, append(v26, client())...), 200, 0},
		{"two Origin lines that agree", rawReq("/mcp", call25, append(v25, client(), "Origin: http://localhost", "Origin: http://localhost")...), 403, -32600},
		{"two Content-Type lines that agree", rawReq("/mcp", call25, client(), json, json, "MCP-Protocol-Version: 2025-11-25"), 415, -32600},
		{"Content-Type present and empty", rawReq("/mcp", call25, client(), "Content-Type: ", "MCP-Protocol-Version: 2025-11-25"), 415, -32600},
		{"charset latin1", rawReq("/mcp", call25, client(), "Content-Type: application/json; charset=latin1", "MCP-Protocol-Version: 2025-11-25"), 415, -32600},
		{"two MCP-Protocol-Version lines that agree", rawReq("/mcp", call25, client(), json, "MCP-Protocol-Version: 2025-11-25", "MCP-Protocol-Version: 2025-11-25"), 400, -32022},
		{"two Mcp-Method lines, the first matching", rawReq("/mcp", call26, append(v26, client(), "Mcp-Method: tools/list")...), 400, -32020},
		{"two Mcp-Name lines, the first matching", rawReq("/mcp", call26, append(v26, client(), "Mcp-Name: add")...), 400, -32020},
		{"two A2A-Version lines that agree", rawReq("/a2a", send, client(), json, "A2A-Version: 1.0", "A2A-Version: 1.0"), 400, -32009},
		{"trailer Mcp-Method on a valid call", chunkedReq("/mcp", call26, append(v26, client()), "Mcp-Method: tools/list"), 200, 0},
		{"trailer version on a valid call", chunkedReq("/mcp", call25, append(v25, client()), "MCP-Protocol-Version: 1999-01-01"), 200, 0},
		{"trailer A2A-Version", chunkedReq("/a2a", send, []string{json, client()}, "A2A-Version: 9"), 200, 0},
		{"tools/list with a wrong Mcp-Method (labelled by name)", rawReq("/mcp", list25, append(v25, client(), "Mcp-Method: tools/call")...), 400, -32020},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b.alive(t)
			as := rawExchange(t, b.addr, c.raw, false)
			a := as[len(as)-1]
			if a.status != c.status || rpcCode(a.body) != c.code {
				t.Fatalf("answer %d %q, want %d / %d", a.status, a.body, c.status, c.code)
			}
			t.Logf("%-55s %d %s", c.name, a.status, a.body)
		})
	}

	// The rate limit: one client behind the proxy that sends a line of its
	// own, fresh each time, before the proxy's line, is still one client.
	t.Run("rate limit with a forwarding line of the client's own", func(t *testing.T) {
		var got []string
		for i := range 6 {
			raw := rawReq("/mcp", call25, append(v25, "X-Forwarded-For: 203.0.113."+strconv.Itoa(i), "X-Forwarded-For: 192.0.2.77")...)
			as := rawExchange(t, b.addr, raw, false)
			got = append(got, strconv.Itoa(as[len(as)-1].status))
		}
		if strings.Join(got, " ") != "200 200 200 429 429 429" {
			t.Errorf("statuses %v, want the burst of 3 then 429", got)
		}
		t.Logf("6 requests, each with a fresh client-chosen line before the proxy's: %s", strings.Join(got, " "))
	})

	// Metrics: the refused tools/list is labelled by its name.
	t.Run("metrics labels", func(t *testing.T) {
		m := string(rawExchange(t, b.addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", false)[0].body)
		series := `rpcedge_requests_total{endpoint="/mcp",method="tools/list",status="400",code="-32020"} 1`
		if !strings.Contains(m, series) {
			t.Errorf("/metrics lacks %s", series)
		}
		if regexp.MustCompile(`rpcedge_panics_total\{[^}]*\} [1-9]`).MatchString(m) {
			t.Errorf("the binary recovered a panic:\n%s", m)
		}
	})

	// Connections draining after an early answer count against the cap
	// (-max-conns 40).
	t.Run("draining connections count against the cap", func(t *testing.T) {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 3000) + `"}}}`
		for i := range 40 {
			c, err := net.DialTimeout("tcp", b.addr, ioTimeout)
			if err != nil {
				t.Fatal(err)
			}
			held = append(held, c)
			raw := rawReq("/mcp", big, client(), "Content-Type: text/plain")
			c.SetDeadline(time.Now().Add(ioTimeout))
			fmt.Fprint(c, raw[:len(raw)-2000]) // the body still arriving: an early 415
			buf := make([]byte, 12)
			if _, err := c.Read(buf); err != nil || string(buf[9:12]) != "415" {
				t.Fatalf("connection %d: %q %v, want an early 415", i, buf, err)
			}
		}
		c, err := net.DialTimeout("tcp", b.addr, ioTimeout)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(ioTimeout))
		fmt.Fprint(c, rawReq("/mcp", call25, append(v25, client())...))
		buf := make([]byte, 12)
		if _, err := c.Read(buf); err != nil || string(buf[9:12]) != "503" {
			t.Errorf("a connection past 40 draining ones: %q %v, want 503", buf, err)
		}
	})
	b.alive(t)
	b.stop(t, 15*time.Second)
}
