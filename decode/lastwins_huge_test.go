package decode_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// TestLastWinsPast4GiB: AppendLastWins on an object past 4 GiB with few
// members keeps the last occurrence of a repeated name. Such an object
// took a nameSet, whose 32-bit offsets wrapped: the result lost the name
// ({} for {"a":"…","a":1}; found by review on 2026-12-07). The second
// name is put just past 2^32 and exactly at 2^32 - 1 (whose entry was 0,
// an empty slot). It takes 4 GiB and some 20 s: it runs when
// RPCEDGE_HUGE_TESTS is set (.ci/run's stage for values past 2 GiB sets
// it), and is skipped with -short, -race or under 10 GiB available.
func TestLastWinsPast4GiB(t *testing.T) {
	hugeTests(t)
	if testing.Short() || review3Race() || strconv.IntSize < 64 {
		t.Skip("needs a 4 GiB value")
	}
	if avail := review3MemAvailable(); avail < 10<<30 {
		t.Skipf("needs a 4 GiB value: %d MiB available", avail>>20)
	}
	const head, tail = `{"a":"`, `","a":1}`
	v := make([]byte, 1<<32+10-1+len(tail))
	defer func() {
		v = nil
		runtime.GC()
		debug.FreeOSMemory()
	}()
	for _, second := range []int{1<<32 + 10, 1<<32 - 1} { // the second name's quote
		w := v[:second-1+len(tail)]
		copy(w, head)
		body := w[len(head) : second-2]
		body[0] = 'x'
		for n := 1; n < len(body); n *= 2 {
			copy(body[n:], body[:n])
		}
		copy(w[second-2:], tail)
		if got := string(decode.AppendLastWins(nil, w)); got != `{"a":1}` {
			t.Errorf("the second name at %#x: AppendLastWins gave %.40q, want {\"a\":1}", second, got)
		}
	}
}

// hugeTests skips a test of values past 2 GiB unless RPCEDGE_HUGE_TESTS
// is set: each takes gigabytes and tens of seconds, too much beside the
// other packages in one go test ./... on a small machine.
func hugeTests(t *testing.T) {
	t.Helper()
	if os.Getenv("RPCEDGE_HUGE_TESTS") == "" {
		t.Skip("a value past 2 GiB: set RPCEDGE_HUGE_TESTS=1 to run it (.ci/run does, in a stage of its own)")
	}
}
