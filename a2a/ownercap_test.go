package a2a

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// NOTE: the tests of the per-owner share of the memory store.
//
// An owner at its share evicts its own oldest task, never another's
// (TestOwnerShare*). The ring that orders tasks by creation then has
// holes: TestOwnerShareModel checks the store against a model that
// keeps every order in plain slices (O(n) per operation, obviously
// right) over random creates, updates and owner changes, and checks the
// bookkeeping (ring, holes, owner queues, counts, bytes) after each.

func ownedTask(id, owner, text string) *Task {
	t := task(id, text)
	t.Owner = owner
	return t
}

// ownerInvariants checks the store's bookkeeping with owners and holes:
// the ring's used slots hold exactly the stored tasks (each at its pos)
// and holes of them, no slot outside is used, the head is no hole; each
// owner's count, bytes and queue are its tasks'; the bounds hold.
func (s *store) ownerInvariants(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	L := len(s.ring)
	if L < s.maxTasks || L > 2*s.maxTasks || s.n > L || len(s.tasks) > s.maxTasks {
		t.Fatalf("ring of %d, %d used, %d tasks, max %d", L, s.n, len(s.tasks), s.maxTasks)
	}
	liveSlots := 0
	for k := range L {
		i := (s.head + k) % L
		switch {
		case k >= s.n:
			if s.ring[i] != "" {
				t.Fatalf("unused slot %d holds %q", i, s.ring[i])
			}
		case s.live(i):
			liveSlots++
		case k == 0:
			t.Fatalf("the head slot %d is a hole (%q)", i, s.ring[i])
		}
	}
	if liveSlots != len(s.tasks) || s.n-liveSlots != s.holes {
		t.Fatalf("%d live slots, %d tasks, %d used, %d holes counted", liveSlots, len(s.tasks), s.n, s.holes)
	}
	var sum int64
	byOwner := map[string][]int64{} // count, bytes
	for id, e := range s.tasks {
		if e.t.ID != id || e.size != taskSize(e.t) || s.ring[e.pos] != id {
			t.Fatalf("entry %q inconsistent (pos %d holds %q)", id, e.pos, s.ring[e.pos])
		}
		sum += e.size
		if own := s.owner(e.t); own != "" {
			c := byOwner[own]
			if c == nil {
				c = make([]int64, 2)
				byOwner[own] = c
			}
			c[0]++
			c[1] += e.size
			if e.own == nil || e.own != s.owners[own] {
				t.Fatalf("%q: owner part %p, want %p", id, e.own, s.owners[own])
			}
			if e.size > s.ownerMaxBytes {
				t.Fatalf("%q: %d bytes, over the share %d", id, e.size, s.ownerMaxBytes)
			}
		} else if e.oseq != 0 || e.own != nil {
			t.Fatalf("%q: no owner, oseq %d", id, e.oseq)
		}
	}
	if sum != s.bytes || (s.bytes > s.maxBytes && len(s.tasks) > 1) {
		t.Fatalf("bytes %d, sum %d, budget %d", s.bytes, sum, s.maxBytes)
	}
	if len(byOwner) != len(s.owners) {
		t.Fatalf("%d owners with tasks, %d kept", len(byOwner), len(s.owners))
	}
	for own, o := range s.owners {
		c := byOwner[own]
		if c == nil || o.name != own || int64(o.n) != c[0] || o.bytes != c[1] || o.n > s.ownerMax || (o.bytes > s.ownerMaxBytes && o.n > 1) {
			t.Fatalf("owner %q: n %d, bytes %d; has %v; share %d, %d", own, o.n, o.bytes, c, s.ownerMax, s.ownerMaxBytes)
		}
		live := 0
		seen := map[string]bool{}
		for _, en := range o.q[o.qh:] {
			if e, ok := s.tasks[en.id]; ok && e.oseq == en.seq {
				if seen[en.id] || e.t.Owner != own {
					t.Fatalf("owner %q: entry %q twice or not its", own, en.id)
				}
				seen[en.id] = true
				live++
			}
		}
		if live != o.n || len(o.q)-o.qh > 2*o.n+17 {
			t.Fatalf("owner %q: %d live entries of %d, n %d", own, live, len(o.q)-o.qh, o.n)
		}
	}
}

