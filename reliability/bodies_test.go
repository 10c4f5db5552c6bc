package reliability

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/rpcedge/rpcedge/fastserver"
)

// bombSize is the decoded size of the compression bombs.
const bombSize = 64 << 20

// heapFactor bounds the heap in use during a body attack, above the
// baseline, as a multiple of the body ceiling.
const heapFactor = 8

// bombs are built once: 64 MiB of spaces (whitespace before a JSON value
// is valid, so only the ceiling stops them) in each coding.
var bombs = sync.OnceValues(func() (map[string][]byte, error) {
	spaces := bytes.Repeat([]byte{' '}, bombSize)
	out := map[string][]byte{}

	var b bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	gw.Write(spaces)
	gw.Close()
	out["gzip"] = bytes.Clone(b.Bytes())

	b.Reset()
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	zw.Write(spaces)
	zw.Close()
	out["deflate"] = bytes.Clone(b.Bytes())

	// A streamed zstd frame declares no content size: with a 1 MiB
	// window (the cap at a 1 MiB ceiling) only the ceiling stops it; with
	// the 8 MiB window RFC 9659 allows (klauspost's default), the window
	// cap refuses it from the frame header.
	for _, w := range []int{1 << 20, 8 << 20} {
		b.Reset()
		enc, err := zstd.NewWriter(&b, zstd.WithWindowSize(w), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		enc.Write(spaces)
		enc.Close()
		out[fmt.Sprintf("zstd-%d", w>>20)] = bytes.Clone(b.Bytes())
	}

	// EncodeAll declares the content size (64 MiB) in the frame header.
	enc, _ := zstd.NewWriter(nil, zstd.WithWindowSize(8<<20), zstd.WithEncoderConcurrency(1))
	out["zstd-sized"] = enc.EncodeAll(spaces, nil)
	return out, nil
})

// zstdFrame returns a zstd frame with the given frame header (after the
// magic number) and one raw last block of data.
func zstdFrame(header []byte, data []byte) []byte {
	f := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	f = append(f, header...)
	bh := uint32(len(data))<<3 | 1 // raw block, last
	f = append(f, byte(bh), byte(bh>>8), byte(bh>>16))
	return append(f, data...)
}

// bodyAttack is one hostile body and the answer it must get.
type bodyAttack struct {
	name string
	raw  []byte // the whole request
	want want
	// check, when set, checks the answer further.
	check func(t *testing.T, a rpcAnswer)
}

func bodyAttacks(t *testing.T, ceiling int) []bodyAttack {
	bs, err := bombs()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range bs {
		if len(b) >= 100*kib {
			t.Fatalf("%s bomb is %d bytes, want < 100 KiB", name, len(b))
		}
	}
	t.Logf("bombs of %d MiB: gzip %d B, deflate %d B, zstd (1 MiB window) %d B, zstd (8 MiB window) %d B, zstd with its size declared %d B",
		bombSize>>20, len(bs["gzip"]), len(bs["deflate"]), len(bs["zstd-1"]), len(bs["zstd-8"]), len(bs["zstd-sized"]))

	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`
	const tail = `"}}}`
	deep := func(open string, n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + strings.Repeat(open, n))
	}
	// escapes returns an echo call whose text is n escapes \u0041.
	escapes := func(n int) []byte {
		return []byte(head + strings.Repeat(`\u0041`, n) + tail)
	}
	underN := (ceiling - len(head) - len(tail)) / 6
	overN := underN + 2
	// invalidLast returns a body of exactly size bytes whose last byte
	// is not UTF-8.
	invalidLast := func(size int, last string) []byte {
		b := []byte(head + strings.Repeat("a", size-len(head)-len(last)))
		return append(b, last...)
	}
	complete := []byte(head + strings.Repeat("a", ceiling-len(head)-len(tail)-1) + tail)
	completeBad := append(bytes.Clone(complete), 0xC3) // a cut two-byte sequence after the value

	gz := func(body []byte) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write(body)
		w.Close()
		return b.Bytes()
	}
	zs := func(body []byte) []byte {
		e, _ := zstd.NewWriter(nil)
		return e.EncodeAll(body, nil)
	}

	tooLarge := want{413, -32600, "null"}
	parse := want{400, -32700, "null"}
	invalid := want{400, -32600, "null"}
	enc := func(coding string) string { return "Content-Encoding: " + coding }
	return []bodyAttack{
		{name: "gzip bomb", raw: post("/mcp", bs["gzip"], enc("gzip")), want: tooLarge},
		{name: "x-gzip bomb", raw: post("/mcp", bs["gzip"], enc("x-gzip")), want: tooLarge},
		{name: "deflate bomb", raw: post("/mcp", bs["deflate"], enc("deflate")), want: tooLarge},
		{name: "zstd bomb streamed 1 MiB window", raw: post("/mcp", bs["zstd-1"], enc("zstd")), want: tooLarge},
		{name: "zstd bomb streamed 8 MiB window", raw: post("/mcp", bs["zstd-8"], enc("zstd")), want: tooLarge},
		{name: "zstd bomb declaring 64 MiB", raw: post("/mcp", bs["zstd-sized"], enc("zstd")), want: tooLarge},
		{name: "gzip bomb inside zstd", raw: post("/mcp", zs(bs["gzip"]), enc("gzip, zstd")), want: tooLarge},
		{name: "gzip bomb chunked", raw: post("/mcp", chunked(bs["gzip"][:1000], bs["gzip"][1000:]), enc("gzip"), "Transfer-Encoding: chunked"), want: tooLarge},
		// Frames of one raw block of one space (whitespace alone: an
		// empty body, -32700, once decoded) declaring their window in the
		// Window_Descriptor byte (exponent<<3 | mantissa, 2^(10+exponent)
		// plus mantissa eighths). Any window up to RFC 9659's 8 MiB is
		// decoded (with the history the frame needs, issue #18 item 6);
		// a frame asking for more is 413 before its window is allocated.
		{name: "zstd window 1 MiB, 1 byte", raw: post("/mcp", zstdFrame([]byte{0x00, 0x50}, []byte(" ")), enc("zstd")), want: parse},
		{name: "zstd window 1.125 MiB, 1 byte", raw: post("/mcp", zstdFrame([]byte{0x00, 0x51}, []byte(" ")), enc("zstd")), want: parse},
		{name: "zstd window 8 MiB, 1 byte", raw: post("/mcp", zstdFrame([]byte{0x00, 0x68}, []byte(" ")), enc("zstd")), want: parse},
		{name: "zstd window 9 MiB, 1 byte", raw: post("/mcp", zstdFrame([]byte{0x00, 0x69}, []byte(" ")), enc("zstd")), want: tooLarge},
		{name: "zstd window 2 TiB, 1 byte", raw: post("/mcp", zstdFrame([]byte{0x00, 0xF8}, []byte(" ")), enc("zstd")), want: tooLarge},
		// Single segment, 8-byte content size 2^40.
		{name: "zstd single segment declaring 1 TiB", raw: post("/mcp", zstdFrame(append([]byte{0xE0}, binary.LittleEndian.AppendUint64(nil, 1<<40)...), []byte(" ")), enc("zstd")), want: tooLarge},
		{name: "nesting 100000 arrays", raw: post("/mcp", deep("[", 100000)), want: invalid},
		{name: "nesting 100000 objects", raw: post("/mcp", deep(`{"a":`, 100000)), want: invalid},
		{name: "nesting 100000 arrays top level", raw: post("/mcp", []byte(strings.Repeat("[", 100000)+strings.Repeat("]", 100000))), want: invalid},
		{name: "nesting 100000 arrays gzip", raw: post("/mcp", gz(deep("[", 100000)), enc("gzip")), want: invalid},
		{name: "escapes under the ceiling", raw: post("/mcp", escapes(underN)), want: want{200, 0, "1"},
			check: func(t *testing.T, a rpcAnswer) {
				if got := echoText(t, a); got != strings.Repeat("A", underN) {
					t.Fatalf("echo text: %d bytes, want %d times A", len(got), underN)
				}
			}},
		{name: "escapes over the ceiling", raw: post("/mcp", escapes(overN)), want: tooLarge},
		{name: "escapes over the ceiling chunked", raw: post("/mcp", chunked(escapes(overN)), "Transfer-Encoding: chunked"), want: tooLarge},
		{name: "escapes under the ceiling zstd", raw: post("/mcp", zs(escapes(underN)), enc("zstd")), want: want{200, 0, "1"}},
		{name: "invalid UTF-8 last byte at the ceiling", raw: post("/mcp", invalidLast(ceiling, "\xff")), want: parse},
		{name: "cut UTF-8 sequence last byte", raw: post("/mcp", invalidLast(ceiling/2, "\xe2\x82")), want: parse},
		{name: "invalid UTF-8 after a complete message", raw: post("/mcp", completeBad), want: parse},
		{name: "invalid UTF-8 last byte gzip", raw: post("/mcp", gz(invalidLast(ceiling, "\xff")), enc("gzip")), want: parse},
		{name: "unpaired surrogate escape at the end", raw: post("/mcp", []byte(head+strings.Repeat("a", ceiling-200)+`\ud800`+tail)), want: parse},
	}
}

