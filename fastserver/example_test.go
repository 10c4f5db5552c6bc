package fastserver_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// A server with one raw method, reached with net/http.
func ExampleNew() {
	var ms fastserver.Methods
	ms.HandleFunc("echo", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		// The result is appended to dst: here the params, verbatim.
		return append(dst, r.Msg.Params...), nil
	})
	s, err := fastserver.New(fastserver.Config{}, ms.Endpoint("/rpc", decode.IDsJSONRPC))
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go s.Serve(ln)
	defer s.Shutdown(context.Background())

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":12345678901234567890123,"method":"echo","params":{"text":"hi"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"nosuch"}`,
		`{"jsonrpc":"2.0","method":"echo"}`,
	} {
		resp, err := client.Post("http://"+ln.Addr().String()+"/rpc", "application/json", strings.NewReader(body))
		if err != nil {
			fmt.Println(err)
			return
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(answer))
	}
	// Output:
	// 200 {"jsonrpc":"2.0","id":12345678901234567890123,"result":{"text":"hi"}}
	// 404 {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"method not found"}}
	// 202
}

type greetParams struct {
	Name string `json:"name"`
}

// Validate makes name required.
func (p *greetParams) Validate() error {
	if p.Name == "" {
		return fastserver.InvalidParams("name", "name is required")
	}
	return nil
}

type greeting struct {
	Greeting string `json:"greeting"`
}

// A typed handler: params decoded into a struct, checked by its Validate,
// the result encoded.
func ExampleTyped() {
	var ms fastserver.Methods
	ms.Handle("greet", fastserver.Typed(func(r *fastserver.Request, p *greetParams) (greeting, error) {
		return greeting{Greeting: "Hello, " + p.Name}, nil
	}))
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"greet","params":{"name":"Ada"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"greet","params":{"Name":"Ada"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"greet","params":{"name":7}}`,
	}, "\n")
	err := fastserver.ServeLines(context.Background(), ms.Endpoint("/greet", decode.IDsJSONRPC), fastserver.Config{}, strings.NewReader(in), os.Stdout)
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"greeting":"Hello, Ada"}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"name is required","data":{"field":"name"}}}
	// {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"invalid params: name has the wrong type","data":{"field":"name"}}}
}

// Serving newline-delimited JSON-RPC, as MCP's stdio transport does: one
// answer per line, in order; notifications unanswered; a bad line
// answered and the next one read.
func ExampleServeLines() {
	var ms fastserver.Methods
	ms.HandleFunc("ping", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		return append(dst, "{}"...), nil
	})
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":
{"jsonrpc":"2.0","id":"three","method":"ping"}
`)
	err := fastserver.ServeLines(context.Background(), ms.Endpoint("/mcp", decode.IDsMCP), fastserver.Config{}, in, os.Stdout)
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"unexpected end of input"}}
	// {"jsonrpc":"2.0","id":"three","result":{}}
}

// A header field read through a key made once: here an Endpoint.Check
// that wants the tenant a gateway names, served over ServeLines (no
// headers on a stream: the field is absent, and Check refuses).
func ExampleRequest_HeaderOf() {
	tenant := fastserver.NewHeaderKey("X-Tenant") // once, as a package variable would be
	var ms fastserver.Methods
	ms.HandleFunc("whoami", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		return decode.AppendString(dst, string(r.HeaderOf(tenant))), nil
	})
	ep := ms.Endpoint("/rpc", decode.IDsJSONRPC)
	ep.Check = func(r *fastserver.Request) *fastserver.Error {
		if r.HeaderOf(tenant) == nil {
			return fastserver.NewError(-32001, "no "+tenant.Name()+" header")
		}
		return nil
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"whoami"}` + "\n")
	if err := fastserver.ServeLines(context.Background(), ep, fastserver.Config{}, in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no X-Tenant header"}}
}

// A handler that keeps scratch space with the call that serves it
// (Request.Keep) instead of taking it from a pool per request: the server
// never clears Keep, so a later request the same call serves finds it;
// each request resets what it reuses, and nothing of one request shows in
// another's answer. ServeLines serves a stream's lines with a few calls
// (at most 18: it reads up to 16 lines ahead of the one it serves), so a
// stream of any length makes at most that many scratch spaces.
func ExampleRequest_Keep() {
	type scratch struct{ buf []byte }
	made := 0
	var ms fastserver.Methods
	ms.HandleFunc("upper", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		s, _ := r.Keep.(*scratch)
		if s == nil {
			s = &scratch{}
			r.Keep = s
			made++
		}
		v, n := decode.Lookup(r.Msg.Params, "text")
		if n != 1 || len(v) == 0 || v[0] != '"' {
			return dst, fastserver.InvalidParams("text", "params.text must be a string")
		}
		s.buf = decode.AppendUnquoted(s.buf[:0], v) // reset, then reuse
		return decode.AppendString(dst, strings.ToUpper(string(s.buf))), nil
	})
	ep := ms.Endpoint("/rpc", decode.IDsJSONRPC)
	var in strings.Builder
	for i, text := range strings.Fields(strings.Repeat("abc d ef ", 20)) {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"upper","params":{"text":%q}}`+"\n", i+1, text)
	}
	var out strings.Builder
	if err := fastserver.ServeLines(context.Background(), ep, fastserver.Config{}, strings.NewReader(in.String()), &out); err != nil {
		fmt.Println(err)
	}
	answers := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	fmt.Println(answers[0])
	fmt.Println(answers[1])
	fmt.Println("answers:", len(answers))
	fmt.Println("at most 18 scratch spaces:", made <= 18)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":"ABC"}
	// {"jsonrpc":"2.0","id":2,"result":"D"}
	// answers: 60
	// at most 18 scratch spaces: true
}
