package mcp

import (
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// A client at its stream bound (fastserver's MaxClientStreams, or
// MaxStreams for the whole server) takes its own session's stream over:
// the new GET waits for the old stream to give its slot back instead of
// being refused 503 for the slot the stream it replaces still held.
func TestTakeoverAtStreamBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  fastserver.Config
	}{
		{"MaxClientStreams 1", fastserver.Config{MaxClientStreams: 1}},
		{"MaxStreams 1", fastserver.Config{MaxStreams: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Info{Name: "t", Version: "1"}, WithSessions(SessionOptions{}))
			if err != nil {
				t.Fatal(err)
			}
			addr, stop := takeoverServer(t, s, tc.cfg)
			id := newSeqSession(t, s, addr, 10)
			cur := dialStream(t, addr, id)
			if st := cur.read(t); st != 200 {
				t.Fatalf("GET: %d", st)
			}
			for i := range 5 {
				next := dialStream(t, addr, id)
				if st := next.read(t); st != 200 {
					t.Fatalf("takeover %d: %d, want 200", i+1, st)
				}
				cur.waitEnded(t, 5*time.Second, "the stream taken over")
				cur = next
			}
			queued := notifySeq(s, 0, 3)
			waitFor(t, 5*time.Second, "the last stream's notifications", func() bool { return len(cur.got()) == len(queued) })
			rawDo(t, addr, "DELETE", id, "")
			cur.waitEnded(t, 5*time.Second, "stream after DELETE")
			stop()
		})
	}
}
