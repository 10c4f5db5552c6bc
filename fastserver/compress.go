package fastserver

import (
	"bytes"
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

var (
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
		return w
	}}
	zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
)

// compressAnswer appends src compressed with enc to dst. It reports false
// when compression did not make the answer smaller.
func compressAnswer(dst, src []byte, enc int) ([]byte, bool) {
	switch enc {
	case encZstd:
		dst = zstdEncoder.EncodeAll(src, dst)
	case encGzip:
		w := gzipWriters.Get().(*gzip.Writer)
		buf := bytes.NewBuffer(dst)
		w.Reset(buf)
		w.Write(src)
		w.Close()
		gzipWriters.Put(w)
		dst = buf.Bytes()
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
