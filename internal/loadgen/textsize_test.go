package loadgen

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestBuildTextSize: with Config.TextSize every call's and badparams
// request's text is exactly that many bytes of JSON string contents (or
// the counter and variant alone, when longer), decodes to what the
// expectation holds, and differs from every other; without it the texts
// stay short.
func TestBuildTextSize(t *testing.T) {
	textOf := func(body []byte) []byte {
		i := bytes.Index(body, []byte(`"text":"`))
		if i < 0 {
			i = bytes.Index(body, []byte(`["echo","`)) + len(`["echo","`) - len(`"text":"`)
		}
		rest := body[i+len(`"text":"`):]
		for j := 0; j < len(rest); j++ {
			switch rest[j] {
			case '\\':
				j++
			case '"':
				return rest[:j]
			}
		}
		t.Fatalf("no text in %s", body)
		return nil
	}
	for _, tc := range []struct {
		size    int
		version string
		mix     Mix
	}{
		{SmallTextSize, "", Mix{ShapeCall: 1}},
		{SmallTextSize, "2026-07-28", Mix{ShapeCall: 1}},
		{1, "", Mix{ShapeCall: 1}},
		{40, "", Mix{ShapeCall: 1}},
		{5000, "", Mix{ShapeCall: 1}},
		{300, "", Mix{ShapeBadParams: 1}},
		{0, "", Mix{ShapeCall: 1}},
	} {
		_, bodies, exps := buildN(t, Config{TextSize: tc.size, MCPVersion: tc.version, Mix: tc.mix}, 300)
		seen := map[string]bool{}
		longest := 0
		for i, body := range bodies {
			raw := textOf(body)
			e := exps[i]
			if !bytes.Equal(append(append([]byte{'"'}, raw...), '"'), e.textBytes()) {
				t.Fatalf("size %d: text %q, expectation %q", tc.size, raw, e.textBytes())
			}
			var s string
			if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s); err != nil {
				t.Fatalf("size %d: text %q: %v", tc.size, raw, err)
			}
			// Padded (the filler follows the counter and variant) to the
			// size exactly, or not padded and at least the size long.
			padded := bytes.Contains(raw, []byte(filler[:12]))
			switch {
			case tc.size == 0 && (padded || len(raw) > 64):
				t.Errorf("no size: a text of %d bytes: %q", len(raw), raw)
			case tc.size > 0 && padded && len(raw) != tc.size, tc.size > 0 && !padded && len(raw) < tc.size:
				t.Errorf("size %d: a text of %d bytes: %q", tc.size, len(raw), raw)
			}
			if seen[string(raw)] {
				t.Errorf("size %d: text repeated: %q", tc.size, raw)
			}
			seen[string(raw)] = true
			longest = max(longest, len(raw))
		}
		if tc.size > 64 && longest != tc.size {
			t.Errorf("size %d: longest text %d bytes", tc.size, longest)
		}
	}
}

// TestTextSizeConfig: the bounds of Config.TextSize, and that it does not
// go with Body.
func TestTextSizeConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{TextSize: -1}, "-text-size -1"},
		{Config{TextSize: MaxTextSize + 1}, "-text-size 65537"},
		{Config{TextSize: 10, Body: []byte(`{"jsonrpc":"2.0","method":"ping"}`)}, "-body sends its own"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.cfg.TextSize, err, tc.want)
		}
	}
	for _, n := range []int{0, 1, SmallTextSize, MaxTextSize} {
		if err := (Config{TextSize: n}).Validate(); err != nil {
			t.Errorf("TextSize %d: %v", n, err)
		}
	}
}
