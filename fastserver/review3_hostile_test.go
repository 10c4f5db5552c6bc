package fastserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// Hostile review 3 of the streaming surface (stream.go, clientstreams.go,
// the stream paths of server.go and nethttp.go).

const review3Tick = `{"jsonrpc":"2.0","method":"tick"}`

// review3Settled waits until every stream slot (Config.MaxStreams and,
// when set, MaxClientStreams) is given back and every request entered is
// answered.
func review3Settled(t *testing.T, s *Server) {
	t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for {
		st := s.Stats()
		clients := 0
		if s.clientStreams != nil {
			clients = s.clientStreams.clients()
		}
		if s.streams.Load() == 0 && clients == 0 && st.Entered == st.Answered {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not settled: %d stream slots, %d clients holding streams, stats %+v", s.streams.Load(), clients, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// review3Final checks that the last event of an SSE body is the JSON-RPC
// response want, byte for byte, and valid JSON.
func review3Final(t *testing.T, what string, r *resp, want string) {
	t.Helper()
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("%s: %d %q %q, want a 200 event stream", what, r.Status, r.Header.Get("Content-Type"), r.Body)
		return
	}
	evs := sseEvents(t, r.Body)
	if len(evs) == 0 {
		t.Errorf("%s: no events: %q", what, r.Body)
		return
	}
	last := evs[len(evs)-1]
	if !json.Valid([]byte(last)) {
		t.Errorf("%s: the final event is not JSON: %s", what, last)
	}
	if last != want {
		t.Errorf("%s: final event\n%s\nwant\n%s", what, last, want)
	}
}

// Attack (careless handler author): a handler calls Request.Stream a
// second time after the first call turned the answer into a stream (a
// "retry on error" around r.Stream). Stream's doc: once the answer is a
// stream, Stream returns a marker "to be returned as it is", and the
// stream's StreamHandler gives the final event; every stream slot
// (MaxStreams, MaxClientStreams) is given back once and the request is
// counted answered once.
//
// Bug: the second call runs st.reset on the Stream whose first handler
// is still running: the slots it holds are forgotten (slot, cslot set to
// false without being given back), the first handler's goroutine finds
// sentAny reset and pushes a second token into st.first, and the two
// handlers' outcomes are mixed.
func TestReview3StreamTwice(t *testing.T) {
	ms := streamMethods(t, nil)
	ms.HandleFunc("twice", func(r *Request, dst []byte) ([]byte, error) {
		out, err := r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := st.Send([]byte(review3Tick)); err != nil {
				return dst, err
			}
			time.Sleep(50 * time.Millisecond) // still running when the second call comes
			return append(dst, `"first"`...), nil
		}))
		if err == nil {
			return out, nil
		}
		// Careless: "it failed, try again".
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			return append(dst, `"second"`...), nil
		}))
	})
	s, addr := serve(t, Config{Logger: quietLogger, MaxStreams: 4, MaxClientStreams: 2}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	r := c.do(post(pathRPC, `{"jsonrpc":"2.0","id":"t","method":"twice"}`, acceptSSE))
	review3Final(t, "twice", r, `{"jsonrpc":"2.0","id":"t","result":"first"}`)
	review3Settled(t, s)
}

// Attack (careless handler author): after Request.Stream returned its
// marker, the handler appends a fallback result to dst and returns it
// (misreading the marker as a failure). Stream's doc: "a handler that
// returns something else then ... is logged, and the stream goes on: h's
// result is the final event".
//
// Bug: Stream returns the very dst it gave the StreamHandler, with room
// to grow, so the handler's append writes over the bytes the
// StreamHandler already appended (or will append) in the same backing
// array: the final event is the StreamHandler's length of the handler's
// bytes, here `{"jsonrpc":"2.0","id":"a","result":"f}`, not JSON.
func TestReview3AppendAfterMarker(t *testing.T) {
	ms := streamMethods(t, nil)
	ms.HandleFunc("fallback", func(r *Request, dst []byte) ([]byte, error) {
		appended := make(chan struct{})
		out, err := r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := st.Send([]byte(review3Tick)); err != nil {
				return dst, err
			}
			dst = append(dst, `1`...)
			close(appended)
			return dst, nil
		}))
		if err != nil {
			<-appended
			return append(dst, `"fallback-result"`...), nil
		}
		return out, nil
	})
	s, addr := serve(t, Config{Logger: quietLogger}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	r := dial(t, addr).do(post(pathRPC, `{"jsonrpc":"2.0","id":"a","method":"fallback"}`, acceptSSE))
	review3Final(t, "fallback", r, `{"jsonrpc":"2.0","id":"a","result":1}`)
	review3Settled(t, s)
}