// ringOrder is the ids of the ring's live slots, oldest first.
func (s *store) ringOrder() []string {
	var out []string
	for k := range s.n {
		if i := (s.head + k) % len(s.ring); s.live(i) {
			out = append(out, s.ring[i])
		}
	}
	return out
}

// queueOrder is the ids of owner's live queue entries, oldest first.
func (s *store) queueOrder(owner string) []string {
	var out []string
	if o := s.owners[owner]; o != nil {
		for _, en := range o.q[o.qh:] {
			if e, ok := s.tasks[en.id]; ok && e.oseq == en.seq {
				out = append(out, en.id)
			}
		}
	}
	return out
}

func TestOwnerShareCount(t *testing.T) {
	s := newOwnedStore(8, 1<<30, 3, 0)
	s.put(ownedTask("a1", "alice", "x"))
	s.put(task("anon", "x"))
	for i := range 20 {
		if err := s.put(ownedTask(fmt.Sprint("b", i), "bob", "x")); err != nil {
			t.Fatal(err)
		}
		s.ownerInvariants(t)
	}
	// bob keeps his 3 newest; alice's task and the owner-less one stay.
	if got := strings.Join(s.ringOrder(), ","); got != "a1,anon,b17,b18,b19" {
		t.Errorf("kept %s", got)
	}
	// The global bound still evicts the oldest of all, once the owners
	// together fill the store.
	for _, own := range []string{"carol", "dave"} {
		for i := range 3 {
			s.put(ownedTask(fmt.Sprint(own, i), own, "x"))
			s.ownerInvariants(t)
		}
	}
	if got := strings.Join(s.ringOrder(), ","); got != "b17,b18,b19,carol0,carol1,carol2,dave0,dave1" && got != "b18,b19,carol0,carol1,carol2,dave0,dave1,dave2" {
		t.Errorf("kept %s", got)
	}
	if _, ok := s.get("a1"); ok {
		t.Error("a1, the oldest of a full store, not evicted")
	}
	// A store without shares (newStore, NewMemoryStore) tells no owner
	// apart: the oldest of all goes.
	s = newStore(3, 1<<30)
	s.put(ownedTask("a1", "alice", "x"))
	for i := range 3 {
		s.put(ownedTask(fmt.Sprint("b", i), "bob", "x"))
	}
	s.invariants(t)
	if got := ids(s); got != "b0,b1,b2" || s.owners != nil {
		t.Errorf("without shares: kept %s", got)
	}
}

func TestOwnerShareBytes(t *testing.T) {
	one := taskSize(ownedTask("a", "bob", strings.Repeat("x", 1000)))
	s := newOwnedStore(100, 100*one, 0, 3*one+one/2) // bob: room for three
	s.put(ownedTask("a1", "alice", strings.Repeat("x", 1000)))
	for i := range 6 {
		s.put(ownedTask(fmt.Sprint("b", i), "bob", strings.Repeat("x", 1000)))
		s.ownerInvariants(t)
	}
	if got := strings.Join(s.ringOrder(), ","); got != "a1,b3,b4,b5" {
		t.Errorf("kept %s", got)
	}
	// Growing a task past the share evicts the owner's others, oldest
	// first, never the task grown (b3, its oldest, moves to the young
	// end of bob's queue) and never alice's.
	if _, _, err := s.update("b3", func(*Task) (*Task, error) {
		return ownedTask("b3", "bob", strings.Repeat("x", 2000)), nil
	}); err != nil {
		t.Fatal(err)
	}
	s.ownerInvariants(t)
	if got := strings.Join(s.ringOrder(), ","); got != "a1,b3,b5" {
		t.Errorf("after growing b3: kept %s", got)
	}
	if got := strings.Join(s.queueOrder("bob"), ","); got != "b5,b3" {
		t.Errorf("bob's queue %s", got)
	}
	// A task that alone passes the owner's share is refused (created or
	// grown), the task unchanged; the same size without an owner is not.
	big := strings.Repeat("x", 6000)
	if err := s.put(ownedTask("big", "bob", big)); err != ErrTaskTooLarge {
		t.Errorf("a task past the share: %v", err)
	}
	if _, _, err := s.update("b5", func(*Task) (*Task, error) { return ownedTask("b5", "bob", big), nil }); err != ErrTaskTooLarge {
		t.Errorf("growing a task past the share: %v", err)
	}
	if err := s.put(task("anon", big)); err != nil {
		t.Errorf("an owner-less task of that size: %v", err)
	}
	s.ownerInvariants(t)
	if got := strings.Join(s.ringOrder(), ","); got != "a1,b3,b5,anon" {
		t.Errorf("kept %s", got)
	}
}