// TestBodyAttacks sends each hostile body on a fresh connection and
// checks the answer and the heap in use during the attack (peak
// HeapInuse above the baseline, sampled every millisecond) against
// heapFactor times the ceiling.
func TestBodyAttacks(t *testing.T) {
	cfg := testConfig()
	addr := startApp(t, cfg).addr
	ceiling := fastserver.DefaultMaxBodyBytes
	limit := uint64(heapFactor * ceiling)
	for _, at := range bodyAttacks(t, ceiling) {
		t.Run(at.name, func(t *testing.T) {
			c := dial(t, addr)
			h := sampleHeap()
			start := time.Now()
			// The server may answer before the body is all in: write in
			// the background and read.
			go func() {
				c.c.SetWriteDeadline(time.Now().Add(ioTimeout))
				c.c.Write(at.raw)
			}()
			r := c.read()
			took := time.Since(start)
			peak := h.Stop().inUse
			a := at.want.check(t, r)
			if at.check != nil {
				at.check(t, a)
			}
			t.Logf("%d %d after %v; heap in use during the attack +%s (limit %s)",
				r.status, at.want.code, took.Round(time.Millisecond), fmtBytes(peak), fmtBytes(limit))
			if !raceEnabled && peak > limit {
				t.Errorf("heap in use rose by %s during the attack, over %d× the ceiling (%s)", fmtBytes(peak), heapFactor, fmtBytes(limit))
			}
		})
	}
	// The server still serves.
	want{200, 0, "7"}.check(t, roundTrip(t, addr, post("/mcp", echoCall(7, "still here"))))
}

