package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// serveStdio serves s's StreamEndpoint with fastserver.ServeLines over
// pipes: what is written to in is its input, each answer line comes on
// lines (closed when the output ends), and ServeLines' result on done.
func serveStdio(s *Server) (in io.WriteCloser, lines <-chan string, done <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	res := make(chan error, 1)
	go func() {
		res <- fastserver.ServeLines(context.Background(), s.StreamEndpoint(), fastserver.Config{Logger: slog.New(slog.DiscardHandler)}, inR, outW)
		outW.Close()
	}()
	out := make(chan string, 16)
	go func() {
		br := bufio.NewReader(outR)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(out)
				return
			}
			out <- l
		}
	}()
	return inW, out, res
}

// cancelTarget takes notifications/cancelled with one requestId, a string
// or a number, and nothing else.
func TestCancelTarget(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"x"}}`, `12`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"reason":"x","requestId":"a\"b"}}`, `"a\"b"`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":-4}}`, `-4`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{ "requestId" : "x" }}`, `"x"`},
		{`{"jsonrpc":"2.0","method":"notifications/cancel\u006ced","params":{"requestId":1}}`, `1`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":true}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"id":1}}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestId":2}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"id":1}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled"}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":1}}`, ``},
		{`{"jsonrpc":"2.0","method":"notifications/Cancelled","params":{"requestId":1}}`, ``},
	} {
		var m decode.Message
		var d decode.Decoder
		if err := d.Decode([]byte(tc.line), &m); err != nil {
			t.Fatalf("%s: %v", tc.line, err)
		}
		if got := string(cancelTarget(&m)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.line, got, tc.want)
		}
	}
}

// Over stdio (StreamEndpoint), notifications/cancelled ends the context of
// the tool call it names, which gets no answer; a call that waits behind
// it and is cancelled never runs; the stream goes on.
func TestStdioCancel(t *testing.T) {
	s, err := New(Info{Name: "c", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 8)
	ended := make(chan error, 8)
	ran := make(chan string, 8)
	s.AddTool(Tool{Name: "wait", Handler: ToolFunc(func(c *Call) error {
		started <- string(c.r.Msg.ID)
		select {
		case <-c.Context().Done():
			ended <- c.Context().Err()
			return c.Context().Err()
		case <-time.After(10 * time.Second):
			ended <- errors.New("not cancelled")
		}
		c.AddText("waited")
		return nil
	})})
	s.AddTool(Tool{Name: "say", InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Handler: ToolFunc(func(c *Call) error {
			ran <- string(c.r.Msg.ID)
			return c.AddTextJSON(c.Arg("text"))
		})})
	inW, lines, done := serveStdio(s)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(id, tool, args string) {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s,%s}}`+"\n", id, tool, args, meta)
	}
	cancel := func(id string) {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"the user gave up"}}`+"\n", id)
	}
	waitID := fmt.Sprintf(`"w-%d"`, rand.IntN(1<<30))
	skipped, kept := rand.IntN(1000), 1000+rand.IntN(1000)
	text := fmt.Sprintf("k\u00e9pt %d", kept)

	call(waitID, "wait", `{}`)
	select {
	case id := <-started:
		if id != waitID {
			t.Fatalf("started %s", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait tool did not start")
	}
	call(fmt.Sprint(skipped), "say", `{"text":"skipped"}`)
	call(fmt.Sprint(kept), "say", fmt.Sprintf(`{"text":%q}`, text))
	cancel(fmt.Sprint(skipped))
	cancel(strings.Replace(waitID, "w", `\u0077`, 1))
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the tool's context: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("notifications/cancelled did not reach the running tool")
	}
	select {
	case l := <-lines:
		if !strings.Contains(l, fmt.Sprintf(`"id":%d,`, kept)) || !strings.Contains(l, text) {
			t.Fatalf("first answer %q, want the one of request %d (the cancelled ones get none)", l, kept)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer")
	}
	select {
	case id := <-ran:
		if id != fmt.Sprint(kept) {
			t.Fatalf("say ran for %s, want only %d", id, kept)
		}
	default:
		t.Fatal("say did not run")
	}
	if len(ran) != 0 {
		t.Fatalf("the cancelled say ran")
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if l, ok := <-lines; ok {
		t.Fatalf("an answer more: %q", l)
	}
}

// Over HTTP, a client that closes its connection while a tool runs cancels
// the tool under 2026-07-28 ("The server MUST treat a client disconnect as
// cancellation of that request": fastserver.ErrClientGone, looked for
// once the tool has run 2 s), and does not under 2025-11-25
// ("Disconnection SHOULD NOT be interpreted as the client cancelling its
// request"): that tool runs on.
func TestHTTPDisconnectCancels(t *testing.T) {
	for _, tc := range []struct {
		version string
		cancels bool
	}{{"2026-07-28", true}, {"2025-11-25", false}} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			s, err := New(Info{Name: "d", Version: "1"})
			if err != nil {
				t.Fatal(err)
			}
			started := make(chan struct{}, 1)
			ended := make(chan error, 1)
			s.AddTool(Tool{Name: "wait", Handler: ToolFunc(func(c *Call) error {
				started <- struct{}{}
				select {
				case <-c.Context().Done():
					ended <- c.Context().Err()
				case <-time.After(5 * time.Second): // past two looks at the client
					ended <- nil
				}
				c.AddText("waited")
				return nil
			})})
			_, host := r9Serve(t, s, fastserver.Config{HandlerTimeout: time.Minute})
			id := rand.IntN(1 << 30)
			var body, hdr string
			if tc.version == "2026-07-28" {
				body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait","arguments":{},%s}}`, id, meta26)
				hdr = "Mcp-Method: tools/call\r\nMcp-Name: wait\r\n"
			} else {
				body = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, id)
			}
			raw := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
				"MCP-Protocol-Version: " + tc.version + "\r\n" + hdr + fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
			c := r9Dial(t, host, raw)
			select {
			case <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the tool did not start")
			}
			c.Close()
			left := time.Now()
			select {
			case err := <-ended:
				switch {
				case tc.cancels && !errors.Is(err, fastserver.ErrClientGone):
					t.Fatalf("the tool ended with %v, want fastserver.ErrClientGone", err)
				case !tc.cancels && err != nil:
					t.Fatalf("the tool's context ended with %v: a 2025-11-25 disconnect is no cancellation", err)
				}
				t.Logf("the tool ended %v after the client left: %v", time.Since(left).Round(time.Millisecond), err)
			case <-time.After(10 * time.Second):
				t.Fatal("the tool neither ended nor was cancelled")
			}
		})
	}
}
