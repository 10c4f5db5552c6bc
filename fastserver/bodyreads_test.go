package fastserver

import (
	"bufio"
	"bytes"
	"io"
	"math/bits"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// countConn is a memConn that counts the reads fasthttp makes of it
// (each a system call on a real connection).
type countConn struct {
	memConn
	reads int
}

func (c *countConn) Read(p []byte) (int, error) {
	c.reads++
	return c.memConn.Read(p)
}

// A body charged as it arrives is read a step at a time: when the bytes
// are there, one read of the connection per doubling of the decoder's
// buffer, not two (charging each step before the byte that fills the
// buffer once cost a one-byte read, which refilled fasthttp's buffer with
// a system call of its own). The budget still never holds more than twice
// what arrived (TestBudgetChargedAsBytesArrive) and is all given back.
func TestBodyReadsPerStep(t *testing.T) {
	for i, size := range []int{budgetStep + 1, 100_000, 300 << 10, 1<<20 - 4096} {
		// A new server each time: no buffer of an earlier body to read
		// into at once (TestLentBodyReads).
		s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
		if err != nil {
			t.Fatal(err)
		}
		reads := echoCounted(t, s, "reads-"+strconv.Itoa(i), size)
		// Buffers of firstStep, doubled until the body fits: a read per
		// buffer, and the header block's (whose bytes of the body leave
		// the first buffer short of full).
		steps := bits.Len(uint(size/firstStep)) + 1
		if want := steps + 1; reads > want {
			t.Errorf("a %d-byte body: %d reads of the connection, want at most %d (%d buffer steps)", size, reads, want, steps)
		} else {
			t.Logf("a %d-byte body: %d reads of the connection (%d buffer steps)", size, reads, steps)
		}
		if used := s.budget.used.Load(); used != 0 {
			t.Errorf("size %d: the budget holds %d bytes after the request", size, used)
		}
	}
}

// A body read into memory that is there already (Server.lendIdle: the
// decoder's own buffer, kept from an earlier body up to keepBodyBuffer,
// or one the pool holds idle) is read as it arrives, not a step at a
// time, and each read is charged once its bytes are in. A body that is
// all there then takes the reads the floor's takes: the header block's,
// the rest of the body's, and the one that finds the connection ended.
// The first run of each size reads into a doubling buffer and leaves it
// to the second: kept by the pooled call (the two smaller sizes) or
// given back to the pool (the largest).
func TestLentBodyReads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // sync.Pool is per P
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	s, err := New(Config{Logger: quietLogger}, testEndpoints(nil)...)
	if err != nil {
		t.Fatal(err)
	}
	for i, size := range []int{budgetStep + 1, 200_000, 1<<20 - 4096} { // body bytes
		var reads [2]int
		for run := range reads {
			reads[run] = echoCounted(t, s, "lent-"+strconv.Itoa(i)+"-"+strconv.Itoa(run), size)
			if used := s.budget.used.Load(); used != 0 {
				t.Errorf("size %d: the budget holds %d bytes after the request", size, used)
			}
			if lent := s.budget.lent.Load(); lent != 0 {
				t.Errorf("size %d: %d bytes still counted as lent after the request", size, lent)
			}
		}
		t.Logf("a %d-byte body: %d reads of the connection into a doubling buffer, %d into one already there", size, reads[0], reads[1])
		if !raceOn && reads[1] > 3 {
			t.Errorf("a %d-byte body read into a buffer already there: %d reads of the connection, want at most 3", size, reads[1])
		}
	}
}

// echoCounted serves one echo request with a body of exactly size bytes
// (its text the id, repeated) through ServeConn over a countConn, checks
// the answer, and returns the reads fasthttp made of the connection.
func echoCounted(t *testing.T, s *Server, id string, size int) int {
	t.Helper()
	text := strings.Repeat(id+" ", size/len(id)+1)
	body := `{"jsonrpc":"2.0","id":"` + id + `","method":"echo","params":{"t":"`
	body += text[:size-len(body)-3] + `"}}`
	c := &countConn{}
	c.r.WriteString(post(pathRPC, body))
	if err := s.ServeConn(c); err != nil {
		t.Fatalf("%s: ServeConn: %v", id, err)
	}
	hr, err := http.ReadResponse(bufio.NewReader(&c.w), nil)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	got, _ := io.ReadAll(hr.Body)
	if hr.StatusCode != 200 || !bytes.Contains(got, []byte(`"`+id+`"`)) || !bytes.Contains(got, []byte(text[len(text)/2:][:64])) {
		t.Fatalf("%s (%d bytes): %d %.200s", id, size, hr.StatusCode, got)
	}
	return c.reads
}