// TestDeclaredTooLarge checks row 5: a Content-Length over the ceiling is
// answered 413 from the headers, before the body is read. fasthttp calls
// the handler once the headers and a first byte of the body are in (the
// prefetch, contract §3), so the client sends the headers and one byte;
// with Expect: 100-continue it sends the headers alone and gets 417.
func TestDeclaredTooLarge(t *testing.T) {
	cfg := testConfig()
	cfg.ReadTimeout = time.Second
	addr := startApp(t, cfg).addr
	for _, cl := range []int64{fastserver.DefaultMaxBodyBytes + 1, 1 << 40, 1<<63 - 1} {
		t.Run(fmt.Sprint(cl), func(t *testing.T) {
			c := dial(t, addr)
			h := sampleHeap()
			start := time.Now()
			c.send(request("POST", "/mcp", []byte("{"), "Content-Type: application/json", fmt.Sprintf("Content-Length: %d", cl)))
			r, err := c.tryRead(500 * time.Millisecond)
			if err != nil {
				t.Fatalf("no answer within 500 ms to the headers and one body byte: %v", err)
			}
			took := time.Since(start)
			peak := h.Stop().inUse
			want{413, -32600, "null"}.check(t, r)
			if !r.close {
				t.Errorf("no Connection: close")
			}
			c.expectClosed(time.Second)
			t.Logf("413 after %v, one body byte sent; heap in use +%s", took.Round(time.Microsecond), fmtBytes(peak))
		})
	}
	t.Run("Expect 100-continue", func(t *testing.T) {
		c := dial(t, addr)
		start := time.Now()
		c.send(request("POST", "/mcp", nil, "Content-Type: application/json", "Expect: 100-continue",
			fmt.Sprintf("Content-Length: %d", fastserver.DefaultMaxBodyBytes+1)))
		r, err := c.tryRead(500 * time.Millisecond)
		if err != nil {
			t.Fatalf("no answer within 500 ms to the headers: %v", err)
		}
		if r.status != 417 {
			t.Fatalf("status %d, want 417; %q", r.status, r.body)
		}
		t.Logf("417 after %v, no body sent", time.Since(start).Round(time.Microsecond))
	})
	// Without the expectation and without a body byte, the server waits
	// for the prefetch: the read timeout answers (contract §3 allows it;
	// logged for the report).
	t.Run("headers only", func(t *testing.T) {
		c := dial(t, addr)
		start := time.Now()
		c.send(request("POST", "/mcp", nil, "Content-Type: application/json",
			fmt.Sprintf("Content-Length: %d", fastserver.DefaultMaxBodyBytes+1)))
		r, err := c.tryRead(cfg.ReadTimeout + time.Second)
		if err != nil {
			t.Fatalf("no answer within the read timeout + 1 s: %v", err)
		}
		if r.status != 413 && r.status != 408 {
			t.Fatalf("status %d, want 413 or 408; %q", r.status, r.body)
		}
		c.expectClosed(time.Second)
		t.Logf("headers only: %d after %v (ReadTimeout %v)", r.status, time.Since(start).Round(time.Millisecond), cfg.ReadTimeout)
	})
}

