//go:build !race

package a2a

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// maxDecodedFactor is contract §3's bound: the decoded form of a request
// costs at most 8× its body bytes.
const maxDecodedFactor = 8

// amplifyShape is a request shape that makes a large decoded form cheap
// to send.
type amplifyShape struct {
	name    string
	version string // the A2A-Version header
	body    func(size int, r *rand.Rand) []byte
}

// send returns a shape of SendMessage: the message's members, then
// items inside msgHead … msgTail.
func send(msgHead, msgTail string, item func(i int) string) func(int, *rand.Rand) []byte {
	return func(size int, r *rand.Rand) []byte {
		head := `{"jsonrpc":"2.0","id":` + strconv.Itoa(r.IntN(1e6)) + `,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m` + strconv.Itoa(r.IntN(1e6)) + `",` + msgHead
		return memtest.FillBody(size, head, msgTail+`}}}`, item)
	}
}

// short returns the i-th of a run of distinct short names.
func short(i int) string { return strconv.FormatInt(int64(i), 36) }

func amplifyShapes() []amplifyShape {
	return []amplifyShape{
		{"empty text parts", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"text":""}` })},
		{"empty text parts, 0.3", "0.3", func(size int, r *rand.Rand) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+strconv.Itoa(r.IntN(1e6))+`,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[`, `]}}}`,
				func(int) string { return `{"kind":"text","text":""}` })
		}},
		{"text parts with empty metadata", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"text":"","metadata":{}}` })},
		{"tiny data parts", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"data":0}` })},
		{"tiny url parts", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"url":"u"}` })},
		{"empty raw parts", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"raw":""}` })},
		{"unpadded raw parts", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"raw":"aGk"}` })},
		{"0.3 file parts", "0.3", func(size int, r *rand.Rand) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m","parts":[`, `]}}}`,
				func(int) string { return `{"kind":"file","file":{"bytes":"","name":""}}` })
		}},
		{"escaped text parts", "1.0", send(`"parts":[`, `]`, func(int) string { return `{"text":"\n"}` })},
		{"parts with unknown members", "1.0", send(`"parts":[`, `]`, func(i int) string { return `{"text":"","x-` + short(i) + `":0}` })},
		{"empty extensions", "1.0", send(`"parts":[{"text":"x"}],"extensions":[`, `]`, func(int) string { return `""` })},
		{"empty reference task ids", "1.0", send(`"parts":[{"text":"x"}],"referenceTaskIds":[`, `]`, func(int) string { return `""` })},
		{"message members", "1.0", send(`"parts":[{"text":"x"}],`, `,"z":0`, func(i int) string { return `"u` + short(i) + `":0` })},
		{"params members", "1.0", func(size int, r *rand.Rand) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]},`, `}}`,
				func(i int) string { return `"u` + short(i) + `":0` })
		}},
		{"envelope members", "1.0", func(size int, r *rand.Rand) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}},`, `}`,
				func(i int) string { return `"u` + short(i) + `":0` })
		}},
		{"accepted output modes", "1.0", func(size int, r *rand.Rand) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]},"configuration":{"acceptedOutputModes":[`, `]}}}`,
				func(int) string { return `""` })
		}},
		{"skill metadata members", "1.0", func(size int, r *rand.Rand) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]},"metadata":{"skillId":"echo",`, `}}}`,
				func(i int) string { return `"u` + short(i) + `":0` })
		}},
		{"nested metadata", "1.0", send(`"parts":[{"text":"x"}],"metadata":{"m":[`, `]}`, func(int) string {
			return strings.Repeat("[", 900) + strings.Repeat("]", 900)
		})},
		{"long array of numbers", "1.0", send(`"parts":[{"data":[`, `]}]`, func(int) string { return `0` })},
		{"part metadata of many members", "1.0", send(`"parts":[{"text":"x","metadata":{`, `}}]`, func(i int) string { return `"u` + short(i) + `":0` })},
	}
}

// decodedCost serves body as the fastserver server does (decode, Check,
// Route, the handler) and returns the bytes allocated, from cold pools
// (after two collections), and the answer. The answer buffer is given
// the capacity of the answer (measured by a first run), so the figure is
// what the request's decoded form, the agent and the store cost, not the
// answer's size.
func decodedCost(t *testing.T, s *Server, version string, body []byte) (uint64, answer) {
	t.Helper()
	var hdr fasthttp.RequestHeader
	hdr.SetHost("agent.test:8080")
	hdr.Set(VersionHeader, version)
	ep := s.Endpoint()
	run := func(dst []byte) ([]byte, error) {
		out, err := memtest.Serve(ep, &hdr, body, dst)
		if errors.Is(err, memtest.ErrNoRoute) {
			t.Fatalf("no route for %.60s…", body)
		}
		return out, err
	}
	out, err := run(nil)
	a := answer{status: 200, result: string(out)}
	if err != nil {
		if e, ok := err.(*fastserver.Error); ok {
			a = errAnswer(e)
		} else {
			a = answer{status: 500, msg: err.Error()}
		}
	}
	dst := make([]byte, 0, len(out)+64)
	return memtest.Allocated(func() { _, _ = run(dst) }), a
}

// TestDecodedFormBound sends the worst request shapes found for
// SendMessage, at 64 KiB and 1 MiB, and checks that serving each costs
// at most 8× its body bytes (contract §3), with the demo's echo agent
// (which repeats the text parts) and the in-memory task store.
func TestDecodedFormBound(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 18))
	for _, sh := range amplifyShapes() {
		for _, size := range []int{64 << 10, 1<<20 - 1024} {
			s := newTestServer(t, nil)
			body := sh.body(size, r)
			cost, a := decodedCost(t, s, sh.version, body)
			ratio := float64(cost) / float64(len(body))
			t.Logf("%-32s %8d bytes: %5.2f× (answer %d, code %d)", sh.name, len(body), ratio, a.status, a.code)
			if a.status != 200 || a.code != 0 {
				t.Errorf("%s: answered %d / %d %s: the shape must be served to be measured", sh.name, a.status, a.code, a.msg)
			}
			if cost > maxDecodedFactor*uint64(len(body)) {
				t.Errorf("%s, %d bytes: serving it allocated %d bytes, %.2f× the body (at most %d×)", sh.name, len(body), cost, ratio, maxDecodedFactor)
			}
		}
	}
}