// TestOwnerShareHoles: one owner at its share churning while another's
// old task sits at the head of the ring: each create leaves a hole, the
// ring fills with them and is squeezed (in place, or twice as large),
// and the other owner's task is never evicted for want of a slot, the
// store being far from full. Then the same with the store nearly full
// of other owners' tasks (the ring grows once to twice MaxTasks), and
// with an owner-less task at the head.
func TestOwnerShareHoles(t *testing.T) {
	for _, c := range []struct {
		name       string
		max, share int
		others     int // tasks of other owners (a share each), created first
	}{
		{"sparse", 16, 3, 1},
		{"nearly full", 16, 4, 12},
		{"share 1", 10, 1, 9},
		{"large", 1000, 100, 899},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newOwnedStore(c.max, 1<<40, c.share, 0)
			var others []string
			for i := range c.others {
				id := fmt.Sprint("o", i)
				own := fmt.Sprint("owner", i/c.share)
				if i == 0 {
					own = "" // owner-less at the head
				}
				s.put(ownedTask(id, own, "x"))
				others = append(others, id)
			}
			for i := range 50 * c.max {
				if err := s.put(ownedTask(fmt.Sprint("b", i), "bob", "x")); err != nil {
					t.Fatal(err)
				}
				if c.max < 100 || i%997 == 0 {
					s.ownerInvariants(t)
				}
			}
			s.ownerInvariants(t)
			for _, id := range others {
				if _, ok := s.get(id); !ok {
					t.Fatalf("%s evicted by bob's creates", id)
				}
			}
			if n := len(s.queueOrder("bob")); n != min(c.share, c.max-c.others) {
				t.Errorf("bob keeps %d tasks", n)
			}
			if len(s.ring) > 2*c.max {
				t.Errorf("ring of %d slots for %d tasks", len(s.ring), c.max)
			}
		})
	}
}

// model is the store's rules in plain slices: creation order of all
// tasks and each owner's, moved as the store moves them.
type model struct {
	maxTasks, ownerMax  int
	maxBytes, ownerMaxB int64
	size                map[string]int64
	owner               map[string]string
	all                 []string
	per                 map[string][]string
}

func (m *model) bytes(own string) (n int64) {
	for id, o := range m.owner {
		if own == "" || o == own {
			n += m.size[id]
		}
	}
	return n
}

func (m *model) remove(id string) {
	own := m.owner[id]
	m.all = slices.DeleteFunc(m.all, func(x string) bool { return x == id })
	if own != "" {
		m.per[own] = slices.DeleteFunc(m.per[own], func(x string) bool { return x == id })
	}
	delete(m.size, id)
	delete(m.owner, id)
}

func toEnd(l []string, id string) []string {
	return append(slices.DeleteFunc(l, func(x string) bool { return x == id }), id)
}

// dropOwn evicts own's oldest but keep (moved to the young end of own's
// order when it is the oldest).
func (m *model) dropOwn(own, keep string) {
	for {
		first := m.per[own][0]
		if first == keep {
			m.per[own] = toEnd(m.per[own], keep)
			continue
		}
		m.remove(first)
		return
	}
}

func (m *model) evict(keep string) {
	if own := m.owner[keep]; own != "" {
		for m.bytes(own) > m.ownerMaxB && len(m.per[own]) > 1 {
			m.dropOwn(own, keep)
		}
	}
	for m.bytes("") > m.maxBytes && len(m.all) > 0 {
		if m.all[0] == keep {
			if len(m.all) == 1 {
				return
			}
			m.all = toEnd(m.all, keep)
			continue
		}
		m.remove(m.all[0])
	}
}