// TestChunkedCeilingPlusOne checks row 7d on a chunked body: exactly the
// ceiling of a valid prefix gets no verdict, and the byte after it gets
// 413 at once.
func TestChunkedCeilingPlusOne(t *testing.T) {
	addr := startApp(t, testConfig()).addr
	ceiling := fastserver.DefaultMaxBodyBytes
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`
	prefix := []byte(head + strings.Repeat("a", ceiling-len(head)))

	c := dial(t, addr)
	h := sampleHeap()
	hdr := request("POST", "/mcp", nil, "Content-Type: application/json", "Transfer-Encoding: chunked")
	c.send(hdr)
	for p := prefix; len(p) > 0; {
		n := min(len(p), 64*kib)
		c.send([]byte(fmt.Sprintf("%x\r\n%s\r\n", n, p[:n])))
		p = p[n:]
	}
	if r, err := c.tryRead(300 * time.Millisecond); err == nil {
		t.Fatalf("answered %d %q at exactly the ceiling; want no verdict yet", r.status, r.body)
	} else if !isTimeout(err) {
		t.Fatalf("at exactly the ceiling: %v", err)
	}
	c.send([]byte("1\r\na\r\n"))
	r := c.read()
	peak := h.Stop().inUse
	want{413, -32600, "null"}.check(t, r)
	c.expectClosed(time.Second)
	t.Logf("no verdict at %d bytes; 413 at ceiling+1; heap in use +%s", ceiling, fmtBytes(peak))
	if !raceEnabled && peak > heapFactor*uint64(ceiling) {
		t.Errorf("heap in use rose by %s, over %d× the ceiling", fmtBytes(peak), heapFactor)
	}
}

// TestInflightBudget's bounds on the heap: liveFactor times the budget on
// the live heap's peak, inUseFactor times it on the heap in use's, each
// plus heapOverhead, the allowance for the heap that does not grow with
// the budget.
const (
	liveFactor   = 3
	inUseFactor  = 4
	heapOverhead = 16 << 20
)

// TestInflightBudget runs 200 concurrent uploads of about 1 MiB against
// a 64 MiB in-flight budget. Each request is charged its body bytes as
// they arrive; a step that finds no room waits BudgetWait and gets 503 +
// Retry-After. Every upload sends all of its body but the last bytes and
// holds them: the admitted ones keep their charge, so at most budget/size
// of them fit and every other one must be refused 503 — however slowly
// the machine runs, because nothing is released until the test says so.
// Then the admitted ones finish and are answered 200; the peak heap
// stays within a small multiple of the budget, and the server still
// serves.
func TestInflightBudget(t *testing.T) {
	uploads, budget := 200, int64(64<<20)
	if testing.Short() {
		uploads, budget = 100, 32<<20
	}
	needFiles(t, uint64(2*uploads+100))
	cfg := testConfig()
	cfg.InflightBodyBytes = budget
	cfg.BudgetWait = 100 * time.Millisecond
	// The admitted uploads hold their bodies until every other one has
	// been refused (seconds on a loaded machine).
	cfg.ReadTimeout = 30 * time.Second
	addr := startApp(t, cfg).addr

	ceiling := fastserver.DefaultMaxBodyBytes
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"pad":"`
	body := []byte(head + strings.Repeat("x", ceiling-len(head)-3) + `"}}`)
	raw := post("/mcp", body)
	// The budget holds at most this many bodies; every other upload must
	// be refused.
	mustRefuse := uploads - int(budget/int64(len(body)))

	var ok, busy atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, uploads)
	release := make(chan struct{})
	h := sampleHeap()
	start := time.Now()
	for i := range uploads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- upload(addr, raw, i, release, &ok, &busy)
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for busy.Load() < int64(mustRefuse) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	refusedBy := time.Since(start)
	close(release)
	wg.Wait()
	took := time.Since(start)
	peak := h.Stop()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d concurrent uploads of %d KiB with a %d MiB budget: %d answered 503 + Retry-After within %v, %d answered 200 once released (all done in %v); the live heap peaked at +%s, the heap in use at +%s",
		uploads, len(body)>>10, budget>>20, busy.Load(), refusedBy.Round(time.Millisecond), ok.Load(), took.Round(time.Millisecond), fmtBytes(peak.live), fmtBytes(peak.inUse))
	if busy.Load() < int64(mustRefuse) {
		t.Errorf("%d uploads refused 503, want at least %d: the budget admitted more bodies than it holds", busy.Load(), mustRefuse)
	}
	if ok.Load() == 0 {
		t.Errorf("no upload was served")
	}
	// The budget is charged for the decoders' live buffers as the bytes
	// arrive. sampleHeap reads two peaks, with runtime/metrics (no
	// stop-the-world, which perturbed the pacing it measured).
	//
	// The live heap as of the last completed collection is what the
	// bodies hold, whenever the collector runs; it still passes the
	// budget: the buffers the bodies outgrew wait in the server's pools
	// (sync.Pool: reachable until the second collection after they are
	// put back), and a collection marks live what is allocated while it
	// runs. Measured on 2026-12-07 in 200 runs on 2 cores (idle, beside
	// two busy loops, beside the rest of this package), over fasthttp and
	// net/http: 83–172 MiB with 64 MiB of budget (median 139–147), 52–90
	// MiB with -short (32 MiB, median 69), at most 2.7× the budget. The
	// bound, 3× the budget plus heapOverhead (208 MiB, 112 with -short),
	// is 36 MiB over the worst run (22 with -short); a budget that is not
	// charged (every upload admitted) measured 245–295 MiB (116–143).
	//
	// The heap in use also holds the garbage not yet collected, and the
	// collector lets it grow past the live data (GOGC=100), so its peak
	// depends on when the collector runs: 131–203 MiB (median 185), 84–103
	// with -short, and one CI run on a loaded machine 209 MiB. Its bound
	// is looser, 4× the budget plus heapOverhead (272 MiB, 144 with
	// -short), 63 MiB over that run, and under what an uncharged budget
	// measured, 308–345 MiB (160–168), or a copy of each body that is not
	// charged, 279–340 MiB (153–162), which the live heap's bound does not
	// reliably see (153–219 MiB, 91–110).
	if limit := uint64(liveFactor*budget + heapOverhead); !raceEnabled && peak.live > limit {
		t.Errorf("the live heap rose by %s, over %d× the budget plus %s (%s): the bodies hold more than the budget lets them",
			fmtBytes(peak.live), liveFactor, fmtBytes(heapOverhead), fmtBytes(limit))
	}
	if limit := uint64(inUseFactor*budget + heapOverhead); !raceEnabled && peak.inUse > limit {
		t.Errorf("the heap in use rose by %s, over %d× the budget plus %s (%s)",
			fmtBytes(peak.inUse), inUseFactor, fmtBytes(heapOverhead), fmtBytes(limit))
	}
	want{200, 0, "7"}.check(t, roundTrip(t, addr, post("/mcp", echoCall(7, "still here"))))
}