// Attack (careless handler author): a StreamHandler leaves behind a
// goroutine that sends until Send fails ("for st.Send(ev) == nil {}"),
// and returns without having sent (a plain JSON answer). Send's doc: it
// "fails once the stream has closed (ErrStreamClosed)"; the Stream's doc
// forbids sends after ServeStream returns, but a pooled Stream must not
// carry one client's events into another client's answer.
//
// Bug: after ServeStream returned nothing marks the Stream closed: the
// late Sends return nil and fill st.fill, then block in queue's
// cond.Wait (nobody drains it). The Stream is pooled with its call: the
// next Request.Stream on that call resets fill without waking it, and
// the new stream's first queue/nextBatch Broadcast wakes the stale
// sender, whose event (another request's, maybe another client's) is
// then written into the new request's stream (seen when the next request
// gets the same pooled call: not every run).
func TestReview3SendAfterReturn(t *testing.T) {
	ms := streamMethods(t, nil)
	var sent atomic.Int64
	late := make(chan struct{}, 1)
	stop := make(chan struct{})
	var stale atomic.Pointer[Stream]
	ms.HandleFunc("leaky", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			stale.Store(st)
			go func() {
				<-late // after ServeStream returned
				for {
					select {
					case <-stop:
						return
					default:
					}
					if st.Send([]byte(`{"jsonrpc":"2.0","method":"secret-of-request-1"}`)) != nil {
						return
					}
					sent.Add(1)
				}
			}()
			return append(dst, `"plain"`...), nil
		}))
	})
	s, addr := serve(t, Config{Logger: quietLogger}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	r := c.do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"leaky"}`, acceptSSE))
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("leaky: %d %q %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	late <- struct{}{}
	t.Cleanup(func() {
		close(stop)
		stale.Load().Cut() // wakes the sender if it is still blocked
	})
	// Wait until the late sender is blocked (or has stopped).
	deadline := time.Now().Add(ioTimeout)
	for prev := int64(-1); ; {
		time.Sleep(50 * time.Millisecond)
		n := sent.Load()
		if n == prev {
			break
		}
		prev = n
		if time.Now().After(deadline) {
			t.Fatalf("the late sender never stopped: %d sends", n)
		}
	}
	if n := sent.Load(); n > 0 {
		t.Errorf("%d Sends after ServeStream returned succeeded, want ErrStreamClosed", n)
	}
	// The next streams on the same connection (most often the same
	// pooled call) carry their own events only.
	for i := range 20 {
		r := c.do(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"count","params":{"n":2}}`, 10+i), acceptSSE))
		if strings.Contains(string(r.Body), "secret-of-request-1") {
			t.Errorf("request %d got events another request sent: %.200q", 10+i, r.Body)
			break
		}
		want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"tick","params":{"i":0}}|{"jsonrpc":"2.0","method":"tick","params":{"i":1}}|{"jsonrpc":"2.0","id":%d,"result":{"sent":2}}`, 10+i)
		if got := strings.Join(sseEvents(t, r.Body), "|"); got != want {
			t.Errorf("request %d: events %.300q, want %q", 10+i, got, want)
			break
		}
	}
	review3Settled(t, s)
}

// Attack (careless handler author): a watchdog the StreamHandler started
// (time.AfterFunc(limit, st.Cut), never stopped) fires after the stream
// ended. Cut's doc: it acts "while ServeStream runs"; a Stream is pooled,
// so a late Cut must not reach the next request served by the same call.
//
// Bug: Cut checks only st.live, which stays true after the stream ended
// (reset happens only at the next Request.Stream): it sets the write
// deadline of the connection (now serving the next request) to now and
// cancels the call's context (c.dl), which may belong to the next
// request: a plain request served after the late Cut is answered 500
// "the stream is closed", or not at all.
func TestReview3LateCut(t *testing.T) {
	ms := streamMethods(t, nil)
	late := make(chan *Stream, 1)
	cutNow := make(chan struct{})
	ms.HandleFunc("onecut", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := st.Send([]byte(review3Tick)); err != nil {
				return dst, err
			}
			select {
			case late <- st:
			default:
			}
			return append(dst, `"ok"`...), nil
		}))
	})
	ms.HandleFunc("napper", func(r *Request, dst []byte) ([]byte, error) {
		<-cutNow // the late Cut happens while this plain handler runs
		time.Sleep(20 * time.Millisecond)
		if err := r.Context().Err(); err != nil {
			return dst, err
		}
		return append(dst, `"napped"`...), nil
	})
	s, addr := serve(t, Config{Logger: quietLogger}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	r := c.do(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"onecut"}`, acceptSSE))
	review3Final(t, "onecut", r, `{"jsonrpc":"2.0","id":1,"result":"ok"}`)
	st := <-late
	go func() {
		time.Sleep(50 * time.Millisecond)
		st.Cut() // the forgotten watchdog
		close(cutNow)
	}()
	r2, err := c.tryRead2(post(pathRPC, `{"jsonrpc":"2.0","id":2,"method":"napper"}`))
	if err != nil {
		t.Fatalf("the request after a late Cut got no answer: %v", err)
	}
	if r2.Status != 200 || !strings.Contains(string(r2.Body), `"napped"`) {
		t.Errorf("the request after a late Cut: %d %s, want 200 \"napped\"", r2.Status, r2.Body)
	}
	review3Settled(t, s)
}

