package decode_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing/iotest"

	"github.com/rpcedge/rpcedge/decode"
)

func ExampleDecoder_Decode() {
	var d decode.Decoder // the zero value: 1 MiB ceiling, depth 1000, JSON-RPC ids
	var m decode.Message // reuse both: decoding then allocates nothing
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools\/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"caf\u00e9","result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"a":[1,}`,
	} {
		if err := d.Decode([]byte(body), &m); err != nil {
			fmt.Printf("%v: code %d at byte %d, answer id %s\n", m.Error.Err, m.Error.Code, m.Error.Offset, m.AnswerID())
			continue
		}
		fmt.Printf("%v %s id=%s params=%s\n", m.Kind, m.Method, m.ID, m.Params)
	}
	// Output:
	// request tools/call id=12345678901234567890123 params={"name":"echo"}
	// notification notifications/initialized id= params=
	// decode: invalid JSON-RPC envelope: code -32600 at byte 0, answer id "caf\u00e9"
	// decode: batch requests are not accepted: code -32600 at byte 0, answer id null
	// decode: invalid JSON: code -32700 at byte 8, answer id null
}

func ExampleDecoder_Write() {
	var d decode.Decoder
	var m decode.Message

	// A body that arrives in pieces, split anywhere (here inside an
	// escape and inside a number).
	d.Reset()
	for _, piece := range []string{`{"jsonrpc":"2.0","id":4`, `2,"method":"tools\u00`, `2fcall"}`} {
		if _, err := d.Write([]byte(piece)); err != nil {
			fmt.Println("refused early:", err)
			return
		}
	}
	if err := d.Finish(&m); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v %s id=%s\n", m.Kind, m.Method, m.ID)

	// A refusal is reported by the Write that brings the deciding byte;
	// the rest of the body need not be read.
	d.Reset()
	_, err := d.Write([]byte(`{"a":[1,`))
	fmt.Println("first piece:", err)
	_, err = d.Write([]byte(`}` + strings.Repeat(" ", 1000)))
	var e *decode.Error
	if errors.As(err, &e) {
		fmt.Printf("second piece: %v, code %d at byte %d\n", e.Err, e.Code, e.Offset)
	}
	// Output:
	// request tools/call id=42
	// first piece: <nil>
	// second piece: decode: invalid JSON, code -32700 at byte 8
}

func ExampleDecoder_DecodeReader() {
	d, err := decode.NewDecoder(decode.Options{MaxBytes: 64})
	if err != nil {
		panic(err)
	}
	var m decode.Message
	// A reader that returns one byte at a time reaches the same verdict as
	// a whole body.
	body := `{"jsonrpc":"2.0","id":"a","method":"ping"}`
	err = d.DecodeReader(iotest.OneByteReader(strings.NewReader(body)), &m)
	fmt.Println(m.Kind, string(m.Method), string(m.AnswerID()), err)

	// A body over the ceiling is refused at byte ceiling+1, without reading
	// the rest.
	err = d.DecodeReader(strings.NewReader(strings.Repeat(" ", 1<<20)), &m)
	var e *decode.Error
	if errors.As(err, &e) {
		fmt.Println(e.HTTPStatus(), e.Code, e.Offset, errors.Is(err, decode.ErrTooLarge))
	}
	// Output:
	// request ping "a" <nil>
	// 413 -32600 64 true
}

