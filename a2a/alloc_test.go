//go:build !race

package a2a

import "testing"

// TestAppendCardAllocs pins serving the card to zero allocations once the
// buffer has grown, with the URL from Host and from a public URL.
func TestAppendCardAllocs(t *testing.T) {
	for _, public := range []string{"", "https://agents.example.com"} {
		s := newTestServer(t, func(c *Config) { c.PublicURL = public })
		buf := make([]byte, 0, 4096)
		host := []byte("example.com:80")
		if n := testing.AllocsPerRun(100, func() { buf = s.AppendCard(buf[:0], host) }); n != 0 {
			t.Errorf("public %q: AppendCard allocates %v times", public, n)
		}
	}
}
