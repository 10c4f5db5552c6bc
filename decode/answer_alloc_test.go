//go:build !race

package decode

import "testing"

// TestAppendAnswersAllocs pins the encoders at zero allocations when dst has
// room, for every kind of input: escapes, invalid UTF-8, data, long text.
func TestAppendAnswersAllocs(t *testing.T) {
	dst := make([]byte, 0, 1<<12)
	id := []byte(`"caf\u00e9"`)
	result := []byte(`{"content":[{"type":"text","text":"hi"}]}`)
	data := []byte(`{"supported":["a"],"requested":"b"}`)
	msgs := []string{"", "Method not found", allControls(), "a\xe2\x82b\xed\xa0\x80\u2028 👍", string(make([]byte, 300))}
	for name, f := range map[string]func(){
		"AppendResult": func() { dst = AppendResult(dst[:0], id, result) },
		"AppendResult/null": func() {
			dst = AppendResult(dst[:0], nil, nil)
		},
		"AppendError": func() {
			for _, m := range msgs {
				dst = AppendError(dst[:0], id, -32022, m, data)
			}
		},
		"AppendString": func() {
			for _, m := range msgs {
				dst = AppendString(dst[:0], m)
			}
		},
		"AppendString/bytes": func() {
			dst = AppendString(dst[:0], result)
		},
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, n)
		}
	}
}
