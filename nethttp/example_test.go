package nethttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/nethttp"
)

// An endpoint mounted on a net/http mux beside a route of the service's
// own.
func Example() {
	var ms fastserver.Methods
	ms.HandleFunc("greet", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		name, n := decode.Lookup(r.Msg.Params, "name")
		if n != 1 || len(name) < 2 || name[0] != '"' {
			return dst, fastserver.InvalidParams("name", "name must be one string")
		}
		return append(append(append(dst, `"hello `...), name[1:len(name)-1]...), '"'), nil
	})
	srv, h, err := nethttp.New(fastserver.Config{}, ms.Endpoint("/rpc", decode.IDsJSONRPC))
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/rpc", h)
	mux.HandleFunc("/hello", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "a route of the service's own") })
	ts := httptest.NewServer(mux)
	defer ts.Close()
	defer srv.Shutdown(context.Background())

	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"greet","params":{"name":"net/http"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"greet","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"method":"greet"`,
	} {
		resp, err := http.Post(ts.URL+"/rpc", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(b))
	}
	resp, _ := http.Get(ts.URL + "/hello")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(b))
	// Output:
	// 200 {"jsonrpc":"2.0","id":1,"result":"hello net/http"}
	// 200 {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"name must be one string","data":{"field":"name"}}}
	// 400 {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"unexpected end of input"}}
	// 200 a route of the service's own
}
