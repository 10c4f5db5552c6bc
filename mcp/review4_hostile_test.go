package mcp

// A fourth hostile review: the tool-call surface (typed tools, streamed
// tool calls, results), as a hostile client and as a careless embedder.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// TestReview4ProgressAfterClientGone attacks a Streaming tool whose
// client hangs up mid-stream. Call.Progress's doc: it "returns … an
// error of the stream (fastserver.ErrStreamClosed) when the client has
// gone, which the handler should return" (Log says the same). Measured:
// once the write fails the Stream is no longer Live, and Progress (and
// Log, LogText) treat "not live" like "cannot stream" and return nil, so
// a handler that relies on the documented error works on for a client
// that is gone, until its own end or the handler deadline (here 3 s).
func TestReview4ProgressAfterClientGone(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		progressErr, logErr error
		after               time.Duration
		ctxErr, streamErr   error // the call's context and stream at the end
	}
	gone := make(chan time.Time, 1)
	done := make(chan outcome, 1)
	s.AddTool(Tool{Name: "loop", Streaming: true, Handler: ToolFunc(func(c *Call) error {
		deadline := time.Now().Add(3 * time.Second)
		var o outcome
		for i := 0; time.Now().Before(deadline); i++ {
			o.progressErr = c.Progress(float64(i), 0, strings.Repeat("x", 512))
			o.logErr = c.LogText(LogError, "", "still here")
			if o.progressErr != nil || o.logErr != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case at := <-gone:
			o.after = time.Since(at)
		default:
		}
		o.ctxErr = c.Context().Err()
		if c.st != nil {
			o.streamErr = c.st.Err()
		}
		done <- o
		return errors.Join(o.progressErr, o.logErr)
	})})
	_, url := serveLoopback(t, s, fastserver.Config{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"loop","_meta":{"progressToken":1}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if line, _ := bufio.NewReader(conn).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("no stream: %q", line)
	}
	conn.Close()
	gone <- time.Now()
	select {
	case o := <-done:
		if o.progressErr == nil && o.logErr == nil {
			t.Errorf("the client hung up; Progress and LogText kept returning nil for %v (until the handler's own end), want fastserver.ErrStreamClosed (the stream itself says %v, the context %v)", o.after, o.streamErr, o.ctxErr)
		} else if !errors.Is(o.progressErr, fastserver.ErrStreamClosed) && !errors.Is(o.logErr, fastserver.ErrStreamClosed) {
			t.Errorf("after the client hung up: Progress %v, LogText %v; want ErrStreamClosed", o.progressErr, o.logErr)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("the handler did not end")
	}
}

// TestReview4AddTextJSONBorrowedSlice attacks AddTextJSON as a careless
// embedder uses it: an argument's raw string cut short before echoing
// it. Its doc: "A raw that is not one valid JSON string is refused with
// an error." Measured: a slice that lies inside params skips validation
// (Call.borrowed, call.go), and isString looks at the first byte only,
// so `"hell` is copied into the answer as it is: the client gets
// {"content":[{"type":"text","text":"hell}]} — not JSON.
func TestReview4AddTextJSONBorrowedSlice(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "trunc", Handler: ToolFunc(func(c *Call) error {
		raw := c.Arg("text")
		if len(raw) > 5 {
			raw = raw[:5] // cut short: no closing quote
		}
		return c.AddTextJSON(raw)
	})})
	s.AddTool(Tool{Name: "tail", Handler: ToolFunc(func(c *Call) error {
		args := c.Arguments()
		return c.AddTextJSON(args[len(`{"text":`):]) // `"hi"}`: a string and more
	})})
	ep := s.Endpoint()
	for _, tool := range []string{"trunc", "tail"} {
		text := map[string]string{"trunc": "hello world", "tail": "hi"}[tool]
		body := call(`"name":"` + tool + `","arguments":{"text":"` + text + `"}`)
		var m decode.Message
		d, _ := decode.NewDecoder(decode.Options{IDs: decode.IDsMCP})
		if err := d.Decode([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		var r fastserver.Request
		r.Reset(nil, &m, nil)
		rt := ep.Route(&r)
		out, err := rt.Handler.ServeRPC(&r, nil)
		if err == nil && !json.Valid(out) {
			t.Errorf("%s: AddTextJSON took a slice that is not one JSON string; the result is not JSON: %s", tool, out)
		}
	}
}

// r4Level marshals itself as text, as enums often do.
type r4Level int

func (l r4Level) MarshalText() ([]byte, error) { return []byte([]string{"low", "high"}[l&1]), nil }
func (l *r4Level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 0
	case "high":
		*l = 1
	default:
		return errors.New("bad level")
	}
	return nil
}

