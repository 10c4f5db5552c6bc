package fastserver

import (
	"fmt"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// A handler that does not return Request.Stream's marker as it is, once
// its answer became a stream — it wraps it, drops it for a result of its
// own, returns another error, or panics — still gets its stream: every event, the
// StreamHandler's final result, the stream slot given back, the request
// counted once. (Until 2026-12-06 the handler's deadline and context
// ended when it returned, the stream's handler was cut, and a wrapped
// marker was logged as a failure.)
func TestStreamMarkerNotReturnedAsIs(t *testing.T) {
	ms := streamMethods(t, nil)
	inner := func(st *Stream, dst []byte) ([]byte, error) {
		for i := range 3 {
			if err := st.Send(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"tick","params":{"i":%d}}`, i)); err != nil {
				return dst, err
			}
			time.Sleep(20 * time.Millisecond) // past the handler's return
		}
		if err := st.Context().Err(); err != nil {
			return dst, err
		}
		return append(dst, `{"done":true}`...), nil
	}
	ms.HandleFunc("wrap", func(r *Request, dst []byte) ([]byte, error) {
		out, err := r.Stream(dst, StreamHandlerFunc(inner))
		if err != nil {
			return out, fmt.Errorf("layer: %w", err)
		}
		return out, nil
	})
	ms.HandleFunc("drop", func(r *Request, dst []byte) ([]byte, error) {
		out, _ := r.Stream(dst, StreamHandlerFunc(inner))
		return append(out, `"mine"`...), nil
	})
	ms.HandleFunc("other", func(r *Request, dst []byte) ([]byte, error) {
		r.Stream(dst, StreamHandlerFunc(inner))
		return dst, NewError(-32050, "not the marker")
	})
	ms.HandleFunc("panic", func(r *Request, dst []byte) ([]byte, error) {
		r.Stream(dst, StreamHandlerFunc(inner))
		panic("after the stream started")
	})
	s, addr := serve(t, Config{Logger: quietLogger}, ms.Endpoint("/rpc", decode.IDsJSONRPC))
	c := dial(t, addr)
	for i, method := range []string{"wrap", "drop", "other", "panic"} {
		id := fmt.Sprintf(`"%s-%d"`, method, i)
		r := c.do(post("/rpc", fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q}`, id, method), acceptSSE))
		if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("%s: %d %q %s", method, r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		evs := sseEvents(t, r.Body)
		want := []string{
			`{"jsonrpc":"2.0","method":"tick","params":{"i":0}}`,
			`{"jsonrpc":"2.0","method":"tick","params":{"i":1}}`,
			`{"jsonrpc":"2.0","method":"tick","params":{"i":2}}`,
			`{"jsonrpc":"2.0","id":` + id + `,"result":{"done":true}}`,
		}
		if fmt.Sprint(evs) != fmt.Sprint(want) {
			t.Errorf("%s: events\n%q\nwant\n%q", method, evs, want)
		}
	}
	deadline := time.Now().Add(ioTimeout)
	for s.streams.Load() != 0 || s.Stats().Entered != s.Stats().Answered {
		if time.Now().After(deadline) {
			t.Fatalf("%d stream slots held, stats %+v", s.streams.Load(), s.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.Entered != 4 {
		t.Errorf("stats %+v, want 4 requests", st)
	}
}
