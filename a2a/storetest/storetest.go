// Package storetest checks an a2a.TaskStore against the contract of the
// interface: what Get, Create, Update and List promise, their errors,
// atomic updates under concurrency (a cancel racing a completion ends in
// exactly one of the two), and List's order and paging. The in-memory
// store and package fleet's Redis store run the same suite.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/a2a"
)

// Run runs the suite. newStore returns an empty store for one subtest;
// stores that several processes share are given as several handles on the
// same backend by newPair (nil when the store has a single handle: the
// races then run on one).
func Run(t *testing.T, newStore func(t *testing.T) a2a.TaskStore, newPair func(t *testing.T) (a2a.TaskStore, a2a.TaskStore)) {
	if newPair == nil {
		newPair = func(t *testing.T) (a2a.TaskStore, a2a.TaskStore) {
			s := newStore(t)
			return s, s
		}
	}
	t.Run("GetCreate", func(t *testing.T) { testGetCreate(t, newStore(t)) })
	t.Run("Update", func(t *testing.T) { testUpdate(t, newStore(t)) })
	t.Run("ConcurrentUpdates", func(t *testing.T) { testConcurrent(t, newPair) })
	t.Run("CancelVersusComplete", func(t *testing.T) { testRace(t, newPair) })
	t.Run("List", func(t *testing.T) { testList(t, newStore(t)) })
	t.Run("Owner", func(t *testing.T) { testOwner(t, newStore(t)) })
}

// RunOwnerShare checks a store's share per owner. newStore returns an
// empty store of at most maxTasks tasks, each owner's at most
// maxOwnerTasks: an owner past its share evicts its own oldest tasks (by
// creation, whatever their updates), never another owner's or an
// owner-less one; the store's own bound still evicts the oldest of all.
func RunOwnerShare(t *testing.T, newStore func(t *testing.T, maxTasks, maxOwnerTasks int) a2a.TaskStore) {
	ctx := context.Background()
	s := newStore(t, 20, 3)
	n := 0
	create := func(owner string, st a2a.TaskState) string {
		t.Helper()
		// ids in creation order, status times too: a store that orders
		// creations of one millisecond by id orders them the same.
		id := fmt.Sprintf("t%02d", n)
		tk := &a2a.Task{ID: id, ContextID: "share", Owner: owner, Status: a2a.TaskStatus{State: st, Timestamp: base.Add(time.Duration(n) * time.Millisecond)}}
		n++
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
		return id
	}
	owned := func(owner string) []string {
		t.Helper()
		p, err := s.List(ctx, a2a.TaskQuery{Owner: owner, PageSize: 100})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, tk := range p.Tasks {
			ids = append(ids, tk.ID)
		}
		slices.Reverse(ids) // oldest first
		if p.TotalSize != len(ids) {
			t.Errorf("%s: total %d, %d listed", owner, p.TotalSize, len(ids))
		}
		return ids
	}
	const alice, bob = "https://as.example alice", "https://as.example bob"
	waiting := create(alice, a2a.TaskStateInputRequired)
	var anon []string
	for range 5 {
		anon = append(anon, create("", a2a.TaskStateCompleted))
	}
	var bobs []string
	for range 10 {
		bobs = append(bobs, create(bob, a2a.TaskStateInputRequired))
	}
	for _, id := range append([]string{waiting}, anon...) {
		if _, err := s.Get(ctx, id); err != nil {
			t.Errorf("%s after bob's 10 creates with a share of 3: %v", id, err)
		}
	}
	if got := owned(bob); !slices.Equal(got, bobs[7:]) {
		t.Errorf("bob keeps %v, want his 3 newest %v", got, bobs[7:])
	}
	if _, err := s.Get(ctx, bobs[0]); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's oldest: %v, want ErrTaskNotFound", err)
	}
	// An update does not renew a task's age: bob's oldest still goes.
	if _, err := s.Update(ctx, bobs[7], func(o *a2a.Task) (*a2a.Task, error) {
		nt := *o
		nt.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: base.Add(time.Hour)}
		return &nt, nil
	}); err != nil {
		t.Fatal(err)
	}
	bobs = append(bobs, create(bob, a2a.TaskStateWorking))
	if _, err := s.Get(ctx, bobs[7]); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("bob's oldest, updated: %v, want evicted by his create", err)
	}
	if got := owned(bob); len(got) != 3 {
		t.Errorf("bob keeps %v", got)
	}
	// Owners that together fill the store: the oldest of all goes.
	for i := range 4 {
		for range 3 {
			create(fmt.Sprintf("https://as.example c%d", i), a2a.TaskStateWorking)
		}
	}
	p, err := s.List(ctx, a2a.TaskQuery{ContextID: "share", PageSize: 100})
	if err != nil || p.TotalSize != 20 {
		t.Errorf("a full store holds %d tasks (%v), want 20", p.TotalSize, err)
	}
	if _, err := s.Get(ctx, waiting); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("the oldest task of a full store: %v, want evicted", err)
	}
	if _, err := s.Get(ctx, anon[0]); err != nil {
		t.Errorf("the second oldest: %v, want kept", err)
	}
}

