package decode

import "testing"

// AppendUnquoted joins a surrogate pair only when a low surrogate escape
// follows the high one. Its contract is valid JSON, where that always
// holds (the decoder refuses a lone surrogate); given bytes that are not,
// a lone high surrogate is one U+FFFD and the bytes after it are kept
// (they were swallowed into a made-up character before 2026-12-06).
func TestAppendUnquotedSurrogates(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`"\ud83d\ude00"`, "\U0001F600"},
		{`"x\uD83D\uDE00y"`, "x\U0001F600y"},
		{`"\ud800abcdefgh"`, "\uFFFDabcdefgh"},
		{`"\ud800\u0041xxxx"`, "\uFFFDAxxxx"},
		{`"\ud800\ud800\udc00"`, "\uFFFD\U00010000"},
		{`"\udc00\ud800"`, "\uFFFD\uFFFD"},
		{`"\ud800\n123456"`, "\uFFFD\n123456"},
	} {
		if got := string(AppendUnquoted(nil, []byte(c.in))); got != c.want {
			t.Errorf("AppendUnquoted(%s) = %+q, want %+q", c.in, got, c.want)
		}
	}
}
