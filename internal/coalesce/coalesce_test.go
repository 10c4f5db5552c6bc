package coalesce

import (
	"reflect"
	"strings"
	"testing"
)

// Keys merge while they wait, come out in the order they first came, and
// the bounds drop what does not fit; Take empties the queue.
func TestQueue(t *testing.T) {
	q := New(3, 10)
	for _, c := range []struct {
		k    string
		want Result
	}{{"a", Queued}, {"b", Queued}, {"a", Merged}, {"ccccccccc", Dropped}, {"c", Queued}, {"d", Dropped}, {"b", Merged}} {
		if got := q.Add(c.k); got != c.want {
			t.Errorf("Add(%q) = %v, want %v", c.k, got, c.want)
		}
	}
	select {
	case <-q.Wake():
	default:
		t.Error("no wake after Add")
	}
	if n, b := q.Len(); n != 3 || b != 3 {
		t.Errorf("Len = %d, %d", n, b)
	}
	if got := q.Take(nil); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("Take = %v", got)
	}
	if got := q.Add("a"); got != Queued {
		t.Errorf("Add after Take = %v, want Queued", got)
	}
	if n, _ := q.Len(); n != 1 {
		t.Errorf("Len after Take and Add = %d", n)
	}
	u := New(0, 0)
	for i := range 1000 {
		u.Add(strings.Repeat("k", i%50+1))
	}
	if n, _ := u.Len(); n != 50 {
		t.Errorf("unbounded: %d keys, want 50", n)
	}
}
