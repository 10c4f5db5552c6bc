package decode_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/rpcedge/rpcedge/decode"
)

func ExampleParseEncoding() {
	for _, h := range []string{"", " GZIP , zstd ", "identity, x-gzip", "br", "gzip, gzip, gzip"} {
		enc, err := decode.ParseEncoding([]byte(h))
		if err != nil {
			var e *decode.Error
			errors.As(err, &e)
			fmt.Printf("%q: %d %v\n", h, e.HTTPStatus(), err)
			continue
		}
		fmt.Printf("%q: %s\n", h, enc)
	}
	// Output:
	// "": identity
	// " GZIP , zstd ": gzip, zstd
	// "identity, x-gzip": gzip
	// "br": 415 decode: unsupported content encoding at byte 0: unsupported content coding
	// "gzip, gzip, gzip": 415 decode: unsupported content encoding at byte 0: more than two content codings
}

func ExampleBodyReader() {
	// The sender gzipped the body, then zstd'ed the result.
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("la", 200) + `"}}}`))
	w.Close()
	zw, _ := zstd.NewWriter(nil)
	wire := zw.EncodeAll(gz.Bytes(), nil)

	enc, err := decode.ParseEncoding([]byte("gzip, zstd"))
	if err != nil {
		panic(err)
	}
	var br decode.BodyReader // reuse it: Reset, read, Close, Reset again
	br.Reset(bytes.NewReader(wire), enc, 0)
	body, err := io.ReadAll(&br)
	br.Close()
	fmt.Printf("%d bytes, %v; all %d wire bytes read: %v\n", len(body), err, len(wire), br.Wire() == int64(len(wire)))

	// A ceiling of 200 bytes refuses the same body: the wire and the
	// gzip stream fit, the decoded body does not.
	br.Reset(bytes.NewReader(wire), enc, 200)
	body, err = io.ReadAll(&br)
	var e *decode.Error
	errors.As(err, &e)
	fmt.Printf("%d bytes; %d: %v\n", len(body), e.HTTPStatus(), err)
	br.Close()
	// Output:
	// 495 bytes, <nil>; all 121 wire bytes read: true
	// 200 bytes; 413: decode: body exceeds the size ceiling at byte 200: decoded bytes over the ceiling
}
