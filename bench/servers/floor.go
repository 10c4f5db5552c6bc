package servers

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// newFloor is the floor of TARGETS.md: a fasthttp handler that answers a
// fixed template with the request's id, and its arguments' text, spliced
// in by byte searches (bytes.Index, bytes.IndexByte). It parses no JSON and
// checks nothing (it trusts its input: the first "id": and the first
// "text":" are taken as they are), so its cost is fasthttp's reading and
// writing of the bytes plus a constant, at every body size (the floor of
// the size sweep, sweep.sh); its answers still pass
// cmd/loadgen's checks of a tools/call echo under MCP 2026-07-28. Like
// internal/loadgen/floorserver, with resultType added, and without the
// Server and Date headers.
func newFloor() (Server, error) {
	return fastServer{&fasthttp.Server{
		Handler:               serveFloor,
		NoDefaultContentType:  true,
		NoDefaultServerHeader: true,
		NoDefaultDate:         true,
		ReadTimeout:           readTimeout,
		WriteTimeout:          writeTimeout,
		IdleTimeout:           idleTimeout,
	}}, nil
}

var (
	floorIDKey   = []byte(`"id":`)
	floorTextKey = []byte(`"text":"`)
	floorHead    = []byte(`{"jsonrpc":"2.0","id":`)
	floorMid     = []byte(`,"result":{"content":[{"type":"text","text":"`)
	floorTail    = []byte(`"}],"resultType":"complete"}}`)
)

func serveFloor(ctx *fasthttp.RequestCtx) { floorAnswer(ctx, ctx.PostBody()) }

// floorGunzip undoes a gzip body, reusing its reader and buffer, and stops
// one byte past maxBody (a caller refuses a body longer than that).
type floorGunzip struct {
	src bytes.Reader
	zr  *gzip.Reader
	out bytes.Buffer
}

var floorGunzips = sync.Pool{New: func() any { return new(floorGunzip) }}

func (g *floorGunzip) gunzip(body []byte) []byte {
	g.src.Reset(body)
	g.out.Reset()
	if g.zr == nil {
		zr, err := gzip.NewReader(&g.src)
		if err != nil {
			return nil
		}
		g.zr = zr
	} else if g.zr.Reset(&g.src) != nil {
		return nil
	}
	if _, err := g.out.ReadFrom(io.LimitReader(g.zr, maxBody+1)); err != nil {
		return nil
	}
	return g.out.Bytes()
}

// floorAnswer writes the floor's answer to body. A gzip body (the size
// sweep's) is undone first, with a pooled reader into a pooled buffer.
func floorAnswer(ctx *fasthttp.RequestCtx, body []byte) {
	if len(body) > 2 && body[0] == 0x1f && body[1] == 0x8b {
		g := floorGunzips.Get().(*floorGunzip)
		defer floorGunzips.Put(g)
		body = g.gunzip(body)
	}
	i := bytes.Index(body, floorIDKey)
	if i < 0 {
		ctx.SetStatusCode(fasthttp.StatusAccepted)
		return
	}
	id := body[i+len(floorIDKey):]
	j := 0
	for j < len(id) && id[j] != ',' && id[j] != '}' {
		j++
	}
	id = id[:j]
	var text []byte
	if k := bytes.Index(body, floorTextKey); k >= 0 {
		text = body[k+len(floorTextKey):]
		text = text[:stringEnd(text)]
	}
	ctx.Response.Header.SetContentTypeBytes(ctJSON)
	w := ctx.Response.BodyWriter()
	w.Write(floorHead)
	w.Write(id)
	w.Write(floorMid)
	w.Write(text)
	w.Write(floorTail)
}

// stringEnd returns the index of the quote that ends the JSON string
// whose content s starts with (len(s) when there is none), found with
// bytes.IndexByte: the text is copied, never parsed, so that at every
// body size the floor costs fasthttp's reading and writing of the bytes.
func stringEnd(s []byte) int {
	i := 0
	for {
		j := bytes.IndexByte(s[i:], '"')
		if j < 0 {
			return len(s)
		}
		i += j
		odd := false // an odd run of backslashes escapes the quote
		for k := i - 1; k >= 0 && s[k] == '\\'; k-- {
			odd = !odd
		}
		if !odd {
			return i
		}
		i++
	}
}

