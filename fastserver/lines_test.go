package fastserver

// ServeLines: newline-delimited JSON-RPC (spec/contract.md §6).

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

func serveLines(t *testing.T, cfg Config, in string) string {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	var out strings.Builder
	ep := testEndpoint(testMethods(nil))
	if err := ServeLines(context.Background(), ep, cfg, strings.NewReader(in), &out); err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	return out.String()
}

func TestServeLines(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":99,"method":"echo","params":{"s":"` + strings.Repeat("x", 5000) + `"}}`
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}`,
		`{"jsonrpc":"2.0","method":"echo","params":{"a":2}}`, // notification: no answer
		``,                                  // blank lines are skipped
		"  \t ",                             // so are lines of whitespace
		`{"jsonrpc":"2.0","id":2,"method":`, // bad line
		`{"jsonrpc":"2.0","id":3,"method":"echo"}` + "\r", // CRLF
		long, // over the ceiling: refused and skipped
		`{"jsonrpc":"2.0","id":"caf\u00e9","method":"echo"}`,
		`[{"jsonrpc":"2.0","id":4,"method":"echo"}]`,
		`{"jsonrpc":"2.0","id":5,"method":"nosuch"}`,
		`{"jsonrpc":"2.0","id":6,"method":"echo","params":[1]}`,
		`{"jsonrpc":"2.0","id":7,"method":"panic"}`,
		`{"jsonrpc":"2.0","id":8,"method":"refused"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"echo"}`, // /rpc takes integer ids only
		`{"id":9,"method":"echo"}`,
		`{"jsonrpc":"2.0","id":10,"method":"version"}`, // Check sees no headers: version 1
		`{"jsonrpc":"2.0","method":"nosuch"}`,          // notification: no answer
		`"just a string"`,
		`{"jsonrpc":"2.0","id":11,"method":"echo","params":{"s":"\ud800"}}`,
		`{"jsonrpc":"2.0","id":12,"method":"echo"}`, // the last line, without a newline
	}, "\n")
	want := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`,
		`{"jsonrpc":"2.0","id":3,"result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`,
		`{"jsonrpc":"2.0","id":"caf\u00e9","result":null}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,`,
		`{"jsonrpc":"2.0","id":6,"error":{"code":-32602,`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,`,
		`{"jsonrpc":"2.0","id":8,"error":{"code":-32004,`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`,
		`{"jsonrpc":"2.0","id":9,"error":{"code":-32600,`,
		`{"jsonrpc":"2.0","id":10,"result":1}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`,
		`{"jsonrpc":"2.0","id":12,"result":null}`,
	}
	out := serveLines(t, Config{MaxBodyBytes: 1000}, in)
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("the last answer does not end its line")
	}
	got := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(got) != len(want) {
		t.Errorf("%d answers, want %d:\n%s", len(got), len(want), out)
	}
	for i := range min(len(got), len(want)) {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("answer %d:\n got %s\nwant %s…", i+1, got[i], want[i])
		}
		parseAnswer(t, []byte(got[i]))
	}
}

// Lines across read boundaries: a reader that returns one byte at a time.
func TestServeLinesOneByteReads(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":"é"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"echo"}` + "\n"
	var out strings.Builder
	err := ServeLines(context.Background(), testEndpoint(testMethods(nil)), Config{Logger: quietLogger}, iotestOneByte{strings.NewReader(in)}, &out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"a":"é"}}` + "\n" + `{"jsonrpc":"2.0","id":2,"result":null}` + "\n"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

type iotestOneByte struct{ r io.Reader }

func (o iotestOneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// Answers are written (and flushed) as each line is served, not when the
// stream ends: a client waits for each answer before it sends more.
func TestServeLinesInteractive(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- ServeLines(ctx, testEndpoint(testMethods(nil)), Config{Logger: quietLogger}, inR, outW)
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	readLine := func() string {
		t.Helper()
		ch := make(chan string, 1)
		go func() {
			s, _ := br.ReadString('\n')
			ch <- s
		}()
		select {
		case s := <-ch:
			return s
		case <-time.After(ioTimeout):
			t.Fatal("no answer line")
			return ""
		}
	}
	for i, id := range []string{"1", `"two"`, "3"} {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":`+id+`,"method":"echo"}`+"\n")
		if got, want := readLine(), `{"jsonrpc":"2.0","id":`+id+`,"result":null}`+"\n"; got != want {
			t.Errorf("line %d: got %q, want %q", i, got, want)
		}
	}
	// Cancelling ctx while ServeLines waits for input ends it at once,
	// the input still open (contract §6).
	go io.Copy(io.Discard, br)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeLines after cancel: %v, want context.Canceled", err)
		}
		t.Logf("returned %v after cancel, its input open", time.Since(start))
	case <-time.After(ioTimeout):
		t.Fatal("ServeLines did not return after cancel while waiting for input")
	}
	inW.Close()
}

