package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/a2a/storetest"
	"github.com/rpcedge/rpcedge/internal/services"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newFleet connects a Fleet to r with a fresh prefix, closed when the test
// ends.
func newFleet(t *testing.T, r *services.Redis, instance, prefix string) *Fleet {
	t.Helper()
	return fleetAt(t, r.URL(), instance, prefix)
}

// waitUp waits up to 20 s for f to find Redis: a wait for readiness, not
// a measure (5 s ran out once in CI's -race run, the packages' tests and
// their redis-servers sharing two cores).
func waitUp(t *testing.T, f *Fleet) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f.Up() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !f.Up() {
		t.Fatal("the fleet did not find Redis within 20 s")
	}
}

func newStore(t *testing.T, f *Fleet, o TaskOptions) *TaskStore {
	t.Helper()
	s, err := f.TaskStore(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTaskStoreContract(t *testing.T) {
	r := services.StartRedis(t)
	n := 0
	prefix := func() string { n++; return "t" + string(rune('a'+n)) + ":" }
	storetest.Run(t,
		func(t *testing.T) a2a.TaskStore { return newStore(t, newFleet(t, r, "a", prefix()), TaskOptions{}) },
		func(t *testing.T) (a2a.TaskStore, a2a.TaskStore) {
			p := prefix()
			return newStore(t, newFleet(t, r, "a", p), TaskOptions{}), newStore(t, newFleet(t, r, "b", p), TaskOptions{})
		})
}

func TestTaskStoreBounds(t *testing.T) {
	r := services.StartRedis(t)
	ctx := context.Background()
	f := newFleet(t, r, "a", "b:")
	s := newStore(t, f, TaskOptions{MaxTasks: 3, MaxTaskBytes: 4096, TTL: 2 * time.Second})
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i, id := range []string{"t1", "t2", "t3", "t4"} {
		if err := s.Create(ctx, storetest.Task(id, "c", a2a.TaskStateWorking, at.Add(time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // creation order by Redis's clock
	}
	if _, err := s.Get(ctx, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("the oldest of 4 with MaxTasks 3: %v, want evicted", err)
	}
	p, err := s.List(ctx, a2a.TaskQuery{ContextID: "c", PageSize: 10})
	if err != nil || p.TotalSize != 3 || len(p.Tasks) != 3 || p.Tasks[0].ID != "t4" {
		t.Errorf("after eviction: %+v %v", p, err)
	}
	// Past the size bound: refused, unchanged.
	big := storetest.Task("big", "c", a2a.TaskStateWorking, at)
	big.Artifacts[0].Parts = a2a.PartsOf(a2a.TextPart(strings.Repeat("x", 5000)))
	if err := s.Create(ctx, big); !errors.Is(err, a2a.ErrTaskTooLarge) {
		t.Errorf("a task past MaxTaskBytes: %v", err)
	}
	_, err = s.Update(ctx, "t2", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Metadata = []byte(`{"pad":"` + strings.Repeat("y", 5000) + `"}`)
		return &n, nil
	})
	if !errors.Is(err, a2a.ErrTaskTooLarge) {
		t.Errorf("an update past MaxTaskBytes: %v", err)
	}
	// The TTL: gone after it (EXPIRE on the hash), and out of the lists.
	ttl, _ := r.Do("TTL", "b:{a2a}:t:t2")
	if ttl != ":2" && ttl != ":1" {
		t.Errorf("TTL of a task: %s", ttl)
	}
	time.Sleep(3100 * time.Millisecond)
	if _, err := s.Get(ctx, "t2"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("after the TTL: %v", err)
	}
	if p, err := s.List(ctx, a2a.TaskQuery{ContextID: "c", PageSize: 10}); err != nil || len(p.Tasks) != 0 {
		t.Errorf("listing after the TTL: %+v %v", p, err)
	}
}

// Redis down: every call fails at once with ErrStoreUnavailable; the
// store recovers by itself when Redis is back (empty, in this test:
// no persistence); tasks survive the restart of an instance (a new Fleet
// on the same Redis).
func TestTaskStoreDown(t *testing.T) {
	r := services.StartRedis(t)
	ctx := context.Background()
	f := newFleet(t, r, "a", "d:")
	s := newStore(t, f, TaskOptions{})
	tk := storetest.Task("k1", "c", a2a.TaskStateWorking, time.Now().UTC().Truncate(time.Millisecond))
	if err := s.Create(ctx, tk); err != nil {
		t.Fatal(err)
	}
	f.Close() // the instance restarts
	f2 := newFleet(t, r, "a", "d:")
	s2 := newStore(t, f2, TaskOptions{})
	if got, err := s2.Get(ctx, "k1"); err != nil || got.ID != "k1" {
		t.Fatalf("after the instance's restart: %v %v", got, err)
	}

	r.Kill()
	start := time.Now()
	if _, err := s2.Get(ctx, "k1"); !errors.Is(err, a2a.ErrStoreUnavailable) {
		t.Fatalf("Redis killed: %v, want ErrStoreUnavailable", err)
	}
	for _, err := range []error{
		func() error { _, err := s2.Get(ctx, "k1"); return err }(),
		s2.Create(ctx, storetest.Task("k2", "c", a2a.TaskStateWorking, time.Now())),
		func() error {
			_, err := s2.Update(ctx, "k1", func(o *a2a.Task) (*a2a.Task, error) { return o, nil })
			return err
		}(),
		func() error { _, err := s2.List(ctx, a2a.TaskQuery{PageSize: 1}); return err }(),
	} {
		if !errors.Is(err, a2a.ErrStoreUnavailable) {
			t.Errorf("down: %v", err)
		}
	}
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("failing took %v: calls while down must fail at once", el)
	}
	if f2.Up() {
		t.Error("Up while Redis is killed")
	}
	r.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for !f2.Up() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !f2.Up() {
		t.Fatal("the fleet did not come back up within 5 s of Redis")
	}
	if err := s2.Create(ctx, storetest.Task("k3", "c", a2a.TaskStateWorking, time.Now())); err != nil {
		t.Errorf("after recovery: %v", err)
	}
}

// newLogger logs text lines into b, under mu.
func newLogger(b *bytes.Buffer, mu *sync.Mutex) *slog.Logger {
	return slog.New(slog.NewTextHandler(lockedWriter{b, mu}, nil))
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestListByOwnerIndexed: a ListTasks scoped to its caller (TaskQuery.Owner,
// set for every ListTasks with authorization on) reads the owner's own
// index, not every task: among 20,000 tasks of one owner, another's
// listing costs nothing and finds none, and the owner's pages are whole.
// (The first version of the filter walked every task to count and fill a
// page: with 100,000 tasks it passed the call timeout and took both
// instances "down", found by review on 2026-12-05.)
func TestListByOwnerIndexed(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "own:")
	s := newStore(t, f, TaskOptions{MaxOwnerTasks: DefaultMaxTasks}) // alice holds 20,000
	ctx := context.Background()
	at := time.Now().UTC()
	const n = 20000
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= n; i = next.Add(1) {
				tk := &a2a.Task{ID: fmt.Sprintf("t%06d", i), ContextID: fmt.Sprintf("c%d", i%100), Owner: "alice",
					Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at.Add(time.Duration(i) * time.Millisecond)}}
				if err := s.Create(ctx, tk); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, tk := range []*a2a.Task{
		{ID: "bob1", ContextID: "c1", Owner: "bob", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at}},
		{ID: "bob2", ContextID: "cb", Owner: "bob", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: at.Add(time.Hour)}},
	} {
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	// The work a listing does, in task hashes read (Redis counts the
	// commands scripts run).
	hmgets := func() int {
		info, err := f.client.Do(ctx, f.client.B().Info().Section("commandstats").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		_, rest, found := strings.Cut(info, "cmdstat_hmget:calls=")
		if !found {
			return 0 // none yet
		}
		n, _ := strconv.Atoi(rest[:strings.IndexAny(rest, ",\r\n")])
		return n
	}
	changes := f.changes.Get()
	before := hmgets()
	start := time.Now()
	p, err := s.List(ctx, a2a.TaskQuery{Owner: "bob", PageSize: 100})
	took := time.Since(start)
	if read := hmgets() - before; read > 10 {
		t.Errorf("bob's listing read %d task hashes among %d tasks: it walks other owners' tasks", read, n)
	}
	if err != nil || p.TotalSize != 2 || len(p.Tasks) != 2 || p.Tasks[0].ID != "bob2" || p.Tasks[1].ID != "bob1" {
		t.Fatalf("bob's tasks among %d of alice's: %+v, %v", n, p, err)
	}
	if p, err := s.List(ctx, a2a.TaskQuery{Owner: "bob", State: a2a.TaskStateWorking, PageSize: 100}); err != nil || p.TotalSize != 1 || len(p.Tasks) != 1 {
		t.Errorf("bob's working tasks: %+v, %v", p, err)
	}
	if p, err := s.List(ctx, a2a.TaskQuery{Owner: "carol", PageSize: 100}); err != nil || p.TotalSize != 0 || len(p.Tasks) != 0 {
		t.Errorf("carol's tasks: %+v, %v", p, err)
	}
	if p, err := s.List(ctx, a2a.TaskQuery{Owner: "alice", PageSize: 100}); err != nil || p.TotalSize != n || len(p.Tasks) != 100 || p.Tasks[0].ID != fmt.Sprintf("t%06d", n) {
		t.Errorf("alice's first page: total %d, %d tasks, %v", p.TotalSize, len(p.Tasks), err)
	}
	if f.changes.Get() != changes || !f.Up() {
		t.Errorf("the listings took the fleet down")
	}
	t.Logf("bob's listing among %d tasks: %v", n, took)
}

// TestUpdateConflictsAreRetryable: an Update that loses its
// check-and-set maxCASTries times in a row (here: f itself changes the
// task each time) gives up with an error wrapping a2a.ErrStoreUnavailable,
// which the server answers 503 with Retry-After, not a bare internal
// error; the task keeps every change that won.
func TestUpdateConflictsAreRetryable(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "cas:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	tk := &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: time.Now().UTC()}, Seq: 1}
	if err := s.Create(ctx, tk); err != nil {
		t.Fatal(err)
	}
	bump := func(old *a2a.Task) (*a2a.Task, error) {
		n := *old
		n.Seq++
		return &n, nil
	}
	calls := 0
	_, err := s.Update(ctx, "t1", func(old *a2a.Task) (*a2a.Task, error) {
		calls++
		if _, err := s.Update(ctx, "t1", bump); err != nil { // another writer wins
			t.Fatal(err)
		}
		return bump(old)
	})
	if !errors.Is(err, a2a.ErrStoreUnavailable) || calls != maxCASTries {
		t.Fatalf("after %d tries: %v, want an error wrapping ErrStoreUnavailable after %d", calls, err, maxCASTries)
	}
	if got, err := s.Get(ctx, "t1"); err != nil || got.Seq != uint64(1+maxCASTries) {
		t.Errorf("the winning changes: Seq %d, %v; want %d", got.Seq, err, 1+maxCASTries)
	}
}

// TestListPageBytes: a page of large tasks holds at most pageBytes of
// them (one at least) and says there is more, so that a client pages
// through 30 tasks of 700 KiB in replies that stay small, seeing each
// task once. (Found by review on 2026-12-05: 100 tasks of 1 MiB in one
// reply passed the call timeout and took both instances down.)
func TestListPageBytes(t *testing.T) {
	r := services.StartRedis(t)
	f := newFleet(t, r, "a", "pb:")
	s := newStore(t, f, TaskOptions{})
	ctx := context.Background()
	at := time.Now().UTC()
	const n = 30
	pad := strings.Repeat("p", 700<<10)
	for i := range n {
		tk := &a2a.Task{ID: fmt.Sprintf("t%02d", i), ContextID: "big", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at.Add(time.Duration(i) * time.Millisecond)},
			Metadata: []byte(`{"pad":"` + pad + `"}`)}
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	q := a2a.TaskQuery{ContextID: "big", PageSize: 100}
	pages := 0
	for ; pages < 50; pages++ {
		p, err := s.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Tasks) == 0 || len(p.Tasks)*(700<<10) > pageBytes+(700<<10) || p.TotalSize != n {
			t.Fatalf("page %d: %d tasks, total %d", pages, len(p.Tasks), p.TotalSize)
		}
		for _, tk := range p.Tasks {
			if seen[tk.ID] {
				t.Fatalf("task %s listed twice", tk.ID)
			}
			seen[tk.ID] = true
		}
		if q.PageToken = p.NextPageToken; q.PageToken == "" {
			break
		}
	}
	if len(seen) != n || pages < 4 {
		t.Errorf("%d tasks seen in %d pages, want %d in several", len(seen), pages+1, n)
	}
}