var base = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// Task returns a task with every kind of content, id and context as
// given, state st and status time at.
func Task(id, ctx string, st a2a.TaskState, at time.Time) *a2a.Task {
	return &a2a.Task{
		ID:        id,
		ContextID: ctx,
		Status: a2a.TaskStatus{State: st, Timestamp: at,
			Message: &a2a.Message{MessageID: "s-" + id, Role: a2a.RoleAgent, Parts: a2a.PartsOf(a2a.TextPart("status \u00e9\u2028"))}},
		Artifacts: []a2a.Artifact{{ArtifactID: "a1", Name: "out", Description: "d",
			Parts: a2a.PartsOf(
				a2a.TextPart("text \"quoted\" \x01"),
				a2a.Part{Kind: a2a.PartFile, Raw: []byte{0, 1, 2, 255}, Filename: "f.bin", MediaType: "application/octet-stream"},
				a2a.Part{Kind: a2a.PartFile, URL: "https://example.com/f"},
				a2a.Part{Kind: a2a.PartData, Data: json.RawMessage(`{"n":[1,2.5e3,null,true]}`), Metadata: json.RawMessage(`{"m":1}`)},
			),
			Metadata: json.RawMessage(`{"k":"v"}`), Extensions: []string{"urn:x"}}},
		History: []a2a.Message{{MessageID: "m-" + id, ContextID: ctx, TaskID: id, Role: a2a.RoleUser,
			Parts: a2a.PartsOf(a2a.TextPart("hi")), ReferenceTaskIDs: []string{"r"}, Extensions: []string{"urn:y"}}},
		Metadata: json.RawMessage(`{"skillId":"echo"}`),
		Seq:      uint64(3 + len(id)),
	}
}

func same(t *testing.T, what string, got, want *a2a.Task) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil task", what)
	}
	g, w := *got, *want
	if !g.Status.Timestamp.Equal(w.Status.Timestamp) {
		t.Errorf("%s: timestamp %v, want %v", what, g.Status.Timestamp, w.Status.Timestamp)
	}
	g.Status.Timestamp, w.Status.Timestamp = time.Time{}, time.Time{}
	if !reflect.DeepEqual(g, w) {
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(w)
		t.Errorf("%s:\n got %s\nwant %s", what, gj, wj)
	}
}

func testGetCreate(t *testing.T, s a2a.TaskStore) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("Get of an unknown id: %v, want ErrTaskNotFound", err)
	}
	want := Task("t1", "c1", a2a.TaskStateCompleted, base.Add(123*time.Millisecond))
	if err := s.Create(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Get after Create", got, want)
	if e, ok := s.(a2a.TaskExister); ok {
		for id, want := range map[string]bool{"t1": true, "nope": false} {
			if got, err := e.Exists(ctx, id); err != nil || got != want {
				t.Errorf("Exists(%q): %v, %v; want %v", id, got, err, want)
			}
		}
	}
	// A bare task (no optional content) keeps its nil members nil.
	bare := &a2a.Task{ID: "t2", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.Create(ctx, bare); err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(ctx, "t2")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "bare task", got, bare)
}

