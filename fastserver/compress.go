package fastserver

import (
	"bytes"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Answer codings.
const (
	encIdentity = iota
	encGzip
	encZstd
)

var encNames = [...][]byte{nil, []byte("gzip"), []byte("zstd")}

// pickEncoding chooses the answer's coding from Accept-Encoding: zstd if
// accepted, else gzip, else identity. A coding with q=0 is refused.
func pickEncoding(ae []byte) int {
	best := encIdentity
	for len(ae) > 0 {
		var tok []byte
		if i := bytes.IndexByte(ae, ','); i >= 0 {
			tok, ae = ae[:i], ae[i+1:]
		} else {
			tok, ae = ae, nil
		}
		name := tok
		if i := bytes.IndexByte(tok, ';'); i >= 0 {
			name = tok[:i]
			if qZero(tok[i+1:]) {
				continue
			}
		}
		name = bytes.TrimSpace(name)
		switch {
		case bytes.EqualFold(name, []byte("zstd")):
			best = encZstd
		case bytes.EqualFold(name, []byte("gzip")) && best == encIdentity:
			best = encGzip
		}
	}
	return best
}

// gzipState is a pooled gzip writer with the appendWriter it writes to,
// so that compressing an answer allocates nothing.
type gzipState struct {
	z *gzip.Writer
	w appendWriter
}

var gzipWriters = sync.Pool{New: func() any {
	st := new(gzipState)
	st.z, _ = gzip.NewWriterLevel(&st.w, gzip.DefaultCompression)
	return st
}}

// zstdEncoder is an answer's zstd encoder: EncodeAll appends src
// compressed to dst and is safe for concurrent use.
type zstdEncoder interface {
	EncodeAll(src, dst []byte) []byte
}

// zstdAnswers compresses every zstd answer (issue #18 item 8: one encoder
// state with concurrency 1 serialised them, a small answer waiting behind
// the large ones in the queue for the state).
var zstdAnswers zstdEncoder = newZstdPool(max(4*runtime.GOMAXPROCS(0), 8), max(runtime.GOMAXPROCS(0)-1, 1))

// zstdPool lends an encoder state of its own to each answer being
// compressed, as the gzip writers' pool does, so answers compress side by
// side. Large answers (over zstdSlice) must not take every core: Go's
// scheduler preempts a running goroutine only after 10 ms, so six large
// answers compressing on both cores of a small machine kept every other
// request, compressed or not, waiting 15 to 40 ms (measured). So at most
// large of them compress at once (one core fewer than GOMAXPROCS, at
// least one), each yielding the processor every zstdSlice bytes, while
// small answers compress at once beside them. Up to max states are lent
// at once (a further answer waits for one), which bounds their memory: a 1 MiB window with the encoder's lower-memory
// mode holds about 1.4 MiB per state, at most about 3 MiB after a 4 MiB
// answer (klauspost's default 8 MiB window without it, the previous
// setting, held 18 MiB), with the same ratio on JSON answers; idle states
// go with the pool at a collection. A 1 MiB window is also what every
// RFC 9659 decoder accepts (8 MiB) and rpcedge's own decoder decodes
// within a 1 MiB ceiling. A warm pool allocates nothing.
type zstdPool struct {
	lent  chan struct{} // one token per state lent
	large chan struct{} // one token per large answer compressing
	pool  sync.Pool     // *zstdState
}

// zstdSlice is how much of a large answer is compressed between two
// yields of the processor (about 0.3 ms of work).
const zstdSlice = 64 << 10

// zstdState is one encoder (concurrency 1: synchronous) and the writer
// its streamed frames append to.
type zstdState struct {
	e *zstd.Encoder
	w appendWriter
}

// appendWriter appends what is written to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func newZstdPool(max, large int) *zstdPool {
	p := &zstdPool{lent: make(chan struct{}, max), large: make(chan struct{}, large)}
	p.pool.New = func() any {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(1<<20),
			zstd.WithLowerEncoderMem(true),
			zstd.WithZeroFrames(true))
		if err != nil {
			panic("fastserver: zstd encoder: " + err.Error())
		}
		return &zstdState{e: e}
	}
	return p
}

// EncodeAll appends src compressed to dst, on a state of its own: one
// call of the encoder's EncodeAll for an answer up to zstdSlice, else a
// streamed frame (its content size declared) written a slice at a time.
func (p *zstdPool) EncodeAll(src, dst []byte) []byte {
	if len(src) > zstdSlice {
		p.large <- struct{}{}
		defer func() { <-p.large }()
	}
	p.lent <- struct{}{}
	st := p.pool.Get().(*zstdState)
	if len(src) <= zstdSlice {
		dst = st.e.EncodeAll(src, dst)
	} else {
		st.w.b = dst
		st.e.ResetContentSize(&st.w, int64(len(src)))
		for len(src) > 0 {
			n := min(len(src), zstdSlice)
			st.e.Write(src[:n]) // appendWriter never fails
			src = src[n:]
			runtime.Gosched()
		}
		st.e.Close()
		dst = st.w.b
		st.w.b = nil
		st.e.Reset(nil)
	}
	p.pool.Put(st)
	<-p.lent
	return dst
}

// compressAnswer appends src compressed with enc to dst, zstd with ze. It
// reports false when compression did not make the answer smaller.
func compressAnswer(dst, src []byte, enc int, ze zstdEncoder) ([]byte, bool) {
	switch enc {
	case encZstd:
		dst = ze.EncodeAll(src, dst)
	case encGzip:
		st := gzipWriters.Get().(*gzipState)
		st.w.b = dst
		st.z.Reset(&st.w)
		st.z.Write(src) // appendWriter never fails
		st.z.Close()
		dst = st.w.b
		st.w.b = nil
		gzipWriters.Put(st)
	default:
		return dst, false
	}
	return dst, len(dst) < len(src)
}

// qZero reports whether the parameters of an Accept-Encoding element give
// q=0 (q=0, q=0.0, q=0.000; the name case-insensitive).
func qZero(params []byte) bool {
	for len(params) > 0 {
		p := params
		if i := bytes.IndexByte(params, ';'); i >= 0 {
			p, params = params[:i], params[i+1:]
		} else {
			params = nil
		}
		p = bytes.TrimSpace(p)
		if len(p) < 2 || p[0]|0x20 != 'q' || p[1] != '=' {
			continue
		}
		v := p[2:]
		if len(v) == 0 || v[0] != '0' {
			return false
		}
		for _, c := range v[1:] {
			if c != '.' && c != '0' {
				return false
			}
		}
		return true
	}
	return false
}
