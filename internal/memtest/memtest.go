// Package memtest holds what the packages' memory-amplification tests
// share: bodies of a chosen size built from repeated items, one request
// served through an endpoint's Check, Route and handler without the
// network, and the bytes a run allocates.
package memtest

import (
	"context"
	"errors"
	"runtime"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// FillBody returns head, then item(i) for i = 0, 1, … separated by
// commas while the whole stays under size, then tail.
func FillBody(size int, head, tail string, item func(i int) string) []byte {
	var b strings.Builder
	b.Grow(size)
	b.WriteString(head)
	for i := 0; b.Len()+len(tail) < size-16; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// ErrNoRoute is returned by Serve when the endpoint routes the message to
// no handler and refuses nothing.
var ErrNoRoute = errors.New("memtest: no route and no refusal")

// Serve answers body as the server does after reading it: decode with
// ep's id policy, ep.Check, ep.Route, the duplicate-name rule for params
// the route does not read itself, then the handler, appending to dst. A
// refusal comes back as the *fastserver.Error it is.
func Serve(ep *fastserver.Endpoint, hdr *fasthttp.RequestHeader, body, dst []byte) ([]byte, error) {
	var d decode.Decoder
	if err := d.SetOptions(decode.Options{IDs: ep.IDs}); err != nil {
		return dst, err
	}
	var m decode.Message
	if err := d.Decode(body, &m); err != nil {
		return dst, err
	}
	var r fastserver.Request
	r.Reset(hdr, &m, context.Background())
	if ep.Check != nil {
		if e := ep.Check(&r); e != nil {
			return dst, e
		}
	}
	rt := ep.Route(&r)
	if rt.Refuse != nil {
		return dst, rt.Refuse
	}
	if rt.Handler == nil {
		return dst, ErrNoRoute
	}
	if !rt.OwnParams && m.ParamsType == decode.ParamsObject && decode.DuplicateName(m.Params) {
		return dst, errors.New("memtest: duplicate member name in params")
	}
	return rt.Handler.ServeRPC(&r, dst)
}

// Allocated returns the bytes run allocates (TotalAlloc), measured after
// two collections so that earlier garbage does not count.
func Allocated(run func()) uint64 {
	runtime.GC()
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	run()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// Steady returns the bytes one run of run allocates once the pools it
// uses are warm: two runs less one, the least of three tries (a
// collection between the two runs, which empties the pools again, can
// only add). A pool refilled after a collection serves the next request
// too (sonic's decoder state alone is ~100 KiB), so it is not counted to
// the run that happened to refill it, as Allocated would.
func Steady(run func()) uint64 {
	best := ^uint64(0)
	for range 3 {
		one := Allocated(run)
		two := Allocated(func() { run(); run() })
		switch {
		case two <= one:
			best = 0
		case two-one < best:
			best = two - one
		}
	}
	return best
}