func ExampleDecoder_DecodeBody() {
	var wire bytes.Buffer
	zw := gzip.NewWriter(&wire)
	zw.Write([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`))
	zw.Close()

	enc, err := decode.ParseEncoding([]byte("gzip")) // the Content-Encoding header
	if err != nil {
		panic(err)
	}
	var d decode.Decoder
	var m decode.Message
	if err := d.DecodeBody(&wire, enc, &m); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s id=%s params=%s\n", m.Method, m.ID, m.Params)
	// Output:
	// tools/call id=7 params={"name":"echo","arguments":{"text":"hi"}}
}

func ExampleValid() {
	for _, s := range []string{`[1,2,3]`, `"text"`, `{"a":1,"a":2}`, `{"a":[1,}`, "\"\xff\"", `"\ud800"`, "\xef\xbb\xbf{}"} {
		fmt.Printf("%-14q %v\n", s, decode.Valid([]byte(s)))
	}
	// Output:
	// "[1,2,3]"      true
	// "\"text\""     true
	// "{\"a\":1,\"a\":2}" true
	// "{\"a\":[1,}"  false
	// "\"\xff\""     false
	// "\"\\ud800\""  false
	// "\ufeff{}"     false
}

func ExampleValidate() {
	for _, s := range []string{`{"a":[1,}`, `{"a":1}x`, `{"a":`, `"\ud800"`, `"\udc00"`, "\"\xe0\x80\"", `[1,2]`} {
		err := decode.Validate([]byte(s))
		var e *decode.Error
		if errors.As(err, &e) {
			fmt.Printf("%-14q code %d at byte %d\n", s, e.Code, e.Offset)
		} else {
			fmt.Printf("%-14q %v\n", s, err)
		}
	}
	// Output:
	// "{\"a\":[1,}"  code -32700 at byte 8
	// "{\"a\":1}x"   code -32700 at byte 7
	// "{\"a\":"      code -32700 at byte 5
	// "\"\\ud800\""  code -32700 at byte 7
	// "\"\\udc00\""  code -32700 at byte 4
	// "\"\xe0\x80\"" code -32700 at byte 2
	// "[1,2]"        <nil>
}

func ExampleMessage_AnswerID() {
	mcp, err := decode.NewDecoder(decode.Options{IDs: decode.IDsMCP})
	if err != nil {
		panic(err)
	}
	var m decode.Message
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":"r-1","method":"ping"}`,       // a request: its id
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,       // an id MCP does not accept: null
		`{"jsonrpc":"1.0","id":"r-2","method":"ping"}`,       // row 10 with an accepted id: the id
		`{"jsonrpc":"2.0","id":3,"method":"a","method":"b"}`, // row 9, decided before the id is known: null
		`{"jsonrpc":"2.0","id":4,"method":"ping"}}`,          // a syntax error: null
	} {
		err := mcp.Decode([]byte(body), &m)
		fmt.Printf("%-7s %v\n", m.AnswerID(), errors.Unwrap(err))
	}
	// Output:
	// "r-1"   <nil>
	// null    decode: invalid JSON-RPC envelope
	// "r-2"   decode: invalid JSON-RPC envelope
	// null    decode: duplicate top-level member name
	// null    decode: invalid JSON
}

func ExampleAcceptIDs() {
	// An endpoint that takes string ids only.
	d, err := decode.NewDecoder(decode.Options{IDs: decode.AcceptIDs(decode.IDString)})
	if err != nil {
		panic(err)
	}
	var m decode.Message
	for _, id := range []string{`"abc"`, `17`, `null`} {
		err := d.Decode([]byte(`{"jsonrpc":"2.0","method":"m","id":`+id+`}`), &m)
		fmt.Printf("%-5s %-7v accepted=%v\n", id, m.IDType, err == nil)
	}
	fmt.Println(decode.AcceptIDs(decode.IDString, decode.IDInteger) == decode.IDsMCP)
	// Output:
	// "abc" string  accepted=true
	// 17    integer accepted=false
	// null  null    accepted=false
	// true
}

func ExampleNewDecoder() {
	d, err := decode.NewDecoder(decode.Options{MaxBytes: 4 << 10, MaxDepth: 3, IDs: decode.IDsMCP})
	if err != nil {
		panic(err)
	}
	var m decode.Message
	err = d.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":[1]}}}`), &m)
	fmt.Println(errors.Is(err, decode.ErrDepth), m.Error.Code, m.Error.Offset)
	_, err = decode.NewDecoder(decode.Options{MaxBytes: -1})
	fmt.Println(err != nil)
	// Output:
	// true -32600 56
	// true
}

// Two spellings of one string are equal by their text: an id or a text
// echoed back with other escapes than it was sent with.
func ExampleStringsEqual() {
	sent := []byte(`"caf\u00e9 \/ \"q\""`)
	fmt.Println(decode.StringsEqual(sent, []byte(`"café / \"q\""`)))
	fmt.Println(decode.StringsEqual(sent, []byte(`"cafe / \"q\""`)))
	fmt.Println(decode.StringIs(sent, `café / "q"`))
	// Output:
	// true
	// false
	// true
}

// Walking a raw array of params without decoding it: the values borrow
// from the message.
func ExampleElements() {
	var it decode.Elements
	for it.Reset([]byte(`[ {"uri":"file:///a"}, "b", [1, 2] ]`)); it.Next(); {
		fmt.Printf("%s\n", it.Value())
	}
	// Output:
	// {"uri":"file:///a"}
	// "b"
	// [1, 2]
}