// upload sends the headers and all of raw's body but its last 3 bytes in
// 16 pieces 25 ms apart, then holds the connection until release is
// closed and sends the rest, and checks the answer: 200 with the sum, or
// 503 / -32603 with Retry-After (which may come at any moment before).
func upload(addr string, raw []byte, i int, release <-chan struct{}, ok, busy *atomic.Int64) error {
	c, err := netDial(addr)
	if err != nil {
		return fmt.Errorf("upload %d: %v", i, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(40 * time.Second))
	go func() {
		tail := len(raw) - 3
		piece := tail/16 + 1
		for p := raw[:tail]; len(p) > 0; {
			n := min(len(p), piece)
			if _, err := c.Write(p[:n]); err != nil {
				return // answered early; the rest is not wanted
			}
			p = p[n:]
			time.Sleep(25 * time.Millisecond)
		}
		<-release
		c.Write(raw[tail:])
	}()
	r, err := readResp(bufioReader(c))
	if err != nil {
		return fmt.Errorf("upload %d: no answer: %v", i, err)
	}
	a, err := parseRPC(r)
	if err != nil {
		return fmt.Errorf("upload %d: %v", i, err)
	}
	switch {
	case r.status == 200 && a.Error == nil && bytes.Contains(a.Result, []byte(`"text":"3"`)):
		ok.Add(1)
	case r.status == 503 && a.Error != nil && a.Error.Code == -32603 && r.header.Get("Retry-After") != "":
		busy.Add(1)
	default:
		return fmt.Errorf("upload %d: answered %d %.200q (Retry-After %q)", i, r.status, r.body, r.header.Get("Retry-After"))
	}
	return nil
}

// TestBudgetCompressed holds 48 stalled uploads (24 under -short) open
// against a 16 MiB in-flight budget and measures the heap they cost, which
// must stay under twice the budget (the garbage collector's headroom).
// A body is charged as it arrives: its buffer; a compressed one also its
// decompressors' state (up front, and a zstd one the history its frame
// takes when the frame header arrives, before the decoder allocates it),
// within a quarter of the budget, and twice its decoded bytes.
//
//   - identity: 1 MiB declared and nearly all sent; the budget admits 16.
//   - gzip: 1 KiB on the wire that decodes to nearly 1 MiB, held by the
//     decoder.
//   - zstd: a 20-byte frame declaring a 1 MiB window, with one block of
//     one byte that is not the last: the decoder allocates the window and
//     two blocks of room at the first block.
//   - zstd 8 MiB window: the same frame declaring the 8 MiB window RFC
//     9659 allows: decoded with the window a 1 MiB ceiling needs (1.125
//     MiB), which is what it is charged (decode.ZstdHistory).
func TestBudgetCompressed(t *testing.T) {
	const budget = 16 << 20
	n := 48
	if testing.Short() {
		n = 24
	}
	needFiles(t, uint64(2*n+100))
	cfg := testConfig()
	cfg.InflightBodyBytes = budget
	cfg.BudgetWait = 100 * time.Millisecond
	cfg.ReadTimeout = 5 * time.Second
	addr := startApp(t, cfg).addr
	ceiling := fastserver.DefaultMaxBodyBytes
	text := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
		strings.Repeat("a", ceiling-200))

	// gzip: the text compressed and flushed, the stream left open.
	var gz bytes.Buffer
	gw := gzip.NewWriter(&gz)
	gw.Write(text)
	gw.Flush()
	// zstd: a frame header with an 8 MiB window and one raw block of one
	// byte that is not the last.
	zframe := func(window byte) []byte {
		zf := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
		return append(zf, 0x00, window, 1<<3, 0, 0, '{')
	}
	zf1, zf8 := zframe(0x50), zframe(0x68)

	cases := []struct {
		name  string
		raw   []byte
		early int // the status every upload must get at once, 0 for none
	}{
		{"identity", post("/mcp", text, fmt.Sprintf("Content-Length: %d", len(text)+100)), 0},
		{"gzip", post("/mcp", gz.Bytes(), "Content-Encoding: gzip", fmt.Sprintf("Content-Length: %d", gz.Len()+100)), 0},
		{"zstd", post("/mcp", zf1, "Content-Encoding: zstd", fmt.Sprintf("Content-Length: %d", len(zf1)+100)), 0},
		{"zstd 8 MiB window", post("/mcp", zf8, "Content-Encoding: zstd", fmt.Sprintf("Content-Length: %d", len(zf8)+100)), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			waitIdle(t, addr)
			peak, refused, early := holdStalled(t, addr, n, tc.raw, tc.early)
			t.Logf("%d stalled uploads, %d B each on the wire, against a %d MiB budget: %d refused 503, %d answered %d at once; heap in use +%s (%.1f× the budget)",
				n, len(tc.raw), budget>>20, refused, early, tc.early, fmtBytes(peak), float64(peak)/budget)
			if tc.early != 0 && early != n {
				t.Errorf("%d of %d uploads answered %d at once", early, n, tc.early)
			}
			if limit := uint64(2 * budget); !raceEnabled && peak > limit {
				t.Errorf("%d stalled %s uploads hold %s of heap, over 2× the in-flight budget (%s): what a request reserves does not cover what decoding it costs",
					n, tc.name, fmtBytes(peak), fmtBytes(limit))
			}
		})
	}
	want{200, 0, "7"}.check(t, roundTrip(t, addr, post("/mcp", echoCall(7, "still here"))))
}

