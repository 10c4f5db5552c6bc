package decode_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// wideObject is an object of n members with short distinct names (and,
// when envelope, a request's members first), about 10 bytes a member:
// the shape that makes the name checks index the most per byte.
func wideObject(n int, envelope bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	if envelope {
		b.WriteString(`"jsonrpc":"2.0","id":1,"method":"m",`)
	}
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%x":%d`, i*2654435761%(1<<32), i%10)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// BenchmarkWideObject: the name checks on objects of many members —
// Decode of a request whose top level has them, DuplicateName and
// HasDuplicateNameDeep on a params object — per byte.
func BenchmarkWideObject(b *testing.B) {
	for _, n := range []int{1000, 8000, 60000} {
		req := wideObject(n, true)
		obj := wideObject(n, false)
		b.Run(fmt.Sprintf("Decode/members=%d", n), func(b *testing.B) {
			var d decode.Decoder
			var m decode.Message
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Decode(req, &m); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("DuplicateName/members=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(obj)))
			b.ReportAllocs()
			for b.Loop() {
				if decode.DuplicateName(obj) {
					b.Fatal("a duplicate")
				}
			}
		})
		b.Run(fmt.Sprintf("HasDuplicateNameDeep/members=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(obj)))
			b.ReportAllocs()
			for b.Loop() {
				if decode.HasDuplicateNameDeep(obj) {
					b.Fatal("a duplicate")
				}
			}
		})
	}
}
