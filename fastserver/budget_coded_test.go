package fastserver

import (
	"bytes"
	"compress/gzip"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Compressed bodies hold at most half the in-flight budget: a kilobyte
// of gzip decodes to a megabyte, held twice (the decoder's buffer and the
// decompressor's history) while the upload stalls before its trailer, so
// some 130 stalled uploads of 1 KiB each spent the whole default budget
// and every POST was refused 503 (found by review on 2026-12-06). Now
// the compressed uploads past half are the ones refused, and a body
// without a coding is still served.
func TestBudgetCompressedHalf(t *testing.T) {
	const budget = 16 << 20
	// Nothing is cut for its rate or time while the test fills the budget.
	s, addr := serve(t, Config{MaxBodyBytes: 1 << 20, InflightBodyBytes: budget, BudgetWait: 100 * time.Millisecond, DrainTimeout: 100 * time.Millisecond,
		MinBodyRateGrace: time.Minute, ReadTimeout: time.Minute})
	var stalled, refused int
	for i := range 12 {
		text := strings.Repeat(string(rune('a'+i%26)), 1000000)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write([]byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"echo","params":{"s":"` + text + `"}}`))
		zw.Close()
		gz := z.Bytes()
		// All but the trailer: the body decodes whole, then waits for
		// the last 8 bytes, which never come.
		c := dial(t, addr)
		before := s.budget.used.Load()
		c.send(post(pathRPC, string(gz[:len(gz)-8]), "Content-Encoding: gzip", "Content-Length: "+strconv.Itoa(len(gz))))
		grew, answered := false, false
		for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
			if s.budget.used.Load() >= before+3<<19 { // 1.5 MiB: the decoded bytes arriving
				grew = true
				break
			}
			c.c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			if _, err := c.br.Peek(1); err == nil {
				answered = true
				break
			}
		}
		c.c.SetReadDeadline(time.Time{})
		if grew {
			stalled++
			continue
		}
		if !answered {
			t.Fatalf("upload %d: neither held its decoded bytes nor was answered", i)
		}
		r := c.read()
		if r.Status != 503 {
			t.Fatalf("upload %d: %d %s, want 503", i, r.Status, r.Body)
		}
		refused++
	}
	used := s.budget.used.Load()
	t.Logf("%d compressed uploads stalled holding %d B of %d, %d refused", stalled, used, budget, refused)
	// Whether an upload counts as stalled or refused depends on when the
	// test looks (on a loaded machine a refused one's charge can grow
	// first): the bound is what is held.
	if used > budget/2 {
		t.Errorf("stalled compressed uploads hold %d B of a %d B budget (%d refused): more than half", used, budget, refused)
	}
	// A body without a coding of 900 KB (charged up to twice that as it
	// arrives) finds room.
	r := dial(t, addr).do(post(pathRPC, `{"jsonrpc":"2.0","id":"plain","method":"echo","params":{"s":"`+strings.Repeat("p", 900000)+`"}}`))
	if r.Status != 200 {
		t.Errorf("a body without a coding beside stalled compressed ones: %d %.200s", r.Status, r.Body)
	}
}
