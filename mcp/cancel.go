package mcp

import "github.com/rpcedge/rpcedge/decode"

// cancelTarget is the stream endpoint's Cancel (fastserver.Endpoint): a
// notifications/cancelled names the request it cancels in
// params.requestId, a string or an integer (MCP's RequestId). Anything
// else, a requestId given twice included, cancels nothing: MCP lets a
// receiver ignore a cancellation it cannot act on.
//
// Over stdio a client has no other way to cancel a request (MCP
// 2026-07-28, cancellation: "The client MUST send a
// notifications/cancelled notification referencing the request ID"); over
// HTTP it closes the request's stream, so the HTTP endpoint asks none.
func cancelTarget(m *decode.Message) []byte {
	if string(m.Method) != "notifications/cancelled" || m.ParamsType != decode.ParamsObject {
		return nil
	}
	id, n := decode.Lookup(m.Params, "requestId")
	if n != 1 || len(id) == 0 {
		return nil
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return id
	}
	return nil
}
