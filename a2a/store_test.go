package a2a

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func task(id string, text string) *Task {
	return &Task{ID: id, ContextID: "c", Status: TaskStatus{State: TaskStateCompleted},
		History: []Message{{MessageID: "m", Role: RoleUser, Parts: PartsOf(TextPart(text))}}}
}

// invariants checks the store's bookkeeping: the ring holds exactly the
// stored ids, the byte count is the sum of the sizes, both limits hold.
func (s *store) invariants(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n != len(s.tasks) || s.n > s.maxTasks {
		t.Fatalf("n %d, %d tasks, max %d", s.n, len(s.tasks), s.maxTasks)
	}
	var sum int64
	for id, e := range s.tasks {
		if e.t.ID != id || e.size != taskSize(e.t) {
			t.Fatalf("entry %q inconsistent", id)
		}
		sum += e.size
	}
	if sum != s.bytes {
		t.Fatalf("bytes %d, sum %d", s.bytes, sum)
	}
	if s.bytes > s.maxBytes && len(s.tasks) > 1 {
		t.Fatalf("bytes %d over budget %d with %d tasks", s.bytes, s.maxBytes, len(s.tasks))
	}
	seen := map[string]bool{}
	for i := range s.n {
		id := s.ring[(s.head+i)%s.maxTasks]
		if _, ok := s.tasks[id]; !ok || seen[id] {
			t.Fatalf("ring slot %d: %q", i, id)
		}
		seen[id] = true
	}
}

func ids(s *store) string {
	var out []string
	for i := range s.n {
		out = append(out, s.ring[(s.head+i)%s.maxTasks])
	}
	return strings.Join(out, ",")
}

func TestStoreCountBound(t *testing.T) {
	s := newStore(3, 1<<30)
	for i := range 5 {
		s.put(task(fmt.Sprint(i), "x"))
		s.invariants(t)
	}
	if got := ids(s); got != "2,3,4" {
		t.Errorf("kept %s", got)
	}
	for _, id := range []string{"0", "1"} {
		if _, ok := s.get(id); ok {
			t.Errorf("%s not evicted", id)
		}
	}
	// An update keeps a task's age: 2 is still the oldest.
	s.put(task("2", "updated"))
	if got, _ := s.get("2"); got.History[0].Parts.Slice()[0].Text != "updated" {
		t.Error("update lost")
	}
	s.put(task("5", "x"))
	s.invariants(t)
	if got := ids(s); got != "3,4,5" {
		t.Errorf("after update and put: %s", got)
	}
	// update: applies, reports a missing task, keeps the old on error.
	nt, ok, err := s.update("4", func(old *Task) (*Task, error) {
		c := *old
		c.Status.State = TaskStateCanceled
		return &c, nil
	})
	if !ok || err != nil || nt.Status.State != TaskStateCanceled {
		t.Errorf("update: %v %v %v", nt, ok, err)
	}
	if _, ok, _ := s.update("0", nil); ok {
		t.Error("update of an evicted task")
	}
	old, _ := s.get("3")
	got, ok, err := s.update("3", func(*Task) (*Task, error) { return nil, errFinalTask })
	if !ok || err != errFinalTask || got != old {
		t.Error("failed update changed the task")
	}
	s.invariants(t)
}