// tryRead2 sends raw and reads the answer, returning a read error rather
// than failing.
func (c *conn) tryRead2(raw string) (*resp, error) {
	c.t.Helper()
	c.send(raw)
	return c.tryRead()
}

// Hardening (holds): a hostile client pipelines a streamed request whose
// id needs escapes behind nothing and a plain one behind it, in one
// write; the final event carries the id byte for byte and the second
// request is answered after the stream on the same connection. A
// handler that Cuts before any event, or panics before any event, still
// gives its slots back and is counted once.
func TestReview3PipelinedAndEarlyCut(t *testing.T) {
	ms := streamMethods(t, nil)
	ms.HandleFunc("cutfirst", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			st.Cut()
			return dst, st.Send([]byte(review3Tick))
		}))
	})
	s, addr := serve(t, Config{Logger: quietLogger, MaxClientStreams: 2}, ms.Endpoint(pathRPC, decode.IDsJSONRPC))
	c := dial(t, addr)
	id := `"a\"b\\c\u00e9\/\n"`
	c.send(post(pathRPC, `{"jsonrpc":"2.0","id":`+id+`,"method":"count","params":{"n":3}}`, acceptSSE) +
		post(pathRPC, `{"jsonrpc":"2.0","id":-0.5e+3,"method":"count","params":{"n":0}}`, acceptSSE))
	r := c.read()
	review3Final(t, "escaped id", r, `{"jsonrpc":"2.0","id":`+id+`,"result":{"sent":3}}`)
	r = c.read()
	if r.Status != 200 || string(r.Body) != `{"jsonrpc":"2.0","id":-0.5e+3,"result":{"sent":0}}` {
		t.Errorf("pipelined plain answer: %d %s", r.Status, r.Body)
	}
	for _, m := range []string{"cutfirst", "boom"} {
		dial(t, addr).tryRead2(post(pathRPC, `{"jsonrpc":"2.0","id":1,"method":"`+m+`"}`, acceptSSE))
	}
	review3Settled(t, s)
}
