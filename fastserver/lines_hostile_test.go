package fastserver

// ServeLines against a hostile or careless client (spec/contract.md §6;
// MCP's stdio transport: messages are delimited by newlines and must not
// contain embedded newlines).

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// A result or error data that is valid JSON with line breaks between its
// tokens (json.MarshalIndent's, or what mcp.Call.SetStructuredContent
// copies as given) must still leave as one line: a client reading line by
// line would otherwise lose its place in the stream. A client's own CR
// between tokens, echoed back, is one too (Node's readline ends a line
// at a lone CR).
func TestServeLinesAnswerIsOneLine(t *testing.T) {
	ms := testMethods(nil)
	pretty := "{\n  \"a\": [\r\n    1,\n    \"x\\ny\"\n  ]\n}"
	ms.HandleFunc("pretty", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, pretty...), nil
	})
	ms.HandleFunc("prettyerr", func(r *Request, dst []byte) ([]byte, error) {
		return dst, &Error{Code: -32001, Message: "nope", Data: []byte(pretty)}
	})
	in := `{"jsonrpc":"2.0","id":1,"method":"pretty"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"prettyerr"}` + "\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\",\"params\":{\"s\":\r1}}\n"
	var out strings.Builder
	if err := ServeLines(context.Background(), ms.Endpoint("/rpc", 0), Config{Logger: quietLogger}, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "\r") {
		t.Errorf("an answer holds a CR: %q", out.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines for 3 answers: %q", len(lines), out.String())
	}
	for i, l := range lines {
		var v struct {
			ID     int
			Result json.RawMessage
			Error  *struct{ Data json.RawMessage }
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.ID != i+1 {
			t.Errorf("line %d: %v, id %d: %q", i+1, err, v.ID, l)
			continue
		}
		got := v.Result
		if v.Error != nil {
			got = v.Error.Data
		}
		want := pretty
		if i == 2 {
			want = `{"s":1}`
		}
		var a, b any
		json.Unmarshal(got, &a)
		json.Unmarshal([]byte(want), &b)
		if ja, _ := json.Marshal(a); string(ja) != mustJSON(t, b) {
			t.Errorf("line %d: value changed: %s, want %s", i+1, got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A line of exactly the ceiling is served and one byte more is refused,
// when it arrives in tiny writes, and the stream goes on after it.
func TestServeLinesCeilingInTinyWrites(t *testing.T) {
	const ceiling = 64 << 10
	pre := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"`
	suf := `"}}`
	for _, extra := range []int{0, 1} {
		line := pre + strings.Repeat("x", ceiling-len(pre)-len(suf)+extra) + suf + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"echo"}` // no final newline
		inR, inW := io.Pipe()
		var out syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- ServeLines(context.Background(), testEndpoint(testMethods(nil)), Config{Logger: quietLogger, MaxBodyBytes: ceiling}, inR, &out)
		}()
		go func() {
			defer inW.Close()
			for i := 0; i < len(line); i += 7 {
				if _, err := inW.Write([]byte(line[i:min(i+7, len(line))])); err != nil {
					return
				}
			}
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(ioTimeout):
			inR.CloseWithError(io.ErrClosedPipe)
			t.Fatal("ServeLines did not return")
		}
		got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		wantFirst := `{"jsonrpc":"2.0","id":1,"result":{"s":"xxx`
		if extra == 1 {
			wantFirst = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`
		}
		if len(got) != 2 || !strings.HasPrefix(got[0], wantFirst) || got[1] != `{"jsonrpc":"2.0","id":2,"result":null}` {
			t.Errorf("ceiling%+d: %d lines, %.80q…", extra, len(got), out.String())
		}
	}
}
