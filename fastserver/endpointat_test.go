package fastserver

import (
	"strconv"
	"testing"
)

// TestEndpointAt: the endpoint lookup by path answers as the map does,
// whether the server compares its few endpoints one by one or has more
// and hashes: every path finds its own endpoint, and nothing else finds
// one (a prefix, a longer path, another case, the empty path).
func TestEndpointAt(t *testing.T) {
	for _, n := range []int{1, 2, maxFewEndpoints, maxFewEndpoints + 1, 9} {
		var eps []*Endpoint
		for i := range n {
			ep := testEndpoint(testMethods(nil))
			ep.Path = "/rpc" + strconv.Itoa(i)
			eps = append(eps, ep)
		}
		s, err := New(Config{}, eps...)
		if err != nil {
			t.Fatal(err)
		}
		if (s.few != nil) != (n <= maxFewEndpoints) {
			t.Errorf("%d endpoints: compared one by one = %v", n, s.few != nil)
		}
		for _, ep := range eps {
			got := s.endpointAt([]byte(ep.Path))
			if got == nil || got.Endpoint != ep || got != s.endpoints[ep.Path] {
				t.Errorf("%d endpoints: %s found %v", n, ep.Path, got)
			}
		}
		for _, p := range []string{"", "/", "/rpc", "/rpc0/", "/RPC0", "/rpc" + strconv.Itoa(n), "/rpc00", "rpc0"} {
			if got := s.endpointAt([]byte(p)); got != s.endpoints[p] {
				t.Errorf("%d endpoints: %q found %v, the map %v", n, p, got, s.endpoints[p])
			}
		}
	}
}
