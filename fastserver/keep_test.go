package fastserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// TestRequestKeep: Request.Keep is the endpoint's: the server neither
// reads nor clears it, so a value one request leaves there is found by a
// later request the same pooled call serves, and by no request while
// another one holds it. Requests go one after another on one connection,
// so the pool hands back the call the previous request used (sync.Pool
// may drop some, under -race a quarter: most of 60 still find it).
func TestRequestKeep(t *testing.T) {
	type kept struct{ n, busy int }
	var found int
	ms := &Methods{}
	ms.HandleFunc("count", func(r *Request, dst []byte) ([]byte, error) {
		if !r.Reused() {
			return dst, fmt.Errorf("a server's Request does not report Reused")
		}
		k, _ := r.Keep.(*kept)
		if k == nil {
			k = &kept{}
			r.Keep = k
		} else {
			found++
		}
		if k.busy != 0 {
			return dst, fmt.Errorf("the kept value is in use by another request")
		}
		k.busy++
		k.n++
		k.busy--
		return decode.AppendString(dst, fmt.Sprint(k.n)), nil
	})
	_, addr := serve(t, Config{}, ms.Endpoint(pathRPC, decode.IDsMCP))
	c := dial(t, addr)
	const n = 60
	for i := range n {
		r := c.do(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"count"}`, i)))
		if r.Status != 200 || !strings.Contains(string(r.Body), `"result":"`) {
			t.Fatalf("answer %d: %s %s", i, r.StatusLine, r.Body)
		}
	}
	var made Request
	made.Reset(nil, nil, nil)
	if made.Reused() {
		t.Error("a Request made with Reset reports Reused")
	}
	if found < n/2 {
		t.Errorf("a later request found the value an earlier one kept %d times of %d", found, n-1)
	}
}

// TestAnswerBufferTrim: a pooled call does not keep the memory of the
// largest answers it wrote. The answer buffer rotates with fasthttp's
// response body, so a large answer's buffer comes back into a call one
// request later; the uncompressed answer stays behind a compressed one.
// After large answers (identity and gzip) and small ones, every call
// the pool holds keeps at most keepAnswerBuffer of either.
func TestAnswerBufferTrim(t *testing.T) {
	type mark struct{}
	ms := &Methods{}
	ms.HandleFunc("big", func(r *Request, dst []byte) ([]byte, error) {
		r.Keep = mark{}
		// Varied letters, so that gzip's answer is large too.
		text := make([]byte, 3*keepAnswerBuffer)
		x := uint32(r.Msg.ID[0])
		for i := range text {
			x = x*1664525 + 1013904223
			text[i] = 'a' + byte(x>>27)
		}
		return decode.AppendString(dst, string(text)), nil
	})
	ms.HandleFunc("small", func(r *Request, dst []byte) ([]byte, error) {
		r.Keep = mark{}
		return decode.AppendString(dst, "ok"), nil
	})
	s, addr := serve(t, Config{}, ms.Endpoint(pathRPC, decode.IDsMCP))
	ep := s.endpoints[pathRPC]
	found := 0
	for round := 0; round < 20 && found < 3; round++ {
		c := dial(t, addr)
		for i, m := range []string{"big", "small", "big", "small", "small"} {
			var hdr []string
			if i == 2 {
				hdr = append(hdr, "Accept-Encoding: gzip")
			}
			r := c.do(post(pathRPC, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q}`, round*10+i+1, m), hdr...))
			if r.Status != 200 {
				t.Fatalf("round %d, %s: %s %.200s", round, m, r.StatusLine, r.Body)
			}
		}
		var held []*call
		for range 4 {
			cl, _ := ep.calls.Get().(*call)
			if cl == nil {
				break
			}
			held = append(held, cl)
			if _, ok := cl.req.Keep.(mark); !ok {
				continue // a call the pool made now
			}
			found++
			if cap(cl.out) > keepAnswerBuffer || cap(cl.zbuf) > keepAnswerBuffer {
				t.Errorf("round %d: a pooled call keeps answer buffers of %d and %d bytes (at most %d)",
					round, cap(cl.out), cap(cl.zbuf), keepAnswerBuffer)
			}
		}
		for _, cl := range held {
			ep.calls.Put(cl)
		}
	}
	if found == 0 {
		t.Fatal("no pooled call that served the requests was found in the pool")
	}
}

// TestServeLinesAnswerTrim: the calls of a newline-delimited stream
// drop an answer buffer a large answer grew, as a pooled call does, so
// that a stream does not keep its largest answer for as long as it
// lasts. The answers are still whole.
func TestServeLinesAnswerTrim(t *testing.T) {
	ms := &Methods{}
	ms.HandleFunc("big", func(r *Request, dst []byte) ([]byte, error) {
		return decode.AppendString(dst, strings.Repeat("b", 3*keepAnswerBuffer)), nil
	})
	ms.HandleFunc("small", func(r *Request, dst []byte) ([]byte, error) {
		return decode.AppendString(dst, "ok"), nil
	})
	ep := ms.Endpoint(pathRPC, decode.IDsMCP)
	s, err := New(Config{Logger: quietLogger}, ep)
	if err != nil {
		t.Fatal(err)
	}
	defer s.running.stop()
	for _, last := range []string{"big", "small"} {
		in := `{"jsonrpc":"2.0","id":1,"method":"big"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"` + last + `"}` + "\n"
		f, err := decode.NewFramer(strings.NewReader(in), decode.Options{IDs: ep.IDs})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		l := s.newLines(s.endpoints[pathRPC], f, &lineOut{bw: bufio.NewWriter(&out)})
		if err := l.serve(context.Background()); err != nil {
			t.Fatalf("serve: %v", err)
		}
		l.stop()
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], strings.Repeat("b", 3*keepAnswerBuffer)) || !strings.Contains(lines[1], `"id":2`) {
			t.Fatalf("then %s: %d answer lines, want 2 whole ones", last, len(lines))
		}
		if len(l.free) != l.made || l.made == 0 {
			t.Fatalf("then %s: %d calls made, %d back", last, l.made, len(l.free))
		}
		for range l.made {
			c := <-l.free
			if cap(c.out) > keepAnswerBuffer || cap(c.zbuf) > keepAnswerBuffer {
				t.Errorf("then %s: a stream's call keeps answer buffers of %d and %d bytes (at most %d)",
					last, cap(c.out), cap(c.zbuf), keepAnswerBuffer)
			}
		}
	}
}