// TestReview4TextMarshalerSchemas attacks typed tools whose types encode
// themselves (encoding.TextMarshaler, json.Marshaler on a struct): a
// netip.Addr, an enum with MarshalText. The doc of AddTool: the schemas
// are inferred from In and Out; TestTypedBytesAndMaps states "every result
// the server encodes from Out passes the output schema it inferred from
// Out", and AddTool refuses at registration a ",string" field because "no
// argument could pass both". Measured: the generator describes the Go
// kind (netip.Addr: an object with no properties; r4Level: an integer)
// while sonic writes and reads a string, so every call of "addr" and
// "level" is 500 / -32603 and "levelin" refuses every argument (-32602
// for "high" by the schema, for 1 by sonic): tools registered without
// error that can never answer.
func TestReview4TextMarshalerSchemas(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	type addrOut struct {
		IP netip.Addr `json:"ip"`
	}
	type levelOut struct {
		L r4Level `json:"l"`
	}
	regs := map[string]error{
		"addr": AddTool(s, Tool{Name: "addr"}, func(context.Context, *Call, struct{}) (addrOut, error) {
			return addrOut{IP: netip.MustParseAddr("127.0.0.1")}, nil
		}),
		"level": AddTool(s, Tool{Name: "level"}, func(context.Context, *Call, struct{}) (levelOut, error) {
			return levelOut{L: 1}, nil
		}),
		"levelin": AddTool(s, Tool{Name: "levelin"}, func(_ context.Context, _ *Call, in levelOut) (string, error) {
			return "ok", nil
		}),
	}
	ep := s.Endpoint()
	for name, args := range map[string][]string{"addr": {`{}`}, "level": {`{}`}, "levelin": {`{"l":"high"}`, `{"l":1}`}} {
		if regs[name] != nil {
			continue // refused at registration: fine
		}
		ok := false
		for _, a := range args {
			if exchange(t, ep, nil, call(`"name":"`+name+`","arguments":`+a)).Code == 0 {
				ok = true
			}
		}
		if !ok {
			a := exchange(t, ep, nil, call(`"name":"`+name+`","arguments":`+args[0]))
			t.Errorf("%s registered, but no call can succeed: %d %d %s", name, a.Status, a.Code, a.Msg)
		}
	}
}

