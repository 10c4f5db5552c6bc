//go:build !race

package mcp

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
	"github.com/valyala/fasthttp"
)

// Inputs of the counting tools: each answers how many items it got.
type (
	intsIn struct {
		V []int `json:"v"`
	}
	mapIn struct {
		V map[string]int `json:"v"`
	}
	anyIn struct {
		V any `json:"v"`
	}
)

// addCountingTools registers typed tools with a slice, a map and an
// interface for arguments, each answering the number of items it got.
func addCountingTools(s *Server) {
	count := func(c *Call, n int) { c.AddText(strconv.Itoa(n)) }
	AddTool(s, Tool{Name: "typed-ints"}, func(_ context.Context, c *Call, in intsIn) (struct{}, error) {
		count(c, len(in.V))
		return struct{}{}, nil
	})
	AddTool(s, Tool{Name: "typed-map"}, func(_ context.Context, c *Call, in mapIn) (struct{}, error) {
		count(c, len(in.V))
		return struct{}{}, nil
	})
	AddTool(s, Tool{Name: "typed-any"}, func(_ context.Context, c *Call, in anyIn) (struct{}, error) {
		switch v := in.V.(type) {
		case []any:
			count(c, len(v))
		case map[string]any:
			count(c, len(v))
		default:
			count(c, -1)
		}
		return struct{}{}, nil
	})
}

// countingCall is a call of a counting tool with n items and the
// arguments' container: a list for typed-ints and for typed-any when
// list is set, an object otherwise.
func countingCall(r *rand.Rand, tool string, list bool, n int, item func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(r.IntN(1e6)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"v":`)
	open, end := "{", "}"
	if list {
		open, end = "[", "]"
	}
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if !list {
			b.WriteString(`"` + shortName(i) + `":`)
		}
		b.WriteString(item(i))
	}
	b.WriteString(end + "}}}")
	return []byte(b.String())
}

// countingItems are the items each counting tool takes, costliest first.
func countingItems(r *rand.Rand) map[string][]func(i int) string {
	num := func(i int) string { return strconv.Itoa(r.IntN(10)) }
	long := func(i int) string { return strconv.FormatInt(r.Int64(), 10) }
	frac := func(i int) string { return strconv.Itoa(r.IntN(100)) + ".0" }
	text := func(i int) string { return strconv.Quote(strings.Repeat("w", 10+r.IntN(200))) }
	return map[string][]func(i int) string{
		"typed-ints":     {num, frac, long},
		"typed-map":      {num, long},
		"typed-any list": {func(int) string { return "{}" }, func(int) string { return "[]" }, num, text},
		"typed-any obj":  {func(int) string { return "[]" }, num, text},
	}
}

// serveCounting serves body through ep and returns the answer and its
// refusal, if any.
func serveCounting(t *testing.T, ep *fastserver.Endpoint, body, dst []byte) ([]byte, *fastserver.Error) {
	t.Helper()
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetRequestURI("/mcp")
	h.Set("MCP-Protocol-Version", "2025-11-25")
	out, err := memtest.Serve(ep, &h, body, dst)
	var fe *fastserver.Error
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("%.80s…: %v", body, err)
	}
	return out, fe
}

// TestTypedArgumentsBound serves typed tools whose inputs hold a slice, a
// map and an interface with items of every cost, from a few to a
// mebibyte of them: each call is served whole (the tool counts every
// item) at no more than 8× its body (contract §3), or refused -32602 as
// too large before sonic runs; and a call of up to 512 bytes is always
// served.
func TestTypedArgumentsBound(t *testing.T) {
	s, err := New(Info{Name: "test", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	addCountingTools(s)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	r := rand.New(rand.NewPCG(rand.Uint64(), 22))
	refused, served := 0, 0
	for key, items := range countingItems(r) {
		tool, shape, _ := strings.Cut(key, " ")
		list := tool == "typed-ints" || shape == "list"
		for k, item := range items {
			// Sizes from a few items to what fits in 1 MiB, log-uniform,
			// and every small count.
			counts := []int{0, 1, 2, 3, 5, 8, 13, 21, 34, 55}
			for range 8 {
				counts = append(counts, int(math.Exp(math.Log(60)+r.Float64()*(math.Log(200000)-math.Log(60)))))
			}
			for _, n := range counts {
				body := countingCall(r, tool, list, n, item)
				if len(body) > 1<<20-64 {
					continue
				}
				out, fe := serveCounting(t, ep, body, nil)
				if fe != nil {
					if fe.Code != -32602 || !strings.Contains(fe.Message, "would take more than") {
						t.Fatalf("%s item %d, %d items (%d bytes): refused %d %s", key, k, n, len(body), fe.Code, fe.Message)
					}
					if len(body) <= 512 {
						t.Errorf("%s item %d, %d items (%d bytes): a call of at most 512 bytes refused: %s", key, k, n, len(body), fe.Message)
					}
					// The refusal costs what the server's checks before
					// the tool cost (a set of member names: at most 3×).
					if got := memtest.Steady(func() { serveCounting(t, ep, body, make([]byte, 0, 1024)) }); got > 4*uint64(len(body))+16<<10 {
						t.Errorf("%s, %d bytes: refusing allocated %d bytes", key, len(body), got)
					}
					refused++
					continue
				}
				if want := `"text":"` + strconv.Itoa(n) + `"`; !strings.Contains(string(out), want) {
					t.Fatalf("%s item %d, %d items: the tool did not count them all: %.200s", key, k, n, out)
				}
				dst := make([]byte, 0, len(out)+64)
				got := memtest.Steady(func() { serveCounting(t, ep, body, dst) })
				// 8× the body from 32 KiB on; the budget's allowance below.
				if got > max(maxDecodedFactor*uint64(len(body)), sonicmem.Budget(len(body))+8<<10) {
					t.Errorf("%s item %d, %d items (%d bytes): serving allocated %d bytes, %.2f× the body (at most %d×, or %d bytes)",
						key, k, n, len(body), got, float64(got)/float64(len(body)), maxDecodedFactor, sonicmem.Budget(len(body)))
				}
				served++
			}
		}
	}
	t.Logf("%d calls served, %d refused as too large", served, refused)
	if refused == 0 || served == 0 {
		t.Errorf("%d served, %d refused: the shapes must reach both sides of the bound", served, refused)
	}
}

// TestTypedUnboundedInput: a typed tool whose input holds a type whose
// decoding its JSON does not bound (a regexp sonic would compile) is a
// registration mistake, not a tool every call of which could cost MBs.
func TestTypedUnboundedInput(t *testing.T) {
	s, err := New(Info{Name: "test", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	type in struct {
		Pattern *regexp.Regexp `json:"pattern"`
	}
	if err := AddTool(s, Tool{Name: "grep"}, func(_ context.Context, c *Call, in in) (struct{}, error) {
		return struct{}{}, nil
	}); err == nil || !strings.Contains(err.Error(), "regexp") {
		t.Errorf("AddTool: %v", err)
	}
}