func TestStoreByteBound(t *testing.T) {
	one := taskSize(task("a", strings.Repeat("x", 1000)))
	s := newStore(100, 2*one+one/2) // room for two
	for _, id := range []string{"a", "b", "c", "d"} {
		s.put(task(id, strings.Repeat("x", 1000)))
		s.invariants(t)
	}
	if got := ids(s); got != "c,d" {
		t.Errorf("kept %s", got)
	}
	// A task larger than the whole budget is refused, and evicts nothing.
	if err := s.put(task("big", strings.Repeat("x", 10000))); err != ErrTaskTooLarge {
		t.Errorf("a task over the budget: %v, want ErrTaskTooLarge", err)
	}
	s.invariants(t)
	if got := ids(s); got != "c,d" {
		t.Errorf("kept %s", got)
	}
	s.put(task("e", "x"))
	s.invariants(t)
	if got := ids(s); got != "c,d,e" {
		t.Errorf("kept %s", got)
	}
	// Growing the oldest task under pressure evicts the others, not it;
	// growing it past the whole budget is refused, the task unchanged.
	s = newStore(100, 2*one+one/2)
	s.put(task("a", strings.Repeat("x", 1000)))
	s.put(task("b", strings.Repeat("x", 1000)))
	s.put(task("a", strings.Repeat("x", 2000)))
	s.invariants(t)
	if got := ids(s); got != "a" {
		t.Errorf("kept %s", got)
	}
	if _, _, err := s.update("a", func(*Task) (*Task, error) { return task("a", strings.Repeat("x", 10000)), nil }); err != ErrTaskTooLarge {
		t.Errorf("growing a task past the budget: %v, want ErrTaskTooLarge", err)
	}
	if tk, _ := s.get("a"); taskSize(tk) > 2*one+one/2 {
		t.Errorf("the refused change was stored")
	}
	// Shrinking never evicts.
	s.put(task("b", "x"))
	s.put(task("a", "x"))
	s.invariants(t)
	if got := ids(s); got != "a,b" && got != "b,a" {
		t.Errorf("kept %s", got)
	}
}

func TestStoreConcurrent(t *testing.T) {
	s := newStore(50, 64<<10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				id := fmt.Sprintf("%d-%d", g, i%80)
				switch i % 3 {
				case 0:
					s.put(task(id, strings.Repeat("y", i)))
				case 1:
					s.get(id)
				case 2:
					s.update(id, func(old *Task) (*Task, error) {
						c := *old
						c.History = append(c.History[:len(c.History):len(c.History)], old.History[0])
						return &c, nil
					})
				}
			}
		}()
	}
	wg.Wait()
	s.invariants(t)
}

// TestServerConcurrent runs SendMessage, GetTask and CancelTask from many
// goroutines against a small store (run with -race).
func TestServerConcurrent(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxTasks = 64 })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				text := "hi"
				if i%2 == 0 {
					text = "ask"
				}
				version, method, params := "1.0", "SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"`+text+`"}]}}`
				if g%2 == 1 {
					version, method, params = "0.3", "message/send", `{"message":{"role":"user","messageId":"m","parts":[{"kind":"text","text":"`+text+`"}]}}`
				}
				a := call(t, s, version, req(method, params))
				if a.code != 0 {
					t.Errorf("send: %+v", a)
					return
				}
				res := parse(t, a.result)
				id, _ := get(res, "id").(string)
				if id == "" {
					id, _ = get(res, "task", "id").(string)
				}
				if a := call(t, s, "", req("GetTask", `{"id":"`+id+`"}`)); a.code != 0 && a.code != -32001 {
					t.Errorf("get: %+v", a)
				}
				if a := call(t, s, "", req("CancelTask", `{"id":"`+id+`"}`)); a.code != 0 && a.code != -32001 && a.code != -32002 {
					t.Errorf("cancel: %+v", a)
				}
			}
		}()
	}
	wg.Wait()
	memStore(s).invariants(t)
	if n := memStore(s).len(); n != 64 {
		t.Errorf("%d tasks stored, want the bound, 64", n)
	}
}

func TestServerMaxTasks(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.MaxTasks = 2 })
	var first string
	for i := range 3 {
		res := parse(t, call(t, s, "", req("SendMessage", msg10)).result)
		if i == 0 {
			first = get(res, "task", "id").(string)
		}
	}
	if a := call(t, s, "", req("GetTask", `{"id":"`+first+`"}`)); a.code != -32001 {
		t.Errorf("evicted task: %+v", a)
	}
	if memStore(s).len() != 2 {
		t.Errorf("%d tasks", memStore(s).len())
	}
}