// newFloorStream is a diagnostic, not a candidate of the matrix: the
// floor's handler behind fasthttp configured exactly as fastserver.New
// configures it for rpcedge (fastserver.Server.FastHTTPServer: the body
// prefetch and streaming, the same buffer sizes, Server and Date headers,
// TCP keep-alive), the body read to its end through RequestBodyStream.
// The difference between floor and floor-stream is the cost of that
// configuration; the difference between floor-stream and rpcedge is the
// cost of rpcedge's own code.
func newFloorStream() (Server, error) { return behindFastserver(serveFloorStream) }

// behindFastserver serves h on fasthttp configured as fastserver.New
// configures it.
func behindFastserver(h fasthttp.RequestHandler) (Server, error) {
	s, err := fastserver.New(fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	return fastServer{s.FastHTTPServer(h)}, nil
}

var floorBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

func serveFloorStream(ctx *fasthttp.RequestCtx) {
	bp := floorBufs.Get().(*[]byte)
	body := (*bp)[:0]
	r := ctx.RequestBodyStream()
	for len(body) < maxBody {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)]
		}
		n, err := r.Read(body[len(body):cap(body)])
		body = body[:len(body)+n]
		if err != nil {
			break
		}
	}
	floorAnswer(ctx, body)
	*bp = body
	floorBufs.Put(bp)
}

// newFloorSpin is a diagnostic: floor-stream, whose handler then burns
// the CPU time rpcedge's pipeline adds above fasthttp in process
// (FloorSpinNanos, from BenchmarkPipeline: rpcedge − floor-stream) in a
// loop that makes no system call and touches no memory. Under load it
// tells whether rpcedge's extra server CPU per request is that in-process
// cost alone, or the in-process cost made larger by the way a slower
// server meets the client (fewer requests per wake-up, more of them each
// needing its own packets, ACKs and scheduling).
func newFloorSpin() (Server, error) {
	n := spinCalibrate(floorSpinNanos())
	return behindFastserver(func(ctx *fasthttp.RequestCtx) {
		spinSink.Add(spin(n))
		serveFloorStream(ctx)
	})
}

// newFloorWrap is a diagnostic: floor-stream, each accepted connection
// wrapped in a struct that only embeds it, as fastserver's Serve wraps
// them for its connection cap and timeouts. fasthttp v1.79 sends an
// answer larger than its write buffer (4 KiB) with one writev only to a
// bare *net.TCPConn or *net.UnixConn; behind any wrapper it makes two
// writes. floor-wrap against floor-stream is the cost of that alone.
func newFloorWrap() (Server, error) {
	s, err := newFloorStream()
	if err != nil {
		return nil, err
	}
	return wrapServer{s.(fastServer)}, nil
}

// wrapServer serves a listener whose connections it wraps.
type wrapServer struct{ fastServer }

func (w wrapServer) Serve(ln net.Listener) error { return w.fastServer.Serve(wrapListener{ln}) }

type wrapListener struct{ net.Listener }

func (l wrapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return wrappedConn{c}, nil
}

// wrappedConn changes nothing of the connection it holds.
type wrappedConn struct{ net.Conn }

// FloorSpinNanos is floor-spin's default burn per request, in ns; the
// environment variable BENCH_FLOOR_SPIN_NS overrides it.
const FloorSpinNanos = 1200

func floorSpinNanos() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_FLOOR_SPIN_NS")); err == nil && v >= 0 {
		return v
	}
	return FloorSpinNanos
}

var spinSink atomic.Uint64

// spin runs n rounds of a dependent multiply-add chain (a few cycles
// each, nothing the compiler can drop: the result is kept).
func spin(n int) uint64 {
	x := uint64(n) | 1
	for i := 0; i < n; i++ {
		x = x*0x9e3779b97f4a7c15 + uint64(i)
	}
	return x
}

// spinCalibrate returns the rounds of spin that take ns nanoseconds of
// CPU on this machine: from the fastest of 20 timings of 2^16 rounds, so
// that a preempted timing does not shorten the burn.
func spinCalibrate(ns int) int {
	if ns == 0 {
		return 0
	}
	const probe = 1 << 16
	best := time.Duration(1 << 62)
	for range 20 {
		t := time.Now()
		spinSink.Add(spin(probe))
		if d := time.Since(t); d < best {
			best = d
		}
	}
	return int(float64(probe) * float64(ns) / float64(best.Nanoseconds()))
}