func (m *model) tooLarge(own string, size int64) bool {
	return size > m.maxBytes || (own != "" && size > m.ownerMaxB)
}

func (m *model) create(id, own string, size int64) bool {
	if m.tooLarge(own, size) {
		return false
	}
	if own != "" && len(m.per[own]) >= m.ownerMax {
		m.dropOwn(own, id)
	}
	if len(m.all) >= m.maxTasks {
		m.remove(m.all[0])
	}
	m.all = append(m.all, id)
	m.size[id], m.owner[id] = size, own
	if own != "" {
		m.per[own] = append(m.per[own], id)
	}
	m.evict(id)
	return true
}

func (m *model) update(id, own string, size int64) bool {
	if m.tooLarge(own, size) {
		return false
	}
	if was := m.owner[id]; was != own {
		if was != "" {
			m.per[was] = slices.DeleteFunc(m.per[was], func(x string) bool { return x == id })
		}
		m.owner[id] = own
		if own != "" {
			m.per[own] = append(m.per[own], id)
			for len(m.per[own]) > m.ownerMax {
				m.dropOwn(own, id)
			}
		}
	}
	m.size[id] = size
	m.evict(id)
	return true
}

// TestOwnerShareModel: random creates (owned and not), updates that grow,
// shrink or (rarely) change the owner, against the model, with the
// bookkeeping checked after every operation.
func TestOwnerShareModel(t *testing.T) {
	var holes, grown, squeezed, runs int
	defer func() {
		t.Logf("%d runs: %d operations left holes, %d rings grew, %d were squeezed in place", runs, holes, grown, squeezed)
		if holes == 0 || grown == 0 || squeezed == 0 {
			t.Error("the runs did not leave holes, grow a ring and squeeze one in place")
		}
	}()
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 11))
		maxTasks := 4 + rng.IntN(40)
		one := taskSize(ownedTask("t0000", "o0", ""))
		maxBytes := one * int64(maxTasks) * int64(1+rng.IntN(4)) / 2
		ownerMax := 1 + rng.IntN(maxTasks)
		ownerMaxB := one + rng.Int64N(maxBytes-one+1)
		s := newOwnedStore(maxTasks, maxBytes, ownerMax, ownerMaxB)
		m := &model{maxTasks: maxTasks, ownerMax: ownerMax, maxBytes: maxBytes, ownerMaxB: ownerMaxB,
			size: map[string]int64{}, owner: map[string]string{}, per: map[string][]string{}}
		owners := []string{"", "o0", "o1", "o2", "o3"}
		if ownerMax == maxTasks && ownerMaxB == maxBytes {
			continue // no shares: newStore's case
		}
		text := func() string { return strings.Repeat("y", rng.IntN(int(one))) }
		runs++
		for op := range 600 {
			L, h, full := len(s.ring), s.holes, s.n == len(s.ring)
			var what string
			if len(m.all) == 0 || rng.IntN(3) > 0 {
				tk := ownedTask(fmt.Sprintf("t%04d", op), owners[rng.IntN(len(owners))], text())
				if owners[1] != tk.Owner && rng.IntN(3) == 0 {
					tk.Owner = "o1" // one owner busier than the others
				}
				what = "create " + tk.ID + " of " + tk.Owner
				ok := m.create(tk.ID, tk.Owner, taskSize(tk))
				if err := s.put(tk); (err == nil) != ok {
					t.Fatalf("seed %d op %d %s: %v, model %v", seed, op, what, err, ok)
				}
			} else {
				id := m.all[rng.IntN(len(m.all))]
				own := m.owner[id]
				if rng.IntN(10) == 0 {
					own = owners[rng.IntN(len(owners))]
				}
				tk := ownedTask(id, own, text())
				if rng.IntN(2) == 0 {
					tk.History = append(tk.History, tk.History[0]) // grow
				}
				what = "update " + id + " to " + own
				ok := m.update(id, own, taskSize(tk))
				_, found, err := s.update(id, func(*Task) (*Task, error) { return tk, nil })
				if !found || (err == nil) != ok {
					t.Fatalf("seed %d op %d %s: %v %v, model %v", seed, op, what, found, err, ok)
				}
			}
			s.ownerInvariants(t)
			switch {
			case len(s.ring) > L:
				grown++
			case full && s.holes < h:
				squeezed++ // a full ring, squeezed in place
			}
			if s.holes > h {
				holes++
			}
			if got := s.ringOrder(); !slices.Equal(got, m.all) {
				t.Fatalf("seed %d op %d %s: order\n%v\nwant\n%v", seed, op, what, got, m.all)
			}
			for _, own := range owners[1:] {
				if got := s.queueOrder(own); !slices.Equal(got, m.per[own]) {
					t.Fatalf("seed %d op %d %s: %s's order\n%v\nwant\n%v", seed, op, what, own, got, m.per[own])
				}
			}
		}
	}
}