// holdStalled opens n connections, sends raw (a request whose body never
// ends) on each, holds them 500 ms (BudgetWait passes, so the refusals are
// in), and returns the peak heap above the baseline, the number of
// uploads refused 503 and the number answered the early status.
func holdStalled(t *testing.T, addr string, n int, raw []byte, early int) (uint64, int, int) {
	h := sampleHeap()
	conns := make([]*conn, n)
	for i := range conns {
		conns[i] = dial(t, addr)
		conns[i].send(raw)
	}
	time.Sleep(500 * time.Millisecond)
	refused, answered := 0, 0
	for _, c := range conns {
		r, err := c.tryRead(10 * time.Millisecond)
		switch {
		case err == nil && early != 0 && r.status == early:
			if answered == 0 {
				t.Logf("answered at once: %d %s", r.status, r.body)
			}
			answered++
		case err == nil && r.status == 503:
			if refused == 0 {
				t.Logf("first refusal: %d %s", r.status, r.body)
			}
			refused++
		case err == nil:
			t.Errorf("stalled upload answered %d %.200q", r.status, r.body)
		case !isTimeout(err):
			t.Errorf("stalled upload: %v", err)
		}
	}
	peak := h.Stop().inUse
	for _, c := range conns {
		c.c.Close()
	}
	return peak, refused, answered
}

// waitIdle waits until the server has no request in flight (its
// rpcedge_requests_in_flight gauge), at most 10 s, and logs how long
// that took.
func waitIdle(t *testing.T, addr string) {
	t.Helper()
	start := time.Now()
	for {
		r := roundTrip(t, addr, request("GET", "/metrics", nil))
		n := metricValue(t, string(r.body), "rpcedge_requests_in_flight")
		if n == 0 {
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Logf("the server had requests in flight for %v after their clients closed", d.Round(time.Millisecond))
			}
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d requests still in flight after 10 s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
