package mcp

import (
	"slices"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// NOTE: cancellation within a session.
//
// Under 2025-xx over HTTP a client cancels a request by POSTing
// notifications/cancelled ("Disconnection SHOULD NOT be interpreted as the
// client cancelling its request. To cancel, the client SHOULD explicitly
// send an MCP CancelledNotification"). Request ids are the client's own,
// unique only within its session: a cancellation is matched only within
// the session that sent it (and, with WithAuth, its token holder, whom the
// session belongs to). Without sessions a stateless 2025-xx cancellation
// names no scope in which its id means anything, and is ignored (MCP lets
// a receiver ignore one it cannot act on).
//
// The requests that may run long (tools/call, resources/read, prompts/get,
// completion/complete) are tracked while their handler runs; a
// cancellation ends that handler's context (fastserver.Request.Cancel:
// context.Canceled). A streamed answer is tracked until its first event;
// after that closing its stream is what ends it. Ending the session
// (DELETE) cancels every request of it that is tracked, in the same way.

// inflight is a session's request whose handler runs.
type inflight struct {
	id []byte // its raw id, borrowed from its body: valid while it runs
	r  *fastserver.Request
}

// cancellable wraps f, the handler of a method that may run long, so that
// a request in a session can be cancelled while f runs. Without sessions
// it is f.
func (s *Server) cancellable(f func(*fastserver.Request, []byte) ([]byte, error)) func(*fastserver.Request, []byte) ([]byte, error) {
	if s.sessions == nil {
		return f
	}
	return func(r *fastserver.Request, dst []byte) ([]byte, error) {
		ss := s.sessionOf(r)
		if ss == nil {
			return f(r, dst)
		}
		ss.mu.Lock()
		ss.inflight = append(ss.inflight, inflight{id: r.Msg.ID, r: r})
		if ss.ended {
			r.Cancel() // ended since it was looked up (DELETE, reclaimed, expired): it starts cancelled
		}
		ss.mu.Unlock()
		defer ss.untrack(r)
		return f(r, dst)
	}
}

// untrack forgets r once its handler returns: under the lock that
// cancelInSession holds, so that no cancellation reaches r after (when it
// serves another request). A session with a request running does not
// expire nor is reclaimed (session.expired).
func (ss *session) untrack(r *fastserver.Request) {
	ss.mu.Lock()
	if i := slices.IndexFunc(ss.inflight, func(f inflight) bool { return f.r == r }); i >= 0 {
		ss.inflight = slices.Delete(ss.inflight, i, i+1)
	}
	ss.seen = time.Now() // idle from the end of its last request
	ss.mu.Unlock()
}

// cancelInSession acts on a notifications/cancelled of r's session (Check
// runs for notifications too): the session's running requests with its
// requestId are cancelled. It returns how many.
func (s *Server) cancelInSession(r *fastserver.Request) int {
	id := cancelTarget(r.Msg)
	if id == nil {
		return 0
	}
	ss := s.sessionOf(r)
	if ss == nil {
		return 0
	}
	n := 0
	ss.mu.Lock()
	for _, f := range ss.inflight {
		if decode.IDsEqual(f.id, id) {
			f.r.Cancel()
			n++
		}
	}
	ss.mu.Unlock()
	return n
}
