package a2a

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The ring of ids starts small and grows with the tasks: a large MaxTasks
// costs nothing at start (a store of 2^30 tasks allocated its 16 GiB ring
// when it was made), and past firstRing tasks the order of eviction and
// every lookup hold as before, with and without owners' holes.
func TestStoreRingGrows(t *testing.T) {
	big := newStore(MaxMaxTasks, 1<<40)
	if len(big.ring) != firstRing {
		t.Fatalf("a store of %d tasks starts with a ring of %d slots, want %d", MaxMaxTasks, len(big.ring), firstRing)
	}
	for _, owners := range []bool{false, true} {
		const max = 3*firstRing + 17
		var s *store
		if owners {
			s = newOwnedStore(max, 1<<40, max/4, 0)
		} else {
			s = newStore(max, 1<<40)
		}
		now := time.Now()
		owner := func(i int) string {
			if owners {
				return fmt.Sprintf("owner-%d", i%5)
			}
			return ""
		}
		n := 2*max + 5
		for i := range n {
			tk := &Task{ID: fmt.Sprintf("t-%06d", i), ContextID: "c", Owner: owner(i), Status: TaskStatus{State: TaskStateCompleted, Timestamp: now}}
			if err := s.put(tk); err != nil {
				t.Fatal(err)
			}
			if len(s.tasks) > max || len(s.ring) > 2*max {
				t.Fatalf("owners %v, after %d creates: %d tasks, a ring of %d (max %d)", owners, i+1, len(s.tasks), len(s.ring), max)
			}
		}
		// Without owners, exactly the newest max tasks remain; with
		// them, each owner's newest up to its share (and the total).
		if !owners {
			for i := range n {
				_, ok := s.get(fmt.Sprintf("t-%06d", i))
				if want := i >= n-max; ok != want {
					t.Fatalf("task %d stored %v, want %v", i, ok, want)
				}
			}
		}
		for id, e := range s.tasks {
			if s.ring[e.pos] != id {
				t.Fatalf("owners %v: task %s at slot %d, which holds %q", owners, id, e.pos, s.ring[e.pos])
			}
		}
	}
}

func TestMaxTasksBound(t *testing.T) {
	_, err := New(Config{Card: testCard(), Agent: echo, MaxTasks: MaxMaxTasks + 1})
	if err == nil || !strings.Contains(err.Error(), "MaxTasks") {
		t.Fatalf("MaxTasks past MaxMaxTasks: %v", err)
	}
	s, err := New(Config{Card: testCard(), Agent: echo, MaxTasks: MaxMaxTasks})
	if err != nil {
		t.Fatal(err)
	}
	if a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}`)); a.code != 0 {
		t.Fatalf("a store of MaxMaxTasks: %+v", a)
	}
}
