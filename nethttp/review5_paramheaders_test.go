package nethttp_test

// Review 5: the Mcp-Param headers (SEP-2243) over the net/http transport,
// which carries net/http's header map (names canonicalized, lines of one
// name kept in order) into the pipeline (2026-12-07).
// TestReview5SplitHeaderLinesNetHTTP pins a fix; the other test pins
// attacks resisted.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/rpcedge/rpcedge/nethttp"
)

const r5Meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// r5Serve serves, through nethttp on loopback, a tool whose region
// argument is mirrored into Mcp-Param-Region; it returns the server's
// address and a function reporting how many times the tool ran and on
// which region last.
func r5Serve(t *testing.T) (string, func() (int, string)) {
	t.Helper()
	s, err := mcp.New(mcp.Info{Name: "review5", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		runs int
		last string
	)
	if err := s.AddTool(mcp.Tool{Name: "route",
		InputSchema: `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			v, err := c.ArgString("region")
			if err != nil {
				return err
			}
			mu.Lock()
			runs++
			last = string(v)
			mu.Unlock()
			c.AddText(string(v))
			return nil
		})}); err != nil {
		t.Fatal(err)
	}
	srv, h, err := nethttp.New(fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, s.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return strings.TrimPrefix(hs.URL, "http://"), func() (int, string) {
		mu.Lock()
		defer mu.Unlock()
		return runs, last
	}
}

// r5Request is a 2026-07-28 tools/call of route on region, with extra
// header lines, and a trailer section (chunked) when trailer is not nil.
func r5Request(region, lines string, trailer *string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"route","arguments":{"region":` + region + `},` + r5Meta + `}}`
	head := "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: route\r\n" + lines
	if trailer == nil {
		return head + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
	}
	return head + "Trailer: Mcp-Param-Region\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n%s\r\n", len(body), body, *trailer)
}

// r5Do writes request on a new connection to addr and returns the
// answer's status and body (0 and the error when none came).
func r5Do(t *testing.T, addr, request string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReview5ParamHeadersNetHTTP: over net/http, lines of one name in
// any case are combined (two lines disagree), a trailer takes part in no
// check, and bytes no field may carry are refused.
func TestReview5ParamHeadersNetHTTP(t *testing.T) {
	addr, seen := r5Serve(t)
	trailer := func(s string) *string { return &s }
	tests := []struct {
		name    string
		request string
		ok      bool
	}{
		{"matching", r5Request(`"eu"`, "Mcp-Param-Region: eu\r\n", nil), true},
		{"differing", r5Request(`"eu"`, "Mcp-Param-Region: us\r\n", nil), false},
		{"missing", r5Request(`"eu"`, "", nil), false},
		{"two lines, other case, agreeing", r5Request(`"eu"`, "Mcp-Param-Region: eu\r\nMCP-PARAM-REGION: eu\r\n", nil), false},
		{"two lines, the first matching", r5Request(`"eu"`, "mcp-param-region: eu\r\nMcp-Param-Region: us\r\n", nil), false},
		{"NUL", r5Request(`"a\u0000b"`, "Mcp-Param-Region: a\x00b\r\n", nil), false},
		{"byte 0x80", r5Request(`"a\u0080"`, "Mcp-Param-Region: a\x80\r\n", nil), false},
		{"a trailer does not stand for the header", r5Request(`"eu"`, "", trailer("Mcp-Param-Region: eu\r\n")), false},
		{"a trailer does not change an agreeing header", r5Request(`"eu"`, "Mcp-Param-Region: eu\r\n", trailer("Mcp-Param-Region: us\r\n")), true},
		{"a trailer does not mend a disagreeing header", r5Request(`"eu"`, "Mcp-Param-Region: us\r\n", trailer("Mcp-Param-Region: eu\r\n")), false},
	}
	for _, tc := range tests {
		before, _ := seen()
		st, body := r5Do(t, addr, tc.request)
		after, last := seen()
		ran := after != before
		if tc.ok != (st == 200 && ran) || !tc.ok && (st != 400 || ran) {
			t.Errorf("%s: %d %.200s, ran %v with %q", tc.name, st, body, ran, last)
		}
	}
}

// TestReview5SplitHeaderLinesNetHTTP: as over fasthttp, two lines
// "us-west1" and "eu-west1" are refused for a value "us-west1, eu-west1":
// an intermediary reading one line would route on us-west1.
func TestReview5SplitHeaderLinesNetHTTP(t *testing.T) {
	addr, seen := r5Serve(t)
	st, body := r5Do(t, addr, r5Request(`"us-west1, eu-west1"`, "Mcp-Param-Region: us-west1\r\nMcp-Param-Region: eu-west1\r\n", nil))
	if st != 400 || !strings.Contains(body, "-32020") {
		_, last := seen()
		t.Errorf("%d %.200s (the tool ran with %q), want 400 / -32020", st, body, last)
	}
}
