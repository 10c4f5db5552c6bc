package mcp

import (
	"sync/atomic"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// serveInitialize answers initialize (versions before 2026-07-28 only):
// with the version the client asks for when it is served and earlier
// than 2026-07-28, else with 2025-11-25. It never refuses: MCP's
// negotiation answers with a version the server supports and leaves the
// choice to disconnect to the client. No session is created and no
// Mcp-Session-Id is issued.
func (s *Server) serveInitialize(r *fastserver.Request, dst []byte) ([]byte, error) {
	v := negotiate(r.Msg)
	if s.sessions == nil {
		return append(dst, s.init[v]...), nil
	}
	var caps []byte
	if r.Msg.ParamsType == decode.ParamsObject {
		caps, _ = decode.Lookup(r.Msg.Params, "capabilities")
	}
	ss, err := s.sessions.create(v, caps, ownerOf(r), time.Now())
	if err != nil {
		return dst, err
	}
	r.SetResponseHeader(HeaderSession, ss.id)
	return append(dst, s.initS[v]...), nil
}

// serveStreamInitialize is serveInitialize for a newline-delimited
// stream (StreamEndpoint): the stream is the session (cur), begun here,
// once the request has passed every check: the version it answers with
// and the capabilities the client declares (declaredCapabilities, as an
// HTTP session keeps them) hold for the requests after it. No HTTP
// session is made: none could be named from a stream (found by review
// on 2026-12-07: with WithSessions each stdio initialize took a table
// entry for 30 minutes, and a refused initialize still changed the
// stream's version and capabilities).
func (s *Server) serveStreamInitialize(r *fastserver.Request, dst []byte, cur *atomic.Pointer[session]) ([]byte, error) {
	v := negotiate(r.Msg)
	var caps []byte
	if r.Msg.ParamsType == decode.ParamsObject {
		caps, _ = decode.Lookup(r.Msg.Params, "capabilities")
	}
	cur.Store(&session{version: v, caps: declaredCapabilities(caps), subs: make(map[string]bool)})
	return append(dst, s.initS[v]...), nil // resources.subscribe: updates come as lines
}

// negotiate picks the version initialize answers with.
func negotiate(m *decode.Message) Version {
	if m.ParamsType == decode.ParamsObject {
		if pv, n := decode.Lookup(m.Params, "protocolVersion"); n == 1 {
			for _, v := range Versions() {
				if !v.Stateless() && decode.StringIs(pv, v.String()) {
					return v
				}
			}
		}
	}
	return Version20251125
}

// servePing answers ping (versions before 2026-07-28) with an empty
// result.
func servePing(_ *fastserver.Request, dst []byte) ([]byte, error) {
	return append(dst, "{}"...), nil
}

// serveDiscover answers server/discover, under every version, with MCP
// 2026-07-28's DiscoverResult.
func (s *Server) serveDiscover(_ *fastserver.Request, dst []byte) ([]byte, error) {
	return append(dst, s.disc...), nil
}
