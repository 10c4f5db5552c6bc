package decode_test

import (
	"fmt"

	"github.com/rpcedge/rpcedge/decode"
)

func ExampleAppendResult() {
	// The id comes back byte for byte, however it was spelled.
	id := []byte(`12345678901234567890123`)
	answer := decode.AppendResult(nil, id, []byte(`{"tools":[]}`))
	fmt.Println(string(answer))

	// A nil result (or id) is written as null.
	fmt.Println(string(decode.AppendResult(nil, []byte(`"caf\u00e9"`), nil)))
	// Output:
	// {"jsonrpc":"2.0","id":12345678901234567890123,"result":{"tools":[]}}
	// {"jsonrpc":"2.0","id":"caf\u00e9","result":null}
}

func ExampleAppendError() {
	// Before the message is known valid, the id is null.
	buf := make([]byte, 0, 512) // reused across answers: no allocation
	buf = decode.AppendError(buf[:0], nil, decode.CodeParseError, "Parse error", nil)
	fmt.Println(string(buf))

	// data is raw JSON, written as is.
	data := []byte(`{"supported":["2026-07-28"],"requested":"1999-01-01"}`)
	buf = decode.AppendError(buf[:0], []byte(`7`), -32022, "Unsupported protocol version", data)
	fmt.Println(string(buf))
	// Output:
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}
	// {"jsonrpc":"2.0","id":7,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"1999-01-01"}}}
}

func ExampleAppendString() {
	fmt.Println(string(decode.AppendString(nil, "say \"hi\"\n")))
	// Invalid UTF-8 becomes one \ufffd per byte; U+2028 is escaped.
	fmt.Println(string(decode.AppendString(nil, []byte("bad \xc0\x80, line\u2028sep, ok é"))))
	// Output:
	// "say \"hi\"\n"
	// "bad \ufffd\ufffd, line\u2028sep, ok é"
}