func testUpdate(t *testing.T, s a2a.TaskStore) {
	ctx := context.Background()
	if _, err := s.Update(ctx, "nope", func(o *a2a.Task) (*a2a.Task, error) { return o, nil }); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("Update of an unknown id: %v", err)
	}
	if err := s.Create(ctx, Task("u1", "c", a2a.TaskStateWorking, base)); err != nil {
		t.Fatal(err)
	}
	mine := errors.New("mine")
	if _, err := s.Update(ctx, "u1", func(*a2a.Task) (*a2a.Task, error) { return nil, mine }); err != mine {
		t.Fatalf("f's error: %v", err)
	}
	next, err := s.Update(ctx, "u1", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: base.Add(time.Second)}
		n.Artifacts = append(n.Artifacts[:len(n.Artifacts):len(n.Artifacts)], a2a.Artifact{ArtifactID: "a2", Parts: a2a.PartsOf(a2a.TextPart("more"))})
		return &n, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "u1")
	if err != nil {
		t.Fatal(err)
	}
	same(t, "after Update", got, next)
	if len(got.Artifacts) != 2 || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("update lost: %+v", got)
	}
	// Final: f is still called (it may say why), but no task replaces it.
	called := false
	_, err = s.Update(ctx, "u1", func(o *a2a.Task) (*a2a.Task, error) {
		called = true
		if !o.Status.State.Final() {
			t.Errorf("f sees %v", o.Status.State)
		}
		n := *o
		n.Status.State = a2a.TaskStateWorking
		return &n, nil
	})
	if !called || !errors.Is(err, a2a.ErrTaskFinal) {
		t.Fatalf("Update of a final task: called %v, err %v; want ErrTaskFinal", called, err)
	}
	if got, _ := s.Get(ctx, "u1"); got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("a final task was changed: %v", got.Status.State)
	}
}

// Concurrent updates through two handles lose nothing.
func testConcurrent(t *testing.T, newPair func(*testing.T) (a2a.TaskStore, a2a.TaskStore)) {
	a, b := newPair(t)
	ctx := context.Background()
	if err := a.Create(ctx, &a2a.Task{ID: "c1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: base}}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		s := a
		if w%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := s.Update(ctx, "c1", func(o *a2a.Task) (*a2a.Task, error) {
					n := *o
					n.Artifacts = append(n.Artifacts[:len(n.Artifacts):len(n.Artifacts)], a2a.Artifact{ArtifactID: fmt.Sprintf("w%d-%d", w, i), Parts: a2a.PartsOf(a2a.TextPart("x"))})
					return &n, nil
				})
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("update: %v", err)
	}
	got, err := b.Get(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ar := range got.Artifacts {
		if seen[ar.ArtifactID] {
			t.Errorf("artifact %s twice", ar.ArtifactID)
		}
		seen[ar.ArtifactID] = true
	}
	if len(seen) != writers*each {
		t.Errorf("%d artifacts kept, want %d: concurrent updates were lost", len(seen), writers*each)
	}
}

// A cancel racing a completion, through two handles: exactly one wins,
// the loser is told (its f saw the final state, or ErrTaskFinal), and
// both handles then read the winner's state.
func testRace(t *testing.T, newPair func(*testing.T) (a2a.TaskStore, a2a.TaskStore)) {
	a, b := newPair(t)
	ctx := context.Background()
	const n = 200
	var canceled, completed atomic.Int64
	refused := errors.New("refused: final")
	apply := func(s a2a.TaskStore, id string, to a2a.TaskState) bool {
		_, err := s.Update(ctx, id, func(o *a2a.Task) (*a2a.Task, error) {
			if o.Status.State.Final() {
				return nil, refused
			}
			nt := *o
			nt.Status = a2a.TaskStatus{State: to, Timestamp: base.Add(time.Second)}
			return &nt, nil
		})
		if err != nil && err != refused && !errors.Is(err, a2a.ErrTaskFinal) {
			t.Errorf("%s: %v", id, err)
		}
		return err == nil
	}
	for i := range n {
		id := "r" + strconv.Itoa(i)
		if err := a.Create(ctx, &a2a.Task{ID: id, ContextID: "race", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: base}}); err != nil {
			t.Fatal(err)
		}
		var wins [2]bool
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); wins[0] = apply(a, id, a2a.TaskStateCanceled) }()
		go func() { defer wg.Done(); wins[1] = apply(b, id, a2a.TaskStateCompleted) }()
		wg.Wait()
		if wins[0] == wins[1] {
			t.Fatalf("%s: cancel won %v, completion won %v: want exactly one", id, wins[0], wins[1])
		}
		want := a2a.TaskStateCompleted
		if wins[0] {
			want = a2a.TaskStateCanceled
			canceled.Add(1)
		} else {
			completed.Add(1)
		}
		for _, s := range []a2a.TaskStore{a, b} {
			got, err := s.Get(ctx, id)
			if err != nil || got.Status.State != want {
				t.Fatalf("%s: read %v %v, want %v", id, got, err, want)
			}
		}
	}
	t.Logf("%d races: %d canceled, %d completed", n, canceled.Load(), completed.Load())
}

