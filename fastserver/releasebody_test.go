package fastserver

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// releaseMethods serves "sub": a stream that copies params.n, calls
// ReleaseBody before its first event when params.release is true and
// after it when params.late is true, reports what the request holds then,
// sends one event, and returns {"n":N} once proceed gives it a value.
type releaseSeen struct {
	params bool   // Msg.Params was nil after ReleaseBody
	method string // Msg.Method after it
	used   int64  // the budget used once the first event was sent
}

func releaseMethods(s **Server, proceed <-chan struct{}, seen chan<- releaseSeen) *Methods {
	var ms Methods
	ms.HandleFunc("sub", func(r *Request, dst []byte) ([]byte, error) {
		v, _ := decode.Lookup(r.Msg.Params, "n")
		n := string(v) // copied
		release, _ := decode.Lookup(r.Msg.Params, "release")
		late, _ := decode.Lookup(r.Msg.Params, "late")
		early, afterwards := string(release) == "true", string(late) == "true"
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if early {
				st.ReleaseBody()
				st.ReleaseBody() // twice: nothing more
			}
			if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"tick"}`)); err != nil {
				return dst, err
			}
			if afterwards {
				st.ReleaseBody() // after the first event: nothing
			}
			m := st.Request().Msg
			seen <- releaseSeen{params: m.Params == nil, method: string(m.Method), used: (*s).budget.used.Load()}
			<-proceed
			return fmt.Appendf(dst, `{"n":%s}`, n), nil
		}))
	})
	return &ms
}

// A stream that calls ReleaseBody before its first event gives back the
// body's budget while it runs but for its id's copies' share, and its
// final answer still carries the request's id; one that does not (or
// calls it late, or has an id whose copies outweigh its body) holds the
// body's budget until it ends. The connection then serves its next request normally.
func TestStreamReleaseBody(t *testing.T) {
	var s *Server
	proceed := make(chan struct{})
	seen := make(chan releaseSeen, 1)
	s, addr := serve(t, Config{}, releaseMethods(&s, proceed, seen).Endpoint("/rpc", decode.IDsJSONRPC))
	pad := strings.Repeat("x", 300<<10+rand.IntN(1000)) // over the decoder's kept buffer
	for i, c := range []struct {
		flags string
		held  bool
		bigID bool // an id so long that its copies outweigh the body
	}{
		{`"release":true`, false, false},
		{`"release":false`, true, false},
		{`"late":true`, true, false},
		{`"release":true`, true, true},
		{`"release":true`, false, false},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		id := fmt.Sprintf(`"r\u0041-%d-%d"`, i, rand.IntN(1e6))
		if c.bigID {
			id = `"` + strings.Repeat("i", 100<<10) + `"`
		}
		keep := int64(idCopies * (len(id) + len("sub")))
		n := rand.IntN(1000)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"sub","params":{"n":%d,%s,"pad":"%s"}}`, id, n, c.flags, pad)
		next := `{"jsonrpc":"2.0","id":99,"method":"sub","params":{"n":1}}`
		// Pipelined: the next request waits behind the stream.
		if _, err := conn.Write([]byte(post("/rpc", body, acceptSSE) + post("/rpc", next))); err != nil {
			t.Fatal(err)
		}
		var got releaseSeen
		select {
		case got = <-seen:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the stream did not start", c.flags)
		}
		switch {
		case c.held && got.used < int64(len(pad)):
			t.Errorf("%s: %d bytes of the budget held while the stream runs, want the body's (%d)", c.flags, got.used, len(pad))
		case !c.held && got.used != keep:
			t.Errorf("%s: %d bytes of the budget held after ReleaseBody, want the id's copies' %d", c.flags, got.used, keep)
		case !c.held && (!got.params || got.method != "sub"):
			t.Errorf("%s: after ReleaseBody Params nil %v, Method %q", c.flags, got.params, got.method)
		}
		proceed <- struct{}{}
		br := bufio.NewReader(conn)
		want := fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%s,"result":{"n":%d}}`, id, n)
		if !readLineWith(br, want) {
			t.Errorf("%s: no final event %s", c.flags, want)
		}
		<-seen // the pipelined request's stream
		proceed <- struct{}{}
		if !readLineWith(br, `{"jsonrpc":"2.0","id":99,"result":{"n":1}}`) {
			t.Errorf("%s: the pipelined request after the stream was not answered", c.flags)
		}
		conn.Close()
		waitFor(t, "the budget given back", func() bool { return s.budget.used.Load() == 0 })
	}
}

// readLineWith reads lines until one contains want, or the connection ends.
func readLineWith(br *bufio.Reader, want string) bool {
	for {
		line, err := br.ReadString('\n')
		if strings.Contains(line, want) {
			return true
		}
		if err != nil {
			return false
		}
	}
}
