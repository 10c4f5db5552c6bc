//go:build !race

package demo

import (
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// The stream skill keeps contract §3's bound on a request's decoded form
// (at most 8× its body, as a2a's TestDecodedFormBound measures it): its
// []rune of the text, grown by append, and a string per chunk cost 27×
// a 1 MiB message of text parts. (Found by review on 2026-12-06.)
func TestHostileStreamSkillCostsItsSize(t *testing.T) {
	d, err := NewA2A(A2AOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	ep := d.Server.Endpoint()
	var hdr fasthttp.RequestHeader
	hdr.SetHost("agent.test")
	hdr.Set(a2a.VersionHeader, "1.0")
	for _, text := range []string{strings.Repeat("x", 1000), strings.Repeat("é", 500), ""} {
		head := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},"metadata":{"skillId":"stream","chunks":1000,"delayMs":10000},"message":{"role":"ROLE_USER","messageId":"m","parts":[`
		body := memtest.FillBody(1<<20-1024, head, `]}}}`, func(int) string { return `{"text":"` + text + `"}` })
		dst := make([]byte, 0, 4<<20)
		var out []byte
		cost := memtest.Allocated(func() { out, err = memtest.Serve(ep, &hdr, body, dst) })
		if err != nil || !strings.Contains(string(out), `"TASK_STATE_`) {
			t.Fatalf("text parts of %d bytes: %v %.200s", len(text), err, out)
		}
		ratio := float64(cost) / float64(len(body))
		t.Logf("text parts of %d bytes: body %d, allocated %d (%.1f×)", len(text), len(body), cost, ratio)
		if cost > 8*uint64(len(body)) {
			t.Errorf("text parts of %d bytes: the stream skill allocated %.1f× the body (at most 8×)", len(text), ratio)
		}
	}
}