// TestReview4PlainIntegerRetryRewritesOtherValues attacks the retry of
// decodeArguments (typed.go): when sonic refuses 1.0 for an int field,
// appendPlainIntegers rewrites every integer-valued number in the
// arguments, not just that one. The doc: numbers stay exact, interface
// values get json.Number, json.RawMessage is any JSON value. Measured:
// with "n":1.0 beside them, "r":[2.0,-0.0] reaches the handler as [2,0]
// and "a":3.0 as json.Number("3"); with "n":1 they arrive as sent. What
// the handler sees of one field depends on how another was written.
func TestReview4PlainIntegerRetryRewritesOtherValues(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := AddTool(s, Tool{Name: "t"}, func(_ context.Context, _ *Call, in struct {
		N int64           `json:"n"`
		R json.RawMessage `json:"r"`
		A any             `json:"a"`
	}) (string, error) {
		got = fmt.Sprintf("r=%s a=%v", in.R, in.A)
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	want := "r=[2.0,-0.0] a=3.0"
	for _, n := range []string{"1", "1.0"} {
		got = ""
		a := exchange(t, ep, nil, call(`"name":"t","arguments":{"n":`+n+`,"r":[2.0,-0.0],"a":3.0}`))
		if a.Code != 0 || got != want {
			t.Errorf(`n=%s: %d %s, the handler got %s, want %s`, n, a.Code, a.Msg, got, want)
		}
	}
}

// TestReview4RewriteCostsSizeTimesDepth attacks the two rewrites of a
// typed tool's arguments (decode.AppendLastWins, run when a name repeats
// below the top, and appendPlainIntegers, run when sonic refuses 1.0 for
// an int field): both walk each object's members (skipping every value)
// and then recurse into each value, so a value nested d levels deep is
// skipped d times: cost size × depth. The doc (Security): nothing grows
// with the request beyond linear cost; review3 held the schema check to
// that. Measured (1 MiB, depth 900, the bulk at the bottom):
// HasDuplicateNameDeep 7 ms, AppendLastWins 2.8 s, appendPlainIntegers
// 1.2 s; through tools/call of a tool with a json.RawMessage field, the
// same body costs some 40 to 90 times one of depth 1.
func TestReview4RewriteCostsSizeTimesDepth(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "deep"}, func(_ context.Context, _ *Call, in struct {
		N int64           `json:"n"`
		X json.RawMessage `json:"x"`
	}) (string, error) {
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	const size = 256 << 10
	cost := func(depth int) time.Duration {
		bulk := strings.Repeat("0,", (size-depth*6)/2)
		args := `{"n":1.0,"x":{"d":1,"d":2,"a":` + strings.Repeat(`{"a":`, depth) + `[` + bulk + `0]` + strings.Repeat(`}`, depth) + `}}`
		body := call(`"name":"deep","arguments":` + args)
		best := time.Duration(1 << 62)
		for range 3 {
			start := time.Now()
			a := exchange(t, ep, nil, body)
			best = min(best, time.Since(start))
			if a.Code != 0 {
				t.Fatalf("depth %d: %d %s", depth, a.Code, a.Msg)
			}
		}
		return best
	}
	shallow, deep := cost(1), cost(900)
	if ratio := float64(deep) / float64(max(shallow, time.Microsecond)); ratio > 10 {
		t.Errorf("256 KiB of arguments: depth 1 in %v, depth 900 in %v (%.0fx for the same bytes: size × depth)", shallow, deep, ratio)
	}
}

// TestReview4StructuredContentNotObject attacks SetStructuredContent as a
// careless embedder uses it: an array or a string. MCP 2025-06-18 and
// 2025-11-25 define CallToolResult.structuredContent as
// { [key: string]: unknown }, an object (2026-07-28 widened it to
// unknown); the TypeScript SDK's result schema refuses anything else, so
// the client fails the whole call. Measured: under 2025-11-25 the server
// answers "structuredContent":[1,2] and "structuredContent":"s".
func TestReview4StructuredContentNotObject(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "sc", Handler: ToolFunc(func(c *Call) error {
		c.AddText("x")
		return c.SetStructuredContent(c.Arg("v"))
	})})
	ep := s.Endpoint()
	for _, v := range []string{`[1,2]`, `"s"`, `null`} {
		a := exchange(t, ep, hdr{HeaderProtocolVersion, "2025-11-25"}, call(`"name":"sc","arguments":{"v":`+v+`}`))
		if a.Code != 0 {
			continue // refused: fine
		}
		if sc, n := decode.Lookup(a.Result, "structuredContent"); n > 0 && kindOf(sc) != kindObject && !strings.Contains(string(a.Result), `"isError":true`) {
			t.Errorf("2025-11-25: structuredContent %s answered; the version's schema needs an object", sc)
		}
	}
}

// TestReview4TypedNumberEdges attacks a typed tool's integer and float
// fields with numbers at the edges. The doc: an integer that does not
// fit its field, a fraction, a number beyond float64 is -32602, never a
// wrong value; 1.0 and 1e2 are integers. Measured: held.
func TestReview4TypedNumberEdges(t *testing.T) {
	s, err := New(Info{Name: "r4", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := AddTool(s, Tool{Name: "n"}, func(_ context.Context, _ *Call, in struct {
		I int64   `json:"i,omitempty"`
		F float64 `json:"f,omitempty"`
	}) (string, error) {
		got = fmt.Sprint(in.I, " ", in.F)
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	for args, want := range map[string]string{
		`{"i":9223372036854775807}`:      "9223372036854775807 0",
		`{"i":-9.223372036854775808e18}`: "-9223372036854775808 0",
		`{"i":92233720368547758.07e2}`:   "9223372036854775807 0",
		`{"i":-0}`:                       "0 0",
		`{"i":1e400}`:                    "",
		`{"i":1e-400}`:                   "",
		`{"i":9223372036854775807.5}`:    "",
		`{"i":-9223372036854775809}`:     "",
		`{"i":1E+18446744073709551617}`:  "",
		`{"f":1e400}`:                    "",
		`{"f":-1e400}`:                   "",
		`{"f":1e308}`:                    "0 1e+308",
		`{"i":1.0,"f":0.5}`:              "1 0.5",
	} {
		got = ""
		a := exchange(t, ep, nil, call(`"name":"n","arguments":`+args))
		switch {
		case want == "" && a.Code != decode.CodeInvalidParams:
			t.Errorf("%s: %d %s, the handler got %q; want -32602", args, a.Code, a.Msg, got)
		case want != "" && (a.Code != 0 || got != want):
			t.Errorf("%s: %d %s, the handler got %q; want %q", args, a.Code, a.Msg, got, want)
		}
	}
}