func testList(t *testing.T, s a2a.TaskStore) {
	ctx := context.Background()
	// 25 tasks in context A, some sharing a millisecond (ties broken by
	// id), 5 in B; states alternate.
	var wantA []string // in List order
	for i := range 25 {
		st := a2a.TaskStateCompleted
		if i%3 == 0 {
			st = a2a.TaskStateWorking
		}
		id := fmt.Sprintf("a%02d", i)
		at := base.Add(time.Duration(i/2) * time.Millisecond) // pairs share a millisecond
		if err := s.Create(ctx, Task(id, "A", st, at)); err != nil {
			t.Fatal(err)
		}
		wantA = append([]string{id}, wantA...)
	}
	for i := range 5 {
		if err := s.Create(ctx, Task(fmt.Sprintf("b%d", i), "B", a2a.TaskStateCompleted, base.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	pages := func(q a2a.TaskQuery) (ids []string, total int) {
		t.Helper()
		for range 100 {
			p, err := s.List(ctx, q)
			if err != nil {
				t.Fatalf("List(%+v): %v", q, err)
			}
			if len(p.Tasks) > q.PageSize {
				t.Fatalf("page of %d, size %d", len(p.Tasks), q.PageSize)
			}
			total = p.TotalSize
			for _, tk := range p.Tasks {
				ids = append(ids, tk.ID)
			}
			if p.NextPageToken == "" {
				return ids, total
			}
			q.PageToken = p.NextPageToken
		}
		t.Fatal("List never ended")
		return nil, 0
	}
	for _, size := range []int{1, 2, 7, 25, 100} {
		ids, total := pages(a2a.TaskQuery{ContextID: "A", PageSize: size})
		if !reflect.DeepEqual(ids, wantA) || total != 25 {
			t.Errorf("context A by %d: total %d, %v\nwant %v", size, total, ids, wantA)
		}
	}
	ids, total := pages(a2a.TaskQuery{PageSize: 10})
	if total != 30 || len(ids) != 30 || ids[0] != "b4" || ids[5] != "a24" {
		t.Errorf("all tasks: total %d, %v", total, ids)
	}
	var working []string
	for _, id := range wantA {
		var i int
		fmt.Sscanf(id, "a%d", &i)
		if i%3 == 0 {
			working = append(working, id)
		}
	}
	ids, total = pages(a2a.TaskQuery{ContextID: "A", State: a2a.TaskStateWorking, PageSize: 3})
	if !reflect.DeepEqual(ids, working) || total != len(working) {
		t.Errorf("working in A: total %d, %v, want %v", total, ids, working)
	}
	ids, total = pages(a2a.TaskQuery{ContextID: "A", After: base.Add(10 * time.Millisecond), PageSize: 4})
	if !reflect.DeepEqual(ids, wantA[:5]) || total != 5 {
		t.Errorf("after 10ms: total %d, %v, want %v", total, ids, wantA[:5])
	}
	if p, err := s.List(ctx, a2a.TaskQuery{ContextID: "none", PageSize: 5}); err != nil || len(p.Tasks) != 0 || p.TotalSize != 0 || p.NextPageToken != "" {
		t.Errorf("unknown context: %+v %v", p, err)
	}
	for _, tok := range []string{"x", "!!!", string(a2a.AppendPageToken(nil, a2a.PageCursor{}))[:3]} {
		if _, err := s.List(ctx, a2a.TaskQuery{ContextID: "A", PageSize: 5, PageToken: tok}); !errors.Is(err, a2a.ErrBadPageToken) {
			t.Errorf("token %q: %v, want ErrBadPageToken", tok, err)
		}
	}
	// A page's tasks are whole.
	p, err := s.List(ctx, a2a.TaskQuery{ContextID: "B", PageSize: 1})
	if err != nil || len(p.Tasks) != 1 {
		t.Fatal(p, err)
	}
	same(t, "listed task", p.Tasks[0], Task("b4", "B", a2a.TaskStateCompleted, base.Add(time.Hour)))
	// A task that changes while a client pages moves to the front; the
	// pages neither repeat a task nor skip one that did not change.
	q := a2a.TaskQuery{ContextID: "A", PageSize: 5}
	p1, _ := s.List(ctx, q)
	if _, err := s.Update(ctx, "a03", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: base.Add(time.Minute)}
		return &n, nil
	}); err != nil {
		t.Fatal(err)
	}
	q.PageToken = p1.NextPageToken
	rest, _ := pages(q)
	seen := map[string]bool{}
	for _, tk := range p1.Tasks {
		seen[tk.ID] = true
	}
	for _, id := range rest {
		if seen[id] {
			t.Errorf("%s listed twice", id)
		}
		seen[id] = true
	}
	for _, id := range wantA {
		if !seen[id] && id != "a03" {
			t.Errorf("%s skipped", id)
		}
	}
}

// testOwner: a store keeps Task.Owner through Create, Get, Update and
// List, and List's Owner selects the tasks of one owner, in the total as
// in the pages.
func testOwner(t *testing.T, s a2a.TaskStore) {
	ctx := context.Background()
	owners := []string{"https://as.example sub alice", "https://as.example sub bob", ""}
	var want [3][]string // by owner, in List order
	for i := range 12 {
		o := i % 3
		st := a2a.TaskStateCompleted
		if i%2 == 0 {
			st = a2a.TaskStateWorking
		}
		tk := Task(fmt.Sprintf("o%02d", i), "X", st, base.Add(time.Duration(i)*time.Millisecond))
		tk.Owner = owners[o]
		if err := s.Create(ctx, tk); err != nil {
			t.Fatal(err)
		}
		want[o] = append([]string{tk.ID}, want[o]...)
	}
	if got, err := s.Get(ctx, "o01"); err != nil || got.Owner != owners[1] {
		t.Fatalf("Get: owner %q, %v", got.Owner, err)
	}
	got, err := s.Update(ctx, "o00", func(o *a2a.Task) (*a2a.Task, error) {
		n := *o
		n.Seq++
		n.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: base.Add(time.Second)}
		return &n, nil
	})
	if err != nil || got.Owner != owners[0] {
		t.Fatalf("Update: owner %q, %v", got.Owner, err)
	}
	if got, _ := s.Get(ctx, "o00"); got.Owner != owners[0] {
		t.Fatalf("Get after Update: owner %q", got.Owner)
	}
	want[0] = append([]string{"o00"}, slices.DeleteFunc(want[0], func(id string) bool { return id == "o00" })...)
	for o, owner := range owners[:2] {
		for _, size := range []int{1, 3, 100} {
			var ids []string
			q := a2a.TaskQuery{ContextID: "X", Owner: owner, PageSize: size}
			for range 20 {
				p, err := s.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if p.TotalSize != len(want[o]) {
					t.Errorf("owner %q: total %d, want %d", owner, p.TotalSize, len(want[o]))
				}
				for _, tk := range p.Tasks {
					if tk.Owner != owner {
						t.Errorf("owner %q: listed %s of %q", owner, tk.ID, tk.Owner)
					}
					ids = append(ids, tk.ID)
				}
				if q.PageToken = p.NextPageToken; q.PageToken == "" {
					break
				}
			}
			if !reflect.DeepEqual(ids, want[o]) {
				t.Errorf("owner %q by %d: %v, want %v", owner, size, ids, want[o])
			}
		}
		p, err := s.List(ctx, a2a.TaskQuery{Owner: owner, State: a2a.TaskStateWorking, PageSize: 100})
		n := 0
		for _, id := range want[o] {
			if tk, _ := s.Get(ctx, id); tk.Status.State == a2a.TaskStateWorking {
				n++
			}
		}
		if err != nil || p.TotalSize != n || len(p.Tasks) != n {
			t.Errorf("owner %q, working: total %d, %d tasks, want %d (%v)", owner, p.TotalSize, len(p.Tasks), n, err)
		}
	}
	if p, err := s.List(ctx, a2a.TaskQuery{ContextID: "X", PageSize: 100}); err != nil || p.TotalSize != 12 || len(p.Tasks) != 12 {
		t.Errorf("no owner selected: total %d, %d tasks, want 12 (%v)", p.TotalSize, len(p.Tasks), err)
	}
	if p, err := s.List(ctx, a2a.TaskQuery{Owner: "nobody", PageSize: 100}); err != nil || p.TotalSize != 0 || len(p.Tasks) != 0 {
		t.Errorf("an owner with no task: %+v %v", p, err)
	}
}
