package fastserver

import (
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
