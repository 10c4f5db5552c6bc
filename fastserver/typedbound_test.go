//go:build !race

package fastserver_test

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
	"github.com/valyala/fasthttp"
)

// TestTypedParamsBound sends Typed handlers whose params hold a slice and
// an interface items of every cost, from none to a mebibyte: each call is
// served whole (the handler counts every item) at no more than 8× its
// body from 32 KiB on (contract §3), or refused -32602 for "params" as
// too large before sonic runs. Before 2026-12-07, 1 MiB of zeros into a
// []int allocated 9.5× the body, of [] into an any ~90×.
func TestTypedParamsBound(t *testing.T) {
	var ms fastserver.Methods
	ms.Handle("ints", fastserver.Typed(func(_ *fastserver.Request, p *struct {
		V []int `json:"v"`
	}) (int, error) {
		return len(p.V), nil
	}))
	ms.Handle("any", fastserver.Typed(func(_ *fastserver.Request, p *struct {
		V any `json:"v"`
	}) (int, error) {
		v, _ := p.V.([]any)
		return len(v), nil
	}))
	ep := ms.Endpoint("/rpc", decode.IDsJSONRPC)
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetRequestURI("/rpc")
	serve := func(body, dst []byte) ([]byte, *fastserver.Error) {
		out, err := memtest.Serve(ep, &h, body, dst)
		var fe *fastserver.Error
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("%.80s…: %v", body, err)
		}
		return out, fe
	}
	r := rand.New(rand.NewPCG(rand.Uint64(), 23))
	items := map[string][]func() string{
		"ints": {func() string { return "0" }, func() string { return strconv.FormatInt(r.Int64(), 10) }},
		"any":  {func() string { return "[]" }, func() string { return strconv.Quote(strings.Repeat("x", r.IntN(300))) }},
	}
	refused, served := 0, 0
	for method, gens := range items {
		for _, gen := range gens {
			for _, n := range []int{0, 1, 7, 100, 1000, 5000, 20000, 100000, 300000} {
				var b strings.Builder
				b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(r.IntN(1e6)) + `,"method":"` + method + `","params":{"v":[`)
				for i := range n {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(gen())
				}
				b.WriteString("]}}")
				if b.Len() > 1<<20-64 {
					continue
				}
				body := []byte(b.String())
				out, fe := serve(body, nil)
				if fe != nil {
					if fe.Code != -32602 || !strings.Contains(fe.Message, "would take more than") || string(fe.Data) != `{"field":"params"}` {
						t.Fatalf("%s, %d items: refused %d %s %s", method, n, fe.Code, fe.Message, fe.Data)
					}
					refused++
					continue
				}
				if string(out) != strconv.Itoa(n) {
					t.Fatalf("%s, %d items: answered %.200s, not all counted", method, n, out)
				}
				dst := make([]byte, 0, len(out)+64)
				got := memtest.Steady(func() { serve(body, dst) })
				if got > max(8*uint64(len(body)), sonicmem.Budget(len(body))+8<<10) {
					t.Errorf("%s, %d items (%d bytes): serving allocated %d bytes, %.2f× the body", method, n, len(body), got, float64(got)/float64(len(body)))
				}
				served++
			}
		}
	}
	if refused == 0 || served == 0 {
		t.Errorf("%d served, %d refused: the shapes must reach both sides of the bound", served, refused)
	}
}