// Cancelling ctx while a call is being served: its answer is written,
// then ServeLines returns without reading the lines sent after it.
func TestServeLinesCancelInProgress(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- ServeLines(ctx, testEndpoint(testMethods(nil)), Config{Logger: quietLogger}, inR, &out)
	}()
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":"s1","method":"sleep"}`+"\n"+`{"jsonrpc":"2.0","id":"e2","method":"echo"}`+"\n")
	time.Sleep(sleepyFor / 4) // the sleep call under way
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeLines: %v, want context.Canceled", err)
		}
		if got, want := out.String(), `{"jsonrpc":"2.0","id":"s1","result":"slept"}`+"\n"; got != want {
			t.Errorf("output %q, want only the answer of the call in progress %q", got, want)
		}
		t.Logf("returned %v after cancel, once the call in progress was answered", took)
	case <-time.After(ioTimeout):
		t.Fatal("ServeLines did not return after cancel")
	}
}

type failingReader struct {
	data string
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestServeLinesErrors(t *testing.T) {
	ep := testEndpoint(testMethods(nil))
	cfg := Config{Logger: quietLogger}
	readErr := errors.New("broken pipe")
	var out strings.Builder
	err := ServeLines(context.Background(), ep, cfg, &failingReader{data: `{"jsonrpc":"2.0","id":1,"method":"echo"}` + "\n", err: readErr}, &out)
	if !errors.Is(err, readErr) {
		t.Errorf("read error: got %v", err)
	}
	if out.String() != `{"jsonrpc":"2.0","id":1,"result":null}`+"\n" {
		t.Errorf("the line before the read error was not answered: %q", out.String())
	}
	err = ServeLines(context.Background(), ep, cfg, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"echo"}`+"\n"), failingWriter{})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error: got %v", err)
	}
	if err := ServeLines(context.Background(), nil, cfg, strings.NewReader(""), &out); err == nil {
		t.Errorf("nil endpoint: want an error")
	}
	if err := ServeLines(context.Background(), &Endpoint{Path: "/x"}, cfg, strings.NewReader(""), &out); err == nil {
		t.Errorf("endpoint without Route: want an error")
	}
	if err := ServeLines(context.Background(), ep, Config{MaxDepth: -1}, strings.NewReader(""), &out); err == nil {
		t.Errorf("invalid Config: want an error")
	}
	// An empty stream: no output, no error.
	out.Reset()
	if err := ServeLines(context.Background(), ep, cfg, strings.NewReader(""), &out); err != nil || out.Len() != 0 {
		t.Errorf("empty stream: %v %q", err, out.String())
	}
}

// ServeLines applies the endpoint's id policy (row 10) like HTTP does.
func TestServeLinesIDPolicy(t *testing.T) {
	ms := testMethods(nil)
	out := func(ep *Endpoint, line string) string {
		var b strings.Builder
		ServeLines(context.Background(), ep, Config{Logger: quietLogger}, strings.NewReader(line), &b)
		return b.String()
	}
	line := `{"jsonrpc":"2.0","id":null,"method":"echo"}`
	if got := out(ms.Endpoint("/a", decode.IDsMCP), line); !strings.Contains(got, `"code":-32600`) {
		t.Errorf("id null under IDsMCP: %s", got)
	}
	if got := out(ms.Endpoint("/a", decode.IDsJSONRPC), line); got != `{"jsonrpc":"2.0","id":null,"result":null}`+"\n" {
		t.Errorf("id null under IDsJSONRPC: %s", got)
	}
}