// TestOwnerShareConfig: the shares are validated and defaulted.
func TestOwnerShareConfig(t *testing.T) {
	for _, o := range []MemoryStoreOptions{
		{MaxOwnerTasks: -1},
		{MaxOwnerTaskBytes: -1},
		{MaxTasks: 10, MaxOwnerTasks: 11},
		{MaxTaskBytes: 1000, MaxOwnerTaskBytes: 1001},
		{MaxOwnerTasks: DefaultMaxTasks + 1},
	} {
		if _, err := NewMemoryStoreWith(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	m, err := NewMemoryStoreWith(MemoryStoreOptions{})
	if err != nil || m.s.ownerMax != DefaultMaxTasks/DefaultOwnerShare || m.s.ownerMaxBytes != DefaultMaxTaskBytes/DefaultOwnerShare {
		t.Errorf("defaults: %d, %d, %v", m.s.ownerMax, m.s.ownerMaxBytes, err)
	}
	if m, _ := NewMemoryStoreWith(MemoryStoreOptions{MaxTasks: 5}); m.s.ownerMax != 1 {
		t.Errorf("a tenth of 5 tasks: %d, want 1", m.s.ownerMax)
	}
	if m, _ := NewMemoryStoreWith(MemoryStoreOptions{MaxTasks: 5, MaxOwnerTasks: 5, MaxTaskBytes: 1 << 20, MaxOwnerTaskBytes: 1 << 20}); m.s.owners != nil {
		t.Error("shares of the whole store keep owner queues")
	}
	for _, c := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.MaxOwnerTasks = -1 }, "MaxOwnerTasks"},
		{func(c *Config) { c.MaxOwnerTaskBytes = -1 }, "MaxOwnerTaskBytes"},
		{func(c *Config) { c.MaxTasks = 10; c.MaxOwnerTasks = 20 }, "above MaxTasks"},
		{func(c *Config) { c.MaxOwnerTaskBytes = DefaultMaxTaskBytes + 1 }, "above MaxTaskBytes"},
	} {
		cfg := Config{Card: testCard(), Agent: echo}
		c.mut(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New: %v, want an error naming %q", err, c.want)
		}
	}
	s := newTestServer(t, func(c *Config) { c.MaxTasks = 50; c.MaxOwnerTaskBytes = 4096 })
	if st := memStore(s); st.ownerMax != 5 || st.ownerMaxBytes != 4096 || st.maxTasks != 50 {
		t.Errorf("a Server's store: share %d, %d", st.ownerMax, st.ownerMaxBytes)
	}
}

// TestOwnerShareServer: through the server with authorization, bob's
// flood of tasks past his share leaves alice's task waiting for her
// input, which she continues.
func TestOwnerShareServer(t *testing.T) {
	s := authServer(t, func(c *Config) { c.MaxTasks = 20 }) // share 2
	id, _ := ownerTask(t, s, "alice", "ask")
	var bobs []string
	for range 30 {
		b, _ := ownerTask(t, s, "bob", "ask")
		bobs = append(bobs, b)
	}
	a := callAs(t, s, "alice", "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m2","taskId":"`+id+`","parts":[{"text":"x"}]}}`))
	if a.code != 0 {
		t.Errorf("alice continues her task: %+v", a)
	}
	for i, b := range bobs {
		_, ok := s.Task(b)
		if ok != (i >= len(bobs)-2) {
			t.Errorf("bob's task %d kept %v", i, ok)
		}
	}
	memStore(s).ownerInvariants(t)
}
